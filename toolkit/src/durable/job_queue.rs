//! [`JobQueue`]: a durable queue of background jobs in SQLite or Postgres.

use std::time::Duration;

use crate::jobs::JobError;
use crate::storage::migrate::{self, Step};
use crate::storage::{Database, Pool};

/// A durable queue of background jobs and its ledger, in a SQLite file (feature `sqlite`) or
/// a Postgres database (feature `postgres`), on the [apalis](https://docs.rs/apalis) job engine.
///
/// Give it to the toolkits that **submit** (with
/// [`ToolkitBuilder::job_queue`](crate::toolkit::ToolkitBuilder::job_queue)) and to the
/// [`Worker`](super::Worker)s that **run** the jobs, in the same process or in others. Cloning
/// is cheap (one connection pool).
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use agent_toolkit::background::{JobQueue, Worker};
/// use agent_toolkit::Toolkit;
///
/// let queue = JobQueue::sqlite("jobs.db").await?;
/// let toolkit = Toolkit::builder().job_queue(queue.clone()).build()?;
/// let worker = Worker::new(&toolkit, &queue).concurrency(8);
/// tokio::spawn(worker.run_until(async { let _ = tokio::signal::ctrl_c().await; }));
/// # Ok(()) }
/// ```
///
/// # What is guaranteed
///
/// - **Stored before answered**: a background call is written to the database (its ledger
///   record and its apalis job, in one transaction) before the pending result is returned.
///   The calls submitted together — a turn's background calls, which `Toolkit::call_all` runs
///   at once — share that transaction (one multi-row insert), and so do calls submitted while
///   the transaction before theirs was under way.
/// - **Same stack, worker's toolkit**: a worker runs each job through its own toolkit's
///   execution stack (timeouts, retries, tracing, panic guard), with that toolkit's presets and
///   toolkit-level context. Call-level and agent-level context values are **not** carried (they
///   are arbitrary Rust values): a call whose context holds a value the tool takes by type is
///   refused at submission, with an error that says to put the value in the workers' toolkit
///   context.
/// - **At least once, never twice when it matters**: a worker that dies mid-job is noticed when
///   it misses [`heartbeat`](Self::heartbeat)s, and its jobs go back to the queue. A job of an
///   `idempotent` or `read_only` tool is run again; a job of any other tool that had started
///   ends with an *outcome unknown* error
///   ([`ToolErrorKind::OutcomeUnknown`](crate::error::ToolErrorKind::OutcomeUnknown)) instead of
///   running twice. A job that had not started runs normally. *Outcome unknown* says exactly
///   this: a worker marked the job started immediately before entering its tool, and never
///   stored a result; the tool may or may not have run. (A worker that knows it never entered
///   the tool — its mark's reply was lost — runs the job instead.)
/// - **Results by job**: each result is stored with its job id and call id, once (a second
///   delivery of a finished job is a no-op). The ledger, `take_finished`, the results stream
///   and `on_tool_result` read from the database, so a process that restarts still receives the
///   results of calls it made before. Processes sharing a queue [`name`](Self::name) share its
///   ledger: each result is taken once and reported to one of them.
/// - **A database that goes away**: calls made meanwhile get an error result (nothing is
///   queued behind the caller's back); workers log the error and reconnect, and a finished
///   job's result is kept in memory and written when the database is back.
/// - **Retention**: finished records are kept for [`retention`](Self::retention) (7 days by
///   default), then deleted, taken or not.
#[derive(Clone)]
pub struct JobQueue {
    pub(super) db: Database,
    pub(super) settings: Settings,
}

#[derive(Clone, Debug)]
pub(super) struct Settings {
    /// The queue's name: its apalis queue and its ledger.
    pub(super) name: String,
    pub(super) poll_interval: Duration,
    pub(super) retention: Duration,
    pub(super) heartbeat: Duration,
}

impl std::fmt::Debug for JobQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobQueue")
            .field("name", &self.settings.name)
            .field("database", &self.db.label())
            .finish_non_exhaustive()
    }
}

