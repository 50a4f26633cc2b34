//! Continuing a [`PausedRun`]: [`ReActAgent::resume`] checks the state against the agent, then
//! answers each waiting call once — denied calls with the denial, approved (or edited) calls by
//! running them, external calls with their results — and goes on with the run's next turn.

use std::collections::HashSet;
use std::sync::Arc;

use super::ReActAgent;
use super::events::AgentError;
use super::external::RunOutcome;
use super::paused_run::{PausedRun, PendingQuestion, Waiting};
use super::resume_error::ResumeError;
use crate::exec::{ApprovalDecision, Decided};
use crate::model::Message;
use crate::tool::{ToolCall, ToolResult};
use crate::toolkit::{CallAnswer, Resumption};

impl ReActAgent {
    /// Continue a paused run — one this agent handed back, or one stored by another agent,
    /// in this process or another, and read back ([`PausedRun::from_json`]).
    ///
    /// The run's conversation replaces this agent's memory (and any run waiting in it), and
    /// its equipped managed groups are switched as they were. Then each waiting call gets
    /// exactly one result: a denied call the denial (the model sees the reason), an approved call
    /// its result after it runs through the toolkit (an edited one with the new arguments,
    /// checked again), a call whose tool asked its result after it runs again with the answers
    /// given ([`PausedRun::answer`]; a tool that asks again pauses the run again), an external
    /// call the result given with
    /// [`PausedRun::add_result`] or an error result saying none came. The results of the
    /// paused turn's other calls are in the conversation already and nothing runs them again.
    /// Then the run goes on with its next turn, with the same run id, iteration count and
    /// argument-error counts, up to this agent's iteration limit.
    ///
    /// The model, the toolkit and the agent's settings are this agent's: build it like the one
    /// that paused (see [`PausedRun`] for what is carried and what is not).
    ///
    /// Fails with [`AgentError::Resume`], before anything runs and with the agent left as it was,
    /// when the state is of another format version or malformed, a waiting call has no decision
    /// ([`ResumeError::MissingDecisions`]), or the state does not fit this agent
    /// ([`ResumeError::DoesNotFit`]). Once it runs, it ends like any run: with the answer,
    /// another pause, or an [`AgentError`].
    pub async fn resume(&mut self, run: PausedRun) -> Result<RunOutcome, AgentError> {
        run.check()?;
        let undecided = run.undecided();
        if !undecided.is_empty() {
            return Err(ResumeError::MissingDecisions {
                call_ids: undecided,
            }
            .into());
        }
        self.check_fit(&run)?;
        let mut run = run;
        for (group, on) in std::mem::take(&mut run.equipped_groups) {
            // Checked by `check_fit`: every group is one this agent manages.
            self.toolkit
                .set_group_active(&group, on)
                .map_err(|e| ResumeError::DoesNotFit(e.to_string()))?;
        }
        self.memory = std::mem::take(&mut run.messages);
        self.suspended = None;
        self.run_context = crate::context::ToolContext::new();
        self.continue_run(run).await
    }

    /// Whether `run` can resume in this agent: its managed groups are this agent's, its
    /// external tools do not clash with this agent's tools, each call that asked reaches a tool
    /// of this toolkit, and each call approved to run reaches a tool of this toolkit that still
    /// requires approval (else the decision would not be what runs it). Denied calls never run, so their tools need not exist any more.
    fn check_fit(&self, run: &PausedRun) -> Result<(), ResumeError> {
        let misfit = |why: String| Err(ResumeError::DoesNotFit(why));
        for group in run.equipped_groups.keys() {
            if !self.managed_groups.iter().any(|g| &g.name == group) {
                return misfit(format!(
                    "the run had the managed group `{group}`, which this agent does not manage; add it with .agent_managed_groups"
                ));
            }
        }
        if let Err(e) = self.check_external(&run.external_tools) {
            return misfit(e.to_string());
        }
        for question in &run.questions {
            if self
                .toolkit
                .requires_approval(&question.call().name)
                .is_none()
            {
                return misfit(format!(
                    "call `{}` asked a question in tool `{}`, which this agent's toolkit does not have",
                    question.call().id,
                    question.tool()
                ));
            }
        }
        for approval in &run.approvals {
            if approval.program.is_some() && !self.runs_programs() {
                return misfit(format!(
                    "call `{}` waits in a program (code mode), and this agent runs no programs; give it .code_mode(...)",
                    approval.call().id
                ));
            }
            if matches!(approval.decision(), Some(ApprovalDecision::Deny(_))) {
                continue;
            }
            let call = approval.call();
            match self.toolkit.requires_approval(&call.name) {
                None => {
                    return misfit(format!(
                        "call `{}` was approved for tool `{}`, which this agent's toolkit does not have",
                        call.id,
                        approval.tool()
                    ));
                }
                Some(false) => {
                    return misfit(format!(
                        "call `{}` was approved for tool `{}`, which no longer requires approval in this agent's toolkit",
                        call.id,
                        approval.tool()
                    ));
                }
                Some(true) => {}
            }
        }
        Ok(())
    }

    /// Answer the waiting calls of `run` (decided, checked) and continue it. The agent's memory
    /// is the run's conversation.
    pub(super) async fn continue_run(
        &mut self,
        mut run: PausedRun,
    ) -> Result<RunOutcome, AgentError> {
        // The resumed run's span covers the waiting calls answered first.
        let span = self.run_span(&mut run.turns);
        let outcome =
            tracing::Instrument::instrument(self.continue_in_span(run), span.clone()).await;
        super::run::record_run_error(&span, &outcome);
        outcome
    }

