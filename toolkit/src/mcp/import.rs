//! [`McpImport`]: an MCP server's tools as a [`DynamicTools`] set, kept in step with the
//! server.

use std::collections::HashMap;
use std::sync::{Arc, RwLock, Weak};

use rmcp::model::Tool;
use serde_json::Value;

use super::client::{ClientInner, McpClient};
use super::convert;
use super::error::McpError;
use super::forwarding::Asking;
use super::target::McpTarget;
use crate::args::ToolArgs;
use crate::context::{AskError, FromToolContext, ToolEmitter};
use crate::dialect::{Dialect, NameMap};
use crate::error::{ToolError, ToolErrorKind};
use crate::tool::{AgentTool, ToolFuture, ToolSpec};
use crate::toolkit::{DynamicTools, WeakDynamicTools};
use crate::util;

/// The tools of one MCP server, imported into a toolkit.
///
/// [`connect`](Self::connect) lists the server's tools and keeps them in a [`DynamicTools`]
/// set; register it in a group with [`ToolkitBuilder::dynamic`](crate::toolkit::ToolkitBuilder::dynamic).
/// Each tool is named `<prefix>__<server name>`, sanitised (and made unique) to
/// `^[A-Za-z_][A-Za-z0-9_-]{0,62}$`, which every model provider accepts; its input schema,
/// output schema and hints are the server's. Calls go through the toolkit's execution stack:
///
/// - arguments go to the server as they are (the server validates them; its `-32602` comes
///   back as an invalid-arguments error the model can correct);
/// - progress the server reports reaches the call's [`ToolEmitter`];
/// - a call the toolkit gives up on (timeout, cancellation) is cancelled on the server;
/// - an `isError` result is a model-visible execution error, `structuredContent` JSON output;
/// - a broken connection fails the call with a retryable error, and the next call reconnects
///   (restarting a child process).
///
/// The set follows the server: on `notifications/tools/list_changed` (and after a reconnection)
/// the tools are listed again and the set replaced. This goes on while the set is registered
/// somewhere or this value is alive.
///
/// ```no_run
/// use agent_toolkit::mcp::{McpImport, McpTarget};
/// use agent_toolkit::prelude::*;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let weather = McpImport::connect(McpTarget::command("python", ["weather_server.py"]), "weather").await?;
/// let toolkit = Toolkit::builder()
///     .group("weather", "Weather tools from an MCP server")
///     .dynamic("weather", weather.tools())
///     .build()?;
/// println!("{:?}", toolkit.snapshot()); // e.g. [weather__forecast, weather__alerts]
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct McpImport {
    client: McpClient,
    state: Arc<ImportState>,
    tools: DynamicTools,
}

struct ImportState {
    prefix: String,
    /// Toolkit name → the server's name, for the tools listed last.
    names: RwLock<HashMap<String, String>>,
}

impl McpImport {
    /// Connect to `target`, list its tools, and start following its tool list.
    pub async fn connect(target: McpTarget, prefix: impl Into<String>) -> Result<Self, McpError> {
        Self::from_client(McpClient::new(target), prefix).await
    }

    /// The same over a client made with options of your own.
    pub async fn from_client(
        client: McpClient,
        prefix: impl Into<String>,
    ) -> Result<Self, McpError> {
        let import = McpImport {
            client,
            state: Arc::new(ImportState {
                prefix: prefix.into(),
                names: RwLock::default(),
            }),
            tools: DynamicTools::new(),
        };
        // Subscribe before listing: a change while we list is then not missed.
        let changes = import.client.tool_list_changes();
        import.refresh().await?;
        tokio::spawn(follow(
            Arc::downgrade(&import.client.inner),
            Arc::downgrade(&import.state),
            import.tools.downgrade(),
            changes,
        ));
        Ok(import)
    }

    /// The imported tools, to register with
    /// [`ToolkitBuilder::dynamic`](crate::toolkit::ToolkitBuilder::dynamic).
    pub fn tools(&self) -> &DynamicTools {
        &self.tools
    }

    /// The client the tools call through.
    pub fn client(&self) -> &McpClient {
        &self.client
    }

    /// The server's name of the tool called `local` in the toolkit.
    pub fn original_name(&self, local: &str) -> Option<String> {
        util::read(&self.state.names).get(local).cloned()
    }

    /// List the server's tools again now and replace the set.
    pub async fn refresh(&self) -> Result<(), McpError> {
        refresh(&self.client, &self.state, &self.tools).await
    }
}

impl std::fmt::Debug for McpImport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpImport")
            .field("target", self.client.target())
            .field("prefix", &self.state.prefix)
            .field("tools", &self.tools.names())
            .finish()
    }
}

/// Re-list on every change notice, as long as anybody holds the set and the client. Holds no
/// strong reference while it waits, so it never keeps a connection (or a child process) alive.
async fn follow(
    client: Weak<ClientInner>,
    state: Weak<ImportState>,
    tools: WeakDynamicTools,
    mut changes: tokio::sync::watch::Receiver<u64>,
) {
    while changes.changed().await.is_ok() {
        let (Some(inner), Some(state), Some(tools)) =
            (client.upgrade(), state.upgrade(), tools.upgrade())
        else {
            return;
        };
        let client = McpClient { inner };
        if let Err(e) = refresh(&client, &state, &tools).await {
            tracing::warn!(server = %client.target(), error = %e, "could not list the MCP server's tools again; keeping the previous list");
        }
    }
}

