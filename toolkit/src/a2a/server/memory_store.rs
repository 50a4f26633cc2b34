//! [`MemoryTaskStore`]: the servers' default task store, in memory, with a bound on the
//! finished tasks it keeps.
//!
//! `a2a-server-lf`'s `InMemoryTaskStore` keeps every task forever: a server answering
//! thousands of calls a second grows by gigabytes within a minute and needs a restart because
//! it was used. This store has the same semantics for the tasks it holds (see below) and
//! forgets finished tasks — completed, failed, cancelled, rejected — once there are more than
//! a count of them or they have been finished longer than an age, oldest first. Running tasks
//! and tasks waiting for input are never forgotten: their clients still need them.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use a2a::{A2AError, ListTasksRequest, ListTasksResponse, Task, TaskState, TaskStatus};
use a2a_server::TaskStore;
use a2a_server::task_store::TaskVersion;

/// Finished tasks kept at most, by default.
pub const DEFAULT_KEEP_FINISHED: usize = 1_000;

/// How long a finished task is kept at most, by default: ten minutes.
pub const DEFAULT_KEEP_FINISHED_FOR: Duration = Duration::from_secs(600);

/// How long a finished task is kept at least, whatever the limits: one second.
pub const FINISHED_GRACE: Duration = Duration::from_secs(1);

/// The servers' default task store: tasks in memory, finished ones forgotten oldest first once
/// there are more than [`keep_finished`](Self::keep_finished) of them (default 1,000) or they
/// finished more than [`keep_finished_for`](Self::keep_finished_for) ago (default 10 minutes).
///
/// A task is kept at least [`FINISHED_GRACE`] after it finished, whatever the limits: the
/// request that finished it may still read it to answer (the official handler does, for a
/// blocking `SendMessage` whose last event is a status update). Memory is thus bounded by the
/// count plus what finishes within that second.
///
/// A forgotten task is gone as if it never existed: `GetTask` answers `TASK_NOT_FOUND`, and
/// `ListTasks` does not list it. A client that reads its results with `GetTask` after the
/// task ended must do so within those limits; the answer to a blocking `SendMessage` carries
/// them anyway. For tasks that must outlive both (and a restart), use a durable store
/// (`ServerOptions::task_store`, features `postgres`/`sqlite`).
///
/// The age is checked whenever the store is used, so an idle server keeps what it had until
/// its next request; memory stays bounded by the count either way.
///
/// Otherwise its semantics are `a2a-server-lf`'s `InMemoryTaskStore`'s: a duplicate `create`
/// is an internal error; `update` of a missing task is `TASK_NOT_FOUND`, of a finished task
/// into another state `-32600`; `begin_cancel` is `TASK_NOT_FOUND` or `TASK_NOT_CANCELABLE`;
/// `list` filters by context, state and status time, orders by id, and pages by offset tokens.
///
/// The servers set its limits from their options:
///
/// ```
/// use std::time::Duration;
/// use agent_toolkit::a2a::server::ServerOptions;
///
/// let options = ServerOptions::default()
///     .keep_finished_tasks(10_000)
///     .keep_finished_tasks_for(Duration::from_secs(3600));
/// ```
///
/// It is a [`TaskStore`], so a server built on `a2a-server-lf` directly can use it too.
pub struct MemoryTaskStore {
    state: Mutex<State>,
    keep: usize,
    keep_for: Duration,
    grace: Duration,
}

#[derive(Default)]
struct State {
    tasks: HashMap<String, Entry>,
    /// Finished tasks, in the order they finished.
    finished: VecDeque<(Instant, String)>,
}

struct Entry {
    version: TaskVersion,
    body: Body,
}

/// A task as kept. A finished task is kept as its JSON, one allocation, with the fields lists
/// filter on beside it: the many small allocations of a `Task` are freed while still fresh
/// instead of after the grace, when freeing them scattered over a heap in use made every
/// allocation of the server slower (the allocator's bins fragment; measured: 40 µs a call).
enum Body {
    Running(Task),
    Finished {
        id: String,
        context_id: String,
        status: TaskStatus,
        json: Box<[u8]>,
    },
}

