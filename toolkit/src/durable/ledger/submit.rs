//! The submitting side of a durable queue: storing calls, reading records, and handing
//! finished results out (taken, or reported to callbacks and streams) once across processes.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::codec::{encode_result, results_of};
#[cfg(feature = "sqlite")]
use super::id_list;
use super::{COLUMNS, Payload, Row, db_error, gather, load};
use crate::context::{ContextReads, ToolContext};
use crate::durable::gather::Gather;
use crate::durable::job_queue::JobQueue;
use crate::error::{ToolError, ToolErrorKind};
use crate::jobs::{
    JobBackend, JobError, JobRecord, JobStatus, MakeJobBackend, Notifier, Submission, Submitted,
};
use crate::storage::stored;
use crate::storage::{DatabaseError, Pool, now_ms, on_pool};
use crate::tool::result::JobId;
use crate::tool::{ToolCall, ToolResult};

/// Most rows one claim takes.
const CLAIM_BATCH: usize = 512;

/// How long a claimed result waits for the process that claimed it to confirm it has it,
/// before another process may claim it (that process may have died in between).
const CLAIM_LEASE_MS: i64 = 60_000;

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

/// The submitting side of a durable queue: what a toolkit's [`BackgroundJobs`](crate::jobs::BackgroundJobs)
/// does with it.
pub(crate) struct Durable {
    queue: JobQueue,
    notifier: Arc<Notifier>,
    /// Calls being stored: those submitted together go in one transaction.
    stores: Arc<Gather<Queued, Stored>>,
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
        let stores = gather(&queue, store_all);
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
        let queued = Queued {
            call: call.clone(),
            traceparent: crate::trace_context::current().map(|t| t.traceparent),
        };
        let stored = self.stores.run(queued, true).await;
        match stored {
            Ok(Stored::Job(job)) => Ok(JobId(job)),
            Ok(Stored::InDoubt(job, e)) => {
                tracing::error!(call_id = %call.id, tool = %call.name, job, error = %e, "whether a background call was queued is not known");
                Err(ToolError::execution(format!(
                    "tool `{}` may or may not have been queued as job {job}: the job database \
                     went away while storing it and did not come back within {}s; look job \
                     {job} up before calling again (if it is stored, it runs and its result \
                     comes like any job's)",
                    call.name,
                    IN_DOUBT_FOR.as_secs()
                ))
                .with_detail(e.to_string())
                .with_retryable(false))
            }
            Err(e) => {
                let e = JobError::Database(e);
                tracing::error!(call_id = %call.id, tool = %call.name, error = %e, "a background call could not be queued");
                Err(ToolError::execution(format!(
                    "tool `{}` could not be queued: its job database is unavailable; try again later",
                    call.name
                ))
                .with_detail(e.to_string())
                .with_retryable(true))
            }
        }
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

    /// End job `job` with a cancelled result if it has none yet (a worker running it sees the
    /// row ended at its next look and stops the tool; see `Runner::run`).
    async fn cancel(&self, job: JobId) -> Result<bool, JobError> {
        let Some(row) = self.guarded(load(&self.queue, job.0)).await? else {
            return Ok(false);
        };
        let result = crate::jobs::cancelled_result(&row.call(), job);
        const TEXT: &str = concat!(
            "UPDATE agent_toolkit_jobs SET state = '",
            state!(failed),
            "', result = $3, finished_ms = $4 WHERE queue = $1 AND id = $2 AND state IN ",
            state!(unfinished)
        );
        let stored = encode_result(&result);
        let name = &self.queue.settings.name;
        let done = self.guarded(async {
            let done = on_pool!(self.queue.db, |pool, sql| sqlx::query(sql(TEXT))
                .bind(name)
                .bind(job.0 as i64)
                .bind(&stored)
                .bind(now_ms())
                .execute(pool)
                .await
                .map(|r| r.rows_affected()));
            done.map_err(|e| self.fail(e))
        });
        Ok(done.await? == 1)
    }

    async fn by_call_id(&self, call_id: &str) -> Result<Vec<JobRecord>, JobError> {
        self.rows("call_id = $2", Some(call_id)).await
    }

