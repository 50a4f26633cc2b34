//! The core of background jobs, below the toolkit: [`BackgroundJobs`] (a toolkit's queue and
//! ledger), the [`JobBackend`] seam every backend plugs into, the in-process backend, and the
//! records, statuses and errors they share. The public face is [`crate::background`]; a durable
//! backend ([`crate::durable`]) sits above the toolkit and plugs in through [`MakeJobBackend`].
//!
//! | File | Owns |
//! |---|---|
//! | `mod.rs` | [`BackgroundJobs`] (and the submission of a background call), [`JobBackend`] and [`MakeJobBackend`], [`JobRecord`], [`JobStatus`], the notifier of finished results |
//! | `in_process.rs` | the default backend: tokio tasks of this process and a ledger in its memory |
//! | `error.rs` | [`JobError`] |

mod error;
mod in_process;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::SystemTime;

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::context::{ContextReads, QuestionBook, ToolContext};
use crate::error::ToolError;
use crate::exec::{Stack, ToolInvocation};
use crate::tool::{ToolCall, ToolOutput, ToolResult};
use in_process::InProcess;

pub use crate::tool::result::{Job, JobId};
pub use error::JobError;

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
    /// The status a result ends its job in.
    pub(crate) fn of(result: &ToolResult) -> JobStatus {
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
    /// When its result was recorded, once finished.
    pub finished: Option<SystemTime>,
    /// Whether [`BackgroundJobs::take_finished`] already handed the result out.
    pub taken: bool,
}

/// The result a cancelled job ends with.
pub(crate) fn cancelled_result(call: &ToolCall, job: JobId) -> ToolResult {
    let error = ToolError::new(
        crate::error::ToolErrorKind::Cancelled,
        format!("tool `{}` was cancelled before it finished", call.name),
    )
    .with_detail(format!("background job {job} was cancelled"));
    let mut result = ToolResult::new(call.id.clone(), call.name.clone(), Err(error), 0);
    result.job = Some(Job::Finished(job));
    result
}

/// Hands finished results to the callbacks and to the [`results`](BackgroundJobs::results)
/// streams.
// `pub` in name only (this module is private): the public `MakeJobBackend` names it.
pub struct Notifier {
    callbacks: Vec<ResultCallback>,
    events: broadcast::Sender<ToolResult>,
}

// What a backend other than the in-process one uses (none is compiled without a database
// feature).
#[cfg_attr(not(durable), allow(dead_code))]
impl Notifier {
    /// Whether anyone listens: a callback, or a [`results`](BackgroundJobs::results) stream.
    pub(crate) fn listening(&self) -> bool {
        !self.callbacks.is_empty() || self.events.receiver_count() > 0
    }

    /// Whether there are callbacks (they must hear of results even before this process
    /// submits anything).
    pub(crate) fn has_callbacks(&self) -> bool {
        !self.callbacks.is_empty()
    }

