//! Tracing spans, in a test binary of their own: a thread-scoped subscriber races with other
//! tests' threads registering the same callsites (one can cache "not interested" for good),
//! so no other test runs beside this one.

mod spans;
#[path = "../engine/tools.rs"]
mod tools;

use agent_toolkit::prelude::*;

/// Run one call with an empty context.
pub async fn call(toolkit: &Toolkit, name: &str, args: &str) -> ToolResult {
    toolkit
        .call(ToolCall::new("c1", name, args), &ToolContext::new())
        .await
}
