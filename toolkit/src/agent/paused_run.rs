//! [`PausedRun`]: a run stopped at calls that wait for a decision or for results from
//! elsewhere, as a value that can be stored and resumed by another process.
//!
//! The state is plain data (serde): the conversation, where the run is (its id, the next
//! iteration, argument-error counts, tokens used), the calls waiting for approval with their
//! decisions once given, the external calls with their results once given, and the answer of a
//! `return_directly` tool that succeeded in the paused turn. Everything that is code or a live
//! handle — the model, the toolkit and its context values, the agent's settings — is not in it:
//! the agent that resumes it brings them ([`ReActAgent::resume`](super::ReActAgent::resume)).
//!
//! Every call of the paused turn gets exactly one result: the calls that did not wait ran before
//! the pause and their results are in the conversation; each waiting call is answered once, on
//! resume, from its decision or its result.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::resume_error::ResumeError;
use crate::context::{Answer, Question};
use crate::exec::ApprovalDecision;
use crate::model::{Message, ToolMessage, Usage};
use crate::tool::{ToolCall, ToolDefinition};

/// Where a run is: its id, the next iteration, the per-tool argument-error counts and the
/// tokens it used. Kept when a paused run is resumed, in this process or another.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct Turns {
    /// The run's id, kept when a paused run is resumed.
    pub(super) run_id: Arc<str>,
    /// The next iteration (1-based).
    #[serde(rename = "next_iteration")]
    pub(super) next: usize,
    /// Index in the conversation of the run's first message, for the transcript of a failed run.
    pub(super) run_start: usize,
    /// Consecutive invalid-argument errors per tool.
    #[serde(rename = "argument_errors")]
    pub(super) failures: BTreeMap<String, u32>,
    /// Tokens of every model response of the run so far.
    pub(super) usage: Usage,
    /// The W3C `traceparent` of the `invoke_agent` span that paused (with the `otel`
    /// feature): the span of the resumed run links to it, in whatever process it resumes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) traceparent: Option<String>,
}

impl Turns {
    /// A new run, whose first message will be at `run_start` in the conversation.
    pub(super) fn new(run_start: usize) -> Self {
        Turns {
            run_id: super::new_id(),
            next: 1,
            run_start,
            failures: BTreeMap::new(),
            usage: Usage::default(),
            traceparent: None,
        }
    }
}

/// A call that waits for a decision in a [`PausedRun`], and the decision once given.
///
/// Its arguments were already checked against the tool's parameters: nobody is asked to approve
/// a call that could not run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingApproval {
    call: ToolCall,
    tool: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    decision: Option<ApprovalDecision>,
    /// For a call made by a program (code mode): the program, which replays to it on resume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) program: Option<Box<PausedProgram>>,
}

/// A program (code mode) stopped at a call that waits for approval: the model's call that runs
/// it, the waiting call's number in the program's journal, and the journal (as the code module
/// stores it), which the program replays on resume.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct PausedProgram {
    pub(super) call: ToolCall,
    /// What the program tool resumes from ([`Suspension::state`](crate::tool::Suspension)):
    /// code mode's key, call number and journal, stored beside the call as before.
    #[serde(flatten)]
    pub(super) state: serde_json::Map<String, serde_json::Value>,
}

impl PendingApproval {
    pub(super) fn new(call: ToolCall, tool: &str) -> Self {
        PendingApproval {
            call,
            tool: tool.to_string(),
            decision: None,
            program: None,
        }
    }

    /// The call as the model made it (its id, the tool name it used, its arguments as JSON
    /// text).
    pub fn call(&self) -> &ToolCall {
        &self.call
    }

    /// The tool's registered name (the model may have used a provider's spelling of it).
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The decision given so far, if any.
    pub fn decision(&self) -> Option<&ApprovalDecision> {
        self.decision.as_ref()
    }
}

/// A call whose tool asked a question in a [`PausedRun`] ([`Elicitor`](crate::context::Elicitor)
/// or [`Sampler`](crate::context::Sampler), in an agent that pauses), and the answer once given.
///
/// On resume the call runs again from its start, through the toolkit as before; its tool gets
/// the answers in the order it asks (this one's last), so whatever it did before asking it does
/// again: a tool that asks should ask before it changes anything.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PendingQuestion {
    call: ToolCall,
    tool: String,
    question: Question,
    /// Answers the call got before this question (earlier pauses), in the order it asked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    answered: Vec<Answer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    answer: Option<Answer>,
}

