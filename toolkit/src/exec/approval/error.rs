use crate::error::{ToolError, ToolErrorKind};

pub(super) fn no_hook(tool: &str) -> ToolError {
    ToolError::new(
        ToolErrorKind::Denied,
        format!("tool `{tool}` needs approval before it runs, and no one is available to approve it"),
    )
    .with_detail(
        "no ApprovalHook: set one with ToolkitBuilder::approval_hook or put an Arc<dyn ApprovalHook> in the context",
    )
}

pub(super) fn denied(tool: &str, reason: &str) -> ToolError {
    ToolError::new(
        ToolErrorKind::Denied,
        format!("the call of tool `{tool}` was not approved: {reason}"),
    )
}
