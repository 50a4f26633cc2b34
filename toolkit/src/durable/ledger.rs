//! The durable backend: the ledger table next to apalis's job tables, and what submitting
//! processes and workers do with it.
//!
//! apalis owns the queue: storing jobs, handing them to one worker at a time, worker
//! heartbeats, and putting the jobs of a dead worker back. The ledger (`agent_toolkit_jobs`)
//! owns what the toolkit promises about calls: the call as the model made it, one row per job
//! (its id is the job id), whether a job of a tool that must not run twice has started, its one
//! result, and whether the result was taken and reported.
//!
//! A row's `state` is `pending` (queued), `running` (a worker started a tool that is neither
//! idempotent nor read-only), `finished` or `failed`. Only a row in `pending` or `running` can
//! get a result, so a result is written once.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, UNIX_EPOCH};

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use super::gather::Gather;
use super::job_queue::JobQueue;
use crate::context::{ContextReads, ToolContext};
use crate::error::{ToolError, ToolErrorKind};
use crate::jobs::{
    JobBackend, JobError, JobRecord, JobStatus, MakeJobBackend, Notifier, Submission, Submitted,
};
use crate::storage::stored::{self, Stored};
use crate::storage::{DatabaseError, Pool, now_ms, on_pool};
use crate::tool::result::{Job, JobId};
use crate::tool::{Content, ToolCall, ToolOutput, ToolResult};

const COLUMNS: &str =
    "id, call_id, tool, arguments, state, result, taken, submitted_ms, started_by";

/// Most rows one claim takes.
const CLAIM_BATCH: usize = 512;

/// Most calls stored by one transaction, rows read or results written by one statement (see
/// [`Gather`]).
const GATHER_MOST: usize = 1000;

/// How long a claimed result waits for the process that claimed it to confirm it has it,
/// before another process may claim it (that process may have died in between).
const CLAIM_LEASE_MS: i64 = 60_000;

/// What apalis carries for one job: which ledger row it is.
#[derive(Serialize, Deserialize)]
pub(super) struct Payload {
    pub(super) job: u64,
}

impl Stored for Payload {
    const WHAT: &'static str = "a job payload";
    const VERSION: u32 = 1;
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
    /// The worker that marked the job started.
    pub(super) started_by: Option<String>,
}

impl Row {
    pub(super) fn call(&self) -> ToolCall {
        ToolCall::new(
            self.call_id.as_str(),
            self.tool.as_str(),
            self.arguments.as_str(),
        )
    }

    fn record(self) -> Result<JobRecord, JobError> {
        let id = JobId(self.id as u64);
        let status = match self.state.as_str() {
            "pending" | "running" => JobStatus::Pending,
            "finished" => JobStatus::Finished,
            "failed" => JobStatus::Failed,
            other => {
                return Err(JobError::Corrupt {
                    job: id.0,
                    message: format!("unknown state `{other}`"),
                });
            }
        };
        let result = match &self.result {
            Some(text) if status != JobStatus::Pending => Some(decode_result(&self, text)?),
            _ => None,
        };
        Ok(JobRecord {
            id,
            call: self.call(),
            status,
            result,
            submitted: UNIX_EPOCH + Duration::from_millis(self.submitted_ms.max(0) as u64),
            taken: self.taken,
        })
    }
}

/// A result as stored in the ledger (the call id and tool name are columns of the row).
#[derive(Serialize, Deserialize)]
struct StoredResult {
    attempts: u32,
    // Not flattened: serde cannot flatten a `RawValue`.
    outcome: StoredOutcome,
}

