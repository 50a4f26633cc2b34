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

use super::job_queue::JobQueue;
use crate::context::{ContextReads, ToolContext};
use crate::error::{ToolError, ToolErrorKind};
use crate::jobs::{
    JobBackend, JobError, JobRecord, JobStatus, MakeJobBackend, Notifier, Submission, Submitted,
};
use crate::storage::stored::{self, Stored};
use crate::storage::{Pool, now_ms, on_pool};
use crate::tool::result::{Job, JobId};
use crate::tool::{Content, ToolCall, ToolOutput, ToolResult};

const COLUMNS: &str =
    "id, call_id, tool, arguments, state, result, taken, submitted_ms, started_by";

/// Most rows one claim takes.
const CLAIM_BATCH: usize = 512;

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
#[derive(sqlx::FromRow)]
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

/// Store the result of job `id`, unless it already has one; false when it had.
pub(super) async fn finish(
    queue: &JobQueue,
    id: u64,
    result: &ToolResult,
) -> Result<bool, JobError> {
    const TEXT: &str = "UPDATE agent_toolkit_jobs SET state = $2, result = $3, finished_ms = $4 \
                        WHERE id = $1 AND state IN ('pending', 'running')";
    let state = if result.is_error() {
        "failed"
    } else {
        "finished"
    };
    let stored = encode_result(result);
    let done = on_pool!(queue.db, |pool, sql| sqlx::query(sql(TEXT))
        .bind(id as i64)
        .bind(state)
        .bind(&stored)
        .bind(now_ms())
        .execute(pool)
        .await
        .map(|r| r.rows_affected()));
    done.map(|n| n == 1).map_err(|e| db_error(queue, e))
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
        let durable = Arc::new_cyclic(|me| Durable {
            queue,
            notifier: Arc::clone(notifier),
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

    /// Store the call and its apalis job in one transaction.
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
        self.guarded(self.store(&call)).await.map(JobId).map_err(|e| {
            tracing::error!(call_id = %call.id, tool = %call.name, error = %e, "a background call could not be queued");
            ToolError::execution(format!(
                "tool `{}` could not be queued: its job database is unavailable; try again later",
                call.name
            ))
            .with_detail(e.to_string())
            .with_retryable(true)
        })
    }

    async fn store(&self, call: &ToolCall) -> Result<u64, JobError> {
        const INSERT: &str = "INSERT INTO agent_toolkit_jobs \
            (queue, call_id, tool, arguments, state, submitted_ms) \
            VALUES ($1, $2, $3, $4, 'pending', $5) RETURNING id";
        let name = &self.queue.settings.name;
        let payload = |id: i64| stored::encode(&Payload { job: id as u64 }).into_bytes();
        let id: i64 = match &self.queue.db.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(pool) => {
                let mut tx = pool.begin().await.map_err(|e| self.fail(e))?;
                let id: i64 = sqlx::query_scalar(crate::storage::sqlite_sql(INSERT))
                    .bind(name)
                    .bind(&*call.id)
                    .bind(&call.name)
                    .bind(&call.arguments)
                    .bind(now_ms())
                    .fetch_one(&mut *tx)
                    .await
                    .map_err(|e| self.fail(e))?;
                let task = apalis::prelude::TaskBuilder::new(payload(id)).build();
                apalis_sqlite::queries::push_tasks(&mut *tx, name, &[task])
                    .await
                    .map_err(|e| JobError::Database(self.queue.db.error(e)))?;
                tx.commit().await.map_err(|e| self.fail(e))?;
                id
            }
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => {
                let mut tx = pool.begin().await.map_err(|e| self.fail(e))?;
                let id: i64 = sqlx::query_scalar(INSERT)
                    .bind(name)
                    .bind(&*call.id)
                    .bind(&call.name)
                    .bind(&call.arguments)
                    .bind(now_ms())
                    .fetch_one(&mut *tx)
                    .await
                    .map_err(|e| self.fail(e))?;
                let task = apalis::prelude::TaskBuilder::new(payload(id)).build();
                apalis_postgres::queries::push_tasks(&mut *tx, name, vec![task])
                    .await
                    .map_err(|e| JobError::Database(self.queue.db.error(e)))?;
                tx.commit().await.map_err(|e| self.fail(e))?;
                id
            }
        };
        Ok(id as u64)
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
        // Row ids are integers the database gave: written into the statement as they are.
        let list = ids
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        let HandOut { done, by, .. } = way;
        let text = format!(
            "UPDATE agent_toolkit_jobs SET {done} = TRUE \
             WHERE queue = $1 AND {by} = $2 AND id IN ({list})"
        );
        let name = &self.queue.settings.name;
        let marked = on_pool!(self.queue.db, |pool, sql| sqlx::query(sql(&text))
            .bind(name)
            .bind(&self.me_in_ledger)
            .execute(pool)
            .await
            .map(|r| r.rows_affected()));
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
