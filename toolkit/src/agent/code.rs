//! Code mode in the agent (feature `code`): where the model's programs run (the sandbox here,
//! or the provider's own code execution), the [`CODE_TOOL`] the model sees instead of the tools,
//! and its programs run through the turn's toolkit — paused at an approval like any call, and
//! replayed from their journal when the run resumes.

use serde_json::Value;

use super::ReActAgent;
use super::events::Events;
use super::paused_run::{PausedProgram, PendingApproval};
use crate::code::{CODE_TOOL, CodeExecution, CodeMode, Journal, ProgramEnd, Run};
use crate::context::ToolContext;
use crate::error::{ToolError, ToolErrorKind};
use crate::exec::ApprovalDecision;
use crate::tool::{ToolCall, ToolResult};
use crate::toolkit::Toolkit;

/// A program's end as the turn takes it: a result, or a call to hold for approval.
pub(super) enum ProgramAnswer {
    Result(ToolResult),
    Waiting(PendingApproval),
    /// A guardrail stopped the run at one of the program's calls: its result, and the stop.
    Stopped(ToolResult, crate::toolkit::GuardrailStop),
}

impl ReActAgent {
    /// Code mode, when programs run here (in the sandbox) for this agent's model.
    pub(super) fn local_code(&self) -> Option<&CodeMode> {
        let mode = self.code_mode.as_ref()?;
        let hosted = self.model.tool_features().hosted_code;
        match mode.execution {
            CodeExecution::Local => Some(mode),
            CodeExecution::Auto if !hosted => Some(mode),
            _ => None,
        }
    }

    /// The code tool the model sees this turn instead of the tools, in local code mode.
    pub(super) fn program_tool(
        &self,
        snapshot: &crate::toolkit::ToolSnapshot,
    ) -> Option<crate::tool::ToolDefinition> {
        self.local_code()
            .map(|mode| mode.definition_in(&self.toolkit, snapshot))
    }

    /// What local code mode adds to the system prompt.
    pub(super) fn program_instructions(&self) -> Option<&str> {
        self.local_code()?.instructions.as_deref()
    }

    /// Whether programs run here, so that a run paused in one can resume in this agent.
    pub(super) fn runs_programs(&self) -> bool {
        self.local_code().is_some()
    }

    /// Whether the provider runs the model's programs (its calls of our tools arrive as
    /// ordinary calls).
    pub(super) fn hosted_code(&self) -> bool {
        self.code_mode.is_some() && self.local_code().is_none()
    }

    /// Run the program of the model's `call` to [`CODE_TOOL`] through `toolkit`.
    pub(super) async fn run_program(
        &self,
        mode: &CodeMode,
        call: &ToolCall,
        toolkit: &Toolkit,
        ctx: &ToolContext,
        iteration: usize,
        events: &Events,
    ) -> ProgramAnswer {
        let failed = |error| {
            ProgramAnswer::Result(ToolResult::new(
                call.id.clone(),
                call.name.clone(),
                Err(error),
                0,
            ))
        };
        let code = match program_code(&call.arguments) {
            Ok(code) => code,
            Err(error) => return failed(error),
        };
        // One key per run, turn and call: a model may use one call id in every turn.
        let run_id = ctx
            .get::<super::AgentInfo>()
            .map(|info| info.run_id.to_string())
            .unwrap_or_default();
        let key = format!("{run_id}/{iteration}/{}", call.id);
        let journal = match mode.load(&key, &code).await {
            Ok(journal) => journal,
            Err(error) => return failed(error),
        };
        self.drive_program(mode, call, key, journal, toolkit, ctx, events)
            .await
    }

    /// Run (or replay) a program from `journal`.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn drive_program(
        &self,
        mode: &CodeMode,
        call: &ToolCall,
        key: String,
        journal: Journal,
        toolkit: &Toolkit,
        ctx: &ToolContext,
        events: &Events,
    ) -> ProgramAnswer {
        let run = Run {
            mode,
            toolkit,
            ctx,
            id: &key,
            call_id: &call.id,
            tool: CODE_TOOL,
            pause_at_approvals: self.pause_at_approvals,
        };
        let end = self.with_progress(ctx, events, |ctx| async move {
            Run { ctx: &ctx, ..run }.run(journal).await
        });
        match end.await {
            ProgramEnd::Finished(result, _) => ProgramAnswer::Result(result),
            ProgramEnd::Stopped(result, stop) => ProgramAnswer::Stopped(result, stop),
            ProgramEnd::Paused {
                call: waiting,
                tool,
                seq,
                journal,
            } => {
                let mut pending = PendingApproval::new(waiting, &tool);
                pending.program = Some(Box::new(PausedProgram {
                    call: call.clone(),
                    key,
                    seq,
                    journal: serde_json::to_value(&journal).unwrap_or(Value::Null),
                }));
                ProgramAnswer::Waiting(pending)
            }
        }
    }

    /// Answer a program's call that waited for `decision`: the program replays to it and goes
    /// on (to its end, or to its next call that waits).
    pub(super) async fn resume_program(
        &self,
        program: PausedProgram,
        decision: ApprovalDecision,
        ctx: &ToolContext,
    ) -> ProgramAnswer {
        let fail = |message: String| {
            ProgramAnswer::Result(ToolResult::new(
                program.call.id.clone(),
                program.call.name.clone(),
                Err(ToolError::new(ToolErrorKind::Execution, message)),
                0,
            ))
        };
        let Some(mode) = self.local_code() else {
            return fail("the run paused in a program, and this agent runs no programs (give it .code_mode(...))".into());
        };
        let mut journal: Journal = match serde_json::from_value(program.journal.clone()) {
            Ok(journal) => journal,
            Err(e) => return fail(format!("the paused program's journal is unreadable: {e}")),
        };
        journal.decide(program.seq, decision);
        let toolkit = self.toolkit.clone();
        self.drive_program(
            mode,
            &program.call,
            program.key.clone(),
            journal,
            &toolkit,
            ctx,
            &None,
        )
        .await
    }
}
/// The `code` argument of a [`CODE_TOOL`] call.
fn program_code(arguments: &str) -> Result<String, ToolError> {
    let bad = |why: &str| {
        ToolError::new(
            ToolErrorKind::InvalidArguments,
            format!("`{CODE_TOOL}` takes {{\"code\": \"<JavaScript>\"}}: {why}"),
        )
    };
    let value: Value = serde_json::from_str(arguments)
        .map_err(|e| bad(&format!("the arguments are not JSON ({e})")))?;
    match value.get("code") {
        Some(Value::String(code)) if !code.trim().is_empty() => Ok(code.clone()),
        Some(Value::String(_)) => Err(bad("the program is empty")),
        Some(_) => Err(bad("`code` must be a string")),
        None => Err(bad("`code` is missing")),
    }
}
