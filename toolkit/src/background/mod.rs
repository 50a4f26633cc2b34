//! Background tools: a queue of jobs and a ledger of every background call, one record per
//! job, kept in this process (the default) or in a database shared by many processes.
//!
//! A call of a `#[tool(background)]` tool is validated, submitted, and answered at once with a
//! *pending* result; the tool then runs through the same stack as any call (timeouts, retries,
//! tracing, panic guard). When it ends, its [`ToolResult`] is written to the ledger, passed to
//! every [`on_tool_result`](crate::toolkit::ToolkitBuilder::on_tool_result) callback and sent
//! to every [`results`](BackgroundJobs::results) stream. An agent collects finished results
//! with [`take_finished`](BackgroundJobs::take_finished) and lists the
//! [`pending`](BackgroundJobs::pending) ones to the model.
//!
//! **Records are keyed by [`JobId`], not by call id.** Call ids are chosen by the model, and
//! models reuse them: local model servers commonly number calls per turn, so `call_0` comes
//! back every turn. A call whose id is already in the ledger — even one still running — is
//! accepted and becomes a job of its own; nothing is overwritten and every result is delivered.
//! (Within one batch a repeated id is still refused, by [`Toolkit::call_all`](crate::Toolkit::call_all):
//! the model could not tell the two results apart in the same turn.) Each record keeps its
//! call; [`get`](BackgroundJobs::get) finds a job by its id, [`by_call_id`](BackgroundJobs::by_call_id)
//! lists every job a call id was used for. The pending result and the job's own result carry
//! the job ([`ToolResult::job`](crate::ToolResult::job): [`Job::Pending`] or [`Job::Finished`]).
//!
//! # Backends
//!
//! - **In-process** (the default): jobs are tokio tasks of this process, the ledger lives in
//!   its memory, and both end with it.
//! - **Durable** ([`JobQueue`], features `sqlite` and `postgres`): jobs and the ledger live in a
//!   SQLite file or a Postgres database, on the [apalis](https://docs.rs/apalis) job engine,
//!   and [`Worker`]s — in this process or in others, on other machines — run them. See
//!   [`JobQueue`] for what is guaranteed: a call is stored before its pending result is
//!   returned; a job runs at least once, and a tool that is neither `idempotent` nor
//!   `read_only` is never run twice (after a worker dies mid-job it ends *outcome unknown*,
//!   [`ToolErrorKind::OutcomeUnknown`](crate::error::ToolErrorKind::OutcomeUnknown)); results are
//!   read back from the database, so a process that restarts still gets the results of the
//!   calls it made before.
//!
//! Shutting down (in-process): [`shutdown`](BackgroundJobs::shutdown) **cancels** the jobs
//! still running (each ends with a `Cancelled` result, recorded and reported like any other)
//! and waits for their tasks to end; [`drain`](BackgroundJobs::drain) waits for them to finish
//! instead. A toolkit dropped without either leaves its jobs running to completion. With a
//! durable queue, jobs belong to the workers: `shutdown` only stops this process from
//! submitting and from reporting, and `drain` waits until the queue has no pending job.
//!
//! The in-process ledger keeps every record for the toolkit's lifetime (results handed out by
//! `take_finished` are marked, not removed); a durable one keeps them for the queue's
//! [`retention`](JobQueue::retention).

#[cfg(durable)]
mod durable;
mod in_process;
mod job_error;
#[cfg(durable)]
mod job_queue;
#[cfg(durable)]
mod worker;

use std::sync::Arc;
use std::time::SystemTime;

use futures::StreamExt;
use futures::stream::BoxStream;
use tokio::sync::broadcast;

use crate::tool::{ToolCall, ToolResult};
use in_process::InProcess;

pub use crate::tool::result::{Job, JobId};
pub use job_error::JobError;
#[cfg(durable)]
pub use job_queue::JobQueue;
#[cfg(durable)]
pub use worker::Worker;

/// A callback run for every finished background call.
pub type ResultCallback = Arc<dyn Fn(&ToolResult) + Send + Sync>;

/// Where a background call is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobStatus {
    /// Submitted and not finished (queued or running).
    Pending,
    /// Finished with output.
    Finished,
    /// Finished with an error (including cancellation and *outcome unknown*).
    Failed,
}