    async fn continue_in_span(&mut self, mut run: PausedRun) -> Result<RunOutcome, AgentError> {
        let iteration = run.iteration();
        let ctx = self.step_context(&self.base_context(), &run.turns, iteration);
        let mut answers: Vec<Option<ToolResult>> = Vec::with_capacity(run.approvals.len());
        let mut batch = Vec::new();
        let mut positions = Vec::new();
        // A program's call that waited: the program replays to it and goes on, to its end or
        // to another call that waits (then the run pauses again).
        let mut still_waiting = Waiting::default();
        let mut stop = None;
        for approval in std::mem::take(&mut run.approvals) {
            if let Some(program) = approval.program.clone() {
                // The model's call of the program tool, made again with the program's state and
                // the decision: the program replays to its waiting call and goes on — to its end,
                // or to another call that waits.
                let decision = approval
                    .decision()
                    .cloned()
                    .unwrap_or_else(|| ApprovalDecision::Deny("no decision was given".into()));
                let ctx = ctx
                    .clone()
                    .with(Resumption::new(program.state.clone(), decision));
                let turn = self
                    .toolkit
                    .turn()
                    .holding_approvals(true)
                    .run(vec![program.call.clone()], &ctx)
                    .await;
                stop = stop.or(turn.stop);
                for answer in turn.answers {
                    match answer {
                        CallAnswer::Result(result) => answers.push(Some(result)),
                        CallAnswer::Suspended { call, suspension } => still_waiting
                            .approvals
                            .push(super::code::suspended(call, suspension)),
                        CallAnswer::AwaitingApproval { .. }
                        | CallAnswer::External(_)
                        | CallAnswer::Asking { .. } => {}
                    }
                }
                continue;
            }
            let call = approval.call().clone();
            let arguments = match approval.decision() {
                Some(ApprovalDecision::Approve) => call.arguments.clone(),
                Some(ApprovalDecision::Edit(arguments)) => arguments.clone(),
                Some(ApprovalDecision::Deny(reason)) => {
                    let error = crate::exec::denied(approval.tool(), reason);
                    answers.push(Some(ToolResult::new(call.id, call.name, Err(error), 0)));
                    continue;
                }
                // Checked before: every waiting call has a decision.
                None => {
                    let error = crate::exec::denied(approval.tool(), "no decision was given");
                    answers.push(Some(ToolResult::new(call.id, call.name, Err(error), 0)));
                    continue;
                }
            };
            positions.push(answers.len());
            answers.push(None);
            batch.push(ToolCall { arguments, ..call });
        }
        // A call whose tool asked runs again from its start with its answers (it passed the
        // approval layer before it asked).
        let mut given = Vec::new();
        for question in std::mem::take(&mut run.questions) {
            given.push((question.call().id.clone(), question.answers()));
            positions.push(answers.len());
            answers.push(None);
            batch.push(question.call().clone());
        }
        // The calls were decided already: the approval layer asks this hook, which approves
        // exactly them (an edit is in the arguments, which the layer checks before asking).
        let approved: HashSet<Arc<str>> = batch.iter().map(|c| c.id.clone()).collect();
        let toolkit = self
            .toolkit
            .with_approver(Some(Arc::new(Decided::new(approved))));
        // One turn of the toolkit, as in a run: its repair hook and guardrails apply, and a
        // tool that asks again pauses the run again.
        let turn = toolkit
            .turn()
            .holding_questions(true)
            .answering(given)
            .run(batch, &ctx)
            .await;
        if stop.is_none() {
            stop = turn.stop;
        }
        for (i, answer) in positions.into_iter().zip(turn.answers) {
            // Nothing is held back or handed back: the turn runs every decided call, and holds
            // only the questions of those that ask again.
            match answer {
                CallAnswer::Result(result) => answers[i] = Some(result),
                CallAnswer::Asking {
                    call,
                    tool,
                    question,
                    answered,
                } => still_waiting
                    .questions
                    .push(PendingQuestion::new(call, &tool, question, answered)),
                CallAnswer::AwaitingApproval { .. }
                | CallAnswer::External(_)
                | CallAnswer::Suspended { .. } => {}
            }
        }
        let results: Vec<ToolResult> = answers.into_iter().flatten().collect();

        let external: Vec<Message> = run.external_answers();
        let mut turns = run.turns;
        let mut direct = run.direct_answer.take();
        let failure = self.absorb(&results, &mut turns, &mut direct, &None).await;
        self.memory.extend(external);
        if let Some(error) = stop.map(AgentError::Guardrail).or(failure) {
            return self.fail(error, &None).await;
        }
        if !still_waiting.is_empty() {
            let held = super::paused_run::PausedRun::held(
                turns,
                still_waiting,
                Vec::new(),
                run.external_tools.clone(),
                direct,
            );
            self.suspended = Some(held);
            return Ok(match self.paused_run() {
                Some(paused) => RunOutcome::Paused(Box::new(paused)),
                None => RunOutcome::ToolCalls(Vec::new()),
            });
        }
        if let Some(answer) = direct {
            return Ok(self.answer_directly(answer, &None).await);
        }
        self.turns_in_span(turns, &run.external_tools, None).await
    }
}
