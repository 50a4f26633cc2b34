//! Planning a batch of calls from one model turn.
//!
//! A batch is cut into segments run one after another: a maximal run of ordinary calls runs
//! concurrently (up to the concurrency cap), and each call of a `sequential` tool is a
//! segment of its own — a barrier that waits for everything before it and runs alone.
//! Results keep the calls' order in [`Toolkit::call_all`](crate::Toolkit::call_all) and come
//! as they finish, tagged with their call id, in [`Toolkit::call_stream`](crate::Toolkit::call_stream).
//!
//! Concurrency is cooperative on the caller's task (like `join_all`), which makes dropping the
//! batch future cancel every call in it, with nothing left running. Blocking tools still get
//! threads of their own from the blocking pool.

use std::collections::HashSet;
use std::sync::Arc;

use crate::error::{ToolError, ToolErrorKind};
use crate::tool::{ToolCall, ToolResult};

/// One call of a batch: to be run, or already answered.
pub(crate) enum BatchItem {
    Run(ToolCall),
    Answered(ToolResult),
}

/// Cut `calls` into segments; a repeated call id gets an error result instead of a run (the
/// first call with the id runs).
pub(crate) fn plan(
    calls: Vec<ToolCall>,
    is_sequential: impl Fn(&ToolCall) -> bool,
) -> Vec<Vec<(usize, BatchItem)>> {
    let mut seen: HashSet<Arc<str>> = HashSet::with_capacity(calls.len());
    let mut segments: Vec<Vec<(usize, BatchItem)>> = Vec::new();
    let mut current: Vec<(usize, BatchItem)> = Vec::new();
    for (index, call) in calls.into_iter().enumerate() {
        if !seen.insert(call.id.clone()) {
            current.push((index, BatchItem::Answered(duplicate(call))));
            continue;
        }
        if is_sequential(&call) {
            if !current.is_empty() {
                segments.push(std::mem::take(&mut current));
            }
            segments.push(vec![(index, BatchItem::Run(call))]);
        } else {
            current.push((index, BatchItem::Run(call)));
        }
    }
    if !current.is_empty() {
        segments.push(current);
    }
    segments
}

/// The answer to a call whose id an earlier call of the same turn has.
pub(crate) fn duplicate(call: ToolCall) -> ToolResult {
    let error = ToolError::new(
        ToolErrorKind::InvalidArguments,
        format!(
            "call id `{}` was already used by another call in this turn; every tool call needs its own id",
            call.id
        ),
    );
    ToolResult::new(call.id, call.name, Err(error), 0)
}