    /// Hand `result` to every callback and stream.
    pub(crate) fn notify(&self, result: ToolResult) {
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

/// A backend of background jobs: where they are queued, run and recorded. The in-process
/// backend is the default; a durable one (`crate::durable`) plugs in through
/// [`MakeJobBackend`]. A new backend is one module implementing this.
// `pub` in name only (this module is private): the public `MakeJobBackend` names it.
pub trait JobBackend: Send + Sync + 'static {
    /// Queue a validated call; its id, or the model-visible reason it was refused.
    fn submit<'a>(&'a self, job: Submission<'a>) -> BoxFuture<'a, Submitted>;
    /// The record of one job.
    fn get(&self, job: JobId) -> BoxFuture<'_, Result<Option<JobRecord>, JobError>>;
    /// Every job submitted with this call id, oldest first.
    fn by_call_id<'a>(
        &'a self,
        call_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<JobRecord>, JobError>>;
    /// The jobs in `status`, oldest first.
    fn with_status(&self, status: JobStatus) -> BoxFuture<'_, Result<Vec<JobRecord>, JobError>>;
    /// End a job that has no result yet with a cancelled one (the first result stands: a run
    /// still under way is told to stop and its result dropped); false when the job is unknown
    /// or already ended.
    fn cancel(&self, job: JobId) -> BoxFuture<'_, Result<bool, JobError>>;
    /// Results not handed out before, each handed out once.
    fn take_finished(&self) -> BoxFuture<'_, Result<Vec<ToolResult>, JobError>>;
    /// Someone started listening for results (a stream): start reporting them.
    fn listen(&self) {}
    /// How long a finished job's record is kept; `None`: as long as the backend lives.
    fn retention(&self) -> Option<std::time::Duration> {
        None
    }
    /// How many jobs run in this process.
    fn running(&self) -> usize;
    /// Stop taking work (see [`BackgroundJobs::shutdown`]).
    fn shutdown(&self) -> BoxFuture<'_, ()>;
    /// Wait until no job is pending (see [`BackgroundJobs::drain`]).
    fn drain(&self) -> BoxFuture<'_, Result<(), JobError>>;
    /// What the backend is, for `Debug`: a name and a value.
    fn describe(&self) -> (&'static str, String);
}

/// Where a toolkit can keep its background jobs instead of this process: what
/// [`ToolkitBuilder::job_queue`](crate::toolkit::ToolkitBuilder::job_queue) takes. A durable
/// queue (`background::JobQueue`, features `sqlite` or `postgres`) implements it; no type
/// outside the crate can, since its method names the crate's own backend seam.
pub trait MakeJobBackend: Send + Sync + 'static {
    /// The backend of a toolkit being built, reporting to the toolkit's notifier of finished
    /// results.
    fn make(&self, notifier: &Arc<Notifier>) -> Arc<dyn JobBackend>;
}

/// One call handed to a backend.
// `pub` in name only (this module is private): the public `MakeJobBackend` names it.
#[cfg_attr(not(durable), allow(dead_code))]
pub struct Submission<'a> {
    /// The call, validated.
    pub(crate) call: ToolCall,
    /// Its context.
    pub(crate) context: &'a ToolContext,
    /// What each of the tool's `#[ctx]` parameters reads from the context.
    pub(crate) reads: Vec<(&'static str, ContextReads)>,
    /// Runs the call in this process, through the toolkit's stack (what the in-process backend
    /// does with it); the token cancels it at shutdown.
    pub(crate) run_here:
        Box<dyn FnOnce(CancellationToken) -> BoxFuture<'static, ToolResult> + Send>,
}

/// The span a background job runs in, wherever it runs: the root of a trace of its own
/// (`background_job <tool>`, of kind consumer), linked to the span the call was submitted from;
/// the job's `execute_tool` span inside it.
pub(crate) fn job_span(tool: &str, call_id: &str) -> tracing::Span {
    tracing::info_span!(
        parent: None,
        "background_job",
        otel.name = format!("background_job {tool}"),
        otel.kind = "consumer",
        gen_ai.tool.name = tool,
        gen_ai.tool.call.id = call_id,
    )
}

/// The toolkit's background queue and ledger. Shared by every clone and view of a toolkit.
pub struct BackgroundJobs {
    backend: Arc<dyn JobBackend>,
    notifier: Arc<Notifier>,
}

impl std::fmt::Debug for BackgroundJobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (what, value) = self.backend.describe();
        f.debug_struct("BackgroundJobs")
            .field(what, &value)
            .finish_non_exhaustive()
    }
}

/// What [`JobBackend::submit`] hands back: the job's id, or the model-visible reason it
/// was refused.
pub(crate) type Submitted = Result<JobId, ToolError>;

impl BackgroundJobs {
    pub(crate) fn new(
        capacity: usize,
        callbacks: Vec<ResultCallback>,
        backend: Option<&dyn MakeJobBackend>,
    ) -> Self {
        let notifier = Arc::new(Notifier {
            callbacks,
            events: broadcast::channel(1024).0,
        });
        let backend = match backend {
            Some(make) => make.make(&notifier),
            None => Arc::new(InProcess::new(capacity, Arc::clone(&notifier))),
        };
        BackgroundJobs { backend, notifier }
    }

