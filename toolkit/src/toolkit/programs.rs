//! [`ProgramMode`]: the seam an agent's code mode plugs into. The model is shown one tool — a
//! program runner whose description declares the view's tools — instead of the tools; the
//! runner is a tool of the agent's view like any other, so its calls go through the turn (user
//! layers, spans, timeouts, the repair hook and guardrails), and a program that waits at an
//! approval suspends its call ([`ToolOutput::suspended`](crate::tool::ToolOutput::suspended)).
//! Code mode's [`CodeMode`](crate::code::CodeMode) (feature `code`) implements it.

use std::sync::Arc;

use super::ViewTool;

/// Where an agent's model runs its programs ([`ProgramMode::execution`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum CodeExecution {
    /// On the provider's side where the model has it
    /// ([`ToolFeatures::hosted_code`](crate::model::ToolFeatures)), here elsewhere.
    #[default]
    Auto,
    /// Always here, through the program tool.
    Local,
    /// Always on the provider's side (building the agent fails for a model without it).
    Hosted,
}

/// Programs as an agent's way to call its tools (code mode).
pub trait ProgramMode: Send + Sync + 'static {
    /// The tool that runs programs, added to the agent's view when programs run here. It
    /// offers itself each turn with a definition declaring the view's tools
    /// ([`ViewTool::offer`]); the model is shown it (and the view's other tools) instead of the
    /// toolkit's tools.
    fn tool(&self) -> Arc<dyn ViewTool>;

    /// What an agent running programs here adds to its system prompt.
    fn instructions(&self) -> Option<&str>;

    /// Where programs run.
    fn execution(&self) -> CodeExecution;
}
