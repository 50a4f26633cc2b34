//! [`Database`]: one connection pool to a SQLite file or a Postgres database, the placeholder
//! rule and the clock of everything stored, and failing fast while the database is down.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::DatabaseError;
#[cfg(feature = "sqlite")]
use super::migrate;

/// Run `$body` with `$pool` bound to the database's pool and `$sql` turning a statement written
/// with Postgres placeholders (`$1`) into the engine's (`?1` for SQLite).
macro_rules! on_pool {
    ($db:expr, |$pool:ident, $sql:ident| $body:expr) => {
        match &$db.pool {
            #[cfg(feature = "sqlite")]
            $crate::storage::Pool::Sqlite($pool) => {
                #[allow(unused)]
                let $sql = |text: &str| $crate::storage::sqlite_sql(text);
                $body
            }
            #[cfg(feature = "postgres")]
            $crate::storage::Pool::Postgres($pool) => {
                #[allow(unused)]
                let $sql = |text: &str| sqlx::AssertSqlSafe(text.to_string());
                $body
            }
        }
    };
}
pub(crate) use on_pool;

/// A statement written with Postgres placeholders (`$1`), in SQLite's (`?1`): the placeholder
/// rule, for code that cannot go through [`on_pool!`] (a transaction spanning engine-specific
/// calls).
#[cfg(feature = "sqlite")]
pub(crate) fn sqlite_sql(text: &str) -> sqlx::AssertSqlSafe<String> {
    sqlx::AssertSqlSafe(text.replace('$', "?"))
}

/// A database the durable parts of the library keep their state in: a SQLite file (feature
/// `sqlite`) or a Postgres database (feature `postgres`), with one connection pool. Cloning is
/// cheap and shares the pool.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use agent_toolkit::background::JobQueue;
/// use agent_toolkit::storage::Database;
///
/// let db = Database::postgres("postgres://app@db/agents").await?;
/// let queue = JobQueue::new(&db).await?; // and SqlTaskStore::new(&db) for A2A tasks
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Database {
    pub(crate) pool: Pool,
    label: Arc<str>,
    /// Whether the database is known to be down, shared by every clone.
    health: Arc<std::sync::Mutex<Option<Down>>>,
    /// The SQLite file, for the lock that serializes migrations across processes.
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub(super) file: Option<Arc<std::path::Path>>,
}

/// A connection pool of one of the engines.
#[derive(Clone)]
pub(crate) enum Pool {
    #[cfg(feature = "sqlite")]
    Sqlite(sqlx::SqlitePool),
    #[cfg(feature = "postgres")]
    Postgres(sqlx::PgPool),
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database")
            .field("database", &self.label)
            .finish_non_exhaustive()
    }
}

/// How long a Postgres statement waits for a free connection before failing (a SQLite file
/// waits longer: its writers queue for one lock).
#[cfg(feature = "postgres")]
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

impl Database {
    /// Open (creating if needed) the SQLite file at `path`: write-ahead log, commits that
    /// survive the process (`synchronous = NORMAL`), and a 30 s wait for a lock another
    /// connection or process holds. Several processes of one machine may share the file.
    #[cfg(feature = "sqlite")]
    pub async fn sqlite(path: impl AsRef<std::path::Path>) -> Result<Database, DatabaseError> {
        use sqlx::sqlite::{
            SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous,
        };
        let path = path.as_ref();
        let label = format!("SQLite {}", path.display());
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // With the write-ahead log, a commit survives the process (a crash, `kill -9`); only
            // the machine losing power may take the last commits with it.
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(30));
        // Opening the file (and switching it to the write-ahead log) takes a lock too: one
        // process at a time, so that a fresh file is set up once.
        let pool = migrate::with_file_lock(path, &label, async {
            SqlitePoolOptions::new()
                .max_connections(8)
                .acquire_timeout(Duration::from_secs(30))
                .connect_with(options)
                .await
                .map_err(|e| DatabaseError::new(&label, e))
        })
        .await?;
        Ok(Database {
            pool: Pool::Sqlite(pool),
            label: label.into(),
            health: Arc::default(),
            file: Some(path.into()),
        })
    }

    /// Connect to the Postgres database at `url` (`postgres://user:password@host:port/db`).
    /// Many processes on many machines may share it.
    #[cfg(feature = "postgres")]
    pub async fn postgres(url: &str) -> Result<Database, DatabaseError> {
        use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
        let options: PgConnectOptions = url.parse().map_err(|e| {
            DatabaseError::message(url, format!("`{url}` is not a Postgres URL: {e}"))
        })?;
        let label = format!(
            "Postgres {}:{}/{}",
            options.get_host(),
            options.get_port(),
            options.get_database().unwrap_or("postgres")
        );
        let pool = PgPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_with(options)
            .await
            .map_err(|e| DatabaseError::new(&label, e))?;
        Ok(Database {
            pool: Pool::Postgres(pool),
            label: label.into(),
            health: Arc::default(),
            file: None,
        })
    }

    /// Which database: `SQLite <path>`, or `Postgres <host>:<port>/<database>`; the name every
    /// error uses.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The error of a statement on this database.
    pub(crate) fn error(
        &self,
        error: impl std::error::Error + Send + Sync + 'static,
    ) -> DatabaseError {
        DatabaseError::new(&self.label, error)
    }

    /// The Postgres pool, for what only Postgres has (`LISTEN`).
    #[cfg(all(feature = "postgres", feature = "a2a"))]
    pub(crate) fn postgres_pool(&self) -> Option<&sqlx::PgPool> {
        match &self.pool {
            Pool::Postgres(pool) => Some(pool),
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(_) => None,
        }
    }
}

/// A database known to be down: since when, when it was last tried, and why it failed.
struct Down {
    since: Instant,
    tried: Instant,
    error: DatabaseError,
}

/// While a database is known to be down, one operation per this long goes through to find out
/// whether it is back; the others fail at once.
const PROBE_EVERY: Duration = Duration::from_secs(1);

impl Database {
    /// Run `operation` unless the database is known to be down: then fail at once with the
    /// error that showed it (retryable), letting one operation per second through to see
    /// whether it is back. An operation that fails to reach the database marks it down; one
    /// that reaches it marks it up. Without this, every call made during an outage would wait
    /// the pool's whole acquire timeout before failing.
    pub(crate) async fn guard<T, E: From<DatabaseError>>(
        &self,
        operation: impl std::future::Future<Output = Result<T, E>>,
        cause: fn(&E) -> Option<&DatabaseError>,
    ) -> Result<T, E> {
        {
            let mut health = crate::util::lock(&self.health);
            if let Some(down) = health.as_mut() {
                if down.tried.elapsed() < PROBE_EVERY {
                    let error = DatabaseError::message(
                        &self.label,
                        format!(
                            "it has been unreachable for {:.0?}, not trying again yet: {}",
                            down.since.elapsed(),
                            down.error
                        ),
                    )
                    .retryable();
                    return Err(error.into());
                }
                down.tried = Instant::now();
            }
        }
        let outcome = operation.await;
        let mut health = crate::util::lock(&self.health);
        match outcome.as_ref().err().and_then(cause) {
            Some(error) if error.is_unreachable() => {
                let now = Instant::now();
                let since = health.as_ref().map_or(now, |d| d.since);
                *health = Some(Down {
                    since,
                    tried: now,
                    error: error.clone(),
                });
            }
            _ => *health = None,
        }
        outcome
    }
}

/// Now, in the one time unit of stored times: milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}
