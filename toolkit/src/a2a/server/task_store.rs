//! [`SqlTaskStore`]: A2A tasks (and the agent server's conversations) kept in Postgres or
//! SQLite, so they outlive the process and can be shared by several servers.
//!
//! One row per task: the task as JSON (its A2A serde form) beside the columns the queries
//! need — id, context id, state, whether that state is terminal, the status timestamp, when the
//! row was last written, and a version that every write increments. Every write is one
//! conditional statement (or, for a cancel, a compare-and-swap on the version), so two servers
//! writing the same task cannot lose each other's transition out of a terminal state.
//!
//! The semantics are `a2a-server-lf`'s `InMemoryTaskStore`'s: a duplicate `create` is an
//! internal error; `update` of a missing task is `TASK_NOT_FOUND`, of a terminal task into
//! another state `-32600`; `begin_cancel` is `TASK_NOT_FOUND` or `TASK_NOT_CANCELABLE`; `list`
//! filters by context, state and status time, orders by id (byte order), and pages by offset
//! tokens.

use a2a::{A2AError, ListTasksRequest, ListTasksResponse, Task, TaskState};
use a2a_server::TaskStore;
use a2a_server::task_store::{StoredTask, TaskVersion};
use sqlx::Row;
use sqlx::types::Json;

use super::memory_store::Page;
use crate::storage::migrate::{self, Step};
use crate::storage::{Database, DatabaseError, now_ms, on_pool};

/// The Postgres channel a cancel is announced on (its payload is the task id).
#[cfg(feature = "postgres")]
pub(crate) const CANCEL_CHANNEL: &str = "agent_toolkit_a2a_cancel";

/// The store's schema, step by step (see [`migrate`]).
///
/// 1. The tables as first released.
/// 2. The store's own times in milliseconds, the one time unit of stored times (`updated_ns`
///    becomes `updated_ms`). A task's status time stays in nanoseconds: it is the task's A2A
///    timestamp, which `ListTasks` filters on at its own precision.
const STEPS: &[Step] = &[
    Step {
        version: 1,
        sqlite: &[
            "CREATE TABLE IF NOT EXISTS a2a_tasks (
                id TEXT PRIMARY KEY,
                context_id TEXT NOT NULL,
                state TEXT NOT NULL,
                terminal BOOLEAN NOT NULL,
                status_ns INTEGER,
                updated_ns INTEGER NOT NULL,
                version INTEGER NOT NULL,
                task TEXT NOT NULL
            )",
            "CREATE INDEX IF NOT EXISTS a2a_tasks_context ON a2a_tasks (context_id, id)",
            "CREATE INDEX IF NOT EXISTS a2a_tasks_state ON a2a_tasks (state, id)",
            "CREATE INDEX IF NOT EXISTS a2a_tasks_updated ON a2a_tasks (updated_ns)",
            "CREATE TABLE IF NOT EXISTS a2a_conversations (
                context_id TEXT PRIMARY KEY,
                state TEXT NOT NULL,
                updated_ns INTEGER NOT NULL
            )",
        ],
        postgres: &[
            r#"CREATE TABLE IF NOT EXISTS a2a_tasks (
                id TEXT COLLATE "C" PRIMARY KEY,
                context_id TEXT NOT NULL,
                state TEXT NOT NULL,
                terminal BOOLEAN NOT NULL,
                status_ns BIGINT,
                updated_ns BIGINT NOT NULL,
                version BIGINT NOT NULL,
                task JSONB NOT NULL
            )"#,
            "CREATE INDEX IF NOT EXISTS a2a_tasks_context ON a2a_tasks (context_id, id)",
            "CREATE INDEX IF NOT EXISTS a2a_tasks_state ON a2a_tasks (state, id)",
            "CREATE INDEX IF NOT EXISTS a2a_tasks_updated ON a2a_tasks (updated_ns)",
            r#"CREATE TABLE IF NOT EXISTS a2a_conversations (
                context_id TEXT PRIMARY KEY,
                state JSONB NOT NULL,
                updated_ns BIGINT NOT NULL
            )"#,
        ],
    },
    Step {
        version: 2,
        sqlite: &[
            "ALTER TABLE a2a_tasks RENAME COLUMN updated_ns TO updated_ms",
            "UPDATE a2a_tasks SET updated_ms = updated_ms / 1000000",
            "ALTER TABLE a2a_conversations RENAME COLUMN updated_ns TO updated_ms",
            "UPDATE a2a_conversations SET updated_ms = updated_ms / 1000000",
        ],
        postgres: &[
            "ALTER TABLE a2a_tasks RENAME COLUMN updated_ns TO updated_ms",
            "UPDATE a2a_tasks SET updated_ms = updated_ms / 1000000",
            "ALTER TABLE a2a_conversations RENAME COLUMN updated_ns TO updated_ms",
            "UPDATE a2a_conversations SET updated_ms = updated_ms / 1000000",
        ],
    },
];

