//! Code mode (feature `code`): programs in the QuickJS sandbox calling tools through the
//! toolkit's rules, their limits and escapes, the journal and replay, and agents that run
//! programs (locally, paused at approvals and resumed in another process).

mod agent;
mod fixtures;
mod journal;
mod sandbox;
mod security;

use agent_toolkit::ToolResult;

/// The text of a result that must have succeeded.
pub fn ok(result: &ToolResult) -> String {
    match &result.outcome {
        Ok(out) => out.as_text().to_string(),
        Err(e) => panic!("expected success, got {e:?}"),
    }
}

/// The error message of a result that must have failed.
pub fn err(result: &ToolResult) -> String {
    match &result.outcome {
        Ok(out) => panic!("expected an error, got {}", out.as_text()),
        Err(e) => format!("{:?}: {}", e.kind(), e.message()),
    }
}
