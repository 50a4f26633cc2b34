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

mod cli;
mod error;
mod output;
mod target;

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use crate::cli::{Cli, Command, ToolsCommand};
use crate::error::CliError;
use crate::output::{Progress, print_card, print_result, print_tools};
use crate::target::Target;

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
        Command::Card {
            url,
            connection,
            json,
        } => {
            let card = target::fetch_card(&url, &connection).await?;
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