impl Stored for StoredResult {
    const WHAT: &'static str = "a stored result";
    const VERSION: u32 = 1;
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum StoredOutcome {
    Text {
        text: String,
        #[serde(default)]
        metadata: serde_json::Map<String, serde_json::Value>,
    },
    Json {
        json: Box<RawValue>,
        #[serde(default)]
        metadata: serde_json::Map<String, serde_json::Value>,
    },
    Error {
        kind: String,
        message: String,
        #[serde(default)]
        detail: Option<String>,
        #[serde(default)]
        retryable: bool,
    },
}

pub(super) fn encode_result(result: &ToolResult) -> String {
    let outcome = match &result.outcome {
        Ok(output) => match &output.content {
            Content::Text(text) => StoredOutcome::Text {
                text: text.clone(),
                metadata: output.metadata.clone(),
            },
            Content::Json(json) => StoredOutcome::Json {
                json: json.clone(),
                metadata: output.metadata.clone(),
            },
        },
        Err(error) => StoredOutcome::Error {
            kind: error.kind().as_str().to_string(),
            message: error.message().to_string(),
            detail: error.source().map(|s| s.to_string()),
            retryable: error.is_retryable(),
        },
    };
    stored::encode(&StoredResult {
        attempts: result.attempts,
        outcome,
    })
}

fn decode_result(row: &Row, text: &str) -> Result<ToolResult, JobError> {
    let id = JobId(row.id as u64);
    let corrupt = |message: String| JobError::Corrupt { job: id.0, message };
    let stored: StoredResult = stored::decode(text).map_err(|e| corrupt(e.to_string()))?;
    let outcome = match stored.outcome {
        StoredOutcome::Text { text, metadata } => {
            let mut output = ToolOutput::text(text);
            output.metadata = metadata;
            Ok(output)
        }
        StoredOutcome::Json { json, metadata } => Ok(ToolOutput {
            content: Content::Json(json),
            metadata,
        }),
        StoredOutcome::Error {
            kind,
            message,
            detail,
            retryable,
        } => {
            let kind = kind
                .parse::<ToolErrorKind>()
                .map_err(|e| corrupt(e.to_string()))?;
            let mut error = ToolError::new(kind, message).with_retryable(retryable);
            if let Some(detail) = detail {
                error = error.with_detail(detail);
            }
            Err(error)
        }
    };
    let mut result = ToolResult::new(
        row.call_id.as_str(),
        row.tool.as_str(),
        outcome,
        stored.attempts,
    );
    result.job = Some(Job::Finished(id));
    Ok(result)
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
    const TEXT: &str = "UPDATE agent_toolkit_jobs SET state = 'running', runs = runs + 1, \
                        started_by = $2 WHERE id = $1 AND state = 'pending'";
    let done = on_pool!(queue.db, |pool, sql| sqlx::query(sql(TEXT))
        .bind(id as i64)
        .bind(worker)
        .execute(pool)
        .await
        .map(|r| r.rows_affected()));
    done.map(|n| n == 1).map_err(|e| db_error(queue, e))
}

/// The error of a statement that [`Gather`] wrote for many callers.
fn gathered(queue: &JobQueue, error: sqlx::Error) -> DatabaseError {
    queue.db.error(error)
}

/// What a worker reads and writes for many jobs at once: their rows, and their results (one
/// statement for every job that asked meanwhile; see [`Gather`]).
pub(super) struct WorkerLedger {
    rows: Arc<Gather<u64, Option<Row>>>,
    results: Arc<Gather<Finished, bool>>,
}

/// A result to store: the job, its apalis task (deleted with it), its row's new state and the
/// result as stored.
pub(super) struct Finished {
    id: u64,
    task: Option<String>,
    state: &'static str,
    stored: String,
}

impl Finished {
    pub(super) fn new(id: u64, task: Option<&str>, result: &ToolResult) -> Finished {
        let state = if result.is_error() {
            "failed"
        } else {
            "finished"
        };
        Finished {
            id,
            task: task.map(str::to_owned),
            state,
            stored: encode_result(result),
        }
    }
}

impl WorkerLedger {
    pub(super) fn new(queue: &JobQueue) -> WorkerLedger {
        let rows = {
            let queue = queue.clone();
            Gather::new(
                GATHER_MOST,
                Box::new(move |ids| {
                    let queue = queue.clone();
                    Box::pin(async move { load_all(&queue, ids).await })
                }),
            )
        };
        let results = {
            let queue = queue.clone();
            Gather::new(
                GATHER_MOST,
                Box::new(move |finished| {
                    let queue = queue.clone();
                    Box::pin(async move { finish_all(&queue, finished).await })
                }),
            )
        };
        WorkerLedger { rows, results }
    }

    /// The ledger row of job `id`, if there is one (read with the rows other jobs asked for
    /// meanwhile).
    pub(super) async fn load(&self, id: u64) -> Result<Option<Row>, JobError> {
        self.rows.run(id, true).await.map_err(JobError::Database)
    }