impl JobQueue {
    /// The queue in `db`, its tables created or brought up to date if needed (safe from
    /// several processes at once: they take turns). The queue shares the database's one
    /// connection pool with everything else kept there (an A2A `SqlTaskStore`, say).
    pub async fn new(db: &Database) -> Result<JobQueue, JobError> {
        let queue = JobQueue {
            db: db.clone(),
            settings: Settings::new(),
        };
        setup(&queue).await?;
        Ok(queue)
    }

    /// [`new`](Self::new) in the SQLite file at `path` ([`Database::sqlite`]). One file, no
    /// server: jobs survive a crash or a restart of the process; several processes of one
    /// machine may share the file.
    #[cfg(feature = "sqlite")]
    pub async fn sqlite(path: impl AsRef<std::path::Path>) -> Result<JobQueue, JobError> {
        Self::new(&Database::sqlite(path).await?).await
    }

    /// [`new`](Self::new) in the Postgres database at `url`
    /// (`postgres://user:password@host:port/db`, [`Database::postgres`]). Many processes on
    /// many machines may share it.
    #[cfg(feature = "postgres")]
    pub async fn postgres(url: &str) -> Result<JobQueue, JobError> {
        Self::new(&Database::postgres(url).await?).await
    }

    /// The database the queue is kept in.
    pub fn database(&self) -> &Database {
        &self.db
    }

    crate::util::setters! {
        /// Use the queue named `name` (default `agent-toolkit`): queues of different names in one
        /// database have separate jobs, workers and ledgers.
        pub fn name(name: impl Into<String>) => settings.name = name.into();

        /// How often idle workers look for new jobs and submitting processes for finished results
        /// (default 20 ms).
        pub fn poll_interval(interval: Duration)
            => settings.poll_interval = interval.max(Duration::from_millis(1));

        /// How long finished records are kept (default 7 days). Older ones are deleted, whether or
        /// not their results were taken.
        pub fn retention(retention: Duration) => settings.retention = retention;

        /// How often workers tell the database they are alive (default 2 s, whole seconds). A
        /// worker silent for three heartbeats is taken for dead and its jobs go back to the queue.
        pub fn heartbeat(interval: Duration)
            => settings.heartbeat = interval.max(Duration::from_secs(1));
    }

    /// The queue's name.
    pub fn queue_name(&self) -> &str {
        &self.settings.name
    }

    pub(super) fn check(&self) -> Result<(), JobError> {
        if self.settings.name.trim().is_empty() {
            return Err(JobError::Config("the queue name is empty".into()));
        }
        Ok(())
    }
}

impl Settings {
    fn new() -> Settings {
        Settings {
            name: "agent-toolkit".into(),
            poll_interval: Duration::from_millis(20),
            retention: Duration::from_secs(7 * 24 * 3600),
            heartbeat: Duration::from_secs(2),
        }
    }
}

/// The ledger table as first released, one text for both engines: `$id` is the key column,
/// `$ms` the type of the times (milliseconds since the epoch).
macro_rules! jobs_table {
    ($id:literal, $ms:literal) => {
        concat!(
            "CREATE TABLE IF NOT EXISTS agent_toolkit_jobs (id ",
            $id,
            ", queue TEXT NOT NULL, call_id TEXT NOT NULL, \
             tool TEXT NOT NULL, arguments TEXT NOT NULL, state TEXT NOT NULL, result TEXT, \
             runs INTEGER NOT NULL DEFAULT 0, taken BOOLEAN NOT NULL DEFAULT FALSE, \
             notified BOOLEAN NOT NULL DEFAULT FALSE, submitted_ms ",
            $ms,
            " NOT NULL, finished_ms ",
            $ms,
            ")"
        )
    };
}

