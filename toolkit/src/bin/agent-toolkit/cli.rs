//! The command line: commands, their options, and which server to talk to.

use clap::{Args, Parser, Subcommand};

/// Inspect and call the tools of A2A agents and MCP servers.
#[derive(Debug, Parser)]
#[command(name = "agent-toolkit", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List or call the tools of a server.
    #[command(subcommand)]
    Tools(ToolsCommand),
    /// Show the agent card of an A2A agent.
    Card {
        /// The agent's base URL (its card is at `/.well-known/agent-card.json`) or the card's URL.
        url: String,
        #[command(flatten)]
        connection: Connection,
        /// Print the whole card as JSON (A2A 1.0 shape) instead of a summary.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum ToolsCommand {
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
pub struct ServerArgs {
    #[command(flatten)]
    pub server: Server,
    #[command(flatten)]
    pub connection: Connection,
}

/// How to reach a server over HTTP(S): credentials and trusted certificates.
#[derive(Debug, Args)]
pub struct Connection {
    /// Send `Authorization: Bearer <TOKEN>` (A2A agents and MCP URLs).
    #[arg(long, env = "AGENT_TOOLKIT_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Send this header with every request, as `NAME: VALUE`. Repeatable.
    #[arg(long = "header", short = 'H', value_name = "\"NAME: VALUE\"")]
    pub headers: Vec<String>,
    /// Also trust the CA certificate(s) in this PEM file for `https://` servers (the system's
    /// roots are always trusted; `SSL_CERT_FILE` and `SSL_CERT_DIR` are honoured).
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<std::path::PathBuf>,
}

/// Exactly one of the three kinds of server.
#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
pub struct Server {
    /// An A2A agent exposing tools (base URL or agent-card URL).
    #[arg(long, value_name = "URL")]
    pub a2a: Option<String>,
    /// An MCP server started as a child process speaking stdio, e.g. "python server.py".
    #[arg(long, value_name = "\"CMD ARGS\"")]
    pub mcp_cmd: Option<String>,
    /// An MCP server over streamable HTTP, e.g. http://127.0.0.1:8000/mcp.
    #[arg(long, value_name = "URL")]
    pub mcp_url: Option<String>,
}