    /// Store the result of a job, unless it already has one; false when it had (written with
    /// the results other jobs finished meanwhile).
    pub(super) async fn finish(&self, finished: Finished) -> Result<bool, JobError> {
        self.results
            .run(finished, true)
            .await
            .map_err(JobError::Database)
    }
}

/// The rows of jobs `ids` of `queue`, in their order; one statement.
async fn load_all(queue: &JobQueue, ids: Vec<u64>) -> Vec<Result<Option<Row>, DatabaseError>> {
    let name = &queue.settings.name;
    let rows = match &queue.db.pool {
        #[cfg(feature = "sqlite")]
        Pool::Sqlite(pool) => {
            // Row ids are integers: written into the statement as they are.
            let list = ids
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            let text = format!(
                "SELECT {COLUMNS} FROM agent_toolkit_jobs WHERE queue = ?1 AND id IN ({list})"
            );
            sqlx::query_as::<_, Row>(sqlx::AssertSqlSafe(text))
                .bind(name)
                .fetch_all(pool)
                .await
        }
        #[cfg(feature = "postgres")]
        Pool::Postgres(pool) => {
            // One statement text, prepared once per connection, whatever the ids. The rows
            // are found by id alone, then checked for the queue: given both, Postgres's plans
            // read every row of the queue (in an index, or the table).
            let text = format!(
                "WITH wanted AS MATERIALIZED (SELECT {COLUMNS}, queue FROM agent_toolkit_jobs \
                 WHERE id = ANY($2)) SELECT {COLUMNS} FROM wanted WHERE queue = $1"
            );
            let ids: Vec<i64> = ids.iter().map(|&id| id as i64).collect();
            sqlx::query_as::<_, Row>(sqlx::AssertSqlSafe(text))
                .bind(name)
                .bind(&ids)
                .fetch_all(pool)
                .await
        }
    };
    match rows {
        Ok(rows) => {
            let mut rows: std::collections::HashMap<u64, Row> =
                rows.into_iter().map(|r| (r.id as u64, r)).collect();
            // A job asked for twice in one statement (not done by one worker) gets its row
            // twice.
            ids.iter()
                .map(|id| {
                    Ok(match ids.iter().filter(|i| *i == id).count() {
                        1 => rows.remove(id),
                        _ => rows.get(id).cloned(),
                    })
                })
                .collect()
        }
        Err(e) => {
            let error = gathered(queue, e);
            ids.iter().map(|_| Err(error.clone())).collect()
        }
    }
}

/// Store results of jobs that have none yet, and delete their apalis tasks (the job is done
/// either way: its result is stored, by this run or another); for each, whether its result was
/// stored. One statement on Postgres, one transaction on SQLite: a task is deleted only with
/// its result stored. Of one job given twice, the first result counts.
async fn finish_all(queue: &JobQueue, finished: Vec<Finished>) -> Vec<Result<bool, DatabaseError>> {
    let mut seen = HashSet::new();
    let first: Vec<bool> = finished.iter().map(|f| seen.insert(f.id)).collect();
    let now = now_ms();
    let stored: Result<HashSet<i64>, sqlx::Error> = match &queue.db.pool {
        #[cfg(feature = "sqlite")]
        Pool::Sqlite(pool) => {
            const TEXT: &str = "UPDATE agent_toolkit_jobs SET state = ?2, result = ?3, \
                finished_ms = ?4 WHERE id = ?1 AND state IN ('pending', 'running')";
            // apalis's table (apalis-sqlite 1).
            const DELETE: &str = "DELETE FROM Jobs WHERE id = ?1";
            async {
                let mut tx = pool.begin().await?;
                let mut stored = HashSet::new();
                for (f, _) in finished.iter().zip(&first).filter(|(_, first)| **first) {
                    let done = sqlx::query(TEXT)
                        .bind(f.id as i64)
                        .bind(f.state)
                        .bind(&f.stored)
                        .bind(now)
                        .execute(&mut *tx)
                        .await?;
                    if done.rows_affected() == 1 {
                        stored.insert(f.id as i64);
                    }
                }
                for task in finished.iter().filter_map(|f| f.task.as_deref()) {
                    sqlx::query(DELETE).bind(task).execute(&mut *tx).await?;
                }
                tx.commit().await?;
                Ok(stored)
            }
            .await
        }
        #[cfg(feature = "postgres")]
        Pool::Postgres(pool) => {
            // apalis's table (apalis-postgres 1).
            const TEXT: &str = "WITH stored AS (UPDATE agent_toolkit_jobs AS j \
                  SET state = f.state, result = f.result, finished_ms = $4 \
                  FROM UNNEST($1::bigint[], $2::text[], $3::text[]) AS f(id, state, result) \
                  WHERE j.id = f.id AND j.state IN ('pending', 'running') RETURNING j.id), \
                done AS (DELETE FROM apalis.jobs WHERE id = ANY($5::text[])) \
                SELECT id FROM stored";
            let (mut ids, mut states, mut results) = (Vec::new(), Vec::new(), Vec::new());
            for (f, _) in finished.iter().zip(&first).filter(|(_, first)| **first) {
                ids.push(f.id as i64);
                states.push(f.state);
                results.push(f.stored.as_str());
            }
            let tasks: Vec<&str> = finished.iter().filter_map(|f| f.task.as_deref()).collect();
            sqlx::query_scalar::<_, i64>(TEXT)
                .bind(&ids)
                .bind(&states)
                .bind(&results)
                .bind(now)
                .bind(&tasks)
                .fetch_all(pool)
                .await
                .map(|ids| ids.into_iter().collect())
        }
    };
    match stored {
        Ok(stored) => finished
            .iter()
            .zip(first)
            .map(|(f, first)| Ok(first && stored.contains(&(f.id as i64))))
            .collect(),
        Err(e) => {
            let error = gathered(queue, e);
            finished.iter().map(|_| Err(error.clone())).collect()
        }
    }
}

/// One way results are handed out of the ledger — taken ([`Durable::take_finished`]) or
/// reported to callbacks and streams — : its columns, and the rows handed out by this process
/// whose hand-out is not confirmed in the database yet.
struct HandOut {
    /// Set once the hand-out is confirmed.
    done: &'static str,
    /// The process that claimed the row.
    by: &'static str,
    /// When it claimed it (milliseconds).
    at: &'static str,
    unconfirmed: Mutex<HashSet<i64>>,
}

impl HandOut {
    fn new(done: &'static str, by: &'static str, at: &'static str) -> HandOut {
        HandOut {
            done,
            by,
            at,
            unconfirmed: Mutex::new(HashSet::new()),
        }
    }

