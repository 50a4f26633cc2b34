//! [`Worker`]: runs the jobs of a durable [`JobQueue`] with a toolkit.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use apalis::prelude::{
    AbortError, BackendExt, BoxDynError, Data, TaskId, WorkerBuilder, WorkerBuilderExt,
};
use tokio_util::sync::CancellationToken;

use super::job_queue::JobQueue;
use super::ledger::{self, Finished, Payload, State, WorkerLedger};
use crate::context::ToolContext;
use crate::error::{ToolError, ToolErrorKind};
use crate::jobs::JobError;
use crate::storage::Pool;
use crate::storage::stored;
use crate::tool::ToolResult;
use crate::tool::result::{Job, JobId};
use crate::toolkit::Toolkit;

/// Runs the background jobs of a [`JobQueue`] with a toolkit: in the submitting process, or in
/// processes of their own on other machines (any number of workers may serve one queue).
///
/// Each job runs through the worker's toolkit exactly as a call would (its execution stack,
/// presets and toolkit-level context), at most [`concurrency`](Self::concurrency) at a time.
/// The worker's toolkit must have the queue's tools: a job of a tool it lacks ends with an
/// `unknown tool` error result naming the tools it has.
///
/// [`run_until`](Self::run_until) serves until a shutdown signal, then stops taking jobs, lets
/// the running ones finish for up to [`grace`](Self::grace) (then cancels them: they end with
/// a `Cancelled` result), and hands the jobs it had fetched but not started back to the queue.
/// A database that goes away is logged and reconnected to; the worker never exits for it.
pub struct Worker {
    toolkit: Toolkit,
    queue: JobQueue,
    name: String,
    concurrency: usize,
    grace: Duration,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("name", &self.name)
            .field("queue", &self.queue.settings.name)
            .field("concurrency", &self.concurrency)
            .finish_non_exhaustive()
    }
}

impl Worker {
    /// A worker running the jobs of `queue` with `toolkit`.
    pub fn new(toolkit: &Toolkit, queue: &JobQueue) -> Worker {
        Worker {
            toolkit: toolkit.clone(),
            queue: queue.clone(),
            name: format!("worker-{}-{:08x}", std::process::id(), fastrand::u32(..)),
            concurrency: 16,
            grace: Duration::from_secs(30),
        }
    }

    crate::util::setters! {
        /// The worker's name (default `worker-<pid>-<random>`). Names identify live workers in
        /// the database: two workers running at once must not share one.
        pub fn name(name: impl Into<String>) => name = name.into();

        /// Most jobs running at once (default 16).
        pub fn concurrency(jobs: usize) => concurrency = jobs;

        /// How long running jobs may take to finish after the shutdown signal before they are
        /// cancelled (default 30 s).
        pub fn grace(grace: Duration) => grace = grace;
    }

    /// Serve the queue until `shutdown` completes, then shut down gracefully (see the type's
    /// docs). Fails only on bad settings; database failures are waited out.
    pub async fn run_until(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), JobError> {
        self.queue.check()?;
        if self.concurrency == 0 {
            return Err(JobError::Config(
                "a worker's concurrency must be at least 1".into(),
            ));
        }
        if self.name.trim().is_empty() {
            return Err(JobError::Config("the worker's name is empty".into()));
        }
        let stop = CancellationToken::new();
        let tools = CancellationToken::new();
        let signal = tokio::spawn({
            let (stop, tools, grace) = (stop.clone(), tools.clone(), self.grace);
            async move {
                shutdown.await;
                stop.cancel();
                tokio::time::sleep(grace).await;
                tools.cancel();
            }
        });
        let runner = Arc::new(Runner {
            toolkit: self.toolkit.clone(),
            queue: self.queue.clone(),
            ledger: WorkerLedger::new(&self.queue),
            worker: self.name.clone(),
            tools: tools.clone(),
            running: Default::default(),
            unstarted: Default::default(),
        });
        let mut failures = 0u32;
        let mut incarnation = 1u32;
        while !stop.is_cancelled() {
            // Each apalis worker after the first gets a name of its own: jobs the one before
            // had fetched but not started (its fetch's reply was lost with the database) are
            // locked to the old name, which stops sending heartbeats, so apalis puts them back
            // after three missed heartbeats. Under one name they would stay locked for good.
            let name = if incarnation == 1 {
                self.name.clone()
            } else {
                format!("{}~{incarnation}", self.name)
            };
            incarnation += 1;
            let outcome = self.serve(&name, Arc::clone(&runner), stop.clone()).await;
            match outcome {
                Ok(()) => break,
                Err(message) if !stop.is_cancelled() => {
                    failures += 1;
                    let wait = Duration::from_millis(250 * u64::from(failures.min(8)));
                    tracing::warn!(
                        worker = %self.name,
                        error = %message,
                        "the worker lost its job database; reconnecting in {wait:?}"
                    );
                    tokio::select! {
                        _ = stop.cancelled() => break,
                        _ = tokio::time::sleep(wait) => {}
                    }
                }
                Err(message) => {
                    tracing::debug!(worker = %self.name, error = %message, "the worker stopped")
                }
            }
        }
        signal.abort();
        Ok(())
    }

