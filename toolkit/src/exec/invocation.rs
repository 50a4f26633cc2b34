//! [`ToolInvocation`], the request every layer of the stack sees, and the [`ExecSettings`] it
//! carries.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use super::pace::SyncPace;
use super::{ApprovalHook, RetryPolicy};
use crate::args::ToolArgs;
use crate::context::{CallInfo, ToolContext};
use crate::error::ToolError;
use crate::tool::{AgentTool, ToolOptions};

/// One call of one tool, with everything the stack needs to run it: the tool, its declared
/// options, its settings in this toolkit, the resolved arguments and the call's identity.
///
/// Cloning is cheap (reference counts and the argument text); the retry layer clones it per
/// attempt.
#[derive(Clone)]
pub struct ToolInvocation {
    tool: Arc<dyn AgentTool>,
    options: Arc<ToolOptions>,
    settings: Arc<ExecSettings>,
    approver: Option<Arc<dyn ApprovalHook>>,
    /// The resolved arguments, or why they could not be resolved (the tool service then fails
    /// the call with that error, inside the stack, so it is traced like any other result).
    pub(crate) args: Result<ToolArgs, ToolError>,
    info: CallInfo,
    attempts: Arc<AtomicU32>,
    /// Where a synchronous tool runs (`None` for async tools).
    pub(crate) pace: Option<Arc<SyncPace>>,
}

impl ToolInvocation {
    pub(crate) fn new(
        tool: Arc<dyn AgentTool>,
        options: Arc<ToolOptions>,
        settings: Arc<ExecSettings>,
        approver: Option<Arc<dyn ApprovalHook>>,
        args: Result<ToolArgs, ToolError>,
        info: CallInfo,
        pace: Option<Arc<SyncPace>>,
    ) -> Self {
        ToolInvocation {
            tool,
            options,
            settings,
            approver,
            args,
            info,
            attempts: Arc::new(AtomicU32::new(0)),
            pace,
        }
    }

    /// Which call this is: the call id and the tool's registered name.
    pub fn info(&self) -> &CallInfo {
        &self.info
    }

    /// The tool's registered name.
    pub fn tool_name(&self) -> &str {
        &self.info.tool_name
    }

    /// The tool's declared options (its flags and behaviour hints).
    pub fn options(&self) -> &ToolOptions {
        &self.options
    }

    /// The tool's settings in this toolkit (time limits, retries, output limit).
    pub fn settings(&self) -> &ExecSettings {
        &self.settings
    }

    /// Attempts started so far.
    pub fn attempts(&self) -> u32 {
        self.attempts.load(Ordering::Relaxed)
    }

    /// The call's context (cancellation, progress, values); `None` when the arguments could not
    /// be resolved, in which case the call fails without running.
    pub fn context(&self) -> Option<&ToolContext> {
        self.args.as_ref().ok().map(ToolArgs::context)
    }

    /// Who approves this call if its tool requires approval: the approver of the toolkit
    /// handle the call was made through.
    pub(crate) fn approver(&self) -> Option<&Arc<dyn ApprovalHook>> {
        self.approver.as_ref()
    }

    /// The shared attempt counter, read for the result once the call is over.
    pub(crate) fn attempt_counter(&self) -> Arc<AtomicU32> {
        self.attempts.clone()
    }

    /// What the innermost service needs, taken out of the invocation (moved, not
    /// reference-counted again).
    pub(super) fn into_run(self) -> RunParts {
        RunParts {
            max_output_bytes: self.settings.max_output_bytes,
            blocking: self.options.blocking,
            tool: self.tool,
            args: self.args,
            attempts: self.attempts,
            pace: self.pace,
        }
    }

    /// Whether approval, time-limit and retry layers would all pass this call through.
    pub(crate) fn passes_through_middle_layers(&self) -> bool {
        let s = &*self.settings;
        !self.options.requires_approval
            && s.attempt_timeout.is_none()
            && s.total_timeout.is_none()
            && s.retry.max_retries == 0
            && self.context().is_none_or(|c| c.cancellation().is_none())
    }
}

/// The parts of a [`ToolInvocation`] the innermost service runs the tool with.
pub(super) struct RunParts {
    pub(super) max_output_bytes: usize,
    pub(super) blocking: bool,
    pub(super) tool: Arc<dyn AgentTool>,
    pub(super) args: Result<ToolArgs, ToolError>,
    pub(super) attempts: Arc<AtomicU32>,
    pub(super) pace: Option<Arc<SyncPace>>,
}

impl std::fmt::Debug for ToolInvocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolInvocation")
            .field("info", &self.info)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// The execution settings of one tool in one toolkit: each resolved from the registration's
/// override, else the tool's own option, else the toolkit's default.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ExecSettings {
    /// Deadline of one attempt.
    pub attempt_timeout: Option<Duration>,
    /// Deadline of the whole call, retries and backoff included.
    pub total_timeout: Option<Duration>,
    /// Retries.
    pub retry: RetryPolicy,
    /// Largest output passed on to the model; longer output is cut with a marker.
    pub max_output_bytes: usize,
}
