//! [`ToolResult`]: the one result of one call.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use super::ToolOutput;
use crate::error::ToolError;

/// The one result of one [`ToolCall`](super::ToolCall).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ToolResult {
    /// The call's id.
    pub call_id: Arc<str>,
    /// The tool name the call used.
    pub name: String,
    /// Output, or why there is none.
    pub outcome: Result<ToolOutput, ToolError>,
    /// How many times the tool was started (retries included); 0 when the call was refused
    /// before the tool ran (unknown tool, bad arguments, denied) or is still pending.
    pub attempts: u32,
    /// The background job behind the result, for a call of a `background` tool: its
    /// placeholder while the job runs, or the job's own result.
    pub job: Option<Job>,
}

/// Where the background job behind a [`ToolResult`] stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Job {
    /// The call was queued and this result only says so; the job's result is reported when it
    /// ends ([`BackgroundJobs`](crate::background::BackgroundJobs)).
    Pending(JobId),
    /// The job ended and this is its result.
    Finished(JobId),
}

impl Job {
    /// The job's id.
    pub fn id(self) -> JobId {
        match self {
            Job::Pending(id) | Job::Finished(id) => id,
        }
    }
}

/// Identifies one background job of a toolkit. Unique for the toolkit's lifetime, in
/// submission order: call ids are the model's and may repeat (local servers send `call_0`
/// every turn), job ids never do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JobId(pub(crate) u64);

impl JobId {
    /// The id as a number.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl ToolResult {
    /// A result (of a foreground call, or made by hand, e.g. for a client-side tool).
    pub fn new(
        call_id: impl Into<Arc<str>>,
        name: impl Into<String>,
        outcome: Result<ToolOutput, ToolError>,
        attempts: u32,
    ) -> Self {
        ToolResult {
            call_id: call_id.into(),
            name: name.into(),
            outcome,
            attempts,
            job: None,
        }
    }

    /// Whether the call failed.
    pub fn is_error(&self) -> bool {
        self.outcome.is_err()
    }

    /// The output, if the call succeeded.
    pub fn output(&self) -> Option<&ToolOutput> {
        self.outcome.as_ref().ok()
    }

    /// The error, if the call failed.
    pub fn error(&self) -> Option<&ToolError> {
        self.outcome.as_ref().err()
    }

    /// Whether this is the placeholder of a background call that is still running.
    pub fn is_pending(&self) -> bool {
        matches!(self.job, Some(Job::Pending(_)))
    }

    /// The background job behind the result, if the call was a background one; look its
    /// record up with [`BackgroundJobs::get`](crate::background::BackgroundJobs::get).
    pub fn job_id(&self) -> Option<JobId> {
        self.job.map(Job::id)
    }

    /// The text the model should see: the output, or `Error: <message>`.
    pub fn model_text(&self) -> Cow<'_, str> {
        match &self.outcome {
            Ok(out) => Cow::Borrowed(out.as_text()),
            Err(e) => Cow::Owned(format!("Error: {}", e.message())),
        }
    }
}

impl fmt::Display for ToolResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{} {}] {}", self.name, self.call_id, self.model_text())
    }
}