    /// The results of the claimed `rows` this process has not handed out yet; from now on
    /// they are handed out, to be confirmed. Nothing here awaits: a hand-out is whole.
    fn hand_out(&self, rows: Vec<Row>) -> Vec<ToolResult> {
        let mut unconfirmed = crate::util::lock(&self.unconfirmed);
        let fresh: Vec<Row> = rows
            .into_iter()
            .filter(|r| unconfirmed.insert(r.id))
            .collect();
        drop(unconfirmed);
        results_of(fresh)
    }
}

/// The results of finished rows; a result that cannot be read back becomes the job's one
/// (error) result rather than being dropped.
fn results_of(rows: Vec<Row>) -> Vec<ToolResult> {
    let mut results = Vec::with_capacity(rows.len());
    for row in rows {
        let Some(text) = row.result.as_deref() else {
            continue;
        };
        match decode_result(&row, text) {
            Ok(result) => results.push(result),
            Err(e) => {
                tracing::error!(error = %e, "a stored result is unreadable");
                let error = ToolError::execution(
                    "the result of this background call could not be read back",
                )
                .with_detail(e.to_string());
                let mut result =
                    ToolResult::new(row.call_id.as_str(), row.tool.as_str(), Err(error), 0);
                result.job = Some(Job::Finished(JobId(row.id as u64)));
                results.push(result);
            }
        }
    }
    results
}

/// The submitting side of a durable queue: what a toolkit's [`BackgroundJobs`](super::BackgroundJobs)
/// does with it.
pub(crate) struct Durable {
    queue: JobQueue,
    notifier: Arc<Notifier>,
    /// Calls being stored: those submitted together go in one transaction.
    stores: Arc<Gather<ToolCall, u64>>,
    /// This process's name in the ledger's claims (`taker`, `notifier`).
    me_in_ledger: String,
    /// One take at a time: two takes of one process must not hand a result out twice.
    taking: tokio::sync::Mutex<()>,
    take: HandOut,
    reporting: HandOut,
    /// The task reporting finished results, once started.
    watcher: Mutex<Option<tokio::task::JoinHandle<()>>>,
    closed: CancellationToken,
    me: Weak<Durable>,
}

impl Drop for Durable {
    fn drop(&mut self) {
        self.closed.cancel();
    }
}

impl Durable {
    fn submitter(queue: JobQueue, notifier: &Arc<Notifier>) -> Arc<Durable> {
        let stores = {
            let queue = queue.clone();
            Gather::new(
                GATHER_MOST,
                Box::new(move |calls| {
                    let queue = queue.clone();
                    Box::pin(async move { store_all(&queue, calls).await })
                }),
            )
        };
        let durable = Arc::new_cyclic(|me| Durable {
            queue,
            notifier: Arc::clone(notifier),
            stores,
            me_in_ledger: format!("{}-{:016x}", std::process::id(), fastrand::u64(..)),
            taking: tokio::sync::Mutex::new(()),
            take: HandOut::new("taken", "taker", "taken_ms"),
            reporting: HandOut::new("notified", "notifier", "notified_ms"),
            watcher: Mutex::new(None),
            closed: CancellationToken::new(),
            me: me.clone(),
        });
        // Callbacks must hear of results even before this process submits anything (results
        // of calls made before a restart); without a runtime yet, the first submission starts
        // the watcher.
        if durable.notifier.has_callbacks() {
            durable.watch();
        }
        durable
    }

    fn fail(&self, e: sqlx::Error) -> JobError {
        db_error(&self.queue, e)
    }

