//! The durable backend: the ledger table next to apalis's job tables, and what submitting
//! processes and workers do with it.
//!
//! apalis owns the queue: storing jobs, handing them to one worker at a time, worker
//! heartbeats, and putting the jobs of a dead worker back. The ledger (`agent_toolkit_jobs`)
//! owns what the toolkit promises about calls: the call as the model made it, one row per job
//! (its id is the job id), whether a job of a tool that must not run twice has started, its one
//! result, and whether the result was taken and reported.
//!
//! A row's `state` ([`State`]) is `pending` (queued), `running` (a worker started a tool that
//! is neither idempotent nor read-only), `finished` or `failed`. Only a row in `pending` or `running` can
//! get a result, so a result is written once.
//!
//! | File | Owns |
//! |---|---|
//! | `mod.rs` | the ledger row and its [`State`], the apalis payload, and what both sides do with one row |
//! | `codec.rs` | a row as the toolkit sees it: its record, its result encoded and decoded |
//! | `submit.rs` | the submitting side of a queue ([`Durable`], the job backend itself) |
//! | `worker.rs` | what a worker reads and writes for many jobs at once ([`WorkerLedger`]) |

/// The stored name of a ledger [`State`], or an SQL list of them, as a literal: the one
/// spelling of the states, for [`State::as_str`] and for the statements, which name states in
/// their SQL (`concat!`) rather than bind them (the ledger's partial index, in `job_queue.rs`,
/// serves only statements that name its states). Rows outlive builds: the names never change.
macro_rules! state {
    (pending) => {
        "pending"
    };
    (running) => {
        "running"
    };
    (finished) => {
        "finished"
    };
    (failed) => {
        "failed"
    };
    // The states of a job without a result, and with one.
    (unfinished) => {
        concat!("('", state!(pending), "', '", state!(running), "')")
    };
    (ended) => {
        concat!("('", state!(finished), "', '", state!(failed), "')")
    };
}

mod codec;
mod submit;
mod worker;

use serde::{Deserialize, Serialize};

use std::future::Future;
use std::sync::Arc;

use super::gather::Gather;
use super::job_queue::JobQueue;
use crate::jobs::{JobError, JobStatus};
use crate::storage::stored::Stored;
use crate::storage::{DatabaseError, on_pool};
use crate::tool::{ToolCall, ToolResult};

pub(super) use worker::{Finished, WorkerLedger};

const COLUMNS: &str =
    "id, call_id, tool, arguments, state, result, taken, submitted_ms, finished_ms, started_by";

/// Most calls stored by one transaction, rows read or results written by one statement (see
/// [`Gather`]).
const GATHER_MOST: usize = 1000;

/// What apalis carries for one job: which ledger row it is.
#[derive(Serialize, Deserialize)]
pub(super) struct Payload {
    pub(super) job: u64,
    /// The W3C `traceparent` of the span the call was submitted from (with the `otel`
    /// feature): the job's span links to it. Workers that predate it ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) traceparent: Option<String>,
}

impl Stored for Payload {
    const WHAT: &'static str = "a job payload";
    const VERSION: u32 = 1;
}

/// A [`Gather`] of `queue` whose every write is `write`, given a clone of the queue.
fn gather<T, R, F>(queue: &JobQueue, write: fn(JobQueue, Vec<T>) -> F) -> Arc<Gather<T, R>>
where
    T: Send + 'static,
    R: Send + 'static,
    F: Future<Output = Vec<Result<R, DatabaseError>>> + Send + 'static,
{
    let queue = queue.clone();
    Gather::new(
        GATHER_MOST,
        Box::new(move |items| Box::pin(write(queue.clone(), items))),
    )
}

/// Row ids written into a statement as they are, `1, 2, 3` (SQLite binds no arrays). They are
/// integers the database gave: nothing in them needs quoting.
#[cfg(feature = "sqlite")]
fn id_list<T: ToString>(ids: &[T]) -> String {
    ids.iter().map(T::to_string).collect::<Vec<_>>().join(", ")
}

/// The error of a statement on the queue's database.
pub(super) fn db_error(queue: &JobQueue, error: sqlx::Error) -> JobError {
    JobError::Database(queue.db.error(error))
}