impl PendingQuestion {
    pub(super) fn new(
        call: ToolCall,
        tool: &str,
        question: Question,
        answered: Vec<Answer>,
    ) -> Self {
        PendingQuestion {
            call,
            tool: tool.to_string(),
            question,
            answered,
            answer: None,
        }
    }

    /// The call whose tool asked (as the model made it).
    pub fn call(&self) -> &ToolCall {
        &self.call
    }

    /// The tool's registered name.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// What the tool asked: a form for the user ([`Question::Elicit`]: its message and JSON
    /// Schema) or a completion from a model ([`Question::Sample`]).
    pub fn question(&self) -> &Question {
        &self.question
    }

    /// The answer given so far, if any.
    pub fn answer(&self) -> Option<&Answer> {
        self.answer.as_ref()
    }

    /// Every answer the call gets when it runs again: the earlier ones, then this one's.
    pub(super) fn answers(&self) -> Vec<Answer> {
        self.answered.iter().chain(&self.answer).cloned().collect()
    }
}

/// The calls of a turn that wait: for a decision, or for the answer to their tool's question.
#[derive(Default)]
pub(super) struct Waiting {
    pub(super) approvals: Vec<PendingApproval>,
    pub(super) questions: Vec<PendingQuestion>,
}

impl Waiting {
    pub(super) fn is_empty(&self) -> bool {
        self.approvals.is_empty() && self.questions.is_empty()
    }
}

/// A run paused at calls that wait for approval ([`ReActAgentBuilder::pause_at_approvals`]) or
/// for the results of external tools ([`ReActAgent::run_with_external_tools`]), at calls whose
/// tools asked a question (an agent that pauses at approvals, with no
/// [`Caller`](crate::context::Caller) in the context), or stopped by a
/// failed model request ([`AgentError::Model`](super::AgentError::Model): nothing waits, and
/// resuming asks the model again), as a value to store (serde; JSON with
/// `serde_json::to_string`) and resume later, in another process.
///
/// **Carried**: the conversation (every message, system prompt excepted), the run's id, the next
/// iteration, the per-tool argument-error counts, the tokens used, the calls waiting for a
/// decision and the decisions given, the questions asked and the answers given, the external
/// calls, their definitions and the results given, the answer of a `return_directly` tool that succeeded in the paused turn, and which of
/// the agent's managed groups were equipped.
///
/// **Re-supplied** by the agent that resumes it: the model, the toolkit (with its presets,
/// context values, approval and execution settings), and the agent's settings — system prompt,
/// limits, tool choice, generation options, agent context values, `return_directly` tools,
/// managed groups, `pause_at_approvals`. Build that agent the way the first one was built. A
/// state that does not fit it (an approved call of a tool it does not have or that no longer
/// requires approval, a managed group it does not manage, an external tool with the name of one
/// of its tools) is refused with [`ResumeError::DoesNotFit`].
///
/// Give decisions with [`approve`](Self::approve), [`deny`](Self::deny) or
/// [`decide`](Self::decide) (to edit the arguments), answers with [`answer`](Self::answer), and
/// external results with
/// [`add_result`](Self::add_result); then continue with
/// [`ReActAgent::resume`](super::ReActAgent::resume). Read stored text back with
/// [`from_json`](Self::from_json), which checks the format version first.
///
/// The state is a value: resuming the same stored state twice runs its approved calls twice.
/// Delete it (or mark it used) when you resume it. Background calls still running when the run
/// paused are reported only to the agent that started them (with the in-process queue their
/// ledger is in its process; with a durable job queue their results stay in the database, where
/// `take_finished` hands them out).
///
/// [`ReActAgentBuilder::pause_at_approvals`]: super::ReActAgentBuilder::pause_at_approvals
/// [`ReActAgent::run_with_external_tools`]: super::ReActAgent::run_with_external_tools
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PausedRun {
    version: u32,
    #[serde(flatten)]
    pub(super) turns: Turns,
    /// The conversation. Empty while the paused run is held by the agent, whose memory is the
    /// conversation; filled when the state is handed out.
    pub(super) messages: Vec<Message>,
    #[serde(default)]
    pub(super) approvals: Vec<PendingApproval>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) questions: Vec<PendingQuestion>,
    #[serde(default)]
    pub(super) external_calls: Vec<ToolCall>,
    #[serde(default)]
    pub(super) external_results: Vec<ToolMessage>,
    #[serde(default)]
    pub(super) external_tools: Vec<ToolDefinition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) direct_answer: Option<String>,
    /// The agent's managed groups and whether each was equipped; filled when handed out.
    #[serde(default)]
    pub(super) equipped_groups: BTreeMap<String, bool>,
    /// Why the run stopped, when a model request failed (nothing waits then: resuming asks the
    /// model again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) failure: Option<String>,
}

