//! Cancels across the servers that share a [`SqlTaskStore`]: a `CancelTask` answered by one
//! server must stop the run on the server that runs the task.
//!
//! [`Replicated`] wraps a server's executor. It records which tasks run here (by task id, with
//! their context id) while their event streams live, and the first run starts a watcher that
//! learns of cancels stored by other servers:
//!
//! - on Postgres, `LISTEN` on the channel the store's `begin_cancel` `NOTIFY`s (the task id is
//!   the payload). Notifications sent while the listening connection was down are lost, so
//!   after every reconnect the watcher also reads the state of the tasks running here once;
//! - on SQLite (one machine; `NOTIFY` has no counterpart), it reads the state of the tasks
//!   running here every [`POLL`], and only while some run.
//!
//! A task found cancelled is cancelled here the way a local `CancelTask` does it: the inner
//! executor's `cancel` (the run's cancellation token fires). Its events are dropped: the store
//! already holds the `CANCELED` task. A cancel answered by this server itself goes through
//! [`Replicated::cancel`], which forgets the task first, so it is never cancelled twice.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use a2a::TaskState;
use a2a_server::{AgentExecutor, ExecutorContext, TaskStore};
use futures::StreamExt;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::emit::EventStream;
use super::task_store::SqlTaskStore;
use crate::util::lock;

/// How often a server on SQLite reads the state of the tasks it runs.
const POLL: Duration = Duration::from_millis(500);

/// How long the Postgres watcher waits before connecting again after a failure.
#[cfg(feature = "postgres")]
const RECONNECT: Duration = Duration::from_secs(1);

/// The tasks running here: task id → (context id, the run's number).
type Local = Mutex<HashMap<String, (String, u64)>>;

/// A server's executor, cancelled by the cancels other servers store.
pub(super) struct Replicated<E> {
    inner: Arc<E>,
    store: SqlTaskStore,
    local: Arc<Local>,
    runs: std::sync::atomic::AtomicU64,
    /// Stops the watcher when the server (its handler, which owns this) is dropped.
    watcher: Mutex<Option<DropGuard>>,
}

impl<E: AgentExecutor> Replicated<E> {
    pub(super) fn new(inner: E, store: SqlTaskStore) -> Self {
        Replicated {
            inner: Arc::new(inner),
            store,
            local: Arc::default(),
            runs: std::sync::atomic::AtomicU64::new(0),
            watcher: Mutex::new(None),
        }
    }

    /// Starts the watcher on the first run (inside the runtime, where it can be spawned).
    fn start_watcher(&self) {
        let mut watcher = lock(&self.watcher);
        if watcher.is_some() {
            return;
        }
        let stop = CancellationToken::new();
        let cancels = Cancels {
            inner: Arc::downgrade(&self.inner),
            store: self.store.clone(),
            local: self.local.clone(),
        };
        tokio::spawn(cancels.watch(stop.clone()));
        *watcher = Some(stop.drop_guard());
    }
}

/// Forgets a task when its run's event stream ends.
struct Running {
    local: Arc<Local>,
    task_id: String,
    run: u64,
}

impl Drop for Running {
    fn drop(&mut self) {
        let mut local = lock(&self.local);
        // A later run of the same task (a continuation) owns the entry now.
        if local
            .get(&self.task_id)
            .is_some_and(|(_, run)| *run == self.run)
        {
            local.remove(&self.task_id);
        }
    }
}

impl<E: AgentExecutor> AgentExecutor for Replicated<E> {
    fn execute(&self, ctx: ExecutorContext) -> EventStream {
        self.start_watcher();
        let run = self.runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        lock(&self.local).insert(ctx.task_id.clone(), (ctx.context_id.clone(), run));
        let running = Running {
            local: self.local.clone(),
            task_id: ctx.task_id.clone(),
            run,
        };
        let stream = self.inner.execute(ctx);
        Box::pin(stream.map(move |event| {
            let _ = &running;
            event
        }))
    }

    fn cancel(&self, ctx: ExecutorContext) -> EventStream {
        lock(&self.local).remove(&ctx.task_id);
        self.inner.cancel(ctx)
    }
}

/// What the watcher needs: the executor (weakly: the server owns it), the store, and the
/// tasks running here.
struct Cancels<E> {
    inner: Weak<E>,
    store: SqlTaskStore,
    local: Arc<Local>,
}

impl<E: AgentExecutor> Cancels<E> {
    async fn watch(self, stop: CancellationToken) {
        tokio::select! {
            () = self.run() => {}
            () = stop.cancelled() => {}
        }
    }

    async fn run(&self) {
        #[cfg(feature = "postgres")]
        if let Some(pool) = self.store.postgres_pool() {
            return self.listen(pool.clone()).await;
        }
        loop {
            tokio::time::sleep(POLL).await;
            self.catch_up().await;
        }
    }

    /// `LISTEN`s for cancels; after each (re)connection, catches up on those it missed.
    #[cfg(feature = "postgres")]
    async fn listen(&self, pool: sqlx::PgPool) {
        use super::task_store::CANCEL_CHANNEL;
        loop {
            let connected = async {
                let mut listener = sqlx::postgres::PgListener::connect_with(&pool).await?;
                listener.listen(CANCEL_CHANNEL).await?;
                Ok::<_, sqlx::Error>(listener)
            };
            let mut listener = match connected.await {
                Ok(listener) => listener,
                Err(error) => {
                    let error = self.store.error("listening for cancels", error);
                    tracing::warn!(%error.message, "cancels from other servers are not heard");
                    tokio::time::sleep(RECONNECT).await;
                    continue;
                }
            };
            self.catch_up().await;
            loop {
                match listener.try_recv().await {
                    Ok(Some(notification)) => self.cancel_here(notification.payload()).await,
                    // The connection was lost (and made again): what was sent meanwhile is lost.
                    Ok(None) => self.catch_up().await,
                    Err(error) => {
                        let error = self.store.error("listening for cancels", error);
                        tracing::warn!(%error.message, "cancels from other servers are not heard");
                        tokio::time::sleep(RECONNECT).await;
                        break;
                    }
                }
            }
        }
    }

    /// Reads the state of every task running here; cancels those stored as cancelled.
    async fn catch_up(&self) {
        let running: Vec<String> = lock(&self.local).keys().cloned().collect();
        for task_id in running {
            match self.store.get(&task_id).await {
                Ok(Some(task)) if task.status.state == TaskState::Canceled => {
                    self.cancel_here(&task_id).await;
                }
                Ok(_) => {}
                Err(error) => {
                    tracing::warn!(%error.message, "could not check whether tasks were cancelled");
                    return;
                }
            }
        }
    }

    /// Cancels `task_id` here, if it runs here.
    async fn cancel_here(&self, task_id: &str) {
        let Some((context_id, _)) = lock(&self.local).remove(task_id) else {
            return;
        };
        let Some(inner) = self.inner.upgrade() else {
            return;
        };
        let stored_task = self.store.get(task_id).await.ok().flatten();
        let ctx = ExecutorContext {
            message: None,
            task_id: task_id.to_string(),
            stored_task,
            context_id,
            metadata: None,
            user: None,
            service_params: Default::default(),
            tenant: None,
        };
        tracing::debug!(task_id, "cancelled by another server");
        let mut events = inner.cancel(ctx);
        while events.next().await.is_some() {}
    }
}
