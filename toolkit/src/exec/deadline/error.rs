use crate::error::{ToolError, ToolErrorKind};

pub(crate) use crate::exec::timeout::error::{Limit, elapsed};

/// The call was cancelled through its context's token (or its batch was dropped).
pub(crate) fn cancelled(tool: &str) -> ToolError {
    ToolError::new(
        ToolErrorKind::Cancelled,
        format!("tool `{tool}` was cancelled before it finished"),
    )
}