/// One ledger row as stored.
#[derive(Clone, sqlx::FromRow)]
pub(super) struct Row {
    pub(super) id: i64,
    pub(super) call_id: String,
    pub(super) tool: String,
    pub(super) arguments: String,
    pub(super) state: String,
    pub(super) result: Option<String>,
    pub(super) taken: bool,
    pub(super) submitted_ms: i64,
    /// When its result was stored.
    pub(super) finished_ms: Option<i64>,
    /// The worker that marked the job started.
    pub(super) started_by: Option<String>,
}

/// Where a ledger row is (its `state`): queued, running a tool that is neither idempotent nor
/// read-only, or ended with a result. Stored by name ([`as_str`](Self::as_str)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    Pending,
    Running,
    Finished,
    Failed,
}

impl State {
    const ALL: [State; 4] = [
        State::Pending,
        State::Running,
        State::Finished,
        State::Failed,
    ];

    /// The name stored in the ledger.
    pub(super) fn as_str(self) -> &'static str {
        match self {
            State::Pending => state!(pending),
            State::Running => state!(running),
            State::Finished => state!(finished),
            State::Failed => state!(failed),
        }
    }

    /// The state stored as `name`, if it is one.
    pub(super) fn parse(name: &str) -> Option<State> {
        State::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// Where a job in this state stands for the toolkit: queued and running are both pending.
    pub(super) fn status(self) -> JobStatus {
        match self {
            State::Pending | State::Running => JobStatus::Pending,
            State::Finished => JobStatus::Finished,
            State::Failed => JobStatus::Failed,
        }
    }

    /// The state `result` ends its job in.
    pub(super) fn ended_by(result: &ToolResult) -> State {
        match JobStatus::of(result) {
            JobStatus::Failed => State::Failed,
            _ => State::Finished,
        }
    }
}

impl Row {
    /// The row's state; `None` for a name this build does not know.
    pub(super) fn state(&self) -> Option<State> {
        State::parse(&self.state)
    }

    pub(super) fn call(&self) -> ToolCall {
        ToolCall::new(
            self.call_id.as_str(),
            self.tool.as_str(),
            self.arguments.as_str(),
        )
    }
}

/// The ledger row of job `id` of `queue`, if there is one.
pub(super) async fn load(queue: &JobQueue, id: u64) -> Result<Option<Row>, JobError> {
    let text = format!("SELECT {COLUMNS} FROM agent_toolkit_jobs WHERE queue = $1 AND id = $2");
    let name = &queue.settings.name;
    let row = on_pool!(queue.db, |pool, sql| sqlx::query_as::<_, Row>(sql(&text))
        .bind(name)
        .bind(id as i64)
        .fetch_optional(pool)
        .await);
    row.map_err(|e| db_error(queue, e))
}

/// Mark job `id` started by `worker`, if it is still queued; false when it is not (another
/// delivery got it first, or it finished).
pub(super) async fn begin(queue: &JobQueue, id: u64, worker: &str) -> Result<bool, JobError> {
    const TEXT: &str = concat!(
        "UPDATE agent_toolkit_jobs SET state = '",
        state!(running),
        "', runs = runs + 1, started_by = $2 WHERE id = $1 AND state = '",
        state!(pending),
        "'"
    );
    let done = on_pool!(queue.db, |pool, sql| sqlx::query(sql(TEXT))
        .bind(id as i64)
        .bind(worker)
        .execute(pool)
        .await
        .map(|r| r.rows_affected()));
    done.map(|n| n == 1).map_err(|e| db_error(queue, e))
}

#[cfg(test)]
mod tests {
    use super::State;

    /// The names are the ledger's format on disk: rows written by one build are read by the next.
    #[test]
    fn states_keep_their_stored_names() {
        let names: Vec<&str> = State::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(names, ["pending", "running", "finished", "failed"]);
        for state in State::ALL {
            assert_eq!(State::parse(state.as_str()), Some(state));
        }
        assert_eq!(State::parse("done"), None);
        assert_eq!(state!(unfinished), "('pending', 'running')");
        assert_eq!(state!(ended), "('finished', 'failed')");
    }
}