    /// `operation`, failing at once while the database is known to be down
    /// ([`Database::guard`](crate::storage::Database::guard)).
    async fn guarded<T>(
        &self,
        operation: impl std::future::Future<Output = Result<T, JobError>>,
    ) -> Result<T, JobError> {
        fn cause(error: &JobError) -> Option<&crate::storage::DatabaseError> {
            match error {
                JobError::Database(cause) => Some(cause),
                _ => None,
            }
        }
        self.queue.db.guard(operation, cause).await
    }

    /// Store the call and its apalis job, in one transaction with the calls submitted with
    /// it (a model turn's background calls, run at once by `Toolkit::call_all`) and with those
    /// submitted while the transaction before was under way.
    async fn submit(&self, job: Submission<'_>) -> Submitted {
        let Submission {
            call,
            context,
            reads,
            ..
        } = job;
        check_context(&call.name, context, &reads)?;
        if self.closed.is_cancelled() {
            return Err(ToolError::execution(
                "the toolkit is shutting down and takes no new background work",
            ));
        }
        self.watch();
        let stored = self.stores.run(call.clone(), true).await;
        stored.map(JobId).map_err(JobError::Database).map_err(|e| {
            tracing::error!(call_id = %call.id, tool = %call.name, error = %e, "a background call could not be queued");
            ToolError::execution(format!(
                "tool `{}` could not be queued: its job database is unavailable; try again later",
                call.name
            ))
            .with_detail(e.to_string())
            .with_retryable(true)
        })
    }

    async fn rows(&self, filter: &str, bind: Option<&str>) -> Result<Vec<JobRecord>, JobError> {
        let text = format!(
            "SELECT {COLUMNS} FROM agent_toolkit_jobs WHERE queue = $1 AND {filter} ORDER BY id"
        );
        let name = &self.queue.settings.name;
        let rows = self.guarded(async {
            let rows = on_pool!(self.queue.db, |pool, sql| {
                let text = sql(&text);
                let mut query = sqlx::query_as::<_, Row>(text).bind(name);
                if let Some(value) = bind {
                    query = query.bind(value);
                }
                query.fetch_all(pool).await
            });
            rows.map_err(|e| self.fail(e))
        });
        rows.await?.into_iter().map(Row::record).collect()
    }

    async fn get(&self, job: JobId) -> Result<Option<JobRecord>, JobError> {
        self.guarded(load(&self.queue, job.0))
            .await?
            .map(Row::record)
            .transpose()
    }

    async fn by_call_id(&self, call_id: &str) -> Result<Vec<JobRecord>, JobError> {
        self.rows("call_id = $2", Some(call_id)).await
    }

    async fn with_status(&self, status: JobStatus) -> Result<Vec<JobRecord>, JobError> {
        let filter = match status {
            JobStatus::Pending => "state IN ('pending', 'running')",
            JobStatus::Finished => "state = 'finished'",
            JobStatus::Failed => "state = 'failed'",
        };
        self.rows(filter, None).await
    }

    /// The finished results no process has taken, each handed out once across processes.
    ///
    /// Taking is a claim, then a confirmation. The claim writes this process's name on the
    /// rows (`taker`) and reads them back; only once they are handed out are they marked
    /// `taken`. A claim whose reply is lost (the database went away after it ran) leaves the
    /// rows claimed by this process and not taken: the next take of this process claims and
    /// returns them again. Rows a process claimed and never confirmed (it died in between) may
    /// be claimed by another after [`CLAIM_LEASE_MS`]. A result handed out whose confirmation
    /// failed is confirmed later and not handed out again by this process.
    async fn take_finished(&self) -> Result<Vec<ToolResult>, JobError> {
        let _one_at_a_time = self.taking.lock().await;
        self.guarded(self.confirm(&self.take)).await?;
        let mut results = Vec::new();
        let mut after = 0;
        loop {
            let rows = self.claim(&self.take, after).await?;
            let whole = rows.len() < CLAIM_BATCH;
            after = rows.last().map_or(after, |r| r.id);
            results.extend(self.take.hand_out(rows));
            if whole {
                break;
            }
        }
        // Confirmed apart from the caller, who may drop this future once it has the results.
        if let Some(me) = self.me.upgrade() {
            tokio::spawn(async move {
                if let Err(e) = me.confirm(&me.take).await {
                    tracing::warn!(error = %e, "taken results could not be marked yet; the next take marks them");
                }
            });
        }
        Ok(results)
    }