    /// Validate a background call, queue it, and answer at once with a pending result naming
    /// its job; or the model-visible reason it was refused (its arguments, or the backend).
    /// `stack` runs the job when this process's backend runs it; `reads` says what the tool's
    /// `#[ctx]` parameters read from the context (a backend that cannot carry a call's context
    /// refuses calls that need it).
    pub(crate) async fn submit(
        &self,
        call: ToolCall,
        mut inv: ToolInvocation,
        stack: Stack,
        reads: Vec<(&'static str, ContextReads)>,
        context: &ToolContext,
    ) -> Result<ToolResult, ToolError> {
        // Argument errors are answered now, while the model can still correct them.
        inv.args
            .as_mut()
            .map_err(|e| e.clone())
            .and_then(|a| a.validate())?;
        let (id, name) = (call.id.clone(), call.name.clone());
        // The job runs in a trace of its own, linked to the span it was submitted from.
        let submitted_from = tracing::Span::current();
        let run_here = {
            let (id, name) = (id.clone(), name.clone());
            move |shutdown: CancellationToken| {
                let span = job_span(&name, &id);
                span.follows_from(&submitted_from);
                // The job outlives this call: it stops on toolkit shutdown, not with the caller.
                // Nor is it held by its turn's questions: it asks whoever its context names, or
                // no one.
                if let Ok(args) = &mut inv.args {
                    let ctx = args
                        .context()
                        .clone()
                        .with_cancellation(shutdown)
                        .with(QuestionBook::closed_source());
                    args.set_context(ctx);
                }
                let run: BoxFuture<'static, ToolResult> =
                    Box::pin(tracing::Instrument::instrument(
                        async move {
                            let attempts = inv.attempt_counter();
                            let outcome = stack.run(inv).await;
                            ToolResult::new(id, name, outcome, attempts.load(Ordering::Relaxed))
                        },
                        span,
                    ));
                run
            }
        };
        let submission = Submission {
            call,
            context,
            reads,
            run_here: Box::new(run_here),
        };
        let job_id = self.backend.submit(submission).await?;
        // The job id tells the model which report is this call's when it reuses call ids.
        let note = format!(
            "Tool `{name}` is running in the background (call id {id}, job {job_id}); its result will be reported when it finishes."
        );
        let mut result = ToolResult::new(id, name, Ok(ToolOutput::text(note)), 0);
        result.job = Some(Job::Pending(job_id));
        Ok(result)
    }

    /// The record of one job.
    pub async fn get(&self, job: JobId) -> Result<Option<JobRecord>, JobError> {
        self.backend.get(job).await
    }

    /// Every job submitted with this call id, oldest first: models reuse ids, so there may be
    /// several.
    pub async fn by_call_id(&self, call_id: &str) -> Result<Vec<JobRecord>, JobError> {
        self.backend.by_call_id(call_id).await
    }

    /// Calls not finished yet (queued or running), oldest first.
    pub async fn pending(&self) -> Result<Vec<JobRecord>, JobError> {
        self.backend.with_status(JobStatus::Pending).await
    }

    /// Calls that finished with output, oldest first.
    pub async fn finished(&self) -> Result<Vec<JobRecord>, JobError> {
        self.backend.with_status(JobStatus::Finished).await
    }

    /// Calls that ended with an error, oldest first.
    pub async fn failed(&self) -> Result<Vec<JobRecord>, JobError> {
        self.backend.with_status(JobStatus::Failed).await
    }

    /// Cancel a job that has not finished: it ends at once with a `Cancelled` error result
    /// (recorded, reported to the callbacks and streams, handed out by
    /// [`take_finished`](Self::take_finished) like any other), and a run under way is told to
    /// stop through its context's cancellation — in this process, or, with a durable queue, in
    /// whichever worker runs it (within a [`heartbeat`](crate::background::JobQueue::heartbeat)).
    /// What that run returns afterwards is dropped: a job has one result. `Ok(false)` when the
    /// job is unknown or had already ended.
    pub async fn cancel(&self, job: JobId) -> Result<bool, JobError> {
        self.backend.cancel(job).await
    }

    /// Results of finished jobs (output or error) not handed out before, oldest submission
    /// first; each is handed out once (with a durable queue, once across every process that
    /// shares it). This is how an agent feeds them into its next turn.
    pub async fn take_finished(&self) -> Result<Vec<ToolResult>, JobError> {
        self.backend.take_finished().await
    }

    /// Every result from now on, as jobs finish. A subscriber that falls more than 1024 results
    /// behind skips the oldest (the ledger still has them). With a durable queue, results come
    /// from the database: those of jobs that finished while no process of the queue was
    /// listening are delivered when one starts, each to one process.
    pub fn results(&self) -> BoxStream<'static, ToolResult> {
        let events = self.notifier.events.subscribe();
        self.backend.listen();
        futures::stream::unfold(events, |mut rx| async move {
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

    /// How long the record (and result) of a finished job is kept: with a durable queue its
    /// [`retention`](crate::background::JobQueue::retention); `None` in process, where the
    /// ledger lives as long as the toolkit.
    pub fn retention(&self) -> Option<std::time::Duration> {
        self.backend.retention()
    }

    /// How many jobs are running in this process (with a durable queue, jobs run in
    /// `Worker`s and this is 0: ask [`pending`](Self::pending)).
    pub fn running(&self) -> usize {
        self.backend.running()
    }

    /// In-process: cancel every running job, refuse new ones, and wait until their tasks have
    /// ended; each cancelled job still gets its (`Cancelled`) result recorded and reported.
    /// Durable: refuse new submissions and stop reporting results here (the workers keep
    /// running the queue's jobs).
    pub async fn shutdown(&self) {
        self.backend.shutdown().await
    }

    /// Wait for the running jobs (and any submitted meanwhile) to finish, cancelling none.
    /// Durable: wait until the queue has no pending job.
    pub async fn drain(&self) -> Result<(), JobError> {
        self.backend.drain().await
    }
}