impl JobStatus {
    fn of(result: &ToolResult) -> JobStatus {
        if result.is_error() {
            JobStatus::Failed
        } else {
            JobStatus::Finished
        }
    }
}

/// What the ledger knows about one background job.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct JobRecord {
    /// The job's id.
    pub id: JobId,
    /// The call as the model made it (its id is not unique: see the module docs).
    pub call: ToolCall,
    /// Where it is.
    pub status: JobStatus,
    /// Its result, once finished.
    pub result: Option<ToolResult>,
    /// When it was submitted.
    pub submitted: SystemTime,
    /// Whether [`BackgroundJobs::take_finished`] already handed the result out.
    pub taken: bool,
}

/// Hands finished results to the callbacks and to the [`results`](BackgroundJobs::results)
/// streams.
pub(crate) struct Notifier {
    callbacks: Vec<ResultCallback>,
    events: broadcast::Sender<ToolResult>,
}

impl Notifier {
    fn notify(&self, result: ToolResult) {
        for callback in &self.callbacks {
            // A failing callback must not take the job's result down with it.
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| callback(&result))).is_err()
            {
                tracing::error!(call_id = %result.call_id, job = ?result.job, "an on_tool_result callback panicked");
            }
        }
        // No subscriber is fine: the ledger keeps the result.
        let _ = self.events.send(result);
    }
}

enum Backend {
    InProcess(Arc<InProcess>),
    #[cfg(durable)]
    Durable(Arc<durable::Durable>),
}

/// The toolkit's background queue and ledger. Shared by every clone and view of a toolkit.
pub struct BackgroundJobs {
    backend: Backend,
    notifier: Arc<Notifier>,
}

impl std::fmt::Debug for BackgroundJobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("BackgroundJobs");
        match &self.backend {
            Backend::InProcess(jobs) => d.field("running", &jobs.running()),
            #[cfg(durable)]
            Backend::Durable(jobs) => d.field("queue", &jobs.queue_name()),
        };
        d.finish_non_exhaustive()
    }
}

/// What [`BackgroundJobs::submit`] hands back: the job's id, or the model-visible reason it
/// was refused.
pub(crate) type Submitted = Result<JobId, crate::ToolError>;

impl BackgroundJobs {
    pub(crate) fn new(
        capacity: usize,
        callbacks: Vec<ResultCallback>,
        #[cfg(durable)] queue: Option<JobQueue>,
    ) -> Self {
        let notifier = Arc::new(Notifier {
            callbacks,
            events: broadcast::channel(1024).0,
        });
        #[cfg(durable)]
        if let Some(queue) = queue {
            return BackgroundJobs {
                backend: Backend::Durable(durable::Durable::submitter(queue, &notifier)),
                notifier,
            };
        }
        BackgroundJobs {
            backend: Backend::InProcess(Arc::new(InProcess::new(capacity))),
            notifier,
        }
    }

    /// The durable queue behind this ledger, if it has one.
    #[cfg(durable)]
    pub(crate) fn durable(&self) -> Option<&Arc<durable::Durable>> {
        match &self.backend {
            Backend::InProcess(_) => None,
            Backend::Durable(jobs) => Some(jobs),
        }
    }

    /// Submit a validated call whose invocation `run` will execute, in this process.
    pub(crate) async fn submit<F>(
        &self,
        call: ToolCall,
        in_process: impl FnOnce(tokio_util::sync::CancellationToken) -> F,
    ) -> Submitted
    where
        F: std::future::Future<Output = ToolResult> + Send + 'static,
    {
        match &self.backend {
            Backend::InProcess(jobs) => {
                let Ok(handle) = tokio::runtime::Handle::try_current() else {
                    return Err(crate::ToolError::execution(
                        "background tools need a tokio runtime",
                    )
                    .with_detail(
                        "Toolkit::call of a background tool was awaited outside a tokio runtime",
                    ));
                };
                let permit = jobs.reserve().map_err(crate::ToolError::execution)?;
                let job = in_process(jobs.shutdown_token());
                Ok(jobs.start(&self.notifier, &handle, call, permit, job))
            }
            #[cfg(durable)]
            Backend::Durable(jobs) => jobs.submit(call).await,
        }
    }

