//! The storage foundation: what everything the library stores shares.
//!
//! - One versioned form for every value stored as JSON or handed out to be stored (a job's
//!   payload and result, an A2A conversation, a [`PausedRun`](crate::agent::PausedRun)):
//!   `{"version": N, …}`, read with its version checked first (`stored.rs`).
//! - With the `sqlite` or `postgres` feature, one `Database` handle — one connection pool —
//!   that a durable `JobQueue` and an A2A `SqlTaskStore` both take, so that one database means
//!   one pool; one migration runner; one way to name the database in errors (`DatabaseError`);
//!   one time unit (milliseconds since the Unix epoch); one placeholder rule (statements are
//!   written with Postgres's `$1` and turned into SQLite's `?1`); failing fast while the
//!   database is known to be down.
//!
//! | File | Owns |
//! |---|---|
//! | `database.rs` | `Database`, its pool, the placeholder rule, the clock, failing fast |
//! | `migrate.rs` | applying each component's schema steps once, one process at a time |
//! | `stored.rs` | the versioned JSON form of stored values |
//! | `error.rs` | `DatabaseError`, `StoredError` |

#[cfg(durable)]
mod database;
mod error;
#[cfg(durable)]
pub(crate) mod migrate;
pub(crate) mod stored;

#[cfg(durable)]
pub use database::Database;
#[cfg(feature = "sqlite")]
pub(crate) use database::sqlite_sql;
#[cfg(durable)]
pub(crate) use database::{Pool, now_ms, on_pool};
#[cfg(durable)]
pub use error::DatabaseError;
