//! [`A2aClientError`]: what can go wrong when talking to another A2A agent, split the way a
//! caller has to act on it — the connection or the protocol failed (try again later), the
//! remote agent refused the request (fix it), or the remote work itself ended badly.

use a2a::A2AError;
use a2a::error_code;

use crate::a2a::parts::InvalidToolsPart;
use crate::error::Cause;

/// Why a call to a remote A2A agent failed.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum A2aClientError {
    /// The agent could not be reached, or the connection broke before the answer was complete.
    /// Worth retrying.
    #[error("could not reach the A2A agent at {url}: {source}")]
    Connection {
        /// The URL called.
        url: String,
        /// What failed: the HTTP client's error (or the A2A SDK's), kept as the source.
        source: Cause,
    },
    /// The agent answered with a JSON-RPC error.
    #[error("the A2A agent at {url} answered with error {code}: {message}")]
    Rpc {
        /// The URL called.
        url: String,
        /// The JSON-RPC error code (A2A codes are `-32001`…`-32009`).
        code: i32,
        /// The agent's error message.
        message: String,
    },
    /// The agent answered with something that is not valid A2A (an unexpected HTTP status, a
    /// body that does not parse, an event out of place).
    #[error("the A2A agent at {url} sent an invalid answer: {message}")]
    Protocol {
        /// The URL called.
        url: String,
        /// What was wrong.
        message: String,
    },
    /// The agent refused the credentials (HTTP 401 or 403): set or fix the bearer token.
    #[error("the A2A agent at {url} refused the credentials: {message}")]
    Unauthorized {
        /// The URL called.
        url: String,
        /// The HTTP status and what the agent said.
        message: String,
    },
    /// The agent card could not be read.
    #[error("the agent card at {url} is not usable: {message}")]
    Card {
        /// Where the card was fetched from.
        url: String,
        /// What was wrong.
        message: String,
    },
    /// The card offers no interface this client speaks (JSON-RPC with protocol 1.x or 0.3).
    #[error(
        "the A2A agent at {url} offers no interface this client speaks (JSON-RPC, protocol 1.x or 0.3); it offers: {offered}"
    )]
    NoInterface {
        /// The agent's URL.
        url: String,
        /// The interfaces the card declares, as `binding protocolVersion url`.
        offered: String,
    },
    /// The remote task ended without the answer asked for (failed, rejected, cancelled, or
    /// waiting for something this client cannot give).
    #[error("remote task {task_id} ended in state {state}: {message}")]
    TaskEnded {
        /// The task's id.
        task_id: String,
        /// Its final state, e.g. `TASK_STATE_FAILED`.
        state: String,
        /// The agent's status message, if it sent one.
        message: String,
    },
    /// The agent kept asking for tool calls beyond the session's limit. The remote task, if
    /// the calls came in one, was cancelled.
    #[error(
        "the agent asked for tool calls in more than {max_rounds} rounds{}. Raise the limit with `max_rounds` if the agent legitimately needs more",
        if task_id.is_empty() { String::new() } else { format!(" (task {task_id}); the task was cancelled") }
    )]
    MaxRounds {
        /// The limit that was reached.
        max_rounds: usize,
        /// The task that was cancelled; empty when the calls came in a message.
        task_id: String,
    },
    /// The agent's reply is neither an answer nor tool calls this client can run, e.g. a
    /// message with no text, or a completed task with nothing in it. Not retryable: the same
    /// request gets the same reply.
    #[error("the A2A agent at {url} sent a reply that is neither an answer nor tool calls: {what}")]
    UnexpectedReply {
        /// The agent's URL.
        url: String,
        /// What the reply held.
        what: String,
    },
    /// A tools data part in the agent's answer was malformed.
    #[error(transparent)]
    InvalidParts(#[from] InvalidToolsPart),
    /// A registry configuration mistake (bad alias, duplicate names, unknown agent, a header
    /// that is not valid HTTP).
    #[error("{0}")]
    Config(String),
    /// The trusted roots could not be read or the HTTPS client could not be set up.
    #[error(transparent)]
    Tls(#[from] crate::tls::TlsError),
}

impl A2aClientError {
    /// Whether trying the same request again may succeed: connection failures, invalid
    /// answers and the agent's internal errors are; refusals of the request itself are not.
    pub fn is_retryable(&self) -> bool {
        match self {
            A2aClientError::Connection { .. } | A2aClientError::Protocol { .. } => true,
            A2aClientError::Card { .. } => true,
            A2aClientError::Rpc { code, .. } => !matches!(
                *code,
                error_code::INVALID_PARAMS
                    | error_code::INVALID_REQUEST
                    | error_code::METHOD_NOT_FOUND
                    | error_code::TASK_NOT_FOUND
                    | error_code::TASK_NOT_CANCELABLE
                    | error_code::UNSUPPORTED_OPERATION
                    | error_code::CONTENT_TYPE_NOT_SUPPORTED
                    | error_code::EXTENSION_SUPPORT_REQUIRED
                    | error_code::VERSION_NOT_SUPPORTED
            ),
            _ => false,
        }
    }

    /// Classify an error reported by `a2a-client-lf`.
    ///
    /// Workaround for a defect of `a2a-client-lf` 0.2.9: it reports its own transport failures
    /// (connection refused, a stream cut mid-message, a body that does not parse) as
    /// `A2AError::internal`, the same code (`-32603`) a remote agent's internal error has, with
    /// the difference only in the message text. Those texts are recognised here; the test
    /// `client_errors_are_classified` pins them, so an upgrade that changes them fails loudly.
    pub(crate) fn from_sdk(url: &str, error: A2AError) -> Self {
        const CONNECTION: [&str; 3] = [
            "HTTP request failed",
            "SSE stream error",
            "stream ended with",
        ];
        const PROTOCOL: [&str; 6] = [
            "failed to parse JSON-RPC response",
            "failed to deserialize result",
            "failed to serialize request",
            "SSE parse error",
            "SSE UTF-8 decode error",
            "JSON-RPC response missing result",
        ];
        let url = url.to_string();
        let from_client = error.code == error_code::INTERNAL_ERROR && error.details.is_none();
        if from_client && CONNECTION.iter().any(|p| error.message.starts_with(p)) {
            return A2aClientError::Connection {
                url,
                source: Cause::explained(error.message.clone(), error),
            };
        }
        if from_client && PROTOCOL.iter().any(|p| error.message.starts_with(p)) {
            return A2aClientError::Protocol {
                url,
                message: error.message,
            };
        }
        A2aClientError::Rpc {
            url,
            code: error.code,
            message: error.message,
        }
    }

    /// An error from the HTTP client used directly (card fetches, the 0.3 wire).
    pub(crate) fn from_http(url: &str, error: reqwest::Error) -> Self {
        let message = crate::util::error_chain(&error);
        if error.is_decode() {
            A2aClientError::Protocol {
                url: url.to_string(),
                message,
            }
        } else {
            A2aClientError::Connection {
                url: url.to_string(),
                source: Cause::explained(message, error),
            }
        }
    }
}