    /// Claim the finished rows after row `after` not yet handed out this way for this process:
    /// those no one claimed, those this process claimed before (their reply may have been
    /// lost), and those whose claim is older than the lease; at most [`CLAIM_BATCH`].
    async fn claim(&self, way: &HandOut, after: i64) -> Result<Vec<Row>, JobError> {
        let HandOut { done, by, at, .. } = way;
        let text = format!(
            "UPDATE agent_toolkit_jobs SET {by} = $2, {at} = $3 \
             WHERE id IN (SELECT id FROM agent_toolkit_jobs \
               WHERE queue = $1 AND {done} = FALSE AND state IN ('finished', 'failed') \
               AND ({by} IS NULL OR {by} = $2 OR {at} < $4) AND id > $5 \
               ORDER BY id LIMIT {CLAIM_BATCH}) \
             RETURNING {COLUMNS}"
        );
        let (name, now) = (&self.queue.settings.name, now_ms());
        let rows = on_pool!(self.queue.db, |pool, sql| sqlx::query_as::<_, Row>(sql(
            &text
        ))
        .bind(name)
        .bind(&self.me_in_ledger)
        .bind(now)
        .bind(now - CLAIM_LEASE_MS)
        .bind(after)
        .fetch_all(pool)
        .await);
        let mut rows = rows.map_err(|e| self.fail(e))?;
        rows.sort_by_key(|r| r.id);
        Ok(rows)
    }

    /// Mark done the rows this process claimed and handed out.
    async fn confirm(&self, way: &HandOut) -> Result<(), JobError> {
        let ids: Vec<i64> = crate::util::lock(&way.unconfirmed)
            .iter()
            .copied()
            .collect();
        if ids.is_empty() {
            return Ok(());
        }
        let HandOut { done, by, .. } = way;
        let marked = match &self.queue.db.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(pool) => {
                // Row ids are integers the database gave: written into the statement as they
                // are.
                let list = ids
                    .iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ");
                let text = format!(
                    "UPDATE agent_toolkit_jobs SET {done} = TRUE \
                     WHERE queue = ?1 AND {by} = ?2 AND id IN ({list})"
                );
                sqlx::query(sqlx::AssertSqlSafe(text))
                    .bind(&self.queue.settings.name)
                    .bind(&self.me_in_ledger)
                    .execute(pool)
                    .await
                    .map(|r| r.rows_affected())
            }
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => {
                // One statement text, prepared once per connection, whatever the ids. Rows
                // claimed by this process (its name is its own) are rows of this queue: found
                // by id alone (see `load_all`).
                let text = format!(
                    "UPDATE agent_toolkit_jobs SET {done} = TRUE WHERE id = ANY($2) AND {by} = $1"
                );
                sqlx::query(sqlx::AssertSqlSafe(text))
                    .bind(&self.me_in_ledger)
                    .bind(&ids)
                    .execute(pool)
                    .await
                    .map(|r| r.rows_affected())
            }
        };
        marked.map_err(|e| self.fail(e))?;
        let mut unconfirmed = crate::util::lock(&way.unconfirmed);
        for id in ids {
            unconfirmed.remove(&id);
        }
        Ok(())
    }

    /// Report the results that finished and were not reported yet, each to one process, with
    /// the claim and confirmation of [`take_finished`](Self::take_finished) (in `notifier` and
    /// `notified`): a report whose reply is lost is made again, and a result is reported to the
    /// callbacks before it is marked reported.
    async fn report(&self) -> Result<usize, JobError> {
        self.confirm(&self.reporting).await?;
        let rows = self.claim(&self.reporting, 0).await?;
        let results = self.reporting.hand_out(rows);
        let count = results.len();
        for result in results {
            self.notifier.notify(result);
        }
        if let Err(e) = self.confirm(&self.reporting).await {
            tracing::warn!(error = %e, "reported results could not be marked yet; the next report marks them");
        }
        Ok(count)
    }

    /// Delete finished records older than the retention.
    async fn purge(&self) -> Result<u64, JobError> {
        const TEXT: &str = "DELETE FROM agent_toolkit_jobs \
            WHERE queue = $1 AND state IN ('finished', 'failed') AND finished_ms < $2";
        let cutoff = now_ms() - self.queue.settings.retention.as_millis() as i64;
        let name = &self.queue.settings.name;
        let done = on_pool!(self.queue.db, |pool, sql| sqlx::query(sql(TEXT))
            .bind(name)
            .bind(cutoff)
            .execute(pool)
            .await
            .map(|r| r.rows_affected()));
        done.map_err(|e| self.fail(e))
    }

