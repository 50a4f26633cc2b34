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

use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use super::job_queue::{JobQueue, Pool};
use super::{JobError, JobRecord, JobStatus, Notifier, Submitted};
use crate::error::{ToolError, ToolErrorKind};
use crate::tool::result::{Job, JobId};
use crate::tool::{Content, ToolCall, ToolOutput, ToolResult};

/// Run `$body` with `$pool` bound to the queue's pool and `$sql` turning a query written with
/// Postgres placeholders (`$1`) into the engine's (`?1` for SQLite).
macro_rules! on_pool {
    ($queue:expr, |$pool:ident, $sql:ident| $body:expr) => {
        match &$queue.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite($pool) => {
                #[allow(unused)]
                let $sql = |text: &str| sqlx::AssertSqlSafe(text.replace('$', "?"));
                $body
            }
            #[cfg(feature = "postgres")]
            Pool::Postgres($pool) => {
                #[allow(unused)]
                let $sql = |text: &str| sqlx::AssertSqlSafe(text.to_string());
                $body
            }
        }
    };
}

/// The ledger table; `{id}` and `{int}` are the engine's auto-increment key and 64-bit
/// integer.
const LEDGER: &str = "
CREATE TABLE IF NOT EXISTS agent_toolkit_jobs (
    id {id},
    queue TEXT NOT NULL,
    call_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    state TEXT NOT NULL,
    result TEXT,
    runs INTEGER NOT NULL DEFAULT 0,
    taken BOOLEAN NOT NULL DEFAULT FALSE,
    notified BOOLEAN NOT NULL DEFAULT FALSE,
    submitted_ms {int} NOT NULL,
    finished_ms {int}
)";

fn ledger_table(id: &str, int: &str) -> sqlx::AssertSqlSafe<String> {
    sqlx::AssertSqlSafe(LEDGER.replace("{id}", id).replace("{int}", int))
}

const INDEXES: [&str; 3] = [
    "CREATE INDEX IF NOT EXISTS agent_toolkit_jobs_state ON agent_toolkit_jobs (queue, state, id)",
    "CREATE INDEX IF NOT EXISTS agent_toolkit_jobs_call ON agent_toolkit_jobs (queue, call_id)",
    "CREATE INDEX IF NOT EXISTS agent_toolkit_jobs_unreported ON agent_toolkit_jobs (queue, id) \
     WHERE notified = FALSE AND state IN ('finished', 'failed')",
];

const COLUMNS: &str = "id, call_id, tool, arguments, state, result, taken, submitted_ms";

/// The version of the job payload handed to apalis; a worker refuses others.
const PAYLOAD_VERSION: u32 = 1;

/// What apalis carries for one job: which ledger row it is.
#[derive(Serialize, Deserialize)]
pub(super) struct Payload {
    pub(super) v: u32,
    pub(super) job: u64,
}

