//! The server a command talks to: an A2A agent exposing tools, or an MCP server.

use agent_toolkit::a2a::client::{A2aClientError, AgentConfig, RemoteAgent, RemoteToolRegistry};
use agent_toolkit::a2a::types::AgentCard;
use agent_toolkit::endpoint::EndpointSettings;
use agent_toolkit::mcp::{McpClient, McpClientOptions, McpError, McpTarget};
use agent_toolkit::tls::TrustedRoots;
use agent_toolkit::{
    ToolCall, ToolContext, ToolError, Toolkit, context::ProgressEvent, error::ToolErrorKind,
};
use serde_json::Value;

use crate::cli::{Connection, ServerArgs};
use crate::error::CliError;
use crate::output::{CallResult, Progress, ToolRow};

/// The alias the CLI gives the one agent it talks to (its tools keep their remote names).
const ALIAS: &str = "remote";

/// A connected (or connectable) server.
pub enum Target {
    A2a(Box<AgentConfig>),
    Mcp(McpClient),
}

impl Target {
    pub fn from_args(args: &ServerArgs) -> Result<Target, CliError> {
        let connection = &args.connection;
        if let Some(url) = &args.server.a2a {
            return Ok(Target::A2a(Box::new(agent_config(url, connection)?)));
        }
        if let Some(cmd) = &args.server.mcp_cmd {
            if connection.token.is_some()
                || !connection.headers.is_empty()
                || connection.ca_cert.is_some()
            {
                return Err(CliError::Usage(
                    "--token, --header and --ca-cert are for servers reached over HTTP \
                     (--a2a, --mcp-url), not for --mcp-cmd"
                        .into(),
                ));
            }
            let words = shell_words::split(cmd)
                .map_err(|e| CliError::Usage(format!("--mcp-cmd {cmd:?}: {e}")))?;
            let Some((program, rest)) = words.split_first() else {
                return Err(CliError::Usage(
                    "--mcp-cmd needs a command, e.g. --mcp-cmd \"python server.py\"".into(),
                ));
            };
            return Ok(Target::Mcp(McpClient::new(McpTarget::command(
                program.clone(),
                rest.to_vec(),
            ))));
        }
        if let Some(url) = &args.server.mcp_url {
            let options = McpClientOptions::new().endpoint(endpoint(connection)?);
            return Ok(Target::Mcp(McpClient::with_options(
                McpTarget::url(url.clone()),
                options,
            )));
        }
        Err(CliError::Usage(
            "say which server: --a2a URL, --mcp-cmd \"CMD ARGS\" or --mcp-url URL".into(),
        ))
    }

    async fn registry(config: &AgentConfig) -> Result<RemoteToolRegistry, CliError> {
        let registry = RemoteToolRegistry::new();
        registry
            .add_agent(ALIAS, config.clone().prefix(""))
            .await
            .map_err(a2a_error)?;
        Ok(registry)
    }

    pub async fn list_tools(&self) -> Result<Vec<ToolRow>, CliError> {
        match self {
            Target::A2a(config) => {
                let registry = Self::registry(config).await?;
                let tools = registry.agent_tools(ALIAS).unwrap_or_default();
                Ok(tools
                    .iter()
                    .map(|tool| {
                        let info = tool.info();
                        ToolRow {
                            name: info.name.clone(),
                            description: info.description.clone(),
                            input_schema: info.input_schema.clone(),
                            output_schema: info.output_schema.clone(),
                            read_only: info.annotations.read_only,
                            idempotent: info.annotations.idempotent,
                            destructive: info.annotations.destructive,
                        }
                    })
                    .collect())
            }
            Target::Mcp(client) => {
                let tools = client.list_tools().await.map_err(mcp_error)?;
                Ok(tools
                    .into_iter()
                    .map(|tool| {
                        let hints = tool.annotations.clone().unwrap_or_default();
                        ToolRow {
                            name: tool.name.to_string(),
                            description: tool.description.as_deref().unwrap_or("").to_string(),
                            input_schema: Value::Object((*tool.input_schema).clone()),
                            output_schema: tool
                                .output_schema
                                .as_ref()
                                .map(|s| Value::Object((**s).clone())),
                            read_only: hints.read_only_hint.unwrap_or(false),
                            idempotent: hints.idempotent_hint.unwrap_or(false),
                            destructive: hints.destructive_hint.unwrap_or(false),
                        }
                    })
                    .collect())
            }
        }
    }

    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        progress: &mut Progress,
    ) -> Result<CallResult, CliError> {
        match self {
            Target::A2a(config) => {
                let registry = Self::registry(config).await?;
                let tools = registry.agent_tools(ALIAS).unwrap_or_default();
                let Some(tool) = tools.iter().find(|t| t.remote_name() == name) else {
                    return Err(unknown_tool(name, tools.iter().map(|t| t.remote_name())));
                };
                // Through a one-tool toolkit: the same stack (and progress plumbing) as any
                // local call. The CLI's own --timeout bounds it, so no toolkit timeout.
                let toolkit = Toolkit::builder()
                    .register(tool.clone())
                    .build()
                    .map_err(|e| CliError::Server(e.to_string()))?;
                let (ctx, mut events) = ToolContext::new().progress_channel(64);
                let tool_call = ToolCall::new("cli", tool.name(), arguments.to_string());
                let call = toolkit.call(tool_call, &ctx);
                tokio::pin!(call);
                let outcome = loop {
                    tokio::select! {
                        outcome = &mut call => break outcome,
                        Some(event) = events.recv() => show(progress, event.event),
                    }
                };
                while let Ok(event) = events.try_recv() {
                    show(progress, event.event);
                }
                match outcome.outcome {
                    Ok(output) => Ok(CallResult {
                        is_error: false,
                        text: output.as_text().to_string(),
                        structured: output
                            .structured()
                            .and_then(|raw| serde_json::from_str(raw.get()).ok()),
                    }),
                    Err(e) => tool_error(e),
                }
            }
            Target::Mcp(client) => {
                let result = client
                    .call_tool_with_progress(name, arguments, |p| {
                        progress.update(p.progress, p.total, p.message.as_deref().unwrap_or(""))
                    })
                    .await;
                let result = match result {
                    Ok(result) => result,
                    Err(McpError::Rejected {
                        code: -32602,
                        message,
                        ..
                    }) => {
                        // Unknown tool or arguments the server refused outright: the command
                        // line has to change.
                        let names = client
                            .list_tools()
                            .await
                            .map(|t| t.into_iter().map(|t| t.name.to_string()).collect())
                            .unwrap_or_else(|_| Vec::new());
                        if !names.iter().any(|n: &String| n == name) {
                            return Err(unknown_tool(name, names.iter().map(String::as_str)));
                        }
                        return Err(CliError::Usage(format!(
                            "the server refused the call: {message}"
                        )));
                    }
                    Err(e) => return Err(mcp_error(e)),
                };
                let text = result
                    .content
                    .iter()
                    .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
                    .collect::<Vec<_>>()
                    .join("\n");
                Ok(CallResult {
                    is_error: result.is_error.unwrap_or(false),
                    text,
                    structured: result.structured_content.clone(),
                })
            }
        }
    }

    /// Close a connection the command made (an MCP child process is stopped).
    pub async fn close(&self) {
        if let Target::Mcp(client) = self {
            client.close().await;
        }
    }
}

