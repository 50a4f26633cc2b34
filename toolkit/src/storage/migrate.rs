//! Applying each component's schema steps once, one process at a time.
//!
//! Every component that keeps tables (`jobs`, `a2a`) lists its [`Step`]s with increasing
//! versions; [`migrate`] applies those the database has not seen, each in a transaction that
//! also records the version in `agent_toolkit_schema`. Processes that open one database at once
//! take turns: Postgres with an advisory lock held for the whole run, SQLite with a lock on a
//! file next to the database (`<file>.lock`). A database at a newer version than this build
//! knows is refused with an error naming both versions, before anything is written.
//!
//! Version 1 of each component creates its tables with `IF NOT EXISTS`, so a database made
//! before the version table existed is taken over as it is.

use std::future::Future;

use super::{Database, DatabaseError, Pool, on_pool};

/// One schema step of a component.
pub(crate) struct Step {
    pub(crate) version: i64,
    /// The statements on SQLite.
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub(crate) sqlite: &'static [&'static str],
    /// The statements on Postgres.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) postgres: &'static [&'static str],
}

impl Step {
    /// The step's statements on the engine of `pool`.
    fn on(&self, pool: &Pool) -> &'static [&'static str] {
        match pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(_) => self.sqlite,
            #[cfg(feature = "postgres")]
            Pool::Postgres(_) => self.postgres,
        }
    }
}

/// How the transaction of a step begins on the engine of `pool`. SQLite takes the write lock up
/// front (`BEGIN IMMEDIATE`), so that a reader never has to upgrade (see [`optimize_sqlite`]).
fn step_begin(pool: &Pool) -> &'static str {
    match pool {
        #[cfg(feature = "sqlite")]
        Pool::Sqlite(_) => "BEGIN IMMEDIATE",
        #[cfg(feature = "postgres")]
        Pool::Postgres(_) => "BEGIN",
    }
}

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS agent_toolkit_schema \
    (component TEXT PRIMARY KEY, version BIGINT NOT NULL)";

/// The key of the advisory lock every process takes to migrate a Postgres database.
#[cfg(feature = "postgres")]
const LOCK: i64 = 7_361_902;

/// Bring `component` to its last step on `db`, after `before` (the engine's own setup, such
/// as apalis's), all under the database's migration lock.
pub(crate) async fn migrate<F>(
    db: &Database,
    component: &str,
    steps: &[Step],
    before: F,
) -> Result<(), DatabaseError>
where
    F: Future<Output = Result<(), DatabaseError>>,
{
    match &db.pool {
        #[cfg(feature = "sqlite")]
        Pool::Sqlite(_) => {
            let file = db.file.clone();
            let run = async {
                before.await?;
                apply(db, component, steps).await
            };
            match file {
                Some(file) => with_file_lock(&file, db.label(), run).await,
                None => run.await,
            }
        }
        #[cfg(feature = "postgres")]
        Pool::Postgres(pool) => {
            let mut lock = pool.acquire().await.map_err(|e| db.error(e))?;
            sqlx::query("SELECT pg_advisory_lock($1)")
                .bind(LOCK)
                .execute(&mut *lock)
                .await
                .map_err(|e| db.error(e))?;
            let outcome = async {
                before.await?;
                apply(db, component, steps).await
            }
            .await;
            let unlocked = sqlx::query("SELECT pg_advisory_unlock($1)")
                .bind(LOCK)
                .execute(&mut *lock)
                .await;
            if unlocked.is_err() {
                // Closing the session releases the lock.
                let _ = lock.detach();
            }
            outcome
        }
    }
}

fn too_new(db: &Database, component: &str, found: i64, known: i64) -> DatabaseError {
    DatabaseError::message(
        db.label(),
        format!(
            "its `{component}` tables are at schema version {found}, newer than the {known} this \
             build of agent-toolkit knows; use a newer agent-toolkit"
        ),
    )
}

