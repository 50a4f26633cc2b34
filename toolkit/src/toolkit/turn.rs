//! [`Turn`]: the one place a turn's calls are answered — an agent's turn, the approved calls of
//! a resumed run, a program's batch. It applies, in order: repeated call ids (the first call
//! with an id is answered, the others get an error), external (client-side) calls handed back,
//! calls of tools not offered refused (traced like every refusal), the [`Guardrail`]s on each
//! call, the loop guard (a repeat of the previous step's call answered from its result, see
//! [`AnsweredCall`]), calls waiting for approval held back, the rest run together through the
//! toolkit, a
//! [`RepairHook`] asked about each call refused for its tool or its arguments (a repaired call
//! runs through every rule again), and the guardrails on each result. Every call gets exactly
//! one answer, in call order.

use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;

use super::Toolkit;
use super::loop_guard::{self, AnsweredCall};
use crate::context::{Answer, Question, QuestionBook, ToolContext};
use crate::error::{ToolError, ToolErrorKind};
use crate::exec::batch;
use crate::tool::{Suspension, ToolCall, ToolDefinition, ToolOutput, ToolResult};

/// What a [`RepairHook`] is asked about: a call refused before its tool ran, because it names
/// no tool offered, or because its arguments do not fit.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RepairRequest {
    /// The call as the model made it.
    pub call: ToolCall,
    /// Why it was refused (`UnknownTool`, `Unavailable` or `InvalidArguments`).
    pub error: ToolError,
    /// The tools offered this turn (the toolkit view's tools when the turn offers no list).
    pub tools: Vec<ToolDefinition>,
}

/// Mends calls the toolkit would refuse (cf. the Vercel AI SDK's `experimental_repairToolCall`):
/// given the call and its error, return a fixed call — another tool name, other arguments — or
/// `None` to let the refusal stand. The fixed call keeps the original call's id and goes through
/// every rule again (offered tools, hidden parameters, schema, approval, guardrails); a repair
/// is tried once per call. Async closures work:
/// `|req: RepairRequest| async move { None }`.
pub trait RepairHook: Send + Sync + 'static {
    /// Mend one call, or let its refusal stand.
    fn repair(&self, request: RepairRequest) -> BoxFuture<'static, Option<ToolCall>>;
}

impl<F, Fut> RepairHook for F
where
    F: Fn(RepairRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Option<ToolCall>> + Send + 'static,
{
    fn repair(&self, request: RepairRequest) -> BoxFuture<'static, Option<ToolCall>> {
        Box::pin(self(request))
    }
}

/// What a [`Guardrail`] says of a call or of a result.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GuardrailDecision {
    /// Let it through.
    Allow,
    /// Of a call: do not run it, and answer it with this text. Of a result: the model sees this
    /// text instead.
    Replace(String),
    /// Stop the run: the agent ends with [`AgentError::Guardrail`](crate::agent::AgentError)
    /// carrying a [`GuardrailStop`]; every call of the turn is still answered.
    Stop(String),
}

/// A check on calls before they run and on their results after (cf. the OpenAI Agents SDK's
/// tool guardrails). Register it for every tool
/// ([`ToolkitBuilder::guardrail`](super::ToolkitBuilder::guardrail)) or for one
/// ([`ToolkitBuilder::tool_guardrail`](super::ToolkitBuilder::tool_guardrail)). Both checks
/// allow by default.
pub trait Guardrail: Send + Sync + 'static {
    /// Check a call before it runs (its arguments as the model sent them).
    fn check_call(&self, call: &ToolCall) -> GuardrailDecision {
        let _ = call;
        GuardrailDecision::Allow
    }

    /// Check a result before the model sees it.
    fn check_result(&self, result: &ToolResult) -> GuardrailDecision {
        let _ = result;
        GuardrailDecision::Allow
    }
}

/// A guardrail stopped the run: which call, at which check, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a guardrail stopped the run at {stage} of `{tool}` (call {call_id}): {reason}")]
#[non_exhaustive]
pub struct GuardrailStop {
    /// The tool the call named.
    pub tool: String,
    /// The call's id.
    pub call_id: Arc<str>,
    /// `"the call"` or `"the result"`.
    pub stage: &'static str,
    /// What the guardrail said.
    pub reason: String,
}

/// The guardrails of a toolkit: each for every tool (`None`) or for one.
pub(super) type Guardrails = Vec<(Option<String>, Arc<dyn Guardrail>)>;

