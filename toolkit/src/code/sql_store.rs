//! [`SqlJournalStore`]: program journals kept in a [`Database`] (SQLite or Postgres), so that a
//! program cut off by a crash resumes in another process from its last saved call.
//!
//! One row per program: its id, its journal as JSON text (the versioned stored form), whether
//! it finished, and when the row was last written. A save is one upsert.

use std::time::{SystemTime, UNIX_EPOCH};

use futures::future::BoxFuture;

use super::journal::{Journal, JournalError, JournalStore};
use crate::storage::migrate::{self, Step};
use crate::storage::stored::{self, Stored, StoredError};
use crate::storage::{Database, DatabaseError, now_ms, on_pool};

impl Stored for Journal {
    const WHAT: &'static str = "a program journal";
    const VERSION: u32 = 1;
}

/// The journals' schema, step by step (see [`migrate`]).
///
/// 1. The table as first released.
const STEPS: &[Step] = &[Step {
    version: 1,
    sqlite: &[
        "CREATE TABLE IF NOT EXISTS agent_toolkit_code_journals (
            program TEXT PRIMARY KEY,
            journal TEXT NOT NULL,
            finished BOOLEAN NOT NULL,
            updated_ms INTEGER NOT NULL
        )",
        INDEX_FINISHED,
    ],
    postgres: &[
        "CREATE TABLE IF NOT EXISTS agent_toolkit_code_journals (
            program TEXT PRIMARY KEY,
            journal TEXT NOT NULL,
            finished BOOLEAN NOT NULL,
            updated_ms BIGINT NOT NULL
        )",
        INDEX_FINISHED,
    ],
}];

const INDEX_FINISHED: &str = "CREATE INDEX IF NOT EXISTS agent_toolkit_code_journals_finished \
    ON agent_toolkit_code_journals (finished, updated_ms)";

// Statements are written with `$1` placeholders, turned into the engine's by `on_pool!`.
const LOAD: &str = "SELECT journal FROM agent_toolkit_code_journals WHERE program = $1";
const SAVE: &str = "INSERT INTO agent_toolkit_code_journals \
    (program, journal, finished, updated_ms) VALUES ($1, $2, $3, $4) \
    ON CONFLICT (program) DO UPDATE SET journal = excluded.journal, \
    finished = excluded.finished, updated_ms = excluded.updated_ms";
const REMOVE: &str = "DELETE FROM agent_toolkit_code_journals WHERE program = $1";
const DELETE_FINISHED: &str =
    "DELETE FROM agent_toolkit_code_journals WHERE finished AND updated_ms < $1";

/// A durable [`JournalStore`]: program journals in a SQLite file or a Postgres database
/// (features `code` and `sqlite` or `postgres`), so that a program cut off by a crash resumes
/// in another process — the next [`CodeMode::run`](super::CodeMode::run) of the same program
/// id on a store of the same database answers the calls already made from the journal, and
/// does not run again a call whose outcome the crash left unknown unless its tool is
/// `read_only` or `idempotent`.
///
/// One table, `agent_toolkit_code_journals`, created (or brought up to date) by
/// [`new`](Self::new) with the library's other tables' migrations; each journal is one row,
/// its JSON text keyed by program id, replaced on every save. The store shares the
/// database's connection pool with everything else kept there (a durable
/// [`JobQueue`](crate::background::JobQueue), say: with both on one database, a program run
/// as a background job by a worker that dies resumes on the worker the job goes to next).
///
/// Errors: a database that fails is [`JournalError::Store`] (and stops the program before
/// anything unjournaled runs); a row that is not a journal this build reads is
/// [`JournalError::Malformed`]. While the database is known to be down, saves fail at once
/// instead of waiting out the pool's timeout.
///
/// **Retention**: journals are kept until removed. Delete old finished ones with
/// [`delete_finished_before`](Self::delete_finished_before); a program that never finished
/// keeps its journal (it may still be resumed).
///
/// Cloning is cheap: clones share the connection pool.
///
/// ```no_run
/// # async fn demo(toolkit: agent_toolkit::Toolkit) -> Result<(), Box<dyn std::error::Error>> {
/// use agent_toolkit::ToolContext;
/// use agent_toolkit::code::{CodeMode, SqlJournalStore};
///
/// let store = SqlJournalStore::sqlite("programs.db").await?;
/// let mode = CodeMode::new().journal_store(store);
/// // After a crash, the same call in a new process resumes program `call_7`.
/// let result = mode.run(&toolkit, "call_7", "return await tools.add({a: 1, b: 2});", &ToolContext::new()).await;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct SqlJournalStore {
    db: Database,
}