/// The ledger's schema, step by step (see [`migrate`]).
///
/// 1. The ledger as it was first released.
/// 2. Who claimed a result (`taker`, `notifier`) and when: a result is marked taken or
///    reported only once the process that claimed it has it, so a reply lost on the way does
///    not lose the result. Which worker marked a job started (`started_by`): a worker that
///    knows it never entered the tool (the mark's reply was lost) runs it.
const STEPS: &[Step] = &[
    Step {
        version: 1,
        sqlite: &[
            jobs_table!("INTEGER PRIMARY KEY AUTOINCREMENT", "INTEGER"),
            INDEX_STATE,
            INDEX_CALL,
            INDEX_UNREPORTED,
        ],
        postgres: &[
            jobs_table!("BIGSERIAL PRIMARY KEY", "BIGINT"),
            INDEX_STATE,
            INDEX_CALL,
            INDEX_UNREPORTED,
        ],
    },
    Step {
        version: 2,
        sqlite: &[
            "ALTER TABLE agent_toolkit_jobs ADD COLUMN taker TEXT",
            "ALTER TABLE agent_toolkit_jobs ADD COLUMN taken_ms INTEGER",
            "ALTER TABLE agent_toolkit_jobs ADD COLUMN notifier TEXT",
            "ALTER TABLE agent_toolkit_jobs ADD COLUMN notified_ms INTEGER",
            "ALTER TABLE agent_toolkit_jobs ADD COLUMN started_by TEXT",
        ],
        postgres: &[
            "ALTER TABLE agent_toolkit_jobs ADD COLUMN IF NOT EXISTS taker TEXT",
            "ALTER TABLE agent_toolkit_jobs ADD COLUMN IF NOT EXISTS taken_ms BIGINT",
            "ALTER TABLE agent_toolkit_jobs ADD COLUMN IF NOT EXISTS notifier TEXT",
            "ALTER TABLE agent_toolkit_jobs ADD COLUMN IF NOT EXISTS notified_ms BIGINT",
            "ALTER TABLE agent_toolkit_jobs ADD COLUMN IF NOT EXISTS started_by TEXT",
        ],
    },
];

const INDEX_STATE: &str =
    "CREATE INDEX IF NOT EXISTS agent_toolkit_jobs_state ON agent_toolkit_jobs (queue, state, id)";
const INDEX_CALL: &str =
    "CREATE INDEX IF NOT EXISTS agent_toolkit_jobs_call ON agent_toolkit_jobs (queue, call_id)";
const INDEX_UNREPORTED: &str = "CREATE INDEX IF NOT EXISTS agent_toolkit_jobs_unreported \
    ON agent_toolkit_jobs (queue, id) WHERE notified = FALSE AND state IN ('finished', 'failed')";

/// Create apalis's tables and the ledger, or bring the ledger up to date. Safe from several
/// processes at once: they take turns (see [`migrate`]).
async fn setup(queue: &JobQueue) -> Result<(), JobError> {
    queue.check()?;
    let db = &queue.db;
    let apalis = async {
        match &db.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(pool) => setup_apalis_sqlite(db, pool).await,
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => apalis_postgres::PostgresStorage::setup(pool)
                .await
                .map_err(|e| db.error(e)),
        }
    };
    migrate::migrate(db, "jobs", STEPS, apalis).await?;
    Ok(())
}

/// apalis's tables in a SQLite file: its migrations, then the query planner's statistics.
///
/// Not `SqliteStorage::setup`, which runs the same migrations after pragmas on whichever pooled
/// connection takes them (`synchronous = OFF` among them, short of what [`Database::sqlite`]
/// promises) and a bare `PRAGMA optimize`: that statement failed with `database is locked`, at
/// once, while another process was writing (see [`migrate::optimize_sqlite`]).
#[cfg(feature = "sqlite")]
async fn setup_apalis_sqlite(
    db: &Database,
    pool: &sqlx::SqlitePool,
) -> Result<(), crate::storage::DatabaseError> {
    apalis_sqlite::SqliteStorage::migrations()
        .run(pool)
        .await
        .map_err(|e| db.error(e))?;
    migrate::optimize_sqlite(db, pool).await
}
