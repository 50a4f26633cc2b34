//! What a running agent reports: [`AgentEvent`]s, and the errors that end a run.

use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use super::paused_run::PausedRun;
use super::resume_error::ResumeError;
use crate::context::ToolProgress;
use crate::exec::{ApprovalDecision, ApprovalRequest};
use crate::model::{Message, ModelError};
use crate::tool::{ToolCall, ToolResult};

/// One step of a run, in the order it happens.
///
/// A run ends with [`Final`](Self::Final) or [`Failed`](Self::Failed); a run that paused at
/// approvals ends with `Failed(AgentError::Paused(state))`.
#[derive(Debug)]
#[non_exhaustive]
pub enum AgentEvent {
    /// A model turn begins (1-based).
    Iteration(usize),
    /// More of the model's text.
    TextDelta(String),
    /// A tool call is about to run.
    ToolCallStarted(ToolCall),
    /// Progress reported by a running tool.
    ToolProgress(ToolProgress),
    /// A tool call finished (or was refused).
    ToolResult(ToolResult),
    /// A call needs approval: answer through the request's [`ApprovalResponder`]. Until it is
    /// answered the call waits; dropping it denies the call.
    ApprovalRequested(ApprovalRequest, ApprovalResponder),
    /// The run ended with this answer.
    Final(String),
    /// The run ended with this error.
    Failed(AgentError),
}

/// The answer channel of an [`AgentEvent::ApprovalRequested`]; bound to that one call.
#[derive(Debug, Clone)]
pub struct ApprovalResponder(Arc<Mutex<Option<oneshot::Sender<ApprovalDecision>>>>);

impl ApprovalResponder {
    pub(crate) fn new() -> (Self, oneshot::Receiver<ApprovalDecision>) {
        let (tx, rx) = oneshot::channel();
        (ApprovalResponder(Arc::new(Mutex::new(Some(tx)))), rx)
    }

    /// Give the decision. Only the first answer counts.
    pub fn decide(&self, decision: ApprovalDecision) {
        if let Some(tx) = crate::util::lock(&self.0).take() {
            let _ = tx.send(decision);
        }
    }

    /// Approve the call as it is.
    pub fn approve(&self) {
        self.decide(ApprovalDecision::Approve);
    }

    /// Refuse the call; the reason is shown to the model.
    pub fn deny(&self, reason: impl Into<String>) {
        self.decide(ApprovalDecision::Deny(reason.into()));
    }
}

/// Why a run ended without an answer.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// The model request failed (after the provider's own retries). Nothing of the failed turn
    /// is in the conversation, and the run keeps its place: [`ReActAgent::paused_run`] hands it
    /// out and [`ReActAgent::resume`] asks the model again from that turn (in this agent or
    /// another, in this process or another), without running the calls that finished before.
    ///
    /// [`ReActAgent::paused_run`]: super::ReActAgent::paused_run
    /// [`ReActAgent::resume`]: super::ReActAgent::resume
    #[error("the model failed: {0}")]
    Model(#[from] ModelError),
    /// The model did not answer within the iteration limit.
    #[error("no answer after {iterations} iterations; the transcript has {} messages", transcript.len())]
    MaxIterations {
        /// The limit that was reached.
        iterations: usize,
        /// The whole conversation of the run, for inspection.
        transcript: Vec<Message>,
    },
    /// The model kept calling a tool with invalid arguments.
    #[error(
        "the model sent invalid arguments to `{tool}` {count} times in a row; last error: {last_error}"
    )]
    ArgumentBudget {
        /// The tool.
        tool: String,
        /// Consecutive invalid calls.
        count: u32,
        /// The last argument error.
        last_error: String,
    },
    /// External tools were misused: a name clash with a local tool, a resume with no run
    /// waiting, or a result that answers no pending call.
    #[error("external tools: {0}")]
    External(String),
    /// Not a failure: the run paused at calls that wait for approval
    /// ([`ReActAgentBuilder::pause_at_approvals`](super::ReActAgentBuilder::pause_at_approvals)),
    /// and [`run`](super::ReActAgent::run) and [`run_stream`](super::ReActAgent::run_stream)
    /// have no other way to hand the state back. Store it, decide, and continue with
    /// [`ReActAgent::resume`](super::ReActAgent::resume).
    #[error(
        "the run paused: {} call(s) wait for approval; decide and continue with ReActAgent::resume",
        .0.pending_approvals().len()
    )]
    Paused(Box<PausedRun>),
    /// A guardrail stopped the run ([`Guardrail`](crate::toolkit::Guardrail)): every call of
    /// the turn was answered, and the conversation holds them.
    #[error("{0}")]
    Guardrail(crate::toolkit::GuardrailStop),
    /// A paused run could not be resumed; nothing ran and the agent is as it was.
    #[error("cannot resume the run: {0}")]
    Resume(#[from] ResumeError),
}

/// Where a run sends its events: the stream's channel in `run_stream`, nowhere in `run`.
pub(super) type Events = Option<tokio::sync::mpsc::Sender<AgentEvent>>;

/// Send `event` to whoever listens.
pub(super) async fn emit(events: &Events, event: AgentEvent) {
    if let Some(tx) = events {
        // A consumer that stopped listening does not stop the run.
        let _ = tx.send(event).await;
    }
}