fn show(progress: &mut Progress, event: ProgressEvent) {
    match event {
        ProgressEvent::Progress {
            done,
            total,
            message,
        } => progress.update(done, total, &message),
        ProgressEvent::Chunk(text) => progress.update_chunk(&text),
        // Kinds of progress added later are not shown.
        _ => {}
    }
}

/// A remote tool's failure: its own errors are results (exit 1); failing to reach it, or being
/// refused by the agent (credentials, protocol), is the server's (exit 3).
fn tool_error(e: ToolError) -> Result<CallResult, CliError> {
    if let Some(cause) = e.source().and_then(|s| s.downcast_ref::<A2aClientError>()) {
        return Err(CliError::Server(format!("{}: {cause}", e.message())));
    }
    match e.kind() {
        ToolErrorKind::Execution | ToolErrorKind::InvalidArguments => Ok(CallResult {
            is_error: true,
            text: e.message().to_string(),
            structured: None,
        }),
        _ => Err(CliError::Server(e.message().to_string())),
    }
}

fn unknown_tool<'a>(name: &str, offered: impl Iterator<Item = &'a str>) -> CliError {
    let offered: Vec<&str> = offered.collect();
    if offered.is_empty() {
        CliError::Usage(format!("no tool `{name}`: the server offers no tools"))
    } else {
        CliError::Usage(format!(
            "no tool `{name}`; the server offers: {}",
            offered.join(", ")
        ))
    }
}

fn a2a_error(e: A2aClientError) -> CliError {
    CliError::Server(with_hint(e.to_string()))
}

fn mcp_error(e: McpError) -> CliError {
    match e {
        McpError::InvalidArguments(_) => CliError::Usage(e.to_string()),
        e => CliError::Server(with_hint(e.to_string())),
    }
}

/// A certificate the system does not trust is most often a private CA's: say how to trust it.
fn with_hint(message: String) -> String {
    if message.contains("invalid peer certificate: UnknownIssuer") {
        format!(
            "{message}\nhint: if the server's certificate comes from a private CA, trust it with --ca-cert FILE"
        )
    } else {
        message
    }
}

/// `--header "NAME: VALUE"` options, split.
fn headers(connection: &Connection) -> Result<Vec<(String, String)>, CliError> {
    connection
        .headers
        .iter()
        .map(|header| match header.split_once(':') {
            Some((name, value)) if !name.trim().is_empty() => {
                Ok((name.trim().to_owned(), value.trim().to_owned()))
            }
            _ => Err(CliError::Usage(format!(
                "--header {header:?}: expected \"NAME: VALUE\", e.g. --header \"X-Api-Key: abc\""
            ))),
        })
        .collect()
}

/// The system's roots, and `--ca-cert`'s.
fn trusted_roots(connection: &Connection) -> Result<TrustedRoots, CliError> {
    match &connection.ca_cert {
        Some(path) => TrustedRoots::system()
            .with_pem_file(path)
            .map_err(|e| CliError::Usage(format!("--ca-cert: {e}"))),
        None => Ok(TrustedRoots::system()),
    }
}

/// How to reach a server: `--token`, `--header`s and `--ca-cert`, the same for A2A and MCP.
fn endpoint(connection: &Connection) -> Result<EndpointSettings, CliError> {
    let mut endpoint = EndpointSettings::new().trusted_roots(trusted_roots(connection)?);
    if let Some(token) = &connection.token {
        endpoint = endpoint.bearer_token(token);
    }
    for (name, value) in headers(connection)? {
        endpoint = endpoint.header(name, value);
    }
    Ok(endpoint)
}

/// How to reach the agent at `url`.
fn agent_config(url: &str, connection: &Connection) -> Result<AgentConfig, CliError> {
    Ok(AgentConfig::new(url).endpoint(endpoint(connection)?))
}

/// The agent card at `url`.
pub async fn fetch_card(url: &str, connection: &Connection) -> Result<AgentCard, CliError> {
    let agent = RemoteAgent::connect(agent_config(url, connection)?)
        .await
        .map_err(a2a_error)?;
    Ok(agent.card().clone())
}