    /// The record of one job.
    pub async fn get(&self, job: JobId) -> Result<Option<JobRecord>, JobError> {
        match &self.backend {
            Backend::InProcess(jobs) => Ok(jobs.get(job)),
            #[cfg(durable)]
            Backend::Durable(jobs) => jobs.get(job).await,
        }
    }

    /// Every job submitted with this call id, oldest first: models reuse ids, so there may be
    /// several.
    pub async fn by_call_id(&self, call_id: &str) -> Result<Vec<JobRecord>, JobError> {
        match &self.backend {
            Backend::InProcess(jobs) => Ok(jobs.filter(|r| &*r.call.id == call_id)),
            #[cfg(durable)]
            Backend::Durable(jobs) => jobs.by_call_id(call_id).await,
        }
    }

    /// Calls not finished yet (queued or running), oldest first.
    pub async fn pending(&self) -> Result<Vec<JobRecord>, JobError> {
        self.with_status(JobStatus::Pending).await
    }

    /// Calls that finished with output, oldest first.
    pub async fn finished(&self) -> Result<Vec<JobRecord>, JobError> {
        self.with_status(JobStatus::Finished).await
    }

    /// Calls that ended with an error, oldest first.
    pub async fn failed(&self) -> Result<Vec<JobRecord>, JobError> {
        self.with_status(JobStatus::Failed).await
    }

    async fn with_status(&self, status: JobStatus) -> Result<Vec<JobRecord>, JobError> {
        match &self.backend {
            Backend::InProcess(jobs) => Ok(jobs.filter(|r| r.status == status)),
            #[cfg(durable)]
            Backend::Durable(jobs) => jobs.with_status(status).await,
        }
    }

    /// Results of finished jobs (output or error) not handed out before, oldest submission
    /// first; each is handed out once (with a durable queue, once across every process that
    /// shares it). This is how an agent feeds them into its next turn.
    pub async fn take_finished(&self) -> Result<Vec<ToolResult>, JobError> {
        match &self.backend {
            Backend::InProcess(jobs) => Ok(jobs.take_finished()),
            #[cfg(durable)]
            Backend::Durable(jobs) => jobs.take_finished().await,
        }
    }

    /// Every result from now on, as jobs finish. A subscriber that falls more than 1024 results
    /// behind skips the oldest (the ledger still has them). With a durable queue, results come
    /// from the database: those of jobs that finished while no process of the queue was
    /// listening are delivered when one starts, each to one process.
    pub fn results(&self) -> BoxStream<'static, ToolResult> {
        #[cfg(durable)]
        if let Backend::Durable(jobs) = &self.backend {
            jobs.watch();
        }
        futures::stream::unfold(self.notifier.events.subscribe(), |mut rx| async move {
            loop {
                match rx.recv().await {
                    Ok(result) => return Some((result, rx)),
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        })
        .boxed()
    }

    /// How many jobs are running in this process (with a durable queue, jobs run in
    /// [`Worker`]s and this is 0: ask [`pending`](Self::pending)).
    pub fn running(&self) -> usize {
        match &self.backend {
            Backend::InProcess(jobs) => jobs.running(),
            #[cfg(durable)]
            Backend::Durable(_) => 0,
        }
    }

    /// In-process: cancel every running job, refuse new ones, and wait until their tasks have
    /// ended; each cancelled job still gets its (`Cancelled`) result recorded and reported.
    /// Durable: refuse new submissions and stop reporting results here (the workers keep
    /// running the queue's jobs).
    pub async fn shutdown(&self) {
        match &self.backend {
            Backend::InProcess(jobs) => jobs.shutdown().await,
            #[cfg(durable)]
            Backend::Durable(jobs) => jobs.shutdown().await,
        }
    }

    /// Wait for the running jobs (and any submitted meanwhile) to finish, cancelling none.
    /// Durable: wait until the queue has no pending job.
    pub async fn drain(&self) -> Result<(), JobError> {
        match &self.backend {
            Backend::InProcess(jobs) => {
                jobs.drain().await;
                Ok(())
            }
            #[cfg(durable)]
            Backend::Durable(jobs) => jobs.drain().await,
        }
    }
}
