//! The in-process backend: tokio tasks of this process and a ledger in its memory. The default.

use std::collections::BTreeMap;
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
        job: BoxFuture<'static, ToolResult>,
    ) -> JobId {
        let id = JobId(self.next_id.fetch_add(1, Ordering::Relaxed));
        self.lock().insert(
            id,
            JobRecord {
                id,
                call,
                status: JobStatus::Pending,
                result: None,
                submitted: SystemTime::now(),
                taken: false,
            },
        );
        let (ledger, notifier) = (Arc::clone(&self.ledger), Arc::clone(&self.notifier));
        self.tracker.spawn_on(
            async move {
                let mut result = job.await;
                drop(permit);
                result.job = Some(Job::Finished(id));
                if let Some(record) = crate::util::lock(&ledger).get_mut(&id) {
                    record.status = JobStatus::of(&result);
                    record.result = Some(result.clone());
                }
                notifier.notify(result);
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
            let run = (job.run_here)(self.shutdown.child_token());
            Ok(self.start(&handle, job.call, permit, run))
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
