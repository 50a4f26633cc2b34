//! [`McpError`]: what can go wrong talking MCP, said so that the person at the keyboard knows
//! what to do.

use std::time::Duration;

use crate::error::Cause;

/// Why an MCP operation (serving, connecting, listing or calling tools) failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The server program could not be started.
    #[error(
        "could not start the MCP server {command}: {source}; check that the program exists and is executable"
    )]
    Spawn {
        /// The command line.
        command: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The connection or the `initialize` handshake failed.
    #[error("could not connect to the MCP server {target}: {reason}")]
    Connect {
        /// The server (command line or URL).
        target: String,
        /// Why, as the transport or the server said it (the transport's error kept as its
        /// source).
        #[source]
        reason: Cause,
    },
    /// The handshake did not finish in time.
    #[error(
        "the MCP server {target} did not finish the `initialize` handshake within {timeout:?}; is it an MCP server speaking on stdout (or at that URL)?"
    )]
    ConnectTimeout {
        /// The server.
        target: String,
        /// How long we waited.
        timeout: Duration,
    },
    /// The connection broke (the process exited, the HTTP server went away) before an answer
    /// came. The next call reconnects.
    #[error(
        "lost the connection to the MCP server {target} while waiting for `{method}`; the next call reconnects"
    )]
    ConnectionLost {
        /// The server.
        target: String,
        /// The request that got no answer.
        method: String,
    },
    /// The server answered with a JSON-RPC error.
    #[error("the MCP server {target} refused `{method}`: {message} (JSON-RPC error {code})")]
    Rejected {
        /// The server.
        target: String,
        /// The request.
        method: String,
        /// JSON-RPC error code (`-32602` invalid params, `-32601` method not found, ...).
        code: i32,
        /// The server's message.
        message: String,
    },
    /// The server refused a request of an open session for want of credentials: HTTP 401
    /// (the token expired, was revoked, or none was sent) or 403 (the token lacks a scope).
    /// Not retried: the same request would be refused again.
    #[error("the MCP server {target} refused `{method}`: {reason}")]
    Unauthorized {
        /// The server.
        target: String,
        /// The request.
        method: String,
        /// The status, and what to set.
        reason: String,
    },
    /// The OAuth flow of [`McpOAuth`](super::McpOAuth) failed: discovery, registration, the
    /// browser step or the token exchange. Not retried: it needs the user or the configuration.
    #[error("could not authorize with the MCP server {target}: {reason}")]
    Authorization {
        /// The server.
        target: String,
        /// Which step failed, and why.
        reason: String,
    },
    /// No answer in time (for `tools/call`: no answer and no progress for that long).
    #[error("the MCP server {target} did not answer `{method}` within {timeout:?}")]
    Timeout {
        /// The server.
        target: String,
        /// The request.
        method: String,
        /// How long we waited.
        timeout: Duration,
    },
    /// Tool arguments must be a JSON object (or null for none).
    #[error("tool arguments must be a JSON object, got {0}")]
    InvalidArguments(String),
    /// Anything else the MCP SDK reported (an unexpected answer, a transport failure while
    /// serving).
    #[error("MCP error: {0}")]
    Protocol(#[source] Cause),
}

impl McpError {
    /// Whether trying again (which reconnects) may help.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            McpError::ConnectionLost { .. }
                | McpError::Connect { .. }
                | McpError::ConnectTimeout { .. }
                | McpError::Timeout { .. }
        )
    }
}
