//! External tools: tools the model may call but that run elsewhere, e.g. in the client app
//! that sent the request (A2A "client-side tools").
//!
//! [`ReActAgent::run_with_external_tools`] offers their [`ToolDefinition`]s to the model next
//! to the toolkit's own tools. When the model calls one, the run runs the turn's local calls,
//! then stops and returns the external calls ([`RunOutcome::ToolCalls`]); whoever owns the tools
//! runs them and hands the results to [`ReActAgent::resume_with_results`], which continues the
//! same run (same iteration count, same argument budgets) until the model answers or calls
//! external tools again.

use std::collections::HashMap;
use std::sync::Arc;

use super::ReActAgent;
use super::events::AgentError;
use crate::model::{Message, Role};
use crate::tool::ToolCall;
use crate::tool::ToolDefinition;

/// How a run with external tools ended (so far).
#[derive(Clone, Debug, PartialEq)]
pub enum RunOutcome {
    /// The model answered.
    Final(String),
    /// The model called external tools: run them and pass their results to
    /// [`ReActAgent::resume_with_results`].
    ToolCalls(Vec<ToolCall>),
}

/// Where a run is: its id, the next iteration and the per-tool argument-error counts.
pub(super) struct Turns {
    /// The run's id, kept when a suspended run is resumed.
    pub(super) run_id: Arc<str>,
    /// The next iteration (1-based).
    pub(super) next: usize,
    /// Index in memory of the run's first message, for the transcript of a failed run.
    pub(super) run_start: usize,
    /// Consecutive invalid-argument errors per tool.
    pub(super) failures: HashMap<String, u32>,
}

impl Turns {
    /// A new run on `input`, recorded in the agent's memory.
    pub(super) fn start(agent: &mut ReActAgent, input: String) -> Self {
        let run_start = agent.memory.len();
        agent.memory.push(Message::user(input));
        Turns {
            run_id: super::new_id(),
            next: 1,
            run_start,
            failures: HashMap::new(),
        }
    }
}

/// A run waiting for the results of external calls.
pub(super) struct Suspended {
    pub(super) turns: Turns,
    pub(super) pending: Vec<ToolCall>,
    pub(super) external: Vec<ToolDefinition>,
}

const NO_RESULT: &str = "Error: the caller returned no result for this call";

impl ReActAgent {
    /// Run the agent on `input` with `tools` offered to the model besides the toolkit's own:
    /// definitions without local implementations. Their calls are returned, not run
    /// ([`RunOutcome::ToolCalls`]); continue with [`resume_with_results`](Self::resume_with_results).
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
    /// waiting, so the caller can try again with correct results.
    pub async fn resume_with_results(
        &mut self,
        results: Vec<Message>,
    ) -> Result<RunOutcome, AgentError> {
        let Some(suspended) = self.suspended.as_ref() else {
            return Err(AgentError::External(
                "no run is waiting for tool results".into(),
            ));
        };
        let mut by_id: HashMap<&str, &Message> = HashMap::new();
        for message in &results {
            let id = match (&message.role, &message.tool_call_id) {
                (Role::Tool, Some(id)) => id,
                _ => {
                    return Err(AgentError::External(
                        "a tool result must be a tool message with the id of the call it answers"
                            .into(),
                    ));
                }
            };
            if !suspended.pending.iter().any(|c| *c.id == **id) {
                return Err(AgentError::External(format!(
                    "the result for call `{id}` answers no pending call; pending: {}",
                    pending_ids(&suspended.pending)
                )));
            }
            if by_id.insert(id, message).is_some() {
                return Err(AgentError::External(format!(
                    "call `{id}` was answered twice"
                )));
            }
        }
        let answers: Vec<Message> = suspended
            .pending
            .iter()
            .map(|call| match by_id.get(&*call.id) {
                Some(m) => {
                    let mut answer = (*m).clone();
                    answer.name = answer.name.or_else(|| Some(call.name.clone()));
                    answer
                }
                None => Message::tool_error(call.id.clone(), call.name.clone(), NO_RESULT),
            })
            .collect();
        let Some(Suspended {
            turns, external, ..
        }) = self.suspended.take()
        else {
            return Err(AgentError::External(
                "no run is waiting for tool results".into(),
            ));
        };
        self.memory.extend(answers);
        self.turns(turns, &external, None).await
    }

    /// The external calls the waiting run needs results for (empty when none is waiting).
    pub fn pending_external_calls(&self) -> &[ToolCall] {
        self.suspended.as_ref().map_or(&[], |s| &s.pending)
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
        let Some(suspended) = self.suspended.take() else {
            return;
        };
        let mut received: HashMap<Arc<str>, Message> = received
            .into_iter()
            .filter_map(|m| m.tool_call_id.clone().map(|id| (id, m)))
            .collect();
        for call in suspended.pending {
            let answer = match received.remove(&call.id) {
                Some(mut m) => {
                    m.role = Role::Tool;
                    m.name = m.name.or_else(|| Some(call.name.clone()));
                    m
                }
                None => Message::tool_error(call.id.clone(), call.name.clone(), NO_RESULT),
            };
            self.memory.push(answer);
        }
    }

    /// Undo a run that was stopped midway (its future dropped): forget what it added after the
    /// first `memory_len` messages, and answer any call left without a result with an error
    /// result, so the conversation stays valid for the next run. Only the A2A agent server
    /// stops runs this way.
    #[cfg(feature = "a2a")]
    pub(crate) fn interrupt(&mut self, memory_len: usize) {
        self.suspended = None;
        self.memory.truncate(memory_len);
        let Some(last) = self
            .memory
            .iter()
            .rposition(|m| m.role == Role::Assistant && !m.tool_calls.is_empty())
        else {
            return;
        };
        let answered: std::collections::HashSet<_> = self.memory[last + 1..]
            .iter()
            .filter_map(|m| m.tool_call_id.clone())
            .collect();
        let unanswered: Vec<_> = self.memory[last]
            .tool_calls
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

    fn check_external(&self, tools: &[ToolDefinition]) -> Result<(), AgentError> {
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

fn pending_ids(calls: &[ToolCall]) -> String {
    calls
        .iter()
        .map(|c| format!("`{}`", c.id))
        .collect::<Vec<_>>()
        .join(", ")
}
