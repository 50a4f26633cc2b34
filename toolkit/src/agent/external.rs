//! External tools: tools the model may call but that run elsewhere, e.g. in the client app
//! that sent the request (A2A "client-side tools").
//!
//! [`ReActAgent::run_with_external_tools`] offers their [`ToolDefinition`]s to the model next
//! to the toolkit's own tools. When the model calls one, the run runs the turn's local calls,
//! then stops and returns the external calls ([`RunOutcome::ToolCalls`]); whoever owns the tools
//! runs them and hands the results to [`ReActAgent::resume_with_results`], which continues the
//! same run (same iteration count, same argument budgets) until the model answers or calls
//! external tools again.

use super::ReActAgent;
use super::events::AgentError;
use super::paused_run::{PausedRun, Turns};
use crate::model::Message;
use crate::tool::ToolCall;
use crate::tool::ToolDefinition;

/// How a run that can stop before its answer ended (so far).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum RunOutcome {
    /// The model answered.
    Final(String),
    /// The model called external tools: run them and pass their results to
    /// [`ReActAgent::resume_with_results`] (or store [`ReActAgent::paused_run`] and resume it
    /// later).
    ToolCalls(Vec<ToolCall>),
    /// The run paused at calls that wait for approval
    /// ([`ReActAgentBuilder::pause_at_approvals`](super::ReActAgentBuilder::pause_at_approvals)),
    /// and possibly at external calls of the same turn: store the state, give the decisions
    /// (and results), and continue with [`ReActAgent::resume`].
    Paused(Box<PausedRun>),
}

impl Turns {
    /// A new run on `input`, recorded in the agent's memory.
    pub(super) fn start(agent: &mut ReActAgent, input: String) -> Self {
        let run_start = agent.memory.len();
        agent.memory.push(Message::user(input));
        Turns::new(run_start)
    }
}

/// The error result of a call that waited for a decision when its run was closed.
const NOT_DECIDED: &str = "Error: the call was not run: its run ended before it was approved";

/// The result of a call whose tool asked a question its run ended before anyone answered.
const NOT_ANSWERED: &str =
    "Error: the call did not finish: its run ended before its question was answered";

impl ReActAgent {
    /// Run the agent on `input` with `tools` offered to the model besides the toolkit's own:
    /// definitions without local implementations. Their calls are returned, not run
    /// ([`RunOutcome::ToolCalls`]); continue with [`resume_with_results`](Self::resume_with_results).
    ///
    /// With [`pause_at_approvals`](super::ReActAgentBuilder::pause_at_approvals), a turn that
    /// has calls waiting for approval ends in [`RunOutcome::Paused`] instead (its external calls
    /// are in the paused run).
    ///
    /// Fails with [`AgentError::External`] when an external tool has the name of a local tool
    /// (the model could not tell them apart) or two external tools share a name. A run still
    /// waiting for results is closed first: its calls get error results saying none came back.
    pub async fn run_with_external_tools(
        &mut self,
        input: impl Into<String>,
        tools: Vec<ToolDefinition>,
    ) -> Result<RunOutcome, AgentError> {
        self.check_external(&tools)?;
        self.run_context = crate::context::ToolContext::new();
        self.abandon_external_calls();
        let turns = Turns::start(self, input.into());
        self.turns(turns, &tools, None).await
    }

    /// Continue a run stopped at [`RunOutcome::ToolCalls`] with the results of those calls:
    /// tool messages ([`Message::tool_result`], or `ToolResultEntry::to_message` for results
    /// that came over A2A), one per call, in any order. A call left without a result gets an
    /// error result saying so, and the model sees it.
    ///
    /// Fails with [`AgentError::External`] when no run is waiting, or a message is not a tool
    /// message answering one of the pending calls (or answers one twice); the run then stays
    /// waiting, so the caller can try again with correct results. A run that also waits for
    /// approvals is continued with [`resume`](Self::resume) instead, which takes the decisions
    /// (here it fails with [`ResumeError::MissingDecisions`](super::ResumeError::MissingDecisions)).
    pub async fn resume_with_results(
        &mut self,
        results: Vec<Message>,
    ) -> Result<RunOutcome, AgentError> {
        let Some(waiting) = self.suspended.as_ref() else {
            return Err(AgentError::External(
                "no run is waiting for tool results".into(),
            ));
        };
        let mut run = waiting.clone();
        for message in results {
            run.add_result(message)
                .map_err(|e| AgentError::External(e.to_string()))?;
        }
        let undecided = run.undecided();
        if !undecided.is_empty() {
            let error = super::ResumeError::MissingDecisions {
                call_ids: undecided,
            };
            return Err(AgentError::Resume(error));
        }
        self.suspended = None;
        self.continue_run(run).await
    }