/// A paused run is stored in the one versioned form of everything the library stores
/// ([`crate::storage::stored`]); its `version` field is that form's version.
impl crate::storage::stored::Stored for PausedRun {
    const WHAT: &'static str = "a paused run";
    const VERSION: u32 = PausedRun::FORMAT_VERSION;
    const READS: std::ops::RangeInclusive<u32> = 1..=PausedRun::FORMAT_VERSION;

    /// Version 1 kept its messages in the form before the closed set of kinds; version 2 is
    /// version 3 without questions.
    fn upgrade(
        version: u32,
        fields: &mut serde_json::Map<String, serde_json::Value>,
    ) -> Result<(), String> {
        if version >= 2 {
            return Ok(());
        }
        for key in ["messages", "external_results"] {
            if let Some(messages) = fields.get_mut(key) {
                crate::model::message::upgrade_v1(messages).map_err(|e| format!("`{key}`: {e}"))?;
            }
        }
        Ok(())
    }
}

/// The error result of an external call no result came back for.
const NO_RESULT: &str = "Error: the caller returned no result for this call";

impl PausedRun {
    /// The version of the stored form this build writes. [`from_json`](Self::from_json) reads
    /// it, version 2 (before runs paused at questions) and version 1 (messages in the form
    /// before [`Message`] was a closed set of kinds, upgraded as they are read); a state of
    /// another version is refused with [`ResumeError::UnsupportedVersion`].
    pub const FORMAT_VERSION: u32 = 3;

    /// A paused run held by an agent (no conversation: the agent's memory is it).
    pub(super) fn held(
        turns: Turns,
        Waiting {
            approvals,
            questions,
        }: Waiting,
        external_calls: Vec<ToolCall>,
        external_tools: Vec<ToolDefinition>,
        direct_answer: Option<String>,
    ) -> Self {
        let mut turns = turns;
        // Called in the run's `invoke_agent` span: the span a resumed run links to.
        if let Some(trace) = crate::trace_context::current() {
            turns.traceparent = Some(trace.traceparent);
        }
        PausedRun {
            version: Self::FORMAT_VERSION,
            turns,
            messages: Vec::new(),
            approvals,
            questions,
            external_calls,
            external_results: Vec::new(),
            external_tools,
            direct_answer,
            equipped_groups: BTreeMap::new(),
            failure: None,
        }
    }

    /// A run stopped by a failed model request (`error`): nothing waits, and resuming asks the
    /// model again from the failed turn.
    pub(super) fn failed(turns: Turns, external_tools: Vec<ToolDefinition>, error: String) -> Self {
        PausedRun {
            failure: Some(error),
            ..Self::held(turns, Default::default(), Vec::new(), external_tools, None)
        }
    }

    /// Why the run stopped, when it stopped at a failed model request
    /// ([`AgentError::Model`](super::AgentError::Model)): the error's text. `None` for a run
    /// paused at approvals or external calls.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    /// The run as JSON text to store, in the versioned form [`from_json`](Self::from_json)
    /// reads (the same as `serde_json::to_string`).
    pub fn to_json(&self) -> String {
        crate::storage::stored::encode(self)
    }

    /// Read a paused run stored as JSON. Fails with [`ResumeError::UnsupportedVersion`] when
    /// it was written in another format version (checked before anything else is read), and
    /// with [`ResumeError::Malformed`] when the text is not a paused run.
    pub fn from_json(text: &str) -> Result<PausedRun, ResumeError> {
        use crate::storage::stored::{self, StoredError};
        stored::decode::<PausedRun>(text).map_err(|e| match e {
            StoredError::Version { found, .. } => ResumeError::UnsupportedVersion {
                found,
                supported: Self::FORMAT_VERSION,
            },
            StoredError::Malformed { reason, .. } => ResumeError::Malformed(reason),
        })
    }

    /// The run's id ([`AgentInfo::run_id`](crate::AgentInfo::run_id)), kept when it resumes.
    pub fn run_id(&self) -> &str {
        &self.turns.run_id
    }

    /// The model turn that paused (1-based).
    pub fn iteration(&self) -> usize {
        self.turns.next.saturating_sub(1)
    }

    /// Tokens of the model responses of this run up to the pause (across earlier pauses too).
    pub fn usage(&self) -> Usage {
        self.turns.usage
    }

    /// The conversation up to the pause, without the system prompt: what the agent's memory
    /// was. The paused turn's calls are in its last assistant message.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The calls waiting for a decision, in call order.
    pub fn pending_approvals(&self) -> &[PendingApproval] {
        &self.approvals
    }