impl Entry {
    fn new(task: Task, version: TaskVersion) -> Entry {
        let body = match task.status.state.is_terminal() {
            true => match serde_json::to_vec(&task) {
                Ok(json) => Body::Finished {
                    id: task.id,
                    context_id: task.context_id,
                    status: task.status,
                    json: json.into_boxed_slice(),
                },
                // Every task serializes (the durable store keeps them so); if one did not, it
                // is kept as it is.
                Err(_) => Body::Running(task),
            },
            false => Body::Running(task),
        };
        Entry { version, body }
    }

    fn status(&self) -> &TaskStatus {
        match &self.body {
            Body::Running(task) => &task.status,
            Body::Finished { status, .. } => status,
        }
    }

    fn context_id(&self) -> &str {
        match &self.body {
            Body::Running(task) => &task.context_id,
            Body::Finished { context_id, .. } => context_id,
        }
    }

    fn id(&self) -> &str {
        match &self.body {
            Body::Running(task) => &task.id,
            Body::Finished { id, .. } => id,
        }
    }

    fn task(&self) -> Result<Task, A2AError> {
        match &self.body {
            Body::Running(task) => Ok(task.clone()),
            Body::Finished { json, .. } => serde_json::from_slice(json).map_err(|e| {
                A2AError::internal(format!("a finished task kept in memory is unreadable: {e}"))
            }),
        }
    }
}

impl MemoryTaskStore {
    /// An empty store with the default limits.
    pub fn new() -> Self {
        MemoryTaskStore {
            state: Mutex::default(),
            keep: DEFAULT_KEEP_FINISHED,
            keep_for: DEFAULT_KEEP_FINISHED_FOR,
            grace: FINISHED_GRACE,
        }
    }

    crate::util::setters! {
        /// Keep at most `count` finished tasks (the oldest finished go first). Zero keeps none
        /// beyond [`FINISHED_GRACE`].
        pub fn keep_finished(count: usize) => keep = count;

        /// Keep a finished task for at most `age` after it finished.
        pub fn keep_finished_for(age: Duration) => keep_for = age;
    }

    /// How many tasks the store holds now, running and finished.
    pub fn len(&self) -> usize {
        self.lock().tasks.len()
    }

    /// Whether the store holds no task.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the map half-written (every change is
        // one insert or remove), so a poisoned lock is still a usable one.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The state, with the finished tasks beyond the limits forgotten.
    fn pruned(&self) -> std::sync::MutexGuard<'_, State> {
        let mut state = self.lock();
        let now = Instant::now();
        while let Some((finished_at, _)) = state.finished.front() {
            let age = now.saturating_duration_since(*finished_at);
            // Oldest first: once one is within the grace, so are all after it.
            if age < self.grace || (age <= self.keep_for && state.finished.len() <= self.keep) {
                break;
            }
            if let Some((_, id)) = state.finished.pop_front() {
                state.tasks.remove(&id);
            }
        }
        state
    }
}

impl Default for MemoryTaskStore {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for MemoryTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryTaskStore")
            .field("tasks", &self.len())
            .field("keep_finished", &self.keep)
            .field("keep_finished_for", &self.keep_for)
            .finish()
    }
}

impl State {
    /// Note that `id` has just finished.
    fn finished(&mut self, id: &str) {
        self.finished.push_back((Instant::now(), id.to_string()));
    }
}

#[async_trait::async_trait]
impl TaskStore for MemoryTaskStore {
    async fn create(&self, task: Task) -> Result<TaskVersion, A2AError> {
        let mut state = self.pruned();
        if state.tasks.contains_key(&task.id) {
            return Err(A2AError::internal("task already exists"));
        }
        if task.status.state.is_terminal() {
            state.finished(&task.id);
        }
        state.tasks.insert(task.id.clone(), Entry::new(task, 1));
        drop(state);
        // A task created finished may be over the limits at once.
        drop(self.pruned());
        Ok(1)
    }

    async fn update(&self, task: Task) -> Result<TaskVersion, A2AError> {
        let mut state = self.pruned();
        let entry = state
            .tasks
            .get_mut(&task.id)
            .ok_or_else(|| A2AError::task_not_found(&task.id))?;
        let was_finished = entry.status().state.is_terminal();
        if was_finished && entry.status().state != task.status.state {
            return Err(A2AError::invalid_request(format!(
                "task {} is in terminal state {:?} and cannot transition to {:?}",
                task.id,
                entry.status().state,
                task.status.state
            )));
        }
        let finishes = !was_finished && task.status.state.is_terminal();
        let id = finishes.then(|| task.id.clone());
        *entry = Entry::new(task, entry.version + 1);
        let version = entry.version;
        if let Some(id) = id {
            state.finished(&id);
            drop(state);
            drop(self.pruned());
        }
        Ok(version)
    }

