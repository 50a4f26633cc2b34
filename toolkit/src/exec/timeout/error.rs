use std::time::Duration;

use crate::error::{ToolError, ToolErrorKind};

/// Which limit a [`Timeout`](super::Timeout) applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Limit {
    /// The deadline of one attempt.
    Attempt,
    /// The deadline of the whole call, retries included (and its cancellation).
    Total,
}

/// "tool `x` did not finish within 2s (the limit per attempt)".
pub(crate) fn elapsed(tool: &str, after: Duration, limit: Limit) -> ToolError {
    let which = match limit {
        Limit::Attempt => "the limit per attempt",
        Limit::Total => "the limit for the whole call, retries included",
    };
    ToolError::new(
        ToolErrorKind::Timeout,
        format!("tool `{tool}` did not finish within {after:?} ({which})"),
    )
}

/// The call was cancelled through its context's token (or its batch was dropped).
pub(crate) fn cancelled(tool: &str) -> ToolError {
    ToolError::new(
        ToolErrorKind::Cancelled,
        format!("tool `{tool}` was cancelled before it finished"),
    )
}
