//! Background tools: a bounded task queue owned by the toolkit, and a ledger of every
//! background call, one record per job.
//!
//! A call of a `#[tool(background)]` tool is validated, submitted, and answered at once with a
//! *pending* result; the tool then runs on its own tokio task through the same stack as any
//! call (timeouts, retries, tracing). When it ends, its [`ToolResult`] is written to the ledger,
//! passed to every [`on_tool_result`](crate::toolkit::ToolkitBuilder::on_tool_result) callback and sent
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
//! Shutting down: [`shutdown`](BackgroundJobs::shutdown) **cancels** the jobs still running
//! (each ends with a `Cancelled` result, recorded and reported like any other) and waits for
//! their tasks to end; [`drain`](BackgroundJobs::drain) waits for them to finish instead.
//! A toolkit dropped without either leaves its jobs running to completion.
//!
//! The ledger keeps every record for the toolkit's lifetime (results handed out by
//! `take_finished` are marked, not removed).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use futures::StreamExt;
use futures::stream::BoxStream;
use tokio::sync::{Semaphore, broadcast};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::tool::{ToolCall, ToolResult};

/// A callback run for every finished background call.
pub type ResultCallback = Arc<dyn Fn(&ToolResult) + Send + Sync>;

pub use crate::tool::result::{Job, JobId};

/// Where a background call is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobStatus {
    /// Submitted and not finished.
    Pending,
    /// Finished with output.
    Finished,
    /// Finished with an error (including cancellation).
    Failed,
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
    pub submitted: Instant,
    /// Whether [`BackgroundJobs::take_finished`] already handed the result out.
    pub taken: bool,
}

/// The toolkit's background queue and ledger. Shared by every clone and view of a toolkit.
pub struct BackgroundJobs {
    slots: Arc<Semaphore>,
    capacity: usize,
    tracker: TaskTracker,
    shutdown: CancellationToken,
    /// Ordered by job id, which is submission order.
    ledger: Mutex<BTreeMap<JobId, JobRecord>>,
    next_id: AtomicU64,
    callbacks: Vec<ResultCallback>,
    events: broadcast::Sender<ToolResult>,
}

impl std::fmt::Debug for BackgroundJobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackgroundJobs")
            .field("capacity", &self.capacity)
            .field("running", &self.tracker.len())
            .finish_non_exhaustive()
    }
}

impl BackgroundJobs {
    pub(crate) fn new(capacity: usize, callbacks: Vec<ResultCallback>) -> Self {
        BackgroundJobs {
            slots: Arc::new(Semaphore::new(capacity)),
            capacity,
            tracker: TaskTracker::new(),
            shutdown: CancellationToken::new(),
            ledger: Mutex::new(BTreeMap::new()),
            next_id: AtomicU64::new(1),
            callbacks,
            events: broadcast::channel(1024).0,
        }
    }

    /// Reserve a place in the queue, or say why there is none.
    pub(crate) fn reserve(&self) -> Result<tokio::sync::OwnedSemaphorePermit, String> {
        if self.shutdown.is_cancelled() {
            return Err("the toolkit is shutting down and takes no new background work".into());
        }
        Arc::clone(&self.slots).try_acquire_owned().map_err(|_| {
            format!(
                "the background queue is full ({} jobs running); wait for one to finish and call again",
                self.capacity
            )
        })
    }

    /// The token background jobs are cancelled with on shutdown.
    pub(crate) fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.child_token()
    }

    /// Record a submitted call as a new job, start `job` on the runtime of `handle`, and
    /// return the job's id.
    pub(crate) fn start<F>(
        self: &Arc<Self>,
        handle: &tokio::runtime::Handle,
        call: ToolCall,
        permit: tokio::sync::OwnedSemaphorePermit,
        job: F,
    ) -> JobId
    where
        F: std::future::Future<Output = ToolResult> + Send + 'static,
    {
        let id = JobId(self.next_id.fetch_add(1, Ordering::Relaxed));
        self.lock().insert(
            id,
            JobRecord {
                id,
                call,
                status: JobStatus::Pending,
                result: None,
                submitted: Instant::now(),
                taken: false,
            },
        );
        let jobs = Arc::clone(self);
        self.tracker.spawn_on(
            async move {
                let result = job.await;
                drop(permit);
                jobs.finish(id, result);
            },
            handle,
        );
        id
    }

    fn finish(&self, id: JobId, mut result: ToolResult) {
        result.job = Some(Job::Finished(id));
        if let Some(record) = self.lock().get_mut(&id) {
            record.status = if result.is_error() {
                JobStatus::Failed
            } else {
                JobStatus::Finished
            };
            record.result = Some(result.clone());
        }
        for callback in &self.callbacks {
            // A failing callback must not take the job's result down with it.
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| callback(&result))).is_err()
            {
                tracing::error!(call_id = %result.call_id, job = id.0, "an on_tool_result callback panicked");
            }
        }
        // No subscriber is fine: the ledger keeps the result.
        let _ = self.events.send(result);
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<JobId, JobRecord>> {
        crate::util::lock(&self.ledger)
    }

    /// The record of one job.
    pub fn get(&self, job: JobId) -> Option<JobRecord> {
        self.lock().get(&job).cloned()
    }

    /// Every job submitted with this call id, oldest first: models reuse ids, so there may be
    /// several (a linear scan of the ledger).
    pub fn by_call_id(&self, call_id: &str) -> Vec<JobRecord> {
        self.lock()
            .values()
            .filter(|r| &*r.call.id == call_id)
            .cloned()
            .collect()
    }

    /// Calls still running, oldest first.
    pub fn pending(&self) -> Vec<JobRecord> {
        self.with_status(JobStatus::Pending)
    }

    /// Calls that finished with output, oldest first.
    pub fn finished(&self) -> Vec<JobRecord> {
        self.with_status(JobStatus::Finished)
    }

    /// Calls that ended with an error, oldest first.
    pub fn failed(&self) -> Vec<JobRecord> {
        self.with_status(JobStatus::Failed)
    }

    fn with_status(&self, status: JobStatus) -> Vec<JobRecord> {
        self.lock()
            .values()
            .filter(|r| r.status == status)
            .cloned()
            .collect()
    }

    /// Results of finished jobs (output or error) not handed out before, oldest submission
    /// first; each is handed out once. This is how an agent feeds them into its next turn.
    pub fn take_finished(&self) -> Vec<ToolResult> {
        self.lock()
            .values_mut()
            .filter(|r| !r.taken && r.status != JobStatus::Pending)
            .filter_map(|r| {
                r.taken = true;
                r.result.clone()
            })
            .collect()
    }

    /// Every result from now on, as jobs finish. A subscriber that falls more than 1024 results
    /// behind skips the oldest (the ledger still has them).
    pub fn results(&self) -> BoxStream<'static, ToolResult> {
        futures::stream::unfold(self.events.subscribe(), |mut rx| async move {
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

    /// How many jobs are running.
    pub fn running(&self) -> usize {
        self.tracker.len()
    }

    /// Cancel every running job, refuse new ones, and wait until their tasks have ended. Each
    /// cancelled job still gets its (`Cancelled`) result recorded and reported.
    pub async fn shutdown(&self) {
        self.shutdown.cancel();
        self.tracker.close();
        self.tracker.wait().await;
    }

    /// Wait for the running jobs (and any submitted meanwhile) to finish, cancelling none.
    pub async fn drain(&self) {
        self.tracker.close();
        self.tracker.wait().await;
        self.tracker.reopen();
    }
}