pub(super) fn database_error(database: &str, error: &dyn std::error::Error) -> JobError {
    JobError::Database {
        database: database.to_string(),
        message: crate::util::error_chain(error),
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Create apalis's tables and the ledger, if missing. Safe to run from several processes at
/// once (Postgres serializes it with an advisory lock).
pub(super) async fn setup(queue: &JobQueue) -> Result<(), JobError> {
    queue.check()?;
    let database = &queue.settings.database;
    let fail = |e: sqlx::Error| database_error(database, &e);
    match &queue.pool {
        #[cfg(feature = "sqlite")]
        Pool::Sqlite(pool) => {
            apalis_sqlite::SqliteStorage::setup(pool)
                .await
                .map_err(|e| database_error(database, &e))?;
            let mut tx = pool.begin().await.map_err(fail)?;
            sqlx::query(ledger_table("INTEGER PRIMARY KEY AUTOINCREMENT", "INTEGER"))
                .execute(&mut *tx)
                .await
                .map_err(fail)?;
            for index in INDEXES {
                sqlx::query(index).execute(&mut *tx).await.map_err(fail)?;
            }
            tx.commit().await.map_err(fail)?;
        }
        #[cfg(feature = "postgres")]
        Pool::Postgres(pool) => {
            apalis_postgres::PostgresStorage::setup(pool)
                .await
                .map_err(|e| database_error(database, &e))?;
            let mut tx = pool.begin().await.map_err(fail)?;
            // Two processes creating the table at once would collide in the catalog.
            sqlx::query("SELECT pg_advisory_xact_lock(7361902)")
                .execute(&mut *tx)
                .await
                .map_err(fail)?;
            sqlx::query(ledger_table("BIGSERIAL PRIMARY KEY", "BIGINT"))
                .execute(&mut *tx)
                .await
                .map_err(fail)?;
            for index in INDEXES {
                sqlx::query(index).execute(&mut *tx).await.map_err(fail)?;
            }
            tx.commit().await.map_err(fail)?;
        }
    }
    Ok(())
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
    v: u32,
    attempts: u32,
    // Not flattened: serde cannot flatten a `RawValue`.
    outcome: StoredOutcome,
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
    serde_json::to_string(&StoredResult {
        v: 1,
        attempts: result.attempts,
        outcome,
    })
    .unwrap_or_default()
}

fn decode_result(row: &Row, text: &str) -> Result<ToolResult, JobError> {
    let id = JobId(row.id as u64);
    let corrupt = |message: String| JobError::Corrupt { job: id.0, message };
    let stored: StoredResult =
        serde_json::from_str(text).map_err(|e| corrupt(format!("its result: {e}")))?;
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
            let kind = ToolErrorKind::parse(&kind)
                .ok_or_else(|| corrupt(format!("unknown error kind `{kind}`")))?;
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
    let row = on_pool!(queue, |pool, sql| sqlx::query_as::<_, Row>(sql(&text))
        .bind(name)
        .bind(id as i64)
        .fetch_optional(pool)
        .await);
    row.map_err(|e| database_error(&queue.settings.database, &e))
}

/// Mark job `id` started, if it is still queued; false when it is not (another delivery got it
/// first, or it finished).
pub(super) async fn begin(queue: &JobQueue, id: u64) -> Result<bool, JobError> {
    const TEXT: &str = "UPDATE agent_toolkit_jobs SET state = 'running', runs = runs + 1 \
                        WHERE id = $1 AND state = 'pending'";
    let done = on_pool!(queue, |pool, sql| sqlx::query(sql(TEXT))
        .bind(id as i64)
        .execute(pool)
        .await
        .map(|r| r.rows_affected()));
    done.map(|n| n == 1)
        .map_err(|e| database_error(&queue.settings.database, &e))
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
    let done = on_pool!(queue, |pool, sql| sqlx::query(sql(TEXT))
        .bind(id as i64)
        .bind(state)
        .bind(&stored)
        .bind(now_ms())
        .execute(pool)
        .await
        .map(|r| r.rows_affected()));
    done.map(|n| n == 1)
        .map_err(|e| database_error(&queue.settings.database, &e))
}

/// The submitting side of a durable queue: what a toolkit's [`BackgroundJobs`](super::BackgroundJobs)
/// does with it.
pub(crate) struct Durable {
    queue: JobQueue,
    notifier: Arc<Notifier>,
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
    pub(super) fn submitter(queue: JobQueue, notifier: &Arc<Notifier>) -> Arc<Durable> {
        let durable = Arc::new_cyclic(|me| Durable {
            queue,
            notifier: Arc::clone(notifier),
            watcher: Mutex::new(None),
            closed: CancellationToken::new(),
            me: me.clone(),
        });
        // Callbacks must hear of results even before this process submits anything (results
        // of calls made before a restart); without a runtime yet, the first submission starts
        // the watcher.
        if !durable.notifier.callbacks.is_empty() {
            durable.watch();
        }
        durable
    }

    pub(super) fn queue_name(&self) -> &str {
        &self.queue.settings.name
    }

    fn fail(&self, e: sqlx::Error) -> JobError {
        database_error(&self.queue.settings.database, &e)
    }

    /// Store the call and its apalis job in one transaction.
    pub(super) async fn submit(&self, call: ToolCall) -> Submitted {
        if self.closed.is_cancelled() {
            return Err(ToolError::execution(
                "the toolkit is shutting down and takes no new background work",
            ));
        }
        self.watch();
        self.store(&call).await.map(JobId).map_err(|e| {
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
        let payload = |id: i64| {
            serde_json::to_vec(&Payload {
                v: PAYLOAD_VERSION,
                job: id as u64,
            })
            .unwrap_or_default()
        };
        let id: i64 = match &self.queue.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(pool) => {
                let mut tx = pool.begin().await.map_err(|e| self.fail(e))?;
                let id: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(INSERT.replace('$', "?")))
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
                    .map_err(|e| database_error(&self.queue.settings.database, &e))?;
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
                    .map_err(|e| database_error(&self.queue.settings.database, &e))?;
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
        let rows = on_pool!(self.queue, |pool, sql| {
            let text = sql(&text);
            let mut query = sqlx::query_as::<_, Row>(text).bind(name);
            if let Some(value) = bind {
                query = query.bind(value);
            }
            query.fetch_all(pool).await
        });
        rows.map_err(|e| self.fail(e))?
            .into_iter()
            .map(Row::record)
            .collect()
    }

    pub(super) async fn get(&self, job: JobId) -> Result<Option<JobRecord>, JobError> {
        load(&self.queue, job.0).await?.map(Row::record).transpose()
    }

    pub(super) async fn by_call_id(&self, call_id: &str) -> Result<Vec<JobRecord>, JobError> {
        self.rows("call_id = $2", Some(call_id)).await
    }

    pub(super) async fn with_status(&self, status: JobStatus) -> Result<Vec<JobRecord>, JobError> {
        let filter = match status {
            JobStatus::Pending => "state IN ('pending', 'running')",
            JobStatus::Finished => "state = 'finished'",
            JobStatus::Failed => "state = 'failed'",
        };
        self.rows(filter, None).await
    }

    /// Mark finished rows taken (each once, across processes) and return their results.
    pub(super) async fn take_finished(&self) -> Result<Vec<ToolResult>, JobError> {
        let text = format!(
            "UPDATE agent_toolkit_jobs SET taken = TRUE \
             WHERE queue = $1 AND taken = FALSE AND state IN ('finished', 'failed') \
             RETURNING {COLUMNS}"
        );
        self.claim(&text).await
    }

    async fn claim(&self, text: &str) -> Result<Vec<ToolResult>, JobError> {
        let name = &self.queue.settings.name;
        let rows = on_pool!(self.queue, |pool, sql| sqlx::query_as::<_, Row>(sql(text))
            .bind(name)
            .fetch_all(pool)
            .await);
        let mut rows = rows.map_err(|e| self.fail(e))?;
        rows.sort_by_key(|r| r.id);
        let mut results = Vec::with_capacity(rows.len());
        for row in rows {
            let Some(text) = row.result.as_deref() else {
                continue;
            };
            match decode_result(&row, text) {
                Ok(result) => results.push(result),
                // Still the job's one result: say what happened rather than drop it.
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
        Ok(results)
    }

    /// Report the results that finished and were not reported yet (each to one process).
    async fn report(&self) -> Result<usize, JobError> {
        let text = format!(
            "UPDATE agent_toolkit_jobs SET notified = TRUE \
             WHERE notified = FALSE AND id IN (SELECT id FROM agent_toolkit_jobs \
               WHERE queue = $1 AND notified = FALSE AND state IN ('finished', 'failed') \
               ORDER BY id LIMIT 512) \
             RETURNING {COLUMNS}"
        );
        let results = self.claim(&text).await?;
        let count = results.len();
        for result in results {
            self.notifier.notify(result);
        }
        Ok(count)
    }

    /// Delete finished records older than the retention.
    async fn purge(&self) -> Result<u64, JobError> {
        const TEXT: &str = "DELETE FROM agent_toolkit_jobs \
            WHERE queue = $1 AND state IN ('finished', 'failed') AND finished_ms < $2";
        let cutoff = now_ms() - self.queue.settings.retention.as_millis() as i64;
        let name = &self.queue.settings.name;
        let done = on_pool!(self.queue, |pool, sql| sqlx::query(sql(TEXT))
            .bind(name)
            .bind(cutoff)
            .execute(pool)
            .await
            .map(|r| r.rows_affected()));
        done.map_err(|e| self.fail(e))
    }

    fn listening(&self) -> bool {
        !self.notifier.callbacks.is_empty() || self.notifier.events.receiver_count() > 0
    }

    /// Start the task that reports finished results, if it is not running (needs a runtime;
    /// without one, the next call that has one starts it).
    pub(super) fn watch(&self) {
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
                if durable.listening() {
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

    pub(super) async fn shutdown(&self) {
        self.closed.cancel();
        let watcher = crate::util::lock(&self.watcher).take();
        if let Some(watcher) = watcher {
            let _ = watcher.await;
        }
    }

    pub(super) async fn drain(&self) -> Result<(), JobError> {
        while !self.with_status(JobStatus::Pending).await?.is_empty() {
            tokio::time::sleep(self.queue.settings.poll_interval).await;
        }
        Ok(())
    }
}