/// Apply the steps of `component` that `db` has not seen, each in a transaction that also
/// records its version; refuse a database at a newer version than `steps` know.
async fn apply(db: &Database, component: &str, steps: &[Step]) -> Result<(), DatabaseError> {
    const CURRENT: &str = "SELECT CAST(COALESCE(MAX(version), 0) AS BIGINT) \
        FROM agent_toolkit_schema WHERE component = $1";
    const RECORD: &str = "INSERT INTO agent_toolkit_schema (component, version) VALUES ($1, $2) \
        ON CONFLICT (component) DO UPDATE SET version = excluded.version";
    let fail = |e: sqlx::Error| db.error(e);
    on_pool!(db, |pool, sql| {
        sqlx::query(SCHEMA).execute(pool).await.map_err(fail)?;
        let current: i64 = sqlx::query_scalar(sql(CURRENT))
            .bind(component)
            .fetch_one(pool)
            .await
            .map_err(fail)?;
        let known = steps.last().map_or(0, |s| s.version);
        if current > known {
            return Err(too_new(db, component, current, known));
        }
        for step in steps.iter().filter(|s| s.version > current) {
            let mut tx = pool.begin_with(step_begin(&db.pool)).await.map_err(fail)?;
            for statement in step.on(&db.pool) {
                sqlx::query(sqlx::AssertSqlSafe(*statement))
                    .execute(&mut *tx)
                    .await
                    .map_err(fail)?;
            }
            sqlx::query(sql(RECORD))
                .bind(component)
                .bind(step.version)
                .execute(&mut *tx)
                .await
                .map_err(fail)?;
            tx.commit().await.map_err(fail)?;
        }
        Ok(())
    })
}

/// Give the query planner statistics of the tables that lack them (`PRAGMA optimize`: `ANALYZE`
/// of a table with rows whose indexes were never analyzed, such as one that was still empty at
/// the last open), in a write transaction taken up front.
///
/// Run on its own, `PRAGMA optimize` with a single table to analyze starts as a reader and
/// becomes a writer only for the `ANALYZE` (with two or more it takes the write lock first).
/// SQLite refuses that upgrade at once while another connection writes, with `SQLITE_BUSY`
/// (or `SQLITE_BUSY_SNAPSHOT`) and without waiting the busy timeout (two readers waiting to
/// upgrade would wait for each other for good), so opening a file failed while a worker was
/// busy on it. `BEGIN IMMEDIATE` takes the write lock before reading, waiting like any write.
/// The lock is taken only when there is something to analyze: first the pragma reports what
/// it would do (mask bit `0x01`), writing nothing.
#[cfg(feature = "sqlite")]
pub(crate) async fn optimize_sqlite(
    db: &Database,
    pool: &sqlx::SqlitePool,
) -> Result<(), DatabaseError> {
    let fail = |e: sqlx::Error| db.error(e);
    // The default mask, 0xfffe, with the report bit.
    let planned: Vec<String> = sqlx::query_scalar("PRAGMA optimize = 0xffff")
        .fetch_all(pool)
        .await
        .map_err(fail)?;
    if planned.is_empty() {
        return Ok(());
    }
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await.map_err(fail)?;
    sqlx::query("PRAGMA optimize")
        .execute(&mut *tx)
        .await
        .map_err(fail)?;
    tx.commit().await.map_err(fail)
}

/// Run `body` holding an exclusive lock on `<path>.lock`: processes opening or migrating one
/// SQLite file take turns (SQLite has no advisory locks, and two processes creating the same
/// tables at once collide).
#[cfg(feature = "sqlite")]
pub(crate) async fn with_file_lock<T>(
    path: &std::path::Path,
    label: &str,
    body: impl Future<Output = Result<T, DatabaseError>>,
) -> Result<T, DatabaseError> {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    let lock_path = std::path::PathBuf::from(name);
    let lock = tokio::task::spawn_blocking(move || {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)?;
        file.lock()?;
        Ok::<_, std::io::Error>(file)
    })
    .await
    .map_err(|e| {
        DatabaseError::message(
            label,
            format!("the lock of the file could not be taken: {e}"),
        )
    })?
    .map_err(|e| DatabaseError::new(label, e))?;
    let outcome = body.await;
    drop(lock);
    outcome
}