    /// The calls whose tools asked a question, waiting for the answer, in call order.
    pub fn pending_questions(&self) -> &[PendingQuestion] {
        &self.questions
    }

    /// Give the answer to the question the call `call_id` asked: [`Answer::accept`] (the
    /// form's content), [`Answer::decline`] or [`Answer::cancel`] for a form, a model's
    /// completion ([`Answer::sampled`]) for a sampling request. A later answer for the same
    /// call replaces an earlier one. Fails with [`ResumeError::UnknownQuestion`] when no call of
    /// that id waits for an answer, and with [`ResumeError::WrongAnswer`] when the answer is of
    /// the other kind or an accepted form's content is not a JSON object.
    pub fn answer(&mut self, call_id: &str, answer: Answer) -> Result<(), ResumeError> {
        let asking = ids(self.questions.iter().map(|q| &q.call));
        let Some(pending) = self.questions.iter_mut().find(|q| &*q.call.id == call_id) else {
            return Err(ResumeError::UnknownQuestion {
                call_id: call_id.to_string(),
                asking,
            });
        };
        let wrong = |why: String| {
            Err(ResumeError::WrongAnswer {
                call_id: call_id.to_string(),
                why,
            })
        };
        if !pending.question.fits(&answer) {
            return wrong(format!(
                "the call asked a {} question",
                pending.question.capability()
            ));
        }
        if let Answer::Elicited(crate::context::Elicited::Accepted(content)) = &answer
            && !content.is_object()
        {
            return wrong(format!(
                "an accepted form's content is a JSON object of its fields, not {content}"
            ));
        }
        pending.answer = Some(answer);
        Ok(())
    }

    /// The calls of external tools the run waits for results of, in call order.
    pub fn pending_external_calls(&self) -> &[ToolCall] {
        &self.external_calls
    }

    /// Approve the call `call_id` as it is. See [`decide`](Self::decide).
    pub fn approve(&mut self, call_id: &str) -> Result<(), ResumeError> {
        self.decide(call_id, ApprovalDecision::Approve)
    }

    /// Refuse the call `call_id`; the model gets `reason` as the call's result.
    /// See [`decide`](Self::decide).
    pub fn deny(&mut self, call_id: &str, reason: impl Into<String>) -> Result<(), ResumeError> {
        self.decide(call_id, ApprovalDecision::Deny(reason.into()))
    }

    /// Give the decision for the call `call_id`: approve it, deny it with a reason for the
    /// model, or run it with edited arguments ([`ApprovalDecision::Edit`], checked again when it
    /// runs). A later decision for the same call replaces an earlier one. Fails with
    /// [`ResumeError::UnknownDecision`] when no call of that id waits for a decision.
    pub fn decide(&mut self, call_id: &str, decision: ApprovalDecision) -> Result<(), ResumeError> {
        let waiting = ids(self.approvals.iter().map(|a| &a.call));
        let Some(approval) = self.approvals.iter_mut().find(|a| &*a.call.id == call_id) else {
            return Err(ResumeError::UnknownDecision {
                call_id: call_id.to_string(),
                waiting,
            });
        };
        approval.decision = Some(decision);
        Ok(())
    }

    /// Give the result of an external call: a tool message ([`Message::tool`],
    /// [`Message::tool_error`], [`Message::tool_result`]) with the id of the call it answers.
    /// A call left without a result gets an error result saying so when the run resumes. Fails
    /// when the message is not a tool message, answers no pending external call, or answers
    /// one that has a result already.
    pub fn add_result(&mut self, result: Message) -> Result<(), ResumeError> {
        let Message::Tool(mut result) = result else {
            return Err(ResumeError::NotAToolResult);
        };
        let id = result.call_id.clone();
        let Some(call) = self.external_calls.iter().find(|c| c.id == id) else {
            return Err(ResumeError::UnknownResult {
                call_id: id.to_string(),
                pending: ids(self.external_calls.iter()),
            });
        };
        if self.external_results.iter().any(|m| m.call_id == id) {
            return Err(ResumeError::DuplicateResult {
                call_id: id.to_string(),
            });
        }
        if result.name.is_empty() {
            result.name = call.name.clone();
        }
        self.external_results.push(result);
        Ok(())
    }