    /// One apalis worker named `name` on the queue, until `stop` or an error.
    async fn serve(
        &self,
        name: &str,
        runner: Arc<Runner>,
        stop: CancellationToken,
    ) -> Result<(), String> {
        let settings = &self.queue.settings;
        let until = async move {
            stop.cancelled().await;
            Ok::<(), apalis::prelude::WorkerError>(())
        };
        let batch = self.concurrency.min(100);
        // The same worker on either engine's backend (their types differ). A fetch already
        // locks its jobs to this worker (`Queued`, `lock_by`), and a dead worker's jobs go back
        // to the queue as well from `Queued` as from `Running`: apalis's second statement per
        // job marking it `Running` (`lock_tasks`) is left out. Whether a job's tool was entered
        // is the ledger's to say (`started_by`).
        macro_rules! run_on {
            ($engine:ident::$storage:ident, $pool:expr) => {{
                let config = $engine::Config::default()
                    .queue(&settings.name)
                    .heartbeat_interval(settings.heartbeat)
                    .missed_heartbeats(3)
                    .batch_size(batch)
                    .lock_tasks(false);
                let backend = $engine::$storage::<serde_json::Value>::new($pool)
                    .with_config(config)
                    .poll_with_interval(settings.poll_interval);
                WorkerBuilder::new(name)
                    .backend(backend)
                    .data(runner)
                    .concurrency(self.concurrency)
                    .build(run_job)
                    .run_until(until)
                    .await
            }};
        }
        let outcome = match &self.queue.db.pool {
            // SQLite tells no other process of new jobs: look every poll interval.
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(pool) => run_on!(apalis_sqlite::SqliteStorage, pool),
            // Polling on Postgres too: with apalis's LISTEN wakeups two workers were slower than
            // one (BENCHMARKS.md).
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => run_on!(apalis_postgres::PostgresStorage, pool),
        };
        outcome.map_err(|e| crate::util::error_chain(&e))
    }
}

/// What every job of one worker shares.
struct Runner {
    toolkit: Toolkit,
    queue: JobQueue,
    /// The ledger's rows and results, read and written for many jobs at once.
    ledger: WorkerLedger,
    worker: String,
    /// Cancels the running tools (after the grace period of a shutdown).
    tools: CancellationToken,
    /// Jobs this worker is running: a job delivered again while it runs here (apalis took the
    /// worker for dead while its database was away) is left to the run in progress.
    running: std::sync::Mutex<std::collections::HashSet<u64>>,
    /// Jobs this worker marked started (or tried to: the mark's reply was lost) without
    /// entering their tool: delivered again, they are run, not ended *outcome unknown*.
    unstarted: std::sync::Mutex<std::collections::HashSet<u64>>,
}

/// The apalis handler: one job, on a tokio task of its own (so jobs run on every thread of the
/// runtime, not only the worker's).
async fn run_job(
    payload: serde_json::Value,
    task: TaskId,
    runner: Data<Arc<Runner>>,
) -> Result<(), BoxDynError> {
    let runner = Arc::clone(&runner);
    let task = task.to_string();
    match tokio::spawn(async move { runner.run(payload, &task).await }).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(Failure::Abort(message))) => Err(Box::new(AbortError::new(message))),
        Ok(Err(Failure::Retry(error))) => Err(error.into()),
        Err(e) => Err(format!("the job's task failed: {e}").into()),
    }
}

/// A job's place in [`Runner::running`], left when dropped.
struct Running<'a> {
    set: &'a std::sync::Mutex<std::collections::HashSet<u64>>,
    id: u64,
}

impl<'a> Running<'a> {
    fn enter(set: &'a std::sync::Mutex<std::collections::HashSet<u64>>, id: u64) -> Option<Self> {
        let entered = crate::util::lock(set).insert(id);
        // Lazily: a `Running` made for nothing would leave (and lock) the set when dropped.
        entered.then(|| Running { set, id })
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        crate::util::lock(self.set).remove(&self.id);
    }
}

/// Why a job did not run: never to be retried (apalis marks it killed), or for apalis to retry
/// later (the database failed before anything ran).
enum Failure {
    Abort(String),
    Retry(JobError),
}

impl From<JobError> for Failure {
    fn from(error: JobError) -> Self {
        Failure::Retry(error)
    }
}

fn abort(message: String) -> Failure {
    tracing::error!("{message}");
    Failure::Abort(message)
}