/// One call's answer in a [`Turn`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum CallAnswer {
    /// Answered: run, refused, or replaced by a guardrail.
    Result(ToolResult),
    /// Held back: its tool requires approval and the turn holds such calls
    /// ([`Turn::holding_approvals`]). `tool` is the registered name.
    AwaitingApproval {
        /// The call.
        call: ToolCall,
        /// The tool it reaches.
        tool: Arc<str>,
    },
    /// A call of an external (client-side) tool, handed back unrun.
    External(ToolCall),
    /// A call whose tool asked a question nobody in the context could answer, in a turn that
    /// holds questions ([`Turn::holding_questions`]). Whatever the tool did after asking is
    /// dropped: made again in a turn [`answering`](Turn::answering) it with the earlier answers
    /// and this one's, the call runs from its start and gets its answers in the order it asks.
    Asking {
        /// The call.
        call: ToolCall,
        /// The tool it reaches (registered name).
        tool: Arc<str>,
        /// What the tool asked.
        question: Question,
        /// The answers the call had been given before this question, in the order it asked.
        answered: Vec<Answer>,
    },
    /// A call that suspended itself at a call of its own that waits for approval
    /// ([`ToolOutput::suspended`]); made again with a [`Resumption`] in its context, it goes on.
    Suspended {
        /// The call that suspended (a program's `run_code` call).
        call: ToolCall,
        /// Where it waits.
        suspension: Suspension,
    },
}

/// In the context of a turn's calls when the turn holds calls that need approval
/// ([`Turn::holding_approvals`]): a tool that makes calls of its own (a program) holds those too,
/// suspending itself ([`ToolOutput::suspended`]).
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct HoldsApprovals;

/// In the context of a call made again to resume its suspension: the state it suspended with
/// and the decision about the call it waited at.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Resumption {
    /// [`Suspension::state`], as the call left it.
    pub state: serde_json::Map<String, serde_json::Value>,
    /// The decision about [`Suspension::call`].
    pub decision: crate::exec::ApprovalDecision,
}

impl Resumption {
    /// Resume from `state` with `decision`.
    pub fn new(
        state: serde_json::Map<String, serde_json::Value>,
        decision: crate::exec::ApprovalDecision,
    ) -> Self {
        Resumption { state, decision }
    }
}

/// Where the turns nested in a turn's calls (a program's batches) report a guardrail stop, so
/// that it stops the outer run too.
#[derive(Default)]
struct StopSignal(std::sync::Mutex<Option<GuardrailStop>>);

/// What a [`Turn`] came to: one answer per call — first those of the calls with distinct ids,
/// in call order, then those of calls that repeated an id — and the guardrail stop, if one
/// stopped the run.
#[derive(Debug)]
#[non_exhaustive]
pub struct TurnOutcome {
    /// The answers.
    pub answers: Vec<CallAnswer>,
    /// Set when a guardrail stopped the run.
    pub stop: Option<GuardrailStop>,
}

/// The calls of one turn, to answer through a toolkit handle ([`Toolkit::turn`]).
#[must_use = "a turn answers nothing until `run`"]
pub struct Turn<'a> {
    toolkit: &'a Toolkit,
    offered: Option<Names>,
    external: Names,
    hold_approvals: bool,
    hold_questions: bool,
    answers: Vec<(Arc<str>, Vec<Answer>)>,
    searchable: bool,
    previous: Vec<AnsweredCall>,
}

impl Toolkit {
    /// The one place a turn's calls are answered (see [`Turn`]): an agent's turn, the approved
    /// calls of a resumed run and a program's batch all go through it, so the toolkit's
    /// [`RepairHook`] and [`Guardrail`]s apply on every path.
    pub fn turn(&self) -> Turn<'_> {
        Turn {
            toolkit: self,
            offered: None,
            external: Names::default(),
            hold_approvals: false,
            hold_questions: false,
            answers: Vec::new(),
            searchable: false,
            previous: Vec::new(),
        }
    }
}

