//! Helpers for the tests that import another SDK's server into a toolkit (`import`, `js`).

use std::time::{Duration, Instant};

use agent_toolkit::prelude::*;
use serde_json::Value;

/// The names of the tools `toolkit` lists, in its order.
pub fn names(toolkit: &Toolkit) -> Vec<String> {
    toolkit
        .snapshot()
        .iter()
        .map(|d| d.name().to_string())
        .collect()
}

/// Call `name` with JSON arguments and no context.
pub async fn call(toolkit: &Toolkit, name: &str, args: Value) -> ToolResult {
    toolkit
        .call(ToolCall::json("c", name, args), &ToolContext::new())
        .await
}

/// Wait (up to 10 s) until the toolkit lists `name`.
pub async fn wait_for_tool(toolkit: &Toolkit, name: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !names(toolkit).iter().any(|n| n == name) {
        assert!(
            Instant::now() < deadline,
            "{name} never appeared: {:?}",
            names(toolkit)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
