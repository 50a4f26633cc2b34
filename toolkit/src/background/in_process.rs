//! The in-process backend: tokio tasks of this process and a ledger in its memory. The default.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::{JobRecord, JobStatus, Notifier};
use crate::tool::result::{Job, JobId};
use crate::tool::{ToolCall, ToolResult};

pub(super) struct InProcess {
    slots: Arc<Semaphore>,
    capacity: usize,
    tracker: TaskTracker,
    shutdown: CancellationToken,
    /// Ordered by job id, which is submission order.
    ledger: Mutex<BTreeMap<JobId, JobRecord>>,
    next_id: AtomicU64,
}

impl InProcess {
    pub(super) fn new(capacity: usize) -> Self {
        InProcess {
            slots: Arc::new(Semaphore::new(capacity)),
            capacity,
            tracker: TaskTracker::new(),
            shutdown: CancellationToken::new(),
            ledger: Mutex::new(BTreeMap::new()),
            next_id: AtomicU64::new(1),
        }
    }

    pub(super) fn reserve(&self) -> Result<OwnedSemaphorePermit, String> {
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

    pub(super) fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.child_token()
    }

    pub(super) fn start<F>(
        self: &Arc<Self>,
        notifier: &Arc<Notifier>,
        handle: &tokio::runtime::Handle,
        call: ToolCall,
        permit: OwnedSemaphorePermit,
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
                submitted: SystemTime::now(),
                taken: false,
            },
        );
        let (jobs, notifier) = (Arc::clone(self), Arc::clone(notifier));
        self.tracker.spawn_on(
            async move {
                let mut result = job.await;
                drop(permit);
                result.job = Some(Job::Finished(id));
                jobs.finish(id, &result);
                notifier.notify(result);
            },
            handle,
        );
        id
    }

    fn finish(&self, id: JobId, result: &ToolResult) {
        if let Some(record) = self.lock().get_mut(&id) {
            record.status = JobStatus::of(result);
            record.result = Some(result.clone());
        }
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<JobId, JobRecord>> {
        crate::util::lock(&self.ledger)
    }

    pub(super) fn get(&self, job: JobId) -> Option<JobRecord> {
        self.lock().get(&job).cloned()
    }

    pub(super) fn filter(&self, keep: impl Fn(&JobRecord) -> bool) -> Vec<JobRecord> {
        self.lock().values().filter(|r| keep(r)).cloned().collect()
    }

    pub(super) fn take_finished(&self) -> Vec<ToolResult> {
        self.lock()
            .values_mut()
            .filter(|r| !r.taken && r.status != JobStatus::Pending)
            .filter_map(|r| {
                r.taken = true;
                r.result.clone()
            })
            .collect()
    }

    pub(super) fn running(&self) -> usize {
        self.tracker.len()
    }

    pub(super) async fn shutdown(&self) {
        self.shutdown.cancel();
        self.tracker.close();
        self.tracker.wait().await;
    }

    pub(super) async fn drain(&self) {
        self.tracker.close();
        self.tracker.wait().await;
        self.tracker.reopen();
    }
}