    async fn get(&self, task_id: &str) -> Result<Option<Task>, A2AError> {
        self.pruned()
            .tasks
            .get(task_id)
            .map(Entry::task)
            .transpose()
    }

    async fn list(&self, req: &ListTasksRequest) -> Result<ListTasksResponse, A2AError> {
        let mut tasks: Vec<Task> = {
            let state = self.pruned();
            let mut matching: Vec<&Entry> = state
                .tasks
                .values()
                .filter(|entry| {
                    let status = entry.status();
                    req.context_id
                        .as_ref()
                        .is_none_or(|c| entry.context_id() == c)
                        && req.status.as_ref().is_none_or(|s| status.state == *s)
                        && req
                            .status_timestamp_after
                            .is_none_or(|after| status.timestamp.is_some_and(|time| time > after))
                })
                .collect();
            matching.sort_by(|a, b| a.id().cmp(b.id()));
            matching
                .into_iter()
                .map(Entry::task)
                .collect::<Result<_, _>>()?
        };
        let page = Page::of(req)?;
        let total = tasks.len();
        let (start, end) = page.bounds(total);
        Ok(page.answer(tasks.drain(start..end), total, req.history_length))
    }

    async fn begin_cancel(&self, task_id: &str) -> Result<Task, A2AError> {
        let mut state = self.pruned();
        let entry = state
            .tasks
            .get_mut(task_id)
            .ok_or_else(|| A2AError::task_not_found(task_id))?;
        let Body::Running(task) = &mut entry.body else {
            return Err(A2AError::task_not_cancelable(task_id));
        };
        if task.status.state.is_terminal() {
            return Err(A2AError::task_not_cancelable(task_id));
        }
        task.status.state = TaskState::Canceled;
        task.status.timestamp = Some(std::time::SystemTime::now().into());
        let task = task.clone();
        *entry = Entry::new(task.clone(), entry.version + 1);
        state.finished(task_id);
        drop(state);
        drop(self.pruned());
        Ok(task)
    }
}

/// One page of a `ListTasks` answer, as both task stores page: the token is the offset of the
/// page's first task (in id order), the size the request's (or the default).
pub(super) struct Page {
    /// Offset of the page's first task among the matching ones.
    pub(super) start: usize,
    /// The most tasks the page holds.
    pub(super) size: usize,
}

impl Page {
    /// The page `req` asks for; a token that is not an offset is refused.
    pub(super) fn of(req: &ListTasksRequest) -> Result<Page, A2AError> {
        let start = match &req.page_token {
            Some(token) => token
                .parse::<usize>()
                .map_err(|_| A2AError::invalid_params("invalid page token"))?,
            None => 0,
        };
        Ok(Page {
            start,
            size: a2a_server::pagination::resolve_page_size(req.page_size),
        })
    }

    /// The page's first and past-the-last positions among `total` matching tasks.
    pub(super) fn bounds(&self, total: usize) -> (usize, usize) {
        let start = self.start.min(total);
        (start, start.saturating_add(self.size).min(total))
    }

    /// The answer holding `tasks` (this page's, their history cut to `history_length`) of
    /// `total` matching tasks, with the next page's token while there is one.
    pub(super) fn answer(
        &self,
        tasks: impl IntoIterator<Item = Task>,
        total: usize,
        history_length: Option<i32>,
    ) -> ListTasksResponse {
        let (_, end) = self.bounds(total);
        ListTasksResponse {
            tasks: tasks
                .into_iter()
                .map(|mut task| {
                    keep_last_messages(&mut task, history_length);
                    task
                })
                .collect(),
            next_page_token: if end < total {
                end.to_string()
            } else {
                String::new()
            },
            page_size: i32::try_from(self.size).unwrap_or(i32::MAX),
            total_size: i32::try_from(total).unwrap_or(i32::MAX),
        }
    }
}

