//! Integration tests of the execution engine: the tower stack, timeouts, retries, batches,
//! panics, cancellation, progress, tracing, approval, background tools, and the faults a
//! toolkit must survive.

mod approval;
mod background;
mod batches;
mod cancellation;
mod faults;
mod layers;
mod retries;
mod timeouts;
mod tools;

use agent_toolkit::prelude::*;

/// Run one call with an empty context.
pub async fn call(toolkit: &Toolkit, name: &str, args: &str) -> ToolResult {
    toolkit
        .call(ToolCall::new("c1", name, args), &ToolContext::new())
        .await
}

/// The error of a result that must have failed.
pub fn err(result: &ToolResult) -> &ToolError {
    result
        .error()
        .unwrap_or_else(|| panic!("expected an error, got {}", result.model_text()))
}

/// A call with a numbered id.
pub fn numbered(i: usize, name: &str, args: &str) -> ToolCall {
    ToolCall::new(format!("call-{i}"), name, args)
}
