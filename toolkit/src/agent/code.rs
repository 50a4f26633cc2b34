//! Code mode in the agent: where the model's programs run ([`ProgramMode`]: the program tool of
//! the agent's view here, or the provider's own code execution), the program tool the model
//! sees instead of the tools, and the calls a program suspended at an approval.

use std::sync::Arc;

use super::ReActAgent;
use super::paused_run::{PausedProgram, PendingApproval};
use crate::tool::{Suspension, ToolCall};
use crate::toolkit::{CodeExecution, ProgramMode};

impl ReActAgent {
    /// Code mode, when programs run here (the program tool of the agent's view) for this
    /// agent's model.
    pub(super) fn local_programs(&self) -> Option<&Arc<dyn ProgramMode>> {
        let mode = self.programs.as_ref()?;
        let hosted = self.model.tool_features().hosted_code;
        match mode.execution() {
            CodeExecution::Local => Some(mode),
            CodeExecution::Auto if !hosted => Some(mode),
            _ => None,
        }
    }

    /// What local code mode adds to the system prompt.
    pub(super) fn program_instructions(&self) -> Option<&str> {
        self.local_programs()?.instructions()
    }

    /// Whether programs run here, so that a run paused in one can resume in this agent.
    pub(super) fn runs_programs(&self) -> bool {
        self.local_programs().is_some()
    }

    /// Whether the provider runs the model's programs (its calls of our tools arrive as
    /// ordinary calls).
    pub(super) fn hosted_code(&self) -> bool {
        self.programs.is_some() && self.local_programs().is_none()
    }
}

/// The waiting call of a program that suspended `call` (the model's call of the program tool):
/// it resumes with the program's state and the decision.
pub(super) fn suspended(call: ToolCall, suspension: Suspension) -> PendingApproval {
    let mut pending = PendingApproval::new(suspension.call, &suspension.tool);
    pending.program = Some(Box::new(PausedProgram {
        call,
        state: suspension.state,
    }));
    pending
}