impl std::fmt::Debug for SqlJournalStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlJournalStore")
            .field("database", &self.db.label())
            .finish_non_exhaustive()
    }
}

impl SqlJournalStore {
    /// The store in `db`, its table created or brought up to date if needed (safe from several
    /// processes at once: they take turns).
    pub async fn new(db: &Database) -> Result<Self, DatabaseError> {
        migrate::migrate(db, "code", STEPS, async { Ok(()) }).await?;
        Ok(SqlJournalStore { db: db.clone() })
    }

    /// [`new`](Self::new) in the SQLite file at `path` ([`Database::sqlite`]).
    #[cfg(feature = "sqlite")]
    pub async fn sqlite(path: impl AsRef<std::path::Path>) -> Result<Self, DatabaseError> {
        Self::new(&Database::sqlite(path).await?).await
    }

    /// [`new`](Self::new) in the Postgres database at `url`
    /// (`postgres://user:password@host:port/db`, [`Database::postgres`]).
    #[cfg(feature = "postgres")]
    pub async fn postgres(url: &str) -> Result<Self, DatabaseError> {
        Self::new(&Database::postgres(url).await?).await
    }

    /// The database the journals are kept in.
    pub fn database(&self) -> &Database {
        &self.db
    }

    /// Delete the journals of finished programs last written before `before`; returns how many
    /// were deleted. Journals of programs that did not finish stay.
    pub async fn delete_finished_before(&self, before: SystemTime) -> Result<u64, DatabaseError> {
        let cutoff = before
            .duration_since(UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0);
        let deleted = self
            .db
            .guard(
                async {
                    on_pool!(self.db, |pool, sql| {
                        sqlx::query(sql(DELETE_FINISHED))
                            .bind(cutoff)
                            .execute(pool)
                            .await
                            .map(|done| done.rows_affected())
                            .map_err(|e| self.db.error(e))
                    })
                },
                itself,
            )
            .await?;
        Ok(deleted)
    }

    async fn load_text(&self, id: &str) -> Result<Option<String>, DatabaseError> {
        let operation = async {
            on_pool!(self.db, |pool, sql| {
                sqlx::query_scalar::<_, String>(sql(LOAD))
                    .bind(id)
                    .fetch_optional(pool)
                    .await
                    .map_err(|e| self.db.error(e))
            })
        };
        self.db.guard(operation, itself).await
    }

    async fn save_text(&self, id: &str, text: &str, finished: bool) -> Result<(), DatabaseError> {
        let operation = async {
            on_pool!(self.db, |pool, sql| {
                sqlx::query(sql(SAVE))
                    .bind(id)
                    .bind(text)
                    .bind(finished)
                    .bind(now_ms())
                    .execute(pool)
                    .await
                    .map(drop)
                    .map_err(|e| self.db.error(e))
            })
        };
        self.db.guard(operation, itself).await
    }

    async fn remove_row(&self, id: &str) -> Result<(), DatabaseError> {
        let operation = async {
            on_pool!(self.db, |pool, sql| {
                sqlx::query(sql(REMOVE))
                    .bind(id)
                    .execute(pool)
                    .await
                    .map(drop)
                    .map_err(|e| self.db.error(e))
            })
        };
        self.db.guard(operation, itself).await
    }
}

/// The database error of a failed operation, for [`Database::guard`].
fn itself(error: &DatabaseError) -> Option<&DatabaseError> {
    Some(error)
}

fn store_error(error: DatabaseError) -> JournalError {
    JournalError::Store(error.to_string())
}

fn malformed(id: &str, error: StoredError) -> JournalError {
    JournalError::Malformed(format!("program `{id}`: {error}"))
}

impl JournalStore for SqlJournalStore {
    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Journal>, JournalError>> {
        Box::pin(async move {
            let Some(text) = self.load_text(id).await.map_err(store_error)? else {
                return Ok(None);
            };
            stored::decode::<Journal>(&text)
                .map(Some)
                .map_err(|e| malformed(id, e))
        })
    }

    fn save<'a>(
        &'a self,
        id: &'a str,
        journal: &'a Journal,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move {
            let text = stored::encode(journal);
            self.save_text(id, &text, journal.is_finished())
                .await
                .map_err(store_error)
        })
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move { self.remove_row(id).await.map_err(store_error) })
    }
}