impl Runner {
    /// Run the job of apalis task `task`.
    async fn run(&self, payload: serde_json::Value, task: &str) -> Result<(), Failure> {
        let queue = &self.queue.settings.name;
        let payload: Payload = match stored::decode::<Payload>(&payload.to_string()) {
            Ok(p) => p,
            Err(error) => {
                let message = format!(
                    "worker `{}` refused a job of queue `{queue}`: {error} (its payload: \
                     {payload})",
                    self.worker
                );
                // A payload that still names its job ends that job with the reason.
                let job = payload.get("job").and_then(serde_json::Value::as_u64);
                if let Some(job) = job
                    && let Some(row) = self.ledger.load(job).await?
                {
                    let error = ToolError::execution(
                        "the background job could not be run: its stored form is not one \
                             this worker reads",
                    )
                    .with_detail(message.clone());
                    let mut result = ToolResult::new(row.call_id.as_str(), row.tool, Err(error), 0);
                    result.job = Some(Job::Finished(JobId(job)));
                    // apalis keeps its task, marked killed, for whoever looks into it.
                    self.store(job, None, &result).await;
                }
                return Err(abort(message));
            }
        };
        let id = payload.job;
        // A database error here is apalis's to retry: nothing ran yet.
        let Some(row) = self.ledger.load(id).await? else {
            return Err(abort(format!(
                "worker `{}` got job {id}, which is not in the ledger of queue `{queue}`",
                self.worker
            )));
        };
        if matches!(row.state(), Some(State::Finished | State::Failed)) {
            // Delivered again after its result was stored: it already ran.
            return Ok(());
        }
        let Some(_running) = Running::enter(&self.running, id) else {
            // Delivered again while this worker runs it: the run in progress stores the result.
            return Ok(());
        };
        let call = row.call();
        let repeatable = self
            .toolkit
            .options(&call.name)
            .is_some_and(|o| o.annotations.idempotent || o.annotations.read_only);
        if !repeatable {
            let mine_unstarted = row.started_by.as_deref() == Some(self.worker.as_str())
                && crate::util::lock(&self.unstarted).contains(&id);
            if row.state() == Some(State::Running) && !mine_unstarted {
                let by = row.started_by.as_deref().unwrap_or("a worker");
                let error = ToolError::new(
                    ToolErrorKind::OutcomeUnknown,
                    format!(
                        "tool `{}` was started and its worker stopped before reporting; it may \
                         or may not have taken effect, and it is not run again because it is \
                         not idempotent. Check before calling it again.",
                        call.name
                    ),
                )
                .with_detail(format!(
                    "job {id} was marked started by `{by}` just before its tool was entered, \
                     and was delivered again without a result"
                ));
                let mut result = ToolResult::new(call.id, call.name, Err(error), 1);
                result.job = Some(Job::Finished(JobId(id)));
                self.store(id, Some(task), &result).await;
                return Ok(());
            }
            if row.state() == Some(State::Pending) {
                // Until the tool is entered, this worker knows it has not run.
                crate::util::lock(&self.unstarted).insert(id);
                match ledger::begin(&self.queue, id, &self.worker).await {
                    Ok(true) => {}
                    Ok(false) => {
                        crate::util::lock(&self.unstarted).remove(&id);
                        return Ok(());
                    }
                    // The mark may have been written: delivered again, the job finds it ours.
                    Err(e) => return Err(e.into()),
                }
            }
        }
        crate::util::lock(&self.unstarted).remove(&id);
        let stop = self.tools.child_token();
        let ctx = ToolContext::new().with_cancellation(stop.clone());
        let span = crate::jobs::job_span(&call.name, &call.id);
        if let Some(submitted_from) = &payload.traceparent {
            crate::trace_context::link(&span, submitted_from);
        }
        let run = tracing::Instrument::instrument(self.toolkit.call_now(call, &ctx), span);
        tokio::pin!(run);
        let mut result = tokio::select! {
            result = &mut run => result,
            () = self.ended_elsewhere(id) => {
                // Cancelled (`BackgroundJobs::cancel`): the tool is told to stop; what it
                // returns is dropped by `store`, the job has its result.
                stop.cancel();
                run.await
            }
        };
        result.job = Some(Job::Finished(JobId(id)));
        self.store(id, Some(task), &result).await;
        Ok(())
    }

    /// Returns once job `id`'s row has a result written by someone else (a cancellation),
    /// looking once per heartbeat; never while it has none.
    async fn ended_elsewhere(&self, id: u64) {
        loop {
            tokio::time::sleep(self.queue.settings.heartbeat).await;
            if let Ok(Some(row)) = self.ledger.load(id).await
                && matches!(row.state(), Some(State::Finished | State::Failed))
            {
                return;
            }
        }
    }

    /// Write the result, waiting out a database that went away (the result is in memory until
    /// then); give up only when the worker's tools were cancelled at shutdown. With the result,
    /// apalis's `task` of the job is deleted: the ledger has all there is to know, and apalis
    /// keeps no record of its own to look through (it would, of every job a worker ever ran).
    async fn store(&self, id: u64, task: Option<&str>, result: &ToolResult) {
        let mut wait = Duration::from_millis(100);
        loop {
            match self.ledger.finish(Finished::new(id, task, result)).await {
                Ok(true) => return,
                Ok(false) => {
                    tracing::info!(
                        job = id,
                        "job already had a result (it was cancelled, or ended by another run); this run's result is dropped"
                    );
                    return;
                }
                Err(e) if self.tools.is_cancelled() => {
                    tracing::error!(job = id, error = %e, "the result of job {id} could not be stored before shutdown");
                    return;
                }
                Err(e) => {
                    tracing::warn!(job = id, error = %e, "cannot store the result of job {id}; retrying in {wait:?}");
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(2));
                }
            }
        }
    }
}