    /// Start the task that reports finished results, if it is not running (needs a runtime;
    /// without one, the next call that has one starts it).
    fn watch(&self) {
        let mut watcher = crate::util::lock(&self.watcher);
        if watcher.as_ref().is_some_and(|w| !w.is_finished()) || self.closed.is_cancelled() {
            return;
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (me, closed) = (self.me.clone(), self.closed.clone());
        let interval = self.queue.settings.poll_interval;
        *watcher = Some(handle.spawn(async move {
            let mut failing = false;
            let mut last_purge = std::time::Instant::now() - Duration::from_secs(3600);
            loop {
                let Some(durable) = me.upgrade() else { return };
                if durable.notifier.listening() {
                    match durable.report().await {
                        Ok(_) if failing => {
                            tracing::info!("the job database is back; reporting results again");
                            failing = false;
                        }
                        Ok(_) => {}
                        Err(e) if !failing => {
                            tracing::warn!(error = %e, "cannot read finished background jobs; retrying");
                            failing = true;
                        }
                        Err(_) => {}
                    }
                }
                if last_purge.elapsed() > Duration::from_secs(60) {
                    last_purge = std::time::Instant::now();
                    if let Err(e) = durable.purge().await {
                        tracing::debug!(error = %e, "could not delete expired job records");
                    }
                }
                drop(durable);
                tokio::select! {
                    _ = closed.cancelled() => return,
                    _ = tokio::time::sleep(interval) => {}
                }
            }
        }));
    }

    async fn shutdown(&self) {
        self.closed.cancel();
        let watcher = crate::util::lock(&self.watcher).take();
        if let Some(watcher) = watcher {
            let _ = watcher.await;
        }
    }

    async fn drain(&self) -> Result<(), JobError> {
        while !self.with_status(JobStatus::Pending).await?.is_empty() {
            tokio::time::sleep(self.queue.settings.poll_interval).await;
        }
        Ok(())
    }
}

/// Store calls and their apalis jobs in one transaction, failing at once while the database is
/// known to be down. When the database refuses the batch (a statement it refuses because of one
/// call: a NUL in a call id, say), each call is stored in a transaction of its own, so that one
/// call's fault is not the others'.
async fn store_all(queue: &JobQueue, calls: Vec<ToolCall>) -> Vec<Result<u64, DatabaseError>> {
    fn itself(error: &DatabaseError) -> Option<&DatabaseError> {
        Some(error)
    }
    match queue.db.guard(insert(queue, &calls), itself).await {
        Ok(ids) => ids.into_iter().map(Ok).collect(),
        Err(e) if calls.len() > 1 && refused(&e) => {
            let mut stored = Vec::with_capacity(calls.len());
            for call in &calls {
                let one = queue
                    .db
                    .guard(insert(queue, std::slice::from_ref(call)), itself);
                stored.push(one.await.map(|ids| ids[0]));
            }
            stored
        }
        Err(e) => calls.iter().map(|_| Err(e.clone())).collect(),
    }
}

/// Whether the batch failed for what was in it rather than for the database (unreachable, a
/// broken connection, busy): the database or the driver refused a statement, so the transaction
/// was rolled back, or never sent, and nothing of it is stored.
fn refused(error: &DatabaseError) -> bool {
    !error.is_retryable()
}

/// The ledger rows of `calls` and their apalis jobs, in one transaction; their job ids, in
/// order. On Postgres, one statement for the rows and one for the jobs, however many calls.
async fn insert(queue: &JobQueue, calls: &[ToolCall]) -> Result<Vec<u64>, DatabaseError> {
    let name = &queue.settings.name;
    let fail = |e: sqlx::Error| queue.db.error(e);
    let payload = |id: i64| stored::encode(&Payload { job: id as u64 }).into_bytes();
    let now = now_ms();
    let ids: Vec<i64> = match &queue.db.pool {
        #[cfg(feature = "sqlite")]
        Pool::Sqlite(pool) => {
            const INSERT: &str = "INSERT INTO agent_toolkit_jobs \
                (queue, call_id, tool, arguments, state, submitted_ms) \
                VALUES ($1, $2, $3, $4, 'pending', $5) RETURNING id";
            let mut tx = pool.begin().await.map_err(fail)?;
            let mut ids = Vec::with_capacity(calls.len());
            for call in calls {
                let id: i64 = sqlx::query_scalar(crate::storage::sqlite_sql(INSERT))
                    .bind(name)
                    .bind(&*call.id)
                    .bind(&call.name)
                    .bind(&call.arguments)
                    .bind(now)
                    .fetch_one(&mut *tx)
                    .await
                    .map_err(fail)?;
                ids.push(id);
            }
            let tasks: Vec<_> = ids
                .iter()
                .map(|&id| apalis::prelude::TaskBuilder::new(payload(id)).build())
                .collect();
            apalis_sqlite::queries::push_tasks(&mut *tx, name, &tasks)
                .await
                .map_err(|e| queue.db.error(e))?;
            tx.commit().await.map_err(fail)?;
            ids
        }
        #[cfg(feature = "postgres")]
        Pool::Postgres(pool) => {
            // Ids are drawn first and paired with the calls by position: the order of an
            // INSERT's RETURNING rows is not promised.
            const INSERT: &str = "WITH calls AS (SELECT * FROM \
                  UNNEST($2::text[], $3::text[], $4::text[]) WITH ORDINALITY \
                  AS c(call_id, tool, arguments, n)), \
                ids AS MATERIALIZED (SELECT n, \
                  nextval(pg_get_serial_sequence('agent_toolkit_jobs', 'id')) AS id FROM calls), \
                stored AS (INSERT INTO agent_toolkit_jobs \
                  (id, queue, call_id, tool, arguments, state, submitted_ms) \
                  SELECT ids.id, $1, calls.call_id, calls.tool, calls.arguments, 'pending', $5 \
                  FROM calls JOIN ids USING (n)) \
                SELECT id FROM ids ORDER BY n";
            let call_ids: Vec<&str> = calls.iter().map(|c| &*c.id).collect();
            let tools: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
            let arguments: Vec<&str> = calls.iter().map(|c| c.arguments.as_str()).collect();
            let mut tx = pool.begin().await.map_err(fail)?;
            let ids: Vec<i64> = sqlx::query_scalar(INSERT)
                .bind(name)
                .bind(&call_ids)
                .bind(&tools)
                .bind(&arguments)
                .bind(now)
                .fetch_all(&mut *tx)
                .await
                .map_err(fail)?;
            let tasks = ids
                .iter()
                .map(|&id| apalis::prelude::TaskBuilder::new(payload(id)).build())
                .collect();
            apalis_postgres::queries::push_tasks(&mut *tx, name, tasks)
                .await
                .map_err(|e| queue.db.error(e))?;
            tx.commit().await.map_err(fail)?;
            ids
        }
    };
    if ids.len() != calls.len() {
        return Err(DatabaseError::message(
            queue.db.label(),
            format!("{} calls stored, {} ids returned", calls.len(), ids.len()),
        ));
    }
    Ok(ids.into_iter().map(|id| id as u64).collect())
}

impl MakeJobBackend for JobQueue {
    fn make(&self, notifier: &Arc<Notifier>) -> Arc<dyn JobBackend> {
        Durable::submitter(self.clone(), notifier)
    }
}

impl JobBackend for Durable {
    fn submit<'a>(&'a self, job: Submission<'a>) -> BoxFuture<'a, Submitted> {
        Box::pin(Durable::submit(self, job))
    }

