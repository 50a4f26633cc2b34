//! Background tools: a bounded task queue owned by the toolkit, and a ledger of every
//! background call by call id.
//!
//! A call of a `#[tool(background)]` tool is validated, submitted, and answered at once with a
//! *pending* result; the tool then runs on its own tokio task through the same stack as any
//! call (timeouts, retries, tracing). When it ends, its [`ToolResult`] is written to the ledger,
//! passed to every [`on_tool_result`](crate::ToolkitBuilder::on_tool_result) callback and sent
//! to every [`results`](BackgroundJobs::results) stream. An agent collects finished results
//! with [`take_finished`](BackgroundJobs::take_finished) and lists the
//! [`pending`](BackgroundJobs::pending) ones to the model.
//!
//! Shutting down: [`shutdown`](BackgroundJobs::shutdown) **cancels** the jobs still running
//! (each ends with a `Cancelled` result, recorded and reported like any other) and waits for
//! their tasks to end; [`drain`](BackgroundJobs::drain) waits for them to finish instead.
//! A toolkit dropped without either leaves its jobs running to completion.

use std::collections::HashMap;
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

/// What the ledger knows about one background call.
#[derive(Clone, Debug)]
pub struct JobRecord {
    /// The call as the model made it.
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
    ledger: Mutex<HashMap<Arc<str>, JobRecord>>,
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
            ledger: Mutex::new(HashMap::new()),
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

    /// Record a submitted call and start `job` on the runtime of `handle`.
    pub(crate) fn start<F>(
        self: &Arc<Self>,
        handle: &tokio::runtime::Handle,
        call: ToolCall,
        permit: tokio::sync::OwnedSemaphorePermit,
        job: F,
    ) where
        F: std::future::Future<Output = ToolResult> + Send + 'static,
    {
        self.lock().insert(
            call.id.clone(),
            JobRecord {
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
                jobs.finish(result);
            },
            handle,
        );
    }

    fn finish(&self, result: ToolResult) {
        if let Some(record) = self.lock().get_mut(&result.call_id) {
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
                tracing::error!(call_id = %result.call_id, "an on_tool_result callback panicked");
            }
        }
        // No subscriber is fine: the ledger keeps the result.
        let _ = self.events.send(result);
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<Arc<str>, JobRecord>> {
        self.ledger.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The record of one background call.
    pub fn get(&self, call_id: &str) -> Option<JobRecord> {
        self.lock().get(call_id).cloned()
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
        let mut records: Vec<JobRecord> = self
            .lock()
            .values()
            .filter(|r| r.status == status)
            .cloned()
            .collect();
        records.sort_by_key(|r| r.submitted);
        records
    }

    /// Results of finished calls (output or error) not handed out before, oldest first; each
    /// is handed out once. This is how an agent feeds them into its next turn.
    pub fn take_finished(&self) -> Vec<ToolResult> {
        let mut ledger = self.lock();
        let mut taken: Vec<(Instant, ToolResult)> = ledger
            .values_mut()
            .filter(|r| !r.taken && r.status != JobStatus::Pending)
            .filter_map(|r| {
                r.taken = true;
                r.result.clone().map(|res| (r.submitted, res))
            })
            .collect();
        taken.sort_by_key(|(t, _)| *t);
        taken.into_iter().map(|(_, r)| r).collect()
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
