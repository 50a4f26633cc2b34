//! [`JobError`]: why the ledger or a durable queue could not do what was asked.

#[cfg(durable)]
use crate::storage::DatabaseError;

/// Why the background ledger, a [`JobQueue`](crate::background::JobQueue) or a [`Worker`](crate::background::Worker)
/// failed. The in-process backend never fails; a durable one fails when its database does.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JobError {
    /// The database could not be reached or answered with an error (its name and the cause
    /// are in the [`DatabaseError`]). Retry once it is back: nothing submitted before was lost.
    #[cfg(durable)]
    #[error("the job {0}")]
    Database(#[from] DatabaseError),
    /// The queue's settings cannot work (an empty queue name, a URL that is not a database
    /// URL, a worker concurrency of 0).
    #[error("the job queue is misconfigured: {0}")]
    Config(String),
    /// A stored record could not be read back (written by a newer version of this library, or
    /// changed by hand).
    #[error("job {job} in the database is unreadable: {message}")]
    Corrupt {
        /// The job's id.
        job: u64,
        /// What is wrong with it.
        message: String,
    },
}

impl JobError {
    /// Whether trying again may help: the database was unreachable or busy. Settings that
    /// cannot work and unreadable records stay so.
    pub fn is_retryable(&self) -> bool {
        match self {
            #[cfg(durable)]
            JobError::Database(e) => e.is_retryable(),
            _ => false,
        }
    }
}
