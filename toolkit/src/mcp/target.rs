//! Where an MCP server is ([`McpTarget`]) and how a client introduces itself to it and how long
//! it waits ([`McpClientOptions`]).

use std::fmt;
use std::time::Duration;

use crate::tls::TrustedRoots;

/// Where an MCP server is.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpTarget {
    /// A program started as a child process, spoken to over its stdin and stdout. Its stderr
    /// is passed through to ours.
    Command {
        /// The program (looked up in `PATH`).
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables (the rest of ours is inherited).
        env: Vec<(String, String)>,
    },
    /// A streamable-HTTP endpoint, e.g. `http://127.0.0.1:8000/mcp`.
    Url(String),
}

impl McpTarget {
    /// A program to start, with its arguments.
    pub fn command<S: Into<String>>(
        program: impl Into<String>,
        args: impl IntoIterator<Item = S>,
    ) -> Self {
        McpTarget::Command {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
        }
    }

    /// A streamable-HTTP endpoint.
    pub fn url(url: impl Into<String>) -> Self {
        McpTarget::Url(url.into())
    }

    /// The same command with one more environment variable (no effect on a URL).
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        if let McpTarget::Command { env, .. } = &mut self {
            env.push((key.into(), value.into()));
        }
        self
    }
}

impl fmt::Display for McpTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            McpTarget::Command { program, args, .. } => {
                write!(f, "`{program}")?;
                for arg in args {
                    write!(f, " {arg}")?;
                }
                f.write_str("`")
            }
            McpTarget::Url(url) => f.write_str(url),
        }
    }
}

/// Which MCP revisions an [`McpClient`](super::McpClient) may speak.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpEra {
    /// Probe `server/discover` and speak the stateless 2026-07-28 revision when the server
    /// offers it; otherwise the 2025-11-25 `initialize` handshake (the default).
    #[default]
    Newest,
    /// The stateless 2026-07-28 revision only: a handshake-only server is an error.
    Stateless,
    /// The 2025-11-25 `initialize` handshake only, without a probe: for servers that mishandle
    /// `server/discover`, or to keep a session (and its per-session state) on a dual-era
    /// server.
    Handshake,
}

/// How an [`McpClient`](super::McpClient) introduces itself, how long it waits, and, for a
/// URL, how it authenticates and which certificates it trusts.
#[derive(Clone)]
#[non_exhaustive]
pub struct McpClientOptions {
    /// The client name sent in `initialize`.
    pub name: String,
    /// The client version sent in `initialize`.
    pub version: String,
    /// Which revisions to speak (default: the newest the server offers).
    pub era: McpEra,
    /// Longest wait for a connection and its `initialize` handshake (default 30 s).
    pub connect_timeout: Duration,
    /// Longest wait for the answer to `tools/list` (default 30 s).
    pub request_timeout: Duration,
    /// Longest a `tools/call` may go without an answer or a progress notification (default
    /// 120 s): each `notifications/progress` of the call starts the wait again, so a tool that
    /// reports progress may run as long as it keeps reporting, and a response that is lost (a
    /// server that hangs, a proxy that drops it) ends the call with [`McpError::Timeout`]
    /// instead of hanging the run; the server is sent `notifications/cancelled`. The toolkit's
    /// own timeouts apply on top of it.
    ///
    /// [`McpError::Timeout`]: super::McpError::Timeout
    pub call_timeout: Duration,
    /// For a URL target: sent as `Authorization: Bearer <token>` with every request.
    pub bearer_token: Option<String>,
    /// For a URL target: headers sent with every request (an API key a gateway wants, say).
    pub headers: Vec<(String, String)>,
    /// For an `https://` target: the roots its certificate is checked against (default: the
    /// system's; add a private CA with [`TrustedRoots::with_pem`]).
    pub trusted_roots: TrustedRoots,
}

impl Default for McpClientOptions {
    fn default() -> Self {
        McpClientOptions {
            name: "agent-toolkit".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            era: McpEra::Newest,
            connect_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(30),
            call_timeout: Duration::from_secs(120),
            bearer_token: None,
            headers: Vec::new(),
            trusted_roots: TrustedRoots::system(),
        }
    }
}

impl fmt::Debug for McpClientOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The token and header values are secrets: only say that they are there.
        f.debug_struct("McpClientOptions")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("era", &self.era)
            .field("connect_timeout", &self.connect_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("call_timeout", &self.call_timeout)
            .field(
                "bearer_token",
                &self.bearer_token.as_ref().map(|_| "(redacted)"),
            )
            .field(
                "headers",
                &self.headers.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .field("trusted_roots", &self.trusted_roots)
            .finish()
    }
}