// Statements are written with `$1` placeholders, turned into the engine's by `on_pool!`.
const INSERT: &str = "INSERT INTO a2a_tasks \
    (id, context_id, state, terminal, status_ns, updated_ms, version, task) \
    VALUES ($1, $2, $3, $4, $5, $6, 1, $7)";
/// A write that keeps a terminal state terminal; `$8`, when not null, is the version the
/// caller read.
const UPDATE: &str = "UPDATE a2a_tasks SET context_id = $2, state = $3, terminal = $4, \
    status_ns = $5, updated_ms = $6, task = $7, version = version + 1 \
    WHERE id = $1 AND (NOT terminal OR state = $3) AND ($8 IS NULL OR version = $8) \
    RETURNING version";
const DELETE_FINISHED: &str = "DELETE FROM a2a_tasks WHERE terminal AND updated_ms < $1";
const SELECT_ONE: &str = "SELECT task, version FROM a2a_tasks WHERE id = $1";
const FILTER: &str = "($1 IS NULL OR context_id = $1) AND ($2 IS NULL OR state = $2) \
    AND ($3 IS NULL OR status_ns > $3)";

const LOAD_CONVERSATION: &str = "SELECT state FROM a2a_conversations WHERE context_id = $1";
const SAVE_CONVERSATION: &str = "INSERT INTO a2a_conversations (context_id, state, updated_ms) \
    VALUES ($1, $2, $3) ON CONFLICT (context_id) DO UPDATE \
    SET state = excluded.state, updated_ms = excluded.updated_ms";

/// `$query` with a task's columns bound to `$1` .. `$7`, as [`INSERT`] and [`UPDATE`] take
/// them (`$task` a `&Task`, `$columns` its [`Columns`]).
macro_rules! bind_task {
    ($query:expr, $task:expr, $columns:expr) => {
        $query
            .bind(&$task.id)
            .bind(&$task.context_id)
            .bind(&$columns.state)
            .bind($columns.terminal)
            .bind($columns.status_ns)
            .bind(now_ms())
            .bind(Json($task))
    };
}

/// A durable [`TaskStore`] for the A2A servers: tasks in Postgres or SQLite instead of memory.
///
/// Give it to a server with [`ServerOptions::task_store`](super::ServerOptions::task_store).
/// Tasks then survive a restart, and every server given a store on the same database serves
/// the same tasks: `GetTask`, `ListTasks` and `CancelTask` work on any of them, whichever
/// server runs the task. A cancel reaching one server stops the run on the server that runs
/// it: on Postgres the cancel is announced with `NOTIFY` and every server `LISTEN`s; on SQLite
/// (one machine, possibly several processes) each server checks the state of the tasks it runs
/// twice a second. An [`A2aAgentServer`](super::A2aAgentServer) also keeps its conversations
/// (one per `contextId`) in the same database, so a new server on it continues them.
///
/// The tables (`a2a_tasks`, `a2a_conversations`) are created when missing. A database that
/// cannot be reached, or goes away, makes each request fail with an internal error (`-32603`)
/// naming the database problem; the store reconnects by itself when the database is back.
///
/// **Retention**: the store keeps every task, finished or not, until it is deleted — unlike the
/// in-memory default, which forgets finished tasks beyond a count and an age. Delete old
/// finished tasks with [`delete_finished_before`](Self::delete_finished_before) (from a
/// periodic job, say); running tasks and tasks waiting for input are never deleted by it.
///
/// Cloning is cheap: clones share one connection pool.
///
/// ```no_run
/// # async fn serve(toolkit: agent_toolkit::Toolkit) -> Result<(), Box<dyn std::error::Error>> {
/// use agent_toolkit::a2a::server::{A2aToolServer, ServerOptions, SqlTaskStore};
///
/// let store = SqlTaskStore::postgres("postgres://a2a@db.internal/a2a").await?;
/// let listener = tokio::net::TcpListener::bind("0.0.0.0:41241").await?;
/// A2aToolServer::new(&toolkit)
///     .options(ServerOptions::new().task_store(store))
///     .serve(listener)
///     .await?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct SqlTaskStore {
    db: Database,
}