impl Turn<'_> {
    crate::util::setters! {
        /// Only these tools may be called this turn (by registered name); calls of others are
        /// refused. Without this, every tool callable in the view may be.
        pub fn offering(names: impl IntoIterator<Item = impl Into<Arc<str>>>)
            => offered = Some(Names::new(names));

        /// Calls of these tools are handed back unrun ([`CallAnswer::External`]).
        pub fn external(names: impl IntoIterator<Item = impl Into<Arc<str>>>)
            => external = Names::new(names);

        /// Hold back the calls an approver would be asked about ([`CallAnswer::AwaitingApproval`])
        /// instead of asking.
        pub fn holding_approvals(hold: bool) => hold_approvals = hold;

        /// Hold the questions the calls' tools ask ([`Elicitor`](crate::context::Elicitor),
        /// [`Sampler`](crate::context::Sampler)) when no [`Caller`](crate::context::Caller) is
        /// in the context: such a call is answered with [`CallAnswer::Asking`]. Only this
        /// turn's calls: a program's calls (a turn nested in a call) are not held.
        pub fn holding_questions(hold: bool) => hold_questions = hold;

        /// The answers given to calls that asked before ([`CallAnswer::Asking`]), by call id,
        /// each in the order the call asks: made again here, such a call gets them instead of
        /// asking. Takes effect in a turn holding questions.
        pub fn answering(answers: impl IntoIterator<Item = (Arc<str>, Vec<Answer>)>)
            => answers = answers.into_iter().collect();

        /// Deferred tools can be found this turn (with `search_tools`): a call of one not found yet
        /// is refused with a hint to search first.
        pub fn searchable(searchable: bool) => searchable = searchable;

        /// The calls of the model's previous step, answered: with the loop guard on
        /// ([`ToolkitBuilder::loop_guard`](super::ToolkitBuilder::loop_guard)), a call here that
        /// repeats one of them is answered from its result without running. A turn given none
        /// (a program's batch, a resumed run's decided calls) guards nothing.
        pub fn after(previous: impl IntoIterator<Item = AnsweredCall>)
            => previous = previous.into_iter().collect();
    }

    /// The calls that will be answered here rather than held back or handed back (an agent
    /// reports them as started before they run): the first call of each id, not external, not
    /// waiting for approval; then the calls that repeat an id.
    pub fn answered_here<'c>(&self, calls: &'c [ToolCall], ctx: &ToolContext) -> Vec<&'c ToolCall> {
        let mut ids = Vec::with_capacity(calls.len());
        let (mut first, mut again) = (Vec::new(), Vec::new());
        for call in calls {
            if !first_use(&mut ids, &call.id) {
                again.push(call);
            } else if !self.is_external(call) && self.held(call, ctx).is_none() {
                first.push(call);
            }
        }
        first.extend(again);
        first
    }

    fn is_external(&self, call: &ToolCall) -> bool {
        self.external.contains(&call.name)
    }

    /// The answered call of the previous step that `call` repeats, with the loop guard on.
    fn repeat_of(&self, call: &ToolCall) -> Option<&AnsweredCall> {
        if !self.toolkit.guards_loops() {
            return None;
        }
        self.previous
            .iter()
            .find(|earlier| earlier.is_repeated_by(call))
    }

    fn held(&self, call: &ToolCall, ctx: &ToolContext) -> Option<Arc<str>> {
        if !self.hold_approvals || self.refusal(call).is_some() || self.repeat_of(call).is_some() {
            return None;
        }
        self.toolkit.approval_needed(call, ctx)
    }

    /// Why `call` may not be made this turn, if it may not.
    fn refusal(&self, call: &ToolCall) -> Option<ToolError> {
        let offered = self.offered.as_ref()?;
        if offered.contains(&call.name) {
            return None;
        }
        // A wire name of a dialect: the registered name behind it.
        let name = self.toolkit.canonical_name(&call.name);
        if offered.contains(&name) {
            return None;
        }
        let snapshot = self.toolkit.snapshot();
        let mut names: Vec<&str> = snapshot
            .iter()
            .map(|d| d.name())
            .filter(|n| offered.contains(n))
            .collect();
        names.extend(self.external.iter());
        let list = names.join(", ");
        let message = if call.name.trim().is_empty() {
            // A call written as text that could not be read.
            format!(
                "a tool call in your reply could not be read: it names no tool, or its JSON is \
                 broken. Write each call as {{\"name\": \"TOOL\", \"arguments\": {{...}}}} with \
                 valid JSON; available tools: {list}"
            )
        } else if self.searchable && snapshot.get_deferred(&name).is_some() {
            format!(
                "tool `{}` is not available yet: find it with `{}` first, then call it in your \
                 next step",
                call.name,
                crate::search::SEARCH_TOOL
            )
        } else {
            format!(
                "tool `{}` is not available in this step; available tools: {list}",
                call.name
            )
        };
        Some(ToolError::new(ToolErrorKind::Unavailable, message))
    }

    /// The guardrails that apply to calls of `tool`.
    fn guardrails(&self, tool: &str) -> impl Iterator<Item = &Arc<dyn Guardrail>> {
        let canonical = self.toolkit.canonical_name(tool);
        self.toolkit
            .0
            .inner
            .guardrails
            .iter()
            .filter(move |(only, _)| only.as_deref().is_none_or(|t| t == canonical))
            .map(|(_, g)| g)
    }

    fn check_call(&self, call: &ToolCall) -> GuardrailDecision {
        self.decide(&call.name, |g| g.check_call(call))
    }

    fn check_result(&self, result: &ToolResult) -> GuardrailDecision {
        self.decide(&result.name, |g| g.check_result(result))
    }

    /// The first decision other than `Allow` of the guardrails of `tool`, asked in order with
    /// `ask`; `Allow` when none has another.
    fn decide(
        &self,
        tool: &str,
        ask: impl Fn(&Arc<dyn Guardrail>) -> GuardrailDecision,
    ) -> GuardrailDecision {
        if self.toolkit.0.inner.guardrails.is_empty() {
            return GuardrailDecision::Allow;
        }
        self.guardrails(tool)
            .map(ask)
            .find(|d| *d != GuardrailDecision::Allow)
            .unwrap_or(GuardrailDecision::Allow)
    }

    /// Answer `calls` with `ctx` as every call's context.
    pub async fn run(mut self, calls: Vec<ToolCall>, ctx: &ToolContext) -> TurnOutcome {
        // A turn nested in one of an outer turn's calls reports its stop there as well.
        let outer = ctx.get::<StopSignal>();
        // Only a call given the calling view can make a turn of its own (a repaired call may
        // become one): a signal for the turns nested in this one's calls is needed only then.
        let nests = self.toolkit.0.inner.repair.is_some()
            || calls
                .iter()
                .any(|call| self.toolkit.gives_calling_view(&call.name));
        let signal = nests.then(|| Arc::new(StopSignal::default()));
        let mut inner = match &signal {
            Some(signal) => Cow::Owned(ctx.clone().with_shared(signal.clone())),
            None => Cow::Borrowed(ctx),
        };
        if self.hold_approvals {
            inner = Cow::Owned(inner.into_owned().with(HoldsApprovals));
        }
        // This turn's calls' questions, in a book of their own (a turn nested in one of an
        // outer turn's calls lists none of its calls in the outer book).
        let book = self.hold_questions.then(|| {
            let book = Arc::new(QuestionBook::new(std::mem::take(&mut self.answers)));
            for call in &calls {
                book.serve(&call.id);
            }
            book
        });
        if let Some(book) = &book {
            inner = Cow::Owned(inner.into_owned().with(book.source()));
        }
        let mut outcome = self.answer(calls, &inner, book.as_deref()).await;
        if let Some(book) = &book {
            book.close();
        }
        if let (None, Some(signal)) = (&outcome.stop, &signal) {
            outcome.stop = crate::util::lock(&signal.0).take();
        }
        if let (Some(outer), Some(stop)) = (outer, &outcome.stop) {
            crate::util::lock(&outer.0).get_or_insert_with(|| stop.clone());
        }
        outcome
    }

    async fn answer(
        self,
        calls: Vec<ToolCall>,
        ctx: &ToolContext,
        book: Option<&QuestionBook>,
    ) -> TurnOutcome {
        let mut ids = Vec::with_capacity(calls.len());
        let (calls, repeated): (Vec<ToolCall>, Vec<ToolCall>) =
            calls.into_iter().partition(|c| first_use(&mut ids, &c.id));
        // The calls as made, for those that suspend or ask (held approvals or questions only).
        let made: Vec<ToolCall> = if self.hold_approvals || book.is_some() {
            calls.clone()
        } else {
            Vec::new()
        };
        let mut stop: Option<GuardrailStop> = None;
        let mut answers: Vec<Option<CallAnswer>> = Vec::with_capacity(calls.len());
        // Calls to run, and their positions.
        let (mut positions, mut batch) = (Vec::with_capacity(calls.len()), Vec::new());
        // Calls refused before running, which a repair may mend: (position, call, error).
        let mut refused: Vec<(usize, ToolCall, ToolError)> = Vec::new();
        for call in calls {
            let at = answers.len();
            answers.push(None);
            if self.is_external(&call) {
                answers[at] = Some(CallAnswer::External(call));
                continue;
            }
            if let Some(error) = self.refusal(&call) {
                refused.push((at, call, error));
                continue;
            }
            match self.check_call(&call) {
                GuardrailDecision::Allow => {}
                GuardrailDecision::Replace(text) => {
                    let result = ToolResult::new(call.id, call.name, Ok(ToolOutput::text(text)), 0);
                    answers[at] = Some(CallAnswer::Result(result));
                    continue;
                }
                GuardrailDecision::Stop(reason) => {
                    stop.get_or_insert(GuardrailStop {
                        tool: call.name.clone(),
                        call_id: call.id.clone(),
                        stage: "the call",
                        reason,
                    });
                    positions.push(at);
                    batch.push(call);
                    continue;
                }
            }
            if let Some(earlier) = self.repeat_of(&call) {
                let repeatable = self.toolkit.repeatable(&call.name);
                let result = loop_guard::answer(call, earlier, repeatable);
                answers[at] = Some(CallAnswer::Result(result));
                continue;
            }
            if let Some(tool) = self.held(&call, ctx) {
                answers[at] = Some(CallAnswer::AwaitingApproval { call, tool });
                continue;
            }
            positions.push(at);
            batch.push(call);
        }
        if let Some(stop) = &stop {
            // Nothing runs once a guardrail stopped the run; each call is still answered.
            for (at, call) in positions.drain(..).zip(batch.drain(..)) {
                answers[at] = Some(CallAnswer::Result(stopped(call, stop)));
            }
        }
        // The calls as made, kept only for a repair hook to see those the toolkit refuses.
        let mendable = self.toolkit.0.inner.repair.is_some() && stop.is_none();
        let mut calls_made = if mendable { batch.clone() } else { Vec::new() }.into_iter();
        let results = self.toolkit.call_all(batch, ctx).await;
        for (at, result) in positions.into_iter().zip(results) {
            let call = calls_made.next();
            let refused_here = matches!(
                result.error().map(ToolError::kind),
                Some(
                    ToolErrorKind::UnknownTool
                        | ToolErrorKind::Unavailable
                        | ToolErrorKind::InvalidArguments
                )
            );
            if let (true, Some(call), Some(error)) = (refused_here, call, result.error()) {
                refused.push((at, call, error.clone()));
            }
            answers[at] = Some(CallAnswer::Result(result));
        }
        self.repair(refused, &mut answers, ctx, stop.is_some())
            .await;
        let mut answers: Vec<CallAnswer> = answers.into_iter().flatten().collect();
        for answer in &mut answers {
            if let (CallAnswer::Result(result), Some(book)) = (&*answer, book)
                && let Some((question, answered)) = book.take_open(&result.call_id)
            {
                let call = made_call(&made, result);
                let tool = self.toolkit.canonical_name(&call.name).into();
                *answer = CallAnswer::Asking {
                    call,
                    tool,
                    question,
                    answered,
                };
                continue;
            }
            if let CallAnswer::Result(result) = answer {
                let suspension = result
                    .outcome
                    .as_ref()
                    .ok()
                    .and_then(ToolOutput::suspension);
                match suspension {
                    Some(suspension) if self.hold_approvals => {
                        let call = made_call(&made, result);
                        *answer = CallAnswer::Suspended { call, suspension };
                    }
                    _ => self.guard_result(result, &mut stop),
                }
            }
        }
        answers.extend(
            repeated
                .into_iter()
                .map(|call| CallAnswer::Result(batch::duplicate(call))),
        );
        TurnOutcome { answers, stop }
    }

    /// Ask the repair hook about each refused call; run the mended ones (through every rule
    /// again, once); the refusal stands for the others.
    async fn repair(
        &self,
        refused: Vec<(usize, ToolCall, ToolError)>,
        answers: &mut [Option<CallAnswer>],
        ctx: &ToolContext,
        stopped: bool,
    ) {
        let hook = self.toolkit.0.inner.repair.clone();
        let mut mended: Vec<(usize, ToolCall, ToolCall, ToolError)> = Vec::new();
        for (at, call, error) in refused {
            let fixed = match (&hook, stopped) {
                (Some(hook), false) => {
                    let request = RepairRequest {
                        call: call.clone(),
                        error: error.clone(),
                        tools: self.offered_definitions(),
                    };
                    hook.repair(request).await
                }
                _ => None,
            };
            match fixed {
                Some(fixed) => mended.push((at, call, fixed, error)),
                None if answers[at].is_none() => {
                    let result = super::rejected(call.id, call.name, error);
                    answers[at] = Some(CallAnswer::Result(result));
                }
                None => {}
            }
        }
        if mended.is_empty() {
            return;
        }
        let mut batch = Vec::new();
        let mut positions = Vec::new();
        for (at, original, fixed, error) in mended {
            // The mended call answers the model's call: same id.
            let fixed = ToolCall {
                id: original.id.clone(),
                ..fixed
            };
            if let Some(again) = self.refusal(&fixed) {
                let result = super::rejected(original.id, original.name, again);
                answers[at] = Some(CallAnswer::Result(result));
                continue;
            }
            match self.check_call(&fixed) {
                GuardrailDecision::Allow => {}
                GuardrailDecision::Replace(text) => {
                    let result =
                        ToolResult::new(fixed.id, fixed.name, Ok(ToolOutput::text(text)), 0);
                    answers[at] = Some(CallAnswer::Result(result));
                    continue;
                }
                GuardrailDecision::Stop(_) => {
                    // A repair may not get past a guardrail: the original refusal stands.
                    let result = super::rejected(original.id, original.name, error);
                    answers[at] = Some(CallAnswer::Result(result));
                    continue;
                }
            }
            if let Some(tool) = self.held(&fixed, ctx) {
                answers[at] = Some(CallAnswer::AwaitingApproval { call: fixed, tool });
                continue;
            }
            positions.push(at);
            batch.push(fixed);
        }
        let results = self.toolkit.call_all(batch, ctx).await;
        for (at, result) in positions.into_iter().zip(results) {
            answers[at] = Some(CallAnswer::Result(result));
        }
    }

    /// The definitions a repair hook is shown.
    fn offered_definitions(&self) -> Vec<ToolDefinition> {
        let snapshot = self.toolkit.snapshot();
        snapshot
            .iter()
            .filter(|d| self.offered.as_ref().is_none_or(|o| o.contains(d.name())))
            .cloned()
            .collect()
    }

    /// Apply the result guardrails to `result`.
    fn guard_result(&self, result: &mut ToolResult, stop: &mut Option<GuardrailStop>) {
        match self.check_result(result) {
            GuardrailDecision::Allow => {}
            GuardrailDecision::Replace(text) => {
                result.outcome = Ok(ToolOutput::text(text));
            }
            GuardrailDecision::Stop(reason) => {
                stop.get_or_insert(GuardrailStop {
                    tool: result.name.clone(),
                    call_id: result.call_id.clone(),
                    stage: "the result",
                    reason: reason.clone(),
                });
                result.outcome = Err(ToolError::new(
                    ToolErrorKind::Denied,
                    format!("a guardrail withheld this result: {reason}"),
                ));
            }
        }
    }
}