    /// The external calls the waiting run needs results for (empty when none is waiting).
    pub fn pending_external_calls(&self) -> &[ToolCall] {
        self.suspended
            .as_ref()
            .map_or(&[], |s| s.pending_external_calls())
    }

    /// Close a waiting run: each pending call gets an error result, so the conversation stays
    /// valid for providers that require every call to be answered.
    pub(crate) fn abandon_external_calls(&mut self) {
        self.close_external_calls(Vec::new());
    }

    /// Close a waiting run without running the model: each pending call gets its result from
    /// `received` (tool messages, matched by call id) or, when none came, an error result saying
    /// so. Results that arrived before the conversation moved on are kept, never dropped.
    pub(crate) fn close_external_calls(&mut self, received: Vec<Message>) {
        let Some(mut waiting) = self.suspended.take() else {
            return;
        };
        // Results given to the paused run come first; then those received here.
        for m in received {
            // A result for no pending call, or a second one, has nothing to answer.
            let _ = waiting.add_result(m);
        }
        let undecided = waiting.approvals.iter().map(|a| (a.call(), NOT_DECIDED));
        let unanswered = waiting.questions.iter().map(|q| (q.call(), NOT_ANSWERED));
        for (call, why) in undecided.chain(unanswered) {
            let error = Message::tool_error(call.id.clone(), call.name.clone(), why);
            self.memory.push(error);
        }
        let answers = waiting.external_answers();
        self.memory.extend(answers);
    }

    /// Undo a run that was stopped midway (its future dropped): forget what it added after the
    /// first `memory_len` messages, and answer any call left without a result with an error
    /// result, so the conversation stays valid for the next run. Only the A2A agent server
    /// stops runs this way.
    #[cfg(feature = "a2a")]
    pub(crate) fn interrupt(&mut self, memory_len: usize) {
        self.suspended = None;
        self.memory.truncate(memory_len);
        let Some(last) = self.memory.iter().rposition(|m| !m.tool_calls().is_empty()) else {
            return;
        };
        let answered: std::collections::HashSet<_> = self.memory[last + 1..]
            .iter()
            .filter_map(|m| Some(m.as_tool()?.call_id.clone()))
            .collect();
        let unanswered: Vec<_> = self.memory[last]
            .tool_calls()
            .iter()
            .filter(|c| !answered.contains(&c.id))
            .cloned()
            .collect();
        for call in unanswered {
            self.memory.push(Message::tool_error(
                call.id,
                call.name,
                "Error: the call was cancelled",
            ));
        }
    }

    /// The conversation and the run waiting in it (for an A2A agent server to store).
    #[cfg(all(feature = "a2a", durable))]
    pub(crate) fn conversation(&self) -> (&[Message], Option<&PausedRun>) {
        (&self.memory, self.suspended.as_ref())
    }

    /// Puts back a conversation [`conversation`](Self::conversation) gave, in an agent built
    /// like the one that had it (an A2A agent server's new process).
    #[cfg(all(feature = "a2a", durable))]
    pub(crate) fn restore_conversation(
        &mut self,
        memory: Vec<Message>,
        suspended: Option<PausedRun>,
    ) {
        self.memory = memory;
        self.suspended = suspended;
    }

    pub(super) fn check_external(&self, tools: &[ToolDefinition]) -> Result<(), AgentError> {
        let mut seen = std::collections::HashSet::new();
        for def in tools {
            if self.toolkit.definition(def.name()).is_some() {
                return Err(AgentError::External(format!(
                    "external tool `{}` has the name of one of the agent's own tools",
                    def.name()
                )));
            }
            if !seen.insert(def.name()) {
                return Err(AgentError::External(format!(
                    "external tool `{}` is defined twice",
                    def.name()
                )));
            }
        }
        Ok(())
    }
}