    async fn with_status(&self, status: JobStatus) -> Result<Vec<JobRecord>, JobError> {
        let filter = match status {
            JobStatus::Pending => concat!("state IN ", state!(unfinished)),
            JobStatus::Finished => concat!("state = '", state!(finished), "'"),
            JobStatus::Failed => concat!("state = '", state!(failed), "'"),
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
               WHERE queue = $1 AND {done} = FALSE AND state IN {ended} \
               AND ({by} IS NULL OR {by} = $2 OR {at} < $4) AND id > $5 \
               ORDER BY id LIMIT {CLAIM_BATCH}) \
             RETURNING {COLUMNS}",
            ended = state!(ended),
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
                let text = format!(
                    "UPDATE agent_toolkit_jobs SET {done} = TRUE \
                     WHERE queue = ?1 AND {by} = ?2 AND id IN ({})",
                    id_list(&ids)
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
        const TEXT: &str = concat!(
            "DELETE FROM agent_toolkit_jobs WHERE queue = $1 AND state IN ",
            state!(ended),
            " AND finished_ms < $2"
        );
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
/// A call to store, with the trace context it was submitted in (the job's span links to it).
struct Queued {
    call: ToolCall,
    traceparent: Option<String>,
}

/// What storing a call came to, when the database answered.
enum Stored {
    /// Stored as this job.
    Job(u64),
    /// The commit's answer was lost and the database did not come back within
    /// [`IN_DOUBT_FOR`] to tell whether it was stored as this job.
    InDoubt(u64, DatabaseError),
}

/// How long a submission whose commit went unanswered waits for the database to tell whether
/// it was stored.
const IN_DOUBT_FOR: Duration = Duration::from_secs(30);

async fn store_all(queue: JobQueue, calls: Vec<Queued>) -> Vec<Result<Stored, DatabaseError>> {
    fn itself(error: &Failed) -> Option<&DatabaseError> {
        match error {
            Failed::Before(e) | Failed::Commit(_, e) => Some(e),
        }
    }
    match queue.db.guard(insert(&queue, &calls), itself).await {
        Ok(ids) => ids.into_iter().map(|id| Ok(Stored::Job(id))).collect(),
        Err(Failed::Commit(ids, e)) => settle(&queue, ids, e).await,
        Err(Failed::Before(e)) if calls.len() > 1 && refused(&e) => {
            let mut stored = Vec::with_capacity(calls.len());
            for call in &calls {
                let one = queue
                    .db
                    .guard(insert(&queue, std::slice::from_ref(call)), itself);
                stored.push(match one.await {
                    Ok(ids) => Ok(Stored::Job(ids[0])),
                    Err(Failed::Before(e)) => Err(e),
                    Err(Failed::Commit(ids, e)) => settle(&queue, ids, e).await.remove(0),
                });
            }
            stored
        }
        Err(Failed::Before(e)) => calls.iter().map(|_| Err(e.clone())).collect(),
    }
}

/// Why a batch was not stored, or may not have been.
enum Failed {
    /// Before the commit was sent: nothing is stored.
    Before(DatabaseError),
    /// The commit was sent and failed: unless the database refused it, its answer may be what
    /// was lost, and the rows (these ids) stored.
    Commit(Vec<u64>, DatabaseError),
}

impl From<DatabaseError> for Failed {
    fn from(error: DatabaseError) -> Failed {
        Failed::Before(error)
    }
}

/// Find out whether the batch of rows `ids`, whose commit failed with `error`, is stored: ask
/// the database until it answers (or [`IN_DOUBT_FOR`] passes). One transaction: all of them
/// are stored, or none.
async fn settle(
    queue: &JobQueue,
    ids: Vec<u64>,
    error: DatabaseError,
) -> Vec<Result<Stored, DatabaseError>> {
    if !error.is_retryable() {
        // The database refused the commit: it rolled the transaction back.
        return ids.iter().map(|_| Err(error.clone())).collect();
    }
    let deadline = tokio::time::Instant::now() + IN_DOUBT_FOR;
    let mut pause = Duration::from_millis(100);
    fn itself(error: &DatabaseError) -> Option<&DatabaseError> {
        Some(error)
    }
    loop {
        // Guarded: the failed commit marked the database down; the answer marks it up again.
        match queue.db.guard(count_stored(queue, &ids), itself).await {
            Ok(0) => return ids.iter().map(|_| Err(error.clone())).collect(),
            Ok(_) => {
                tracing::warn!(jobs = ?ids, error = %error, "the answer to storing background calls was lost; they are stored");
                return ids.into_iter().map(|id| Ok(Stored::Job(id))).collect();
            }
            Err(_) if tokio::time::Instant::now() + pause < deadline => {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(2));
            }
            Err(_) => {
                return ids
                    .into_iter()
                    .map(|id| Ok(Stored::InDoubt(id, error.clone())))
                    .collect();
            }
        }
    }
}

/// How many of the rows `ids` are stored.
async fn count_stored(queue: &JobQueue, ids: &[u64]) -> Result<i64, DatabaseError> {
    let name = &queue.settings.name;
    let fail = |e: sqlx::Error| queue.db.error(e);
    match &queue.db.pool {
        #[cfg(feature = "sqlite")]
        Pool::Sqlite(pool) => {
            let text = format!(
                "SELECT COUNT(*) FROM agent_toolkit_jobs WHERE queue = $1 AND id IN ({})",
                id_list(ids)
            );
            sqlx::query_scalar(crate::storage::sqlite_sql(&text))
                .bind(name)
                .fetch_one(pool)
                .await
                .map_err(fail)
        }
        #[cfg(feature = "postgres")]
        Pool::Postgres(pool) => {
            let ids: Vec<i64> = ids.iter().map(|&id| id as i64).collect();
            sqlx::query_scalar(
                "SELECT COUNT(*) FROM agent_toolkit_jobs WHERE queue = $1 AND id = ANY($2)",
            )
            .bind(name)
            .bind(&ids)
            .fetch_one(pool)
            .await
            .map_err(fail)
        }
    }
}

/// Whether the batch failed for what was in it rather than for the database (unreachable, a
/// broken connection, busy): the database or the driver refused a statement, so the transaction
/// was rolled back, or never sent, and nothing of it is stored.
fn refused(error: &DatabaseError) -> bool {
    !error.is_retryable()
}

/// The ledger rows of `calls` and their apalis jobs, in one transaction; their job ids, in
/// order. On Postgres, one statement draws the ids, one stores the rows and one the jobs,
/// however many calls. The ids are known before the commit, so a commit whose answer is lost
/// can be looked up ([`settle`]).
async fn insert(queue: &JobQueue, calls: &[Queued]) -> Result<Vec<u64>, Failed> {
    let name = &queue.settings.name;
    let fail = |e: sqlx::Error| queue.db.error(e);
    let payload = |id: i64, queued: &Queued| {
        let traceparent = queued.traceparent.clone();
        stored::encode(&Payload {
            job: id as u64,
            traceparent,
        })
        .into_bytes()
    };
    let now = now_ms();
    let (ids, committed): (Vec<i64>, Result<(), sqlx::Error>) = match &queue.db.pool {
        #[cfg(feature = "sqlite")]
        Pool::Sqlite(pool) => {
            const INSERT: &str = concat!(
                "INSERT INTO agent_toolkit_jobs \
                (queue, call_id, tool, arguments, state, submitted_ms) \
                VALUES ($1, $2, $3, $4, '",
                state!(pending),
                "', $5) RETURNING id"
            );
            let mut tx = pool.begin().await.map_err(fail)?;
            let mut ids = Vec::with_capacity(calls.len());
            for Queued { call, .. } in calls {
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
                .zip(calls)
                .map(|(&id, queued)| apalis::prelude::TaskBuilder::new(payload(id, queued)).build())
                .collect();
            apalis_sqlite::queries::push_tasks(&mut *tx, name, &tasks)
                .await
                .map_err(|e| queue.db.error(e))?;
            (ids, tx.commit().await)
        }
        #[cfg(feature = "postgres")]
        Pool::Postgres(pool) => {
            const DRAW: &str = "SELECT nextval(pg_get_serial_sequence('agent_toolkit_jobs', 'id')) \
                FROM generate_series(1, $1)";
            const INSERT: &str = concat!(
                "INSERT INTO agent_toolkit_jobs \
                  (id, queue, call_id, tool, arguments, state, submitted_ms) \
                SELECT c.id, $1, c.call_id, c.tool, c.arguments, '",
                state!(pending),
                "', $6 FROM UNNEST($2::bigint[], $3::text[], $4::text[], $5::text[]) \
                  AS c(id, call_id, tool, arguments)"
            );
            let call_ids: Vec<&str> = calls.iter().map(|c| &*c.call.id).collect();
            let tools: Vec<&str> = calls.iter().map(|c| c.call.name.as_str()).collect();
            let arguments: Vec<&str> = calls.iter().map(|c| c.call.arguments.as_str()).collect();
            let mut tx = pool.begin().await.map_err(fail)?;
            let ids: Vec<i64> = sqlx::query_scalar(DRAW)
                .bind(calls.len() as i64)
                .fetch_all(&mut *tx)
                .await
                .map_err(fail)?;
            if ids.len() != calls.len() {
                return Err(Failed::Before(DatabaseError::message(
                    queue.db.label(),
                    format!("{} ids drawn for {} calls", ids.len(), calls.len()),
                )));
            }
            sqlx::query(INSERT)
                .bind(name)
                .bind(&ids)
                .bind(&call_ids)
                .bind(&tools)
                .bind(&arguments)
                .bind(now)
                .execute(&mut *tx)
                .await
                .map_err(fail)?;
            let tasks = ids
                .iter()
                .zip(calls)
                .map(|(&id, queued)| apalis::prelude::TaskBuilder::new(payload(id, queued)).build())
                .collect();
            apalis_postgres::queries::push_tasks(&mut *tx, name, tasks)
                .await
                .map_err(|e| queue.db.error(e))?;
            (ids, tx.commit().await)
        }
    };
    let ids: Vec<u64> = ids.into_iter().map(|id| id as u64).collect();
    match committed {
        Ok(()) => Ok(ids),
        Err(e) => Err(Failed::Commit(ids, fail(e))),
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

    fn cancel(&self, job: JobId) -> BoxFuture<'_, Result<bool, JobError>> {
        Box::pin(Durable::cancel(self, job))
    }

    fn take_finished(&self) -> BoxFuture<'_, Result<Vec<ToolResult>, JobError>> {
        Box::pin(Durable::take_finished(self))
    }

    fn listen(&self) {
        self.watch();
    }

    fn retention(&self) -> Option<Duration> {
        Some(self.queue.settings.retention)
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