/// The call as the model made it that `result` answers (held approvals or questions keep them).
fn made_call(made: &[ToolCall], result: &ToolResult) -> ToolCall {
    made.iter()
        .find(|c| c.id == result.call_id)
        .cloned()
        .unwrap_or_else(|| ToolCall::new(result.call_id.clone(), result.name.clone(), ""))
}

/// The answer to a call that did not run because a guardrail stopped the run.
fn stopped(call: ToolCall, stop: &GuardrailStop) -> ToolResult {
    let error = ToolError::new(
        ToolErrorKind::Denied,
        format!("not run: a guardrail stopped the run ({})", stop.reason),
    );
    super::rejected(call.id, call.name, error)
}

/// A turn's set of tool names, sorted: a turn offers a handful to a few hundred names and
/// checks each of its calls once, so a sorted list beats hashing every name every turn.
#[derive(Default)]
struct Names(Vec<Arc<str>>);

impl Names {
    fn new(names: impl IntoIterator<Item = impl Into<Arc<str>>>) -> Self {
        let mut names: Vec<Arc<str>> = names.into_iter().map(Into::into).collect();
        names.sort_unstable();
        names.dedup();
        Names(names)
    }

    fn contains(&self, name: &str) -> bool {
        self.0.binary_search_by(|n| (**n).cmp(name)).is_ok()
    }

    fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|n| &**n)
    }
}

/// Whether `id` is used here for the first time in the turn (`seen` keeps those used). A turn
/// has few calls: a scan beats hashing.
fn first_use(seen: &mut Vec<Arc<str>>, id: &Arc<str>) -> bool {
    if seen.contains(id) {
        return false;
    }
    seen.push(id.clone());
    true
}