async fn refresh(
    client: &McpClient,
    state: &ImportState,
    tools: &DynamicTools,
) -> Result<(), McpError> {
    let listed = client.list_tools().await?;
    let local: Vec<String> = listed
        .iter()
        .map(|t| format!("{}__{}", state.prefix, t.name))
        .collect();
    // Gemini's rule is the strictest of the providers'; a name valid there is valid everywhere.
    let map = NameMap::new(Dialect::Gemini, local.iter().map(String::as_str));
    let mut names = HashMap::new();
    let mut set: Vec<Arc<dyn AgentTool>> = Vec::new();
    for (tool, local) in listed.into_iter().zip(&local) {
        let name = map.wire_name(local).unwrap_or(local).to_string();
        names.insert(name.clone(), tool.name.to_string());
        set.push(Arc::new(ImportedTool {
            name,
            as_task: client.options().runs_as_task(&tool.name),
            tool,
            client: client.clone(),
        }));
    }
    tools.replace(set).map_err(|e| {
        McpError::Protocol(crate::error::Cause::explained(
            format!(
                "the tools of the MCP server {} could not be imported: {e}",
                client.target()
            ),
            e,
        ))
    })?;
    *util::write(&state.names) = names;
    Ok(())
}

/// One imported tool: a tool of the MCP server, called through the client. (Not to be confused
/// with the A2A [`RemoteTool`](crate::a2a::client::RemoteTool), another agent's tool.)
struct ImportedTool {
    /// The name in the toolkit.
    name: String,
    /// The server's description of it.
    tool: Tool,
    client: McpClient,
    /// Called as an MCP task ([`McpClientOptions::run_as_tasks`](super::McpClientOptions::run_as_tasks)).
    as_task: bool,
}

impl AgentTool for ImportedTool {
    fn spec(&self) -> ToolSpec {
        let tool = &self.tool;
        let description = tool
            .description
            .as_deref()
            .or(tool.title.as_deref())
            .or(tool.annotations.as_ref().and_then(|a| a.title.as_deref()))
            .unwrap_or("")
            .to_string();
        let mut spec = ToolSpec::new(self.name.clone(), description)
            .with_input_schema(Value::Object((*tool.input_schema).clone()));
        spec.output_schema = tool
            .output_schema
            .as_ref()
            .map(|s| Value::Object((**s).clone()));
        spec.options = convert::options_from(tool);
        // Called as an MCP task: it answers the model at once and reports when the task ends.
        spec.options.background = self.as_task;
        spec
    }

    fn call(&self, args: ToolArgs) -> ToolFuture {
        let client = self.client.clone();
        let remote = self.tool.name.to_string();
        let as_task = self.as_task;
        let arguments = convert::arguments_object(args.raw());
        let emitter = ToolEmitter::from_tool_context(args.context()).ok();
        // With forwarded questions: who this call asks, and the signal that its run paused.
        let asking = client.options().forward_questions.then(|| Asking {
            caller: crate::context::caller_of(args.context()),
            paused: Arc::default(),
        });
        Box::pin(async move {
            let arguments = arguments.map_err(|got| {
                ToolError::invalid_arguments(format!(
                    "the arguments must be a JSON object, got {got}"
                ))
            })?;
            let arguments = arguments.map(Value::Object).unwrap_or(Value::Null);
            let result = if as_task {
                client.call_tool_as_task(&remote, arguments).await
            } else {
                let paused = asking.as_ref().map(|a| a.paused.clone());
                let call = client.call_tool_asking(
                    &remote,
                    arguments,
                    |p| {
                        if let Some(emitter) = &emitter {
                            emitter.progress(p.progress, p.total, p.message.unwrap_or_default());
                        }
                    },
                    asking,
                );
                match paused {
                    // The run pauses at the server's question: the call ends here (dropping it
                    // cancels it on the server) and is made again when the run resumes.
                    Some(paused) => tokio::select! {
                        result = call => result,
                        () = paused.notified() => return Err(AskError::Paused.into()),
                    },
                    None => call.await,
                }
            };
            match result {
                Ok(result) => convert::tool_output(result),
                Err(e) => Err(tool_error(&remote, e)),
            }
        })
    }
}

/// What the model and the engine make of a call that got no result.
fn tool_error(remote: &str, error: McpError) -> ToolError {
    let message = match &error {
        McpError::Rejected {
            code: -32602,
            message,
            ..
        } => {
            return ToolError::invalid_arguments(message.clone()).with_source(error);
        }
        McpError::Rejected { code: -32601, .. } => {
            return ToolError::new(
                ToolErrorKind::UnknownTool,
                format!("the tool server no longer offers `{remote}`"),
            )
            .with_source(error);
        }
        McpError::Rejected { message, .. } => {
            // The server's own words (a tool that raised, a question nobody could answer).
            return ToolError::execution(format!(
                "the tool server answered with an error: {message}"
            ))
            .with_source(error);
        }
        McpError::Timeout { .. } => {
            return ToolError::new(
                ToolErrorKind::Timeout,
                "the tool server did not answer in time",
            )
            .with_source(error);
        }
        McpError::ConnectionLost { .. } => {
            "the connection to the tool server was lost during the call; it is re-established on the next call"
        }
        McpError::Spawn { .. } | McpError::Connect { .. } | McpError::ConnectTimeout { .. } => {
            "the tool server could not be reached"
        }
        _ => "the tool server failed to answer",
    };
    ToolError::execution(message)
        .with_retryable(error.is_retryable())
        .with_source(error)
}