impl std::fmt::Debug for SqlTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The label names the database without the URL's credentials.
        f.debug_struct("SqlTaskStore")
            .field("database", &self.db.label())
            .finish_non_exhaustive()
    }
}

impl SqlTaskStore {
    /// The store in `db`, its tables created or brought up to date if needed (safe from
    /// several processes at once: they take turns). It shares the database's one connection
    /// pool with everything else kept there (a durable job queue, say).
    pub async fn new(db: &Database) -> Result<Self, DatabaseError> {
        migrate::migrate(db, "a2a", STEPS, async { Ok(()) }).await?;
        Ok(SqlTaskStore { db: db.clone() })
    }

    /// [`new`](Self::new) in the Postgres database at `url` (`postgres://user:password@host/db`,
    /// [`Database::postgres`]).
    #[cfg(feature = "postgres")]
    pub async fn postgres(url: &str) -> Result<Self, DatabaseError> {
        Self::new(&Database::postgres(url).await?).await
    }

    /// [`new`](Self::new) in the SQLite file at `path` ([`Database::sqlite`]: created when
    /// missing, in WAL mode so several processes on the machine can share it).
    #[cfg(feature = "sqlite")]
    pub async fn sqlite(path: impl AsRef<std::path::Path>) -> Result<Self, DatabaseError> {
        Self::new(&Database::sqlite(path).await?).await
    }

    /// The database the store is kept in.
    pub fn database(&self) -> &Database {
        &self.db
    }

