//! The in-process backend: tokio tasks of this process and a ledger in its memory. The default.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use futures::future::BoxFuture;

use super::{JobBackend, JobError, JobRecord, JobStatus, Notifier, Submission, Submitted};
use crate::tool::result::{Job, JobId};
use crate::tool::{ToolCall, ToolResult};

/// Ordered by job id, which is submission order.
type Ledger = Arc<Mutex<BTreeMap<JobId, JobRecord>>>;

pub(super) struct InProcess {
    slots: Arc<Semaphore>,
    capacity: usize,
    tracker: TaskTracker,
    shutdown: CancellationToken,
    ledger: Ledger,
    /// What stops each running job.
    stops: Arc<Mutex<HashMap<JobId, CancellationToken>>>,
    next_id: AtomicU64,
    notifier: Arc<Notifier>,
}

impl InProcess {
    pub(super) fn new(capacity: usize, notifier: Arc<Notifier>) -> Self {
        InProcess {
            slots: Arc::new(Semaphore::new(capacity)),
            capacity,
            tracker: TaskTracker::new(),
            shutdown: CancellationToken::new(),
            ledger: Arc::default(),
            stops: Arc::default(),
            next_id: AtomicU64::new(1),
            notifier,
        }
    }

    fn reserve(&self) -> Result<OwnedSemaphorePermit, String> {
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

    fn start(
        &self,
        handle: &tokio::runtime::Handle,
        call: ToolCall,
        permit: OwnedSemaphorePermit,
        (job, stop): (BoxFuture<'static, ToolResult>, CancellationToken),
    ) -> JobId {
        let id = JobId(self.next_id.fetch_add(1, Ordering::Relaxed));
        crate::util::lock(&self.stops).insert(id, stop);
        self.lock().insert(
            id,
            JobRecord {
                id,
                call,
                status: JobStatus::Pending,
                result: None,
                submitted: SystemTime::now(),
                finished: None,
                taken: false,
            },
        );
        let (ledger, notifier) = (Arc::clone(&self.ledger), Arc::clone(&self.notifier));
        let stops = Arc::clone(&self.stops);
        self.tracker.spawn_on(
            async move {
                let mut result = job.await;
                drop(permit);
                crate::util::lock(&stops).remove(&id);
                result.job = Some(Job::Finished(id));
                // A job cancelled meanwhile already has its result.
                if record_result(&ledger, id, &result) {
                    notifier.notify(result);
                }
            },
            handle,
        );
        id
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<JobId, JobRecord>> {
        crate::util::lock(&self.ledger)
    }

    fn filter(&self, keep: impl Fn(&JobRecord) -> bool) -> Vec<JobRecord> {
        self.lock().values().filter(|r| keep(r)).cloned().collect()
    }
}

/// Record `result` as job `id`'s, unless the job already has one; whether it was recorded.
fn record_result(ledger: &Ledger, id: JobId, result: &ToolResult) -> bool {
    let mut ledger = crate::util::lock(ledger);
    match ledger.get_mut(&id) {
        Some(record) if record.status == JobStatus::Pending => {
            record.status = JobStatus::of(result);
            record.result = Some(result.clone());
            record.finished = Some(SystemTime::now());
            true
        }
        _ => false,
    }
}

/// Nothing here can fail: every answer is ready at once.
fn ready<T: Send + 'static>(value: T) -> BoxFuture<'static, T> {
    Box::pin(std::future::ready(value))
}

impl JobBackend for InProcess {
    fn submit<'a>(&'a self, job: Submission<'a>) -> BoxFuture<'a, Submitted> {
        let outcome = (|| {
            let Ok(handle) = tokio::runtime::Handle::try_current() else {
                return Err(crate::ToolError::execution("background tools need a tokio runtime")
                    .with_detail(
                        "Toolkit::call of a background tool was awaited outside a tokio runtime",
                    ));
            };
            let permit = self.reserve().map_err(crate::ToolError::execution)?;
            let stop = self.shutdown.child_token();
            let run = (job.run_here)(stop.clone());
            Ok(self.start(&handle, job.call, permit, (run, stop)))
        })();
        ready(outcome)
    }

    fn get(&self, job: JobId) -> BoxFuture<'_, Result<Option<JobRecord>, JobError>> {
        ready(Ok(self.lock().get(&job).cloned()))
    }

    fn by_call_id<'a>(
        &'a self,
        call_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<JobRecord>, JobError>> {
        ready(Ok(self.filter(|r| &*r.call.id == call_id)))
    }

    fn with_status(&self, status: JobStatus) -> BoxFuture<'_, Result<Vec<JobRecord>, JobError>> {
        ready(Ok(self.filter(|r| r.status == status)))
    }

    fn cancel(&self, job: JobId) -> BoxFuture<'_, Result<bool, JobError>> {
        let call = self.lock().get(&job).map(|r| r.call.clone());
        let Some(call) = call else {
            return ready(Ok(false));
        };
        let result = super::cancelled_result(&call, job);
        let ended = record_result(&self.ledger, job, &result);
        if ended {
            if let Some(stop) = crate::util::lock(&self.stops).remove(&job) {
                stop.cancel();
            }
            self.notifier.notify(result);
        }
        ready(Ok(ended))
    }

    fn take_finished(&self) -> BoxFuture<'_, Result<Vec<ToolResult>, JobError>> {
        let taken = self
            .lock()
            .values_mut()
            .filter(|r| !r.taken && r.status != JobStatus::Pending)
            .filter_map(|r| {
                r.taken = true;
                r.result.clone()
            })
            .collect();
        ready(Ok(taken))
    }

    fn running(&self) -> usize {
        self.tracker.len()
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.shutdown.cancel();
            self.tracker.close();
            self.tracker.wait().await;
        })
    }

    fn drain(&self) -> BoxFuture<'_, Result<(), JobError>> {
        Box::pin(async move {
            self.tracker.close();
            self.tracker.wait().await;
            self.tracker.reopen();
            Ok(())
        })
    }

    fn describe(&self) -> (&'static str, String) {
        ("running", self.tracker.len().to_string())
    }
}