    /// Check that the state holds together: the version, the iteration, and that the waiting
    /// calls are unanswered calls of the last assistant message, each once. A state that
    /// passes cannot make the agent panic or answer a call twice.
    pub(super) fn check(&self) -> Result<(), ResumeError> {
        if self.version != Self::FORMAT_VERSION {
            return Err(ResumeError::UnsupportedVersion {
                found: u64::from(self.version),
                supported: Self::FORMAT_VERSION,
            });
        }
        let malformed = |why: String| Err(ResumeError::Malformed(why));
        if self.failure.is_some() {
            // A failed turn asked again: nothing waits, and it may have been the first turn.
            if !self.approvals.is_empty()
                || !self.questions.is_empty()
                || !self.external_calls.is_empty()
            {
                return malformed("a failed run has no calls waiting".into());
            }
        } else if self.turns.next < 2 {
            return malformed(format!(
                "next_iteration is {}; a paused run has made at least one model turn",
                self.turns.next
            ));
        }
        if self.turns.run_start >= self.messages.len() {
            return malformed(format!(
                "run_start {} is past the end of the {} messages",
                self.turns.run_start,
                self.messages.len()
            ));
        }
        if self.failure.is_some() {
            // The failed turn left nothing in the conversation: every call there is answered.
            let answered: HashSet<&str> = self
                .messages
                .iter()
                .filter_map(|m| Some(&*m.as_tool()?.call_id))
                .collect();
            let open = self
                .messages
                .iter()
                .flat_map(|m| m.tool_calls())
                .find(|c| !answered.contains(&*c.id));
            return match open {
                Some(call) => malformed(format!(
                    "the call `{}` has no result, but a failed run waits for none",
                    call.id
                )),
                None => Ok(()),
            };
        }
        if self.approvals.is_empty() && self.questions.is_empty() && self.external_calls.is_empty()
        {
            return malformed("no call is waiting: there is nothing to resume".into());
        }
        let Some(last) = self
            .messages
            .iter()
            .rposition(|m| !m.tool_calls().is_empty())
        else {
            return malformed("the conversation has no assistant message with tool calls".into());
        };
        // Calls of the turn without an answer yet, by id (a model may reuse an id in a turn:
        // then the first call waits and the others were answered with an error).
        let turn = self.messages[last].tool_calls();
        let mut unanswered: HashMap<&str, usize> = HashMap::new();
        for call in turn {
            *unanswered.entry(&*call.id).or_default() += 1;
        }
        for m in &self.messages[last + 1..] {
            if let Some(count) = m
                .as_tool()
                .and_then(|result| unanswered.get_mut(&*result.call_id))
            {
                *count = count.saturating_sub(1);
            }
        }
        let mut seen = HashSet::new();
        let waiting = self
            .approvals
            .iter()
            // A program's waiting call is answered through the model's call of the program.
            .map(|a| a.program.as_ref().map_or(&a.call, |p| &p.call))
            .chain(self.questions.iter().map(|q| &q.call))
            .chain(&self.external_calls);
        for call in waiting {
            if !turn.contains(call) {
                return malformed(format!(
                    "the waiting call `{}` is not a call of the last model turn",
                    call.id
                ));
            }
            if unanswered.get(&*call.id).copied().unwrap_or(0) == 0 {
                return malformed(format!(
                    "the waiting call `{}` has a result in the conversation already",
                    call.id
                ));
            }
            if !seen.insert(&*call.id) {
                return malformed(format!("the call `{}` waits twice", call.id));
            }
        }
        let mut results = HashSet::new();
        for m in &self.external_results {
            let id = &*m.call_id;
            if !self.external_calls.iter().any(|c| &*c.id == id) || !results.insert(id) {
                return malformed(format!(
                    "the external result for `{id}` answers no waiting external call, or answers one twice"
                ));
            }
        }
        Ok(())
    }

    /// The ids of waiting calls that have no decision or answer yet.
    pub(super) fn undecided(&self) -> Vec<String> {
        let approvals = self.approvals.iter().filter(|a| a.decision.is_none());
        let questions = self.questions.iter().filter(|q| q.answer.is_none());
        approvals
            .map(|a| &a.call)
            .chain(questions.map(|q| &q.call))
            .map(|c| c.id.to_string())
            .collect()
    }

    /// The answer of each external call, in call order: its result, or an error result saying
    /// none came.
    pub(super) fn external_answers(&mut self) -> Vec<Message> {
        let mut results = std::mem::take(&mut self.external_results);
        self.external_calls
            .iter()
            .map(
                |call| match results.iter().position(|m| m.call_id == call.id) {
                    Some(i) => results.swap_remove(i).into(),
                    None => Message::tool_error(call.id.clone(), call.name.clone(), NO_RESULT),
                },
            )
            .collect()
    }
}

fn ids<'a>(calls: impl Iterator<Item = &'a ToolCall>) -> Vec<String> {
    calls.map(|c| c.id.to_string()).collect()
}
