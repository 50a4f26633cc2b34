//! [`ModelError`]: why a model request failed, and whether trying again may help.

use std::time::Duration;

/// Why a model request failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The provider answered with an error status.
    #[error("the model provider answered HTTP {status}: {body}")]
    Http {
        /// HTTP status.
        status: u16,
        /// Response body (truncated).
        body: String,
    },
    /// Too many requests; try again after the given time if known.
    #[error("the model provider is rate limiting requests{}", retry_after.map(|d| format!(" (retry after {d:?})")).unwrap_or_default())]
    RateLimited {
        /// The provider's `retry-after`, if it sent one.
        retry_after: Option<Duration>,
    },
    /// The response could not be understood.
    #[error("the model provider's response could not be read: {0}")]
    Malformed(String),
    /// The request did not get through (connection, timeout).
    #[error("the model provider could not be reached: {0}")]
    Transport(String),
    /// The provider was configured wrongly (no model, a bad URL, header or key); fix the
    /// configuration, retrying cannot help.
    #[error("invalid model provider configuration: {0}")]
    Config(String),
    /// A scripted model ran out of turns or saw a request it did not expect.
    #[error("scripted model: {0}")]
    Script(String),
}

impl ModelError {
    /// Whether trying again may succeed (rate limits, server errors, transport failures).
    pub fn is_transient(&self) -> bool {
        match self {
            ModelError::RateLimited { .. } | ModelError::Transport(_) => true,
            ModelError::Http { status, .. } => *status >= 500 || *status == 408,
            _ => false,
        }
    }
}