    /// Delete the finished tasks (completed, failed, cancelled, rejected) last written before
    /// `before`; returns how many were deleted. Tasks still running or waiting for input stay.
    ///
    /// ```no_run
    /// # async fn prune(store: agent_toolkit::a2a::server::SqlTaskStore) -> Result<(), agent_toolkit::storage::DatabaseError> {
    /// use std::time::{Duration, SystemTime};
    /// let week_ago = SystemTime::now() - Duration::from_secs(7 * 24 * 3600);
    /// let deleted = store.delete_finished_before(week_ago).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn delete_finished_before(
        &self,
        before: std::time::SystemTime,
    ) -> Result<u64, DatabaseError> {
        let before_ms = before
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0);
        let deleted = on_pool!(self.db, |pool, sql| {
            sqlx::query(sql(DELETE_FINISHED))
                .bind(before_ms)
                .execute(pool)
                .await
                .map(|done| done.rows_affected())
        });
        deleted.map_err(|e| self.db.error(e))
    }

    /// The task `task_id` with its version (1 when created, one more per write), or `None`.
    pub async fn get_versioned(&self, task_id: &str) -> Result<Option<StoredTask>, A2AError> {
        let row = on_pool!(self.db, |pool, sql| {
            sqlx::query(sql(SELECT_ONE))
                .bind(task_id)
                .fetch_optional(pool)
                .await
                .map_err(|e| self.error("reading a task", e))?
                .map(|row| {
                    let task: Json<Task> = row.try_get(0)?;
                    let version: i64 = row.try_get(1)?;
                    Ok::<_, sqlx::Error>((task.0, version))
                })
        });
        match row {
            None => Ok(None),
            Some(Ok((task, version))) => Ok(Some(StoredTask {
                task,
                version: u64::try_from(version).unwrap_or(0),
            })),
            Some(Err(e)) => Err(self.error("reading a stored task", e)),
        }
    }

    /// Replace the task only if it is still at `version` (as read with
    /// [`get_versioned`](Self::get_versioned)): optimistic concurrency for a writer that must
    /// not overwrite a change it has not seen. The new version, or an error: `TASK_NOT_FOUND`,
    /// `-32600` when the stored task is terminal and `task` changes its state, and `-32600`
    /// naming both versions when another write came first.
    pub async fn update_at_version(
        &self,
        task: Task,
        version: TaskVersion,
    ) -> Result<TaskVersion, A2AError> {
        let version = i64::try_from(version)
            .map_err(|_| A2AError::invalid_request(format!("version {version} is too large")))?;
        self.write(task, Some(version)).await
    }

    /// The stored state of the conversation `context_id` of an agent server.
    pub(crate) async fn load_conversation(
        &self,
        context_id: &str,
    ) -> Result<Option<serde_json::Value>, A2AError> {
        on_pool!(self.db, |pool, sql| {
            let row = sqlx::query(sql(LOAD_CONVERSATION))
                .bind(context_id)
                .fetch_optional(pool)
                .await
                .map_err(|e| self.error("reading a conversation", e))?;
            row.map(|row| row.try_get::<Json<serde_json::Value>, _>(0).map(|j| j.0))
                .transpose()
                .map_err(|e| self.error("reading a stored conversation", e))
        })
    }

    /// Stores the conversation `context_id` of an agent server.
    pub(crate) async fn save_conversation(
        &self,
        context_id: &str,
        state: &serde_json::Value,
    ) -> Result<(), A2AError> {
        on_pool!(self.db, |pool, sql| {
            sqlx::query(sql(SAVE_CONVERSATION))
                .bind(context_id)
                .bind(Json(state))
                .bind(now_ms())
                .execute(pool)
                .await
                .map(drop)
                .map_err(|e| self.error("storing a conversation", e))
        })
    }

    /// The Postgres pool, for the server's `LISTEN` on cancels; `None` on SQLite.
    #[cfg(feature = "postgres")]
    pub(crate) fn postgres_pool(&self) -> Option<&sqlx::PgPool> {
        self.db.postgres_pool()
    }

    /// An internal error (what the A2A servers answer) naming the database, what failed, and
    /// the cause.
    pub(crate) fn error(&self, doing: &str, error: sqlx::Error) -> A2AError {
        let error = self.db.error(error);
        A2AError::internal(format!("the A2A task store failed {doing}: {error}"))
    }

    /// `update` with an optional version check: one statement that keeps a terminal state
    /// terminal; when it changes no row, a read says why.
    async fn write(&self, task: Task, version: Option<i64>) -> Result<TaskVersion, A2AError> {
        let columns = Columns::of(&task)?;
        let written: Option<i64> = on_pool!(self.db, |pool, sql| {
            bind_task!(sqlx::query(sql(UPDATE)), &task, columns)
                .bind(version)
                .fetch_optional(pool)
                .await
                .map_err(|e| self.error("updating a task", e))?
                .map(|row| row.try_get(0))
                .transpose()
                .map_err(|e| self.error("updating a task", e))?
        });
        if let Some(written) = written {
            return Ok(u64::try_from(written).unwrap_or(0));
        }
        let Some(stored) = self.get_versioned(&task.id).await? else {
            return Err(A2AError::task_not_found(&task.id));
        };
        if stored.task.status.state.is_terminal() && stored.task.status.state != task.status.state {
            return Err(A2AError::invalid_request(format!(
                "task {} is in terminal state {:?} and cannot transition to {:?}",
                task.id, stored.task.status.state, task.status.state
            )));
        }
        Err(A2AError::invalid_request(format!(
            "task {} was changed by another writer: it is at version {}, not {}",
            task.id,
            stored.version,
            version.unwrap_or_default()
        )))
    }

    /// One compare-and-swap of a cancel: `Ok(None)` when another write came first.
    async fn try_cancel(&self, stored: &StoredTask, task: &Task) -> Result<Option<()>, A2AError> {
        let columns = Columns::of(task)?;
        let version = i64::try_from(stored.version).unwrap_or(i64::MAX);
        match &self.db.pool {
            #[cfg(feature = "postgres")]
            crate::storage::Pool::Postgres(pool) => {
                // The NOTIFY is sent when the transaction commits: every server hears of the
                // cancel exactly when it is stored.
                let run = async {
                    let mut tx = pool.begin().await?;
                    let row = bind_task!(sqlx::query(UPDATE), task, columns)
                        .bind(Some(version))
                        .fetch_optional(&mut *tx)
                        .await?;
                    if row.is_none() {
                        return Ok(None);
                    }
                    sqlx::query("SELECT pg_notify($1, $2)")
                        .bind(CANCEL_CHANNEL)
                        .bind(&task.id)
                        .execute(&mut *tx)
                        .await?;
                    tx.commit().await?;
                    Ok::<_, sqlx::Error>(Some(()))
                };
                run.await.map_err(|e| self.error("cancelling a task", e))
            }
            #[cfg(feature = "sqlite")]
            crate::storage::Pool::Sqlite(pool) => bind_task!(
                sqlx::query(crate::storage::sqlite_sql(UPDATE)),
                task,
                columns
            )
            .bind(Some(version))
            .fetch_optional(pool)
            .await
            .map(|row| row.map(drop))
            .map_err(|e| self.error("cancelling a task", e)),
        }
    }
}

