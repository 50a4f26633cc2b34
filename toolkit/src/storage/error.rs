//! The errors of storage: [`DatabaseError`], a database that could not do what was asked, with
//! its cause; `StoredError`, a stored value of a version this build does not read, or
//! malformed.

use std::ops::RangeInclusive;
#[cfg(durable)]
use std::sync::Arc;

/// A database (of a durable [`JobQueue`](crate::background::JobQueue) or an A2A
/// `SqlTaskStore`) failed: it could not be reached, refused a statement, or timed out. The
/// cause is kept as the error's [`source`](std::error::Error::source) (a `sqlx` error), and
/// its text, with the causes below it, is in the message.
#[cfg(durable)]
#[derive(Clone, Debug, thiserror::Error)]
#[error("the database {database} failed: {message}")]
pub struct DatabaseError {
    database: String,
    message: String,
    #[source]
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
    /// Set on errors made here that are worth retrying (a database known to be down).
    retry: bool,
}

#[cfg(durable)]
impl DatabaseError {
    pub(crate) fn new(
        database: &str,
        error: impl std::error::Error + Send + Sync + 'static,
    ) -> DatabaseError {
        DatabaseError {
            database: database.to_owned(),
            message: crate::util::error_chain(&error),
            source: Some(Arc::new(error)),
            retry: false,
        }
    }

    /// An error without an underlying cause (a stored value that cannot be read, say).
    pub(crate) fn message(database: &str, message: impl Into<String>) -> DatabaseError {
        DatabaseError {
            database: database.to_owned(),
            message: message.into(),
            source: None,
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
        match self
            .source
            .as_deref()
            .and_then(|s| s.downcast_ref::<sqlx::Error>())
        {
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
        let Some(source) = &self.source else {
            return false;
        };
        match source.downcast_ref::<sqlx::Error>() {
            Some(sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed) => true,
            Some(sqlx::Error::Database(e)) => {
                // SQLite's busy and locked codes; Postgres's connection and shutdown classes.
                let code = e.code().unwrap_or_default();
                matches!(&*code, "5" | "6" | "517" | "262")
                    || code.starts_with("08")
                    || code.starts_with("57P")
            }
            _ => {
                self.message.contains("Connection refused")
                    || self.message.contains("connection reset")
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
