use crate::error::{ToolError, ToolErrorKind};

pub(super) fn no_hook(tool: &str) -> ToolError {
    ToolError::new(
        ToolErrorKind::Denied,
        format!("tool `{tool}` needs approval before it runs, and no one is available to approve it"),
    )
    .with_detail(
        "no ApprovalHook: set one for the toolkit (ToolkitBuilder::approval_hook), for a handle (Toolkit::with_approval_hook) or for an agent (ReActAgentBuilder::approver)",
    )
}

pub(crate) fn denied(tool: &str, reason: &str) -> ToolError {
    ToolError::new(
        ToolErrorKind::Denied,
        format!("the call of tool `{tool}` was not approved: {reason}"),
    )
}
