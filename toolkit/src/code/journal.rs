//! [`Journal`]: what a program did — its code, the seed of its `Math.random`, its frozen clock,
//! and every call it made with the answer it got — and [`JournalStore`], where journals are
//! kept so that a program interrupted by a crash resumes in another process.
//!
//! Replay: a program that runs again with its journal is given the journaled answers instead of
//! running the calls again. It is deterministic (no clock, no entropy, no host, answers delivered
//! in call order), so it makes the same calls in the same order; a call that differs from the
//! journal's (another tool, other arguments) stops it with a
//! [`ToolErrorKind::Execution`](crate::error::ToolErrorKind) error naming both — never a silent
//! divergence.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::exec::ApprovalDecision;

/// Everything needed to run a program again to the same point: its code, seed and clock, and
/// each call it made (tool, arguments, answer), in order. Plain data (serde); carried in a
/// [`PausedRun`](crate::agent::PausedRun) when a program waits for an approval, and kept in a
/// [`JournalStore`] call by call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Journal {
    pub(crate) code: String,
    pub(crate) seed: u32,
    /// What `Date.now()` answers, in milliseconds since the Unix epoch.
    pub(crate) clock_ms: f64,
    pub(crate) entries: Vec<JournalEntry>,
    /// The program's final answer, once it ended: running it again hands this back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) finished: Option<Finished>,
}

/// How a finished program ended, as the model saw it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Finished {
    pub(crate) text: String,
    pub(crate) is_error: bool,
}

/// One call a program made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JournalEntry {
    /// The tool (or `search_tools`).
    pub tool: String,
    /// The arguments the program passed.
    pub arguments: Value,
    /// The decision on a call that waited for approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<ApprovalDecision>,
    /// Its answer; `None` while it runs (a call found so after a crash may or may not have
    /// taken effect).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
}

/// The answer a program got for one call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The value the call resolved to: the tool's structured output, or its text as a string.
    Value(Value),
    /// The error the call threw, with the [`ToolErrorKind`](crate::error::ToolErrorKind) name.
    Error {
        /// What the program's `ToolError` says.
        message: String,
        /// The error kind's snake_case name.
        kind: String,
    },
}

impl Journal {
    /// A new journal for `code`, with a fresh seed and the current time as its clock.
    pub fn new(code: impl Into<String>) -> Self {
        let clock_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as f64)
            .unwrap_or(0.0);
        Journal {
            code: code.into(),
            seed: fastrand::u32(..),
            clock_ms,
            entries: Vec::new(),
            finished: None,
        }
    }

    /// The same journal with `Math.random` seeded with `seed` and `Date.now()` answering
    /// `clock_ms` (for tests and reproducible runs).
    pub fn with_seed_and_clock(mut self, seed: u32, clock_ms: f64) -> Self {
        self.seed = seed;
        self.clock_ms = clock_ms;
        self
    }

    /// The program's code.
    pub fn code(&self) -> &str {
        &self.code
    }

    /// The calls made so far, in order.
    pub fn entries(&self) -> &[JournalEntry] {
        &self.entries
    }

    /// Whether the program ran to its end (a finished program run again hands back its answer
    /// and runs nothing).
    pub fn is_finished(&self) -> bool {
        self.finished.is_some()
    }

    /// Record the decision on call `seq`, which waits for approval.
    pub(crate) fn decide(&mut self, seq: usize, decision: ApprovalDecision) {
        if let Some(entry) = self.entries.get_mut(seq) {
            entry.decision = Some(decision);
        }
    }
}

/// Why a journal could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JournalError {
    /// The store failed (its database is down, say).
    #[error("the program journal store failed: {0}")]
    Store(String),
    /// What the store holds is not a journal.
    #[error("the stored program journal is unreadable: {0}")]
    Malformed(String),
}

/// Where program journals are kept, by program id: the seam a durable store plugs into
/// ([`MemoryJournalStore`] in this process; `SqlJournalStore`, with the `sqlite` or `postgres`
/// feature, in SQLite or Postgres, which a program's next run in another process reads back).
///
/// The runner saves the journal before a batch of calls runs (their entries without answers) and
/// again when their answers are in, so a crash leaves at most one batch whose calls may or may
/// not have taken effect: on replay, calls of `read_only` or `idempotent` tools among them run
/// again and the others are answered with an error saying their outcome is unknown — never run
/// twice.
pub trait JournalStore: Send + Sync + 'static {
    /// The journal of program `id`, if it ever started.
    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Journal>, JournalError>>;

    /// Keep `journal` as program `id`'s, replacing what was kept.
    fn save<'a>(
        &'a self,
        id: &'a str,
        journal: &'a Journal,
    ) -> BoxFuture<'a, Result<(), JournalError>>;

    /// Forget program `id`.
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), JournalError>>;
}

/// Journals kept in this process (cloning shares them).
#[derive(Clone, Default)]
pub struct MemoryJournalStore(Arc<Mutex<HashMap<String, Journal>>>);

impl MemoryJournalStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Journal>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl std::fmt::Debug for MemoryJournalStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryJournalStore")
            .field("journals", &self.map().len())
            .finish()
    }
}

impl JournalStore for MemoryJournalStore {
    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Journal>, JournalError>> {
        let found = self.map().get(id).cloned();
        Box::pin(std::future::ready(Ok(found)))
    }

    fn save<'a>(
        &'a self,
        id: &'a str,
        journal: &'a Journal,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        self.map().insert(id.to_string(), journal.clone());
        Box::pin(std::future::ready(Ok(())))
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), JournalError>> {
        self.map().remove(id);
        Box::pin(std::future::ready(Ok(())))
    }
}
