//! [`ModelError`]: why a model request failed, and whether trying again may help.

use std::time::Duration;

use crate::error::Cause;

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
    /// The server could not read the model's own output: it parses what the model writes into
    /// tool calls, and the model wrote something else (llama.cpp: "The model produced output
    /// that does not match the expected … format"; Ollama: "error parsing tool call"). Seen
    /// when a small model writes two calls in a turn in a way its chat template does not
    /// allow. Not transient: at temperature 0 the same request gets the same output, so it is
    /// not sent again as it was. The providers first ask again with parallel tool calls off,
    /// when they were on (and, if the server takes that, keep them off for every later request
    /// through the same provider); then, with `text_tool_calls` on (the default), once more
    /// without native tools, the tools described in the prompt, reading the calls from the
    /// text. This error means none of that helped.
    #[error("the model provider could not read the model's own output (HTTP {status}): {message}")]
    OutputRejected {
        /// HTTP status (500 from the servers seen).
        status: u16,
        /// The server's message.
        message: String,
    },
    /// The response could not be understood.
    #[error("the model provider's response could not be read: {0}")]
    Malformed(String),
    /// The request did not get through (connection, timeout). The HTTP client's error is kept
    /// as the source (`downcast_ref::<reqwest::Error>()` on the [`Cause`]).
    #[error("the model provider could not be reached: {0}")]
    Transport(#[source] Cause),
    /// The provider was configured wrongly (no model, a bad URL, header or key); fix the
    /// configuration, retrying cannot help.
    #[error("invalid model provider configuration: {0}")]
    Config(String),
    /// A scripted model ran out of turns or saw a request it did not expect.
    #[error("scripted model: {0}")]
    Script(String),
}

impl ModelError {
    /// The error for an HTTP error status with this body: [`OutputRejected`](Self::OutputRejected)
    /// when a server says it could not read the model's own output, else
    /// [`Http`](Self::Http).
    #[cfg(any(feature = "openai", feature = "anthropic"))]
    pub(crate) fn from_status(status: u16, body: String) -> Self {
        const OUTPUT_REJECTED: [&str; 2] = [
            // llama.cpp's server.
            "The model produced output that does not match",
            // Ollama.
            "error parsing tool call",
        ];
        if status >= 500 && OUTPUT_REJECTED.iter().any(|p| body.contains(p)) {
            let message = serde_json::from_str::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| {
                    let error = v.get("error").unwrap_or(&v);
                    let message = error.get("message").or(Some(error))?;
                    message.as_str().map(str::to_owned)
                })
                .unwrap_or(body);
            return ModelError::OutputRejected { status, message };
        }
        ModelError::Http { status, body }
    }

    /// Whether trying again may succeed (rate limits, server errors, transport failures). The
    /// one retry predicate of the library's errors, as on
    /// [`ToolError`](crate::ToolError::is_retryable).
    pub fn is_retryable(&self) -> bool {
        match self {
            ModelError::RateLimited { .. } | ModelError::Transport(_) => true,
            ModelError::Http { status, .. } => *status >= 500 || *status == 408,
            _ => false,
        }
    }
}
