//! Background tools: a queue of jobs and a ledger of every background call, one record per
//! job, kept in this process (the default) or in a database shared by many processes.
//!
//! A call of a `#[tool(background)]` tool is validated, submitted, and answered at once with a
//! *pending* result; the tool then runs through the same stack as any call (timeouts, retries,
//! tracing, panic guard). When it ends, its [`ToolResult`](crate::ToolResult) is written to the ledger, passed to
//! every [`on_tool_result`](crate::toolkit::ToolkitBuilder::on_tool_result) callback and sent
//! to every [`results`](BackgroundJobs::results) stream. An agent collects finished results
//! with [`take_finished`](BackgroundJobs::take_finished) and lists the
//! [`pending`](BackgroundJobs::pending) ones to the model.
//!
//! **Records are keyed by [`JobId`], not by call id.** Call ids are chosen by the model, and
//! models reuse them: local model servers commonly number calls per turn, so `call_0` comes
//! back every turn. A call whose id is already in the ledger — even one still running — is
//! accepted and becomes a job of its own; nothing is overwritten and every result is delivered.
//! (Within one batch a repeated id is still refused, by [`Toolkit::call_all`](crate::Toolkit::call_all):
//! the model could not tell the two results apart in the same turn.) Each record keeps its
//! call; [`get`](BackgroundJobs::get) finds a job by its id, [`by_call_id`](BackgroundJobs::by_call_id)
//! lists every job a call id was used for. The pending result and the job's own result carry
//! the job ([`ToolResult::job`](crate::ToolResult::job): [`Job::Pending`] or [`Job::Finished`]).
//!
//! # Backends
//!
//! - **In-process** (the default): jobs are tokio tasks of this process, the ledger lives in
//!   its memory, and both end with it.
//! - **Durable** ([`JobQueue`], features `sqlite` and `postgres`): jobs and the ledger live in a
//!   SQLite file or a Postgres database, on the [apalis](https://docs.rs/apalis) job engine,
//!   and [`Worker`]s — in this process or in others, on other machines — run them. See
//!   [`JobQueue`] for what is guaranteed: a call is stored before its pending result is
//!   returned; a job runs at least once, and a tool that is neither `idempotent` nor
//!   `read_only` is never run twice (after a worker dies mid-job it ends *outcome unknown*,
//!   [`ToolErrorKind::OutcomeUnknown`](crate::error::ToolErrorKind::OutcomeUnknown)); results are
//!   read back from the database, so a process that restarts still gets the results of the
//!   calls it made before.
//!
//! Shutting down (in-process): [`shutdown`](BackgroundJobs::shutdown) **cancels** the jobs
//! still running (each ends with a `Cancelled` result, recorded and reported like any other)
//! and waits for their tasks to end; [`drain`](BackgroundJobs::drain) waits for them to finish
//! instead. A toolkit dropped without either leaves its jobs running to completion. With a
//! durable queue, jobs belong to the workers: `shutdown` only stops this process from
//! submitting and from reporting, and `drain` waits until the queue has no pending job.
//!
//! The in-process ledger keeps every record for the toolkit's lifetime (results handed out by
//! `take_finished` are marked, not removed); a durable one keeps them for the queue's
//! [`retention`](JobQueue::retention).
//!
//! This module is the public face of two parts of the crate: the core below the toolkit
//! (`crate::jobs`: [`BackgroundJobs`], the in-process backend, the records) and, with the
//! `sqlite` or `postgres` feature, the durable backend above it (`crate::durable`:
//! [`JobQueue`], [`Worker`]).

#[cfg(durable)]
pub use crate::durable::{JobQueue, Worker};
pub use crate::jobs::{
    BackgroundJobs, Job, JobError, JobId, JobRecord, JobStatus, MakeJobBackend, ResultCallback,
};