/// Keeps the last `history_length` messages of the task's history (none for zero or less),
/// as `ListTasks` asks.
fn keep_last_messages(task: &mut Task, history_length: Option<i32>) {
    let (Some(requested), Some(history)) = (history_length, task.history.as_mut()) else {
        return;
    };
    let keep = usize::try_from(requested).unwrap_or(0);
    if history.len() > keep {
        history.drain(..history.len() - keep);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use a2a::{ListTasksRequest, Task, TaskState, TaskStatus};
    use a2a_server::TaskStore;

    use super::MemoryTaskStore;

    /// A store without the grace after finishing, so that limits act at once.
    fn store() -> MemoryTaskStore {
        let mut store = MemoryTaskStore::new();
        store.grace = Duration::ZERO;
        store
    }

    fn task(id: &str, state: TaskState) -> Task {
        Task {
            id: id.into(),
            context_id: "c".into(),
            status: TaskStatus {
                state,
                message: None,
                timestamp: None,
            },
            artifacts: None,
            history: None,
            metadata: None,
        }
    }

    async fn run_to_the_end(store: &MemoryTaskStore, id: &str) {
        store.create(task(id, TaskState::Working)).await.unwrap();
        store.update(task(id, TaskState::Completed)).await.unwrap();
    }

    #[tokio::test]
    async fn finished_tasks_beyond_the_count_are_forgotten_oldest_first() {
        let store = store().keep_finished(3);
        store
            .create(task("running", TaskState::Working))
            .await
            .unwrap();
        for n in 0..10 {
            run_to_the_end(&store, &format!("t{n}")).await;
        }
        assert_eq!(store.len(), 4, "three finished and the running one");
        for n in 0..7 {
            assert!(store.get(&format!("t{n}")).await.unwrap().is_none());
        }
        for n in 7..10 {
            let kept = store.get(&format!("t{n}")).await.unwrap().unwrap();
            assert_eq!(kept.status.state, TaskState::Completed);
        }
        assert!(
            store.get("running").await.unwrap().is_some(),
            "never while running"
        );
        let all: ListTasksRequest = serde_json::from_str("{}").unwrap();
        let listed = store.list(&all).await.unwrap();
        assert_eq!(listed.total_size, 4);
        // A forgotten task is unknown, not something else.
        let e = store
            .update(task("t0", TaskState::Completed))
            .await
            .unwrap_err();
        assert_eq!(e.code, a2a::error_code::TASK_NOT_FOUND);
    }

    #[tokio::test]
    async fn finished_tasks_older_than_the_age_are_forgotten() {
        let store = store().keep_finished_for(Duration::from_millis(50));
        run_to_the_end(&store, "old").await;
        store
            .create(task("waiting", TaskState::InputRequired))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(80)).await;
        run_to_the_end(&store, "new").await;
        assert!(store.get("old").await.unwrap().is_none());
        assert!(store.get("new").await.unwrap().is_some());
        assert!(store.get("waiting").await.unwrap().is_some());
    }

    #[tokio::test]
    async fn cancelled_tasks_count_as_finished_and_semantics_match_the_official_store() {
        let store = store().keep_finished(1);
        store.create(task("a", TaskState::Working)).await.unwrap();
        store.create(task("b", TaskState::Working)).await.unwrap();
        assert!(store.create(task("a", TaskState::Working)).await.is_err());
        store.begin_cancel("a").await.unwrap();
        let e = store.begin_cancel("a").await.unwrap_err();
        assert_eq!(e.code, a2a::error_code::TASK_NOT_CANCELABLE);
        let e = store
            .update(task("a", TaskState::Working))
            .await
            .unwrap_err();
        assert_eq!(e.code, a2a::error_code::INVALID_REQUEST);
        store.begin_cancel("b").await.unwrap();
        assert!(
            store.get("a").await.unwrap().is_none(),
            "the older one went"
        );
        assert!(store.get("b").await.unwrap().is_some());
    }

    #[tokio::test]
    async fn keeping_none_forgets_a_task_as_it_finishes() {
        let store = store().keep_finished(0);
        run_to_the_end(&store, "t").await;
        assert!(store.is_empty());
    }

    #[tokio::test]
    async fn a_finished_task_is_kept_through_the_grace_whatever_the_limits() {
        let mut store = MemoryTaskStore::new().keep_finished(0);
        store.grace = Duration::from_millis(100);
        run_to_the_end(&store, "t").await;
        assert!(store.get("t").await.unwrap().is_some(), "within the grace");
        tokio::time::sleep(Duration::from_millis(150)).await;
        assert!(store.get("t").await.unwrap().is_none());
    }
}
