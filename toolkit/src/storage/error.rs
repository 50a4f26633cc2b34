//! The errors of storage: [`DatabaseError`], a database that could not do what was asked, with
//! its cause; `StoredError`, a stored value of a version this build does not read, or
//! malformed.

#[cfg(durable)]
use std::fmt;
use std::ops::RangeInclusive;

#[cfg(durable)]
use crate::error::Cause;

/// A database (of a durable [`JobQueue`](crate::background::JobQueue) or an A2A
/// `SqlTaskStore`) failed: it could not be reached, refused a statement, or timed out. The
/// cause is kept as the error's [`source`](std::error::Error::source) (a `sqlx` error), and
/// its text, with the causes below it, is in the message.
#[cfg(durable)]
#[derive(Clone)]
pub struct DatabaseError {
    database: String,
    /// Shown as the error's text with the causes below it; its original (if any) is the
    /// error's source.
    cause: Cause,
    /// Set on errors made here that are worth retrying (a database known to be down).
    retry: bool,
}

#[cfg(durable)]
impl fmt::Display for DatabaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the database {} failed: {}", self.database, self.cause)
    }
}

#[cfg(durable)]
impl fmt::Debug for DatabaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DatabaseError")
            .field("database", &self.database)
            .field("message", &self.cause.to_string())
            .field("source", &self.cause.error())
            .field("retry", &self.retry)
            .finish()
    }
}

#[cfg(durable)]
impl std::error::Error for DatabaseError {
    /// The original error (a `sqlx` error, say), not the [`Cause`] holding it.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        let error: &(dyn std::error::Error + 'static) = self.cause.error()?;
        Some(error)
    }
}

#[cfg(durable)]
impl DatabaseError {
    pub(crate) fn new(
        database: &str,
        error: impl std::error::Error + Send + Sync + 'static,
    ) -> DatabaseError {
        DatabaseError {
            database: database.to_owned(),
            cause: Cause::explained(crate::util::error_chain(&error), error),
            retry: false,
        }
    }

    /// An error without an underlying cause (a stored value that cannot be read, say).
    pub(crate) fn message(database: &str, message: impl Into<String>) -> DatabaseError {
        DatabaseError {
            database: database.to_owned(),
            cause: Cause::message(message),
            retry: false,
        }
    }

    /// The same error, worth retrying.
    pub(crate) fn retryable(mut self) -> Self {
        self.retry = true;
        self
    }

    /// Whether the database could not be reached at all (as opposed to refusing a statement).
    pub(crate) fn is_unreachable(&self) -> bool {
        match self.cause.downcast_ref::<sqlx::Error>() {
            Some(sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed) => true,
            Some(sqlx::Error::Database(e)) => {
                let code = e.code().unwrap_or_default();
                code.starts_with("08") || code.starts_with("57P")
            }
            _ => false,
        }
    }

    /// Which database: `SQLite <path>`, or `Postgres <host>:<port>/<database>`.
    pub fn database(&self) -> &str {
        &self.database
    }

    /// Whether trying again may help: the database could not be reached, a connection broke,
    /// or it was busy (`database is locked`). A statement it refused will be refused again.
    pub fn is_retryable(&self) -> bool {
        if self.retry {
            return true;
        }
        if self.cause.error().is_none() {
            return false;
        }
        match self.cause.downcast_ref::<sqlx::Error>() {
            Some(sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed) => true,
            Some(sqlx::Error::Database(e)) => {
                // SQLite's busy and locked codes; Postgres's connection and shutdown classes.
                let code = e.code().unwrap_or_default();
                matches!(&*code, "5" | "6" | "517" | "262")
                    || code.starts_with("08")
                    || code.starts_with("57P")
            }
            _ => {
                self.cause.contains("Connection refused") || self.cause.contains("connection reset")
            }
        }
    }
}

/// Why a stored value cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum StoredError {
    /// It is of a version this build does not read.
    #[error("{what} in format version {found}, but this build reads versions {} to {}; it was written by another version of agent-toolkit", reads.start(), reads.end())]
    Version {
        what: &'static str,
        found: u64,
        reads: RangeInclusive<u32>,
    },
    /// It is not the value it should be (no version, not JSON, missing fields).
    #[error("{what} that cannot be read: {reason}")]
    Malformed { what: &'static str, reason: String },
}