#[async_trait::async_trait]
impl TaskStore for SqlTaskStore {
    async fn create(&self, task: Task) -> Result<TaskVersion, A2AError> {
        let columns = Columns::of(&task)?;
        on_pool!(self.db, |pool, sql| {
            bind_task!(sqlx::query(sql(INSERT)), &task, columns)
                .execute(pool)
                .await
                .map(drop)
        })
        .map_err(|e| match &e {
            sqlx::Error::Database(db) if db.is_unique_violation() => {
                A2AError::internal(format!("task {} already exists", task.id))
            }
            _ => self.error("creating a task", e),
        })?;
        Ok(1)
    }

    async fn update(&self, task: Task) -> Result<TaskVersion, A2AError> {
        self.write(task, None).await
    }

    async fn get(&self, task_id: &str) -> Result<Option<Task>, A2AError> {
        Ok(self.get_versioned(task_id).await?.map(|stored| stored.task))
    }

    async fn list(&self, req: &ListTasksRequest) -> Result<ListTasksResponse, A2AError> {
        let page = Page::of(req)?;
        let state = req.status.as_ref().map(state_name).transpose()?;
        let after = req
            .status_timestamp_after
            .map(|t| t.timestamp_nanos_opt().unwrap_or(i64::MAX));
        let count_sql = format!("SELECT COUNT(*) FROM a2a_tasks WHERE {FILTER}");
        let page_sql =
            format!("SELECT task FROM a2a_tasks WHERE {FILTER} ORDER BY id LIMIT $4 OFFSET $5");
        let limit = i64::try_from(page.size).unwrap_or(i64::MAX);
        let offset = i64::try_from(page.start).unwrap_or(i64::MAX);
        let (total, tasks): (i64, Vec<Task>) = on_pool!(self.db, |pool, sql| {
            let run = async {
                let total: i64 = sqlx::query_scalar(sql(&count_sql))
                    .bind(&req.context_id)
                    .bind(&state)
                    .bind(after)
                    .fetch_one(pool)
                    .await?;
                let rows = sqlx::query(sql(&page_sql))
                    .bind(&req.context_id)
                    .bind(&state)
                    .bind(after)
                    .bind(limit)
                    .bind(offset)
                    .fetch_all(pool)
                    .await?;
                let tasks = rows
                    .iter()
                    .map(|row| row.try_get::<Json<Task>, _>(0).map(|t| t.0))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok::<_, sqlx::Error>((total, tasks))
            };
            run.await.map_err(|e| self.error("listing tasks", e))?
        });
        let total = usize::try_from(total).unwrap_or(0);
        Ok(page.answer(tasks, total, req.history_length))
    }

    async fn begin_cancel(&self, task_id: &str) -> Result<Task, A2AError> {
        // Compare-and-swap on the version: a write between the read and the update (another
        // cancel, the task completing) makes the update miss, and the loop reads again.
        loop {
            let Some(stored) = self.get_versioned(task_id).await? else {
                return Err(A2AError::task_not_found(task_id));
            };
            if stored.task.status.state.is_terminal() {
                return Err(A2AError::task_not_cancelable(task_id));
            }
            let mut task = stored.task.clone();
            task.status.state = TaskState::Canceled;
            task.status.timestamp = Some(std::time::SystemTime::now().into());
            if self.try_cancel(&stored, &task).await?.is_some() {
                return Ok(task);
            }
        }
    }
}

/// The indexed columns of a task.
struct Columns {
    state: String,
    terminal: bool,
    status_ns: Option<i64>,
}

impl Columns {
    fn of(task: &Task) -> Result<Self, A2AError> {
        Ok(Columns {
            state: state_name(&task.status.state)?,
            terminal: task.status.state.is_terminal(),
            status_ns: task
                .status
                .timestamp
                .map(|t| t.timestamp_nanos_opt().unwrap_or(i64::MAX)),
        })
    }
}

/// A state's wire name (`TASK_STATE_WORKING`), as stored in the `state` column.
fn state_name(state: &TaskState) -> Result<String, A2AError> {
    match serde_json::to_value(state) {
        Ok(serde_json::Value::String(name)) => Ok(name),
        _ => Err(A2AError::internal(format!(
            "task state {state:?} has no name"
        ))),
    }
}
