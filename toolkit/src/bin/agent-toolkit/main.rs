//! `agent-toolkit`: inspect and call the tools of A2A agents and MCP servers from a shell.
//!
//! ```text
//! agent-toolkit tools list --a2a http://127.0.0.1:41241            # table of tools
//! agent-toolkit tools list --mcp-cmd "python server.py" --json     # machine-readable
//! agent-toolkit tools call --mcp-url http://127.0.0.1:8000/mcp forecast '{"city":"Oslo"}'
//! agent-toolkit card http://127.0.0.1:41241                        # the agent card
//! ```
//!
//! Exit codes: 0 success; 1 the tool ran and reported an error; 2 a usage mistake (bad
//! options, arguments that are not a JSON object, an unknown tool); 3 the server could not be
//! reached or answered with something that is not the protocol. Progress of a running call is
//! shown on stderr as it arrives; results go to stdout.
//!
//! Built with the `cli` feature: `cargo install agent-toolkit --features cli`.

mod output;
mod target;

use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::output::{Progress, print_card, print_result, print_tools};
use crate::target::Target;

/// Inspect and call the tools of A2A agents and MCP servers.
#[derive(Debug, Parser)]
#[command(name = "agent-toolkit", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List or call the tools of a server.
    #[command(subcommand)]
    Tools(ToolsCommand),
    /// Show the agent card of an A2A agent.
    Card {
        /// The agent's base URL (its card is at `/.well-known/agent-card.json`) or the card's URL.
        url: String,
        /// Send `Authorization: Bearer <TOKEN>`.
        #[arg(long, env = "A2A_TOKEN", hide_env_values = true)]
        token: Option<String>,
        /// Print the whole card as JSON (A2A 1.0 shape) instead of a summary.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum ToolsCommand {
    /// List the tools a server offers.
    List {
        #[command(flatten)]
        server: ServerArgs,
        /// Print JSON (name, description, input and output schema, hints) instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Call one tool and print its result.
    Call {
        #[command(flatten)]
        server: ServerArgs,
        /// The tool's name, as `tools list` shows it.
        name: String,
        /// The arguments as a JSON object; `-` reads them from stdin.
        #[arg(default_value = "{}")]
        arguments: String,
        /// Print the result as JSON (`{"is_error": .., "output": ..}`) instead of plain text.
        #[arg(long)]
        json: bool,
        /// Give up on the call after this many seconds.
        #[arg(long, default_value_t = 120.0, value_name = "SECONDS")]
        timeout: f64,
    },
}

/// Which server to talk to.
#[derive(Debug, Args)]
struct ServerArgs {
    #[command(flatten)]
    server: Server,
    /// Bearer token for an A2A agent.
    #[arg(long, env = "A2A_TOKEN", hide_env_values = true)]
    token: Option<String>,
}

/// Exactly one of the three kinds of server.
#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
struct Server {
    /// An A2A agent exposing tools (base URL or agent-card URL).
    #[arg(long, value_name = "URL")]
    a2a: Option<String>,
    /// An MCP server started as a child process speaking stdio, e.g. "python server.py".
    #[arg(long, value_name = "\"CMD ARGS\"")]
    mcp_cmd: Option<String>,
    /// An MCP server over streamable HTTP, e.g. http://127.0.0.1:8000/mcp.
    #[arg(long, value_name = "URL")]
    mcp_url: Option<String>,
}

/// A failure, sorted by what the person at the shell has to do about it.
#[derive(Debug)]
enum CliError {
    /// The tool ran and failed (exit 1).
    Tool(String),
    /// The command line was wrong (exit 2).
    Usage(String),
    /// The server could not be reached or broke the protocol (exit 3).
    Server(String),
}

impl CliError {
    fn exit_code(&self) -> u8 {
        match self {
            CliError::Tool(_) => 1,
            CliError::Usage(_) => 2,
            CliError::Server(_) => 3,
        }
    }

    fn message(&self) -> &str {
        match self {
            CliError::Tool(m) | CliError::Usage(m) | CliError::Server(m) => m,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: could not start the async runtime: {e}");
            return ExitCode::from(3);
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let label = match e {
                CliError::Tool(_) => "tool error",
                _ => "error",
            };
            eprintln!("{label}: {}", e.message());
            ExitCode::from(e.exit_code())
        }
    }
}

async fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Card { url, token, json } => {
            let card = target::fetch_card(&url, token.as_deref()).await?;
            print_card(&card, json);
            Ok(())
        }
        Command::Tools(ToolsCommand::List { server, json }) => {
            let target = Target::from_args(&server)?;
            let tools = target.list_tools().await;
            target.close().await;
            print_tools(&tools?, json);
            Ok(())
        }
        Command::Tools(ToolsCommand::Call {
            server,
            name,
            arguments,
            json,
            timeout,
        }) => {
            let arguments = read_arguments(&arguments)?;
            let timeout = Duration::try_from_secs_f64(timeout).map_err(|_| {
                CliError::Usage(format!(
                    "--timeout must be a positive number of seconds, got {timeout}"
                ))
            })?;
            let target = Target::from_args(&server)?;
            let mut progress = Progress::on_stderr();
            let outcome =
                tokio::time::timeout(timeout, target.call_tool(&name, arguments, &mut progress))
                    .await;
            progress.finish();
            target.close().await;
            let result = match outcome {
                Ok(result) => result?,
                Err(_) => {
                    return Err(CliError::Server(format!(
                        "no result within {timeout:?} (raise it with --timeout)"
                    )));
                }
            };
            print_result(&result, json);
            if result.is_error {
                // The error text went to stdout with the result; say why the exit code is 1.
                Err(CliError::Tool(format!("`{name}` reported an error")))
            } else {
                Ok(())
            }
        }
    }
}

/// The arguments as a JSON object (`-` reads stdin).
fn read_arguments(text: &str) -> Result<serde_json::Value, CliError> {
    let text = if text == "-" {
        let mut buf = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut buf).map_err(|e| {
            CliError::Usage(format!("could not read the arguments from stdin: {e}"))
        })?;
        buf
    } else {
        text.to_string()
    };
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        CliError::Usage(format!(
            "the arguments are not valid JSON ({e}); pass one JSON object, e.g. '{{\"city\": \"Oslo\"}}'"
        ))
    })?;
    if !value.is_object() {
        return Err(CliError::Usage(format!(
            "the arguments must be a JSON object, e.g. '{{\"city\": \"Oslo\"}}', not {value}"
        )));
    }
    Ok(value)
}