    fn get(&self, job: JobId) -> BoxFuture<'_, Result<Option<JobRecord>, JobError>> {
        Box::pin(Durable::get(self, job))
    }

    fn by_call_id<'a>(
        &'a self,
        call_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<JobRecord>, JobError>> {
        Box::pin(Durable::by_call_id(self, call_id))
    }

    fn with_status(&self, status: JobStatus) -> BoxFuture<'_, Result<Vec<JobRecord>, JobError>> {
        Box::pin(Durable::with_status(self, status))
    }

    fn take_finished(&self) -> BoxFuture<'_, Result<Vec<ToolResult>, JobError>> {
        Box::pin(Durable::take_finished(self))
    }

    fn listen(&self) {
        self.watch();
    }

    fn running(&self) -> usize {
        // Jobs run in workers.
        0
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(Durable::shutdown(self))
    }

    fn drain(&self) -> BoxFuture<'_, Result<(), JobError>> {
        Box::pin(Durable::drain(self))
    }

    fn describe(&self) -> (&'static str, String) {
        ("queue", self.queue.settings.name.clone())
    }
}

/// Refuse a call whose context holds, at the call or agent level, a value one of the tool's
/// `#[ctx]` parameters reads: a worker runs the job with its own toolkit's context only, so the
/// value would silently be missing (or another one used).
fn check_context(
    name: &str,
    context: &ToolContext,
    reads: &[(&'static str, ContextReads)],
) -> Result<(), ToolError> {
    let local = context.local_types();
    if local.is_empty() {
        return Ok(());
    }
    for (wanted, reads) in reads {
        // Compared by type id, as the context keys its values.
        let held = match reads {
            ContextReads::Nothing => None,
            ContextReads::Anything => local.first(),
            ContextReads::Types(ids) => local.iter().find(|(id, _)| ids.contains(id)),
        };
        let Some((_, held)) = held else {
            continue;
        };
        return Err(ToolError::new(
            ToolErrorKind::MissingContext,
            format!(
                "tool `{name}` cannot run in the background here: it takes `{wanted}` from the \
                 context, and durable background jobs do not carry call or agent context"
            ),
        )
        .with_detail(format!(
            "the call's context holds a `{held}` at the call or agent level, which `{wanted}` \
             reads; a worker runs the job with its own toolkit's context only. Put it in the \
             toolkit context of the workers (ToolkitBuilder::context) instead of the call's or \
             agent's"
        )));
    }
    Ok(())
}
