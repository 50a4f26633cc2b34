//! Code mode (feature `code`): programs in the QuickJS sandbox calling tools through the
//! toolkit's rules, their limits and escapes, the journal and replay, and agents that run
//! programs (locally, paused at approvals and resumed in another process). With `sqlite` and
//! `postgres`: journals in real databases, and programs resumed after their process (or their
//! job queue worker) was killed with SIGKILL.

mod agent;
#[path = "../support/bank.rs"]
mod bank;
mod fixtures;
mod hooks;
mod journal;
mod sandbox;
mod security;
#[path = "../support/seen.rs"]
mod seen;
mod tool;

#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod crash;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod crash_fixture;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
#[path = "../db/mod.rs"]
mod db;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod sql_store;

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
