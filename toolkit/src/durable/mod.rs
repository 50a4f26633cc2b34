//! The durable backend of background jobs (features `sqlite` and `postgres`), above the
//! toolkit: [`JobQueue`] (a queue and its ledger in a [`Database`](crate::storage::Database),
//! on the apalis job engine) and [`Worker`] (runs its jobs with a toolkit). It plugs into a
//! toolkit through the [`JobBackend`](crate::jobs::JobBackend) seam
//! ([`ToolkitBuilder::job_queue`]) and reaches the toolkit only through the calls it runs.
//!
//! | File | Owns |
//! |---|---|
//! | `job_queue.rs` | [`JobQueue`]: the queue's settings and tables |
//! | `ledger/` | the ledger table and the submitting side of a queue (the backend itself) |
//! | `worker.rs` | [`Worker`] |
//! | `gather.rs` | statements of many callers made as one (a group commit) |

mod gather;
mod job_queue;
mod ledger;
mod worker;

pub use job_queue::JobQueue;
pub use worker::Worker;

#[allow(unused_imports)]
use crate::toolkit::ToolkitBuilder;
