//! [`AgentInfo`]: the agent reference a tool can take.

use std::sync::Arc;

use super::{ContextReads, ContextRejection, FromToolContext, ToolContext};

/// Which agent is running the call — the agent reference of a tool (AgentScope's
/// `getAgentName(Agent agent)`): its name and id, the run, and the step.
///
/// A [`ReActAgent`](crate::ReActAgent) puts one into its context values for every step, so any
/// tool it runs can take `#[ctx] agent: AgentInfo`. A call made outside an agent
/// ([`Toolkit::call`](crate::Toolkit::call)) has none and fails with a
/// [`MissingContext`](crate::error::ToolErrorKind::MissingContext) error; a tool that may run either
/// way takes `#[ctx] agent: Option<AgentInfo>`. Like any context value it follows the
/// precedence of the levels: one put in the call context wins over the agent's.
///
/// ```
/// use agent_toolkit::prelude::*;
///
/// /// Say who is asking.
/// #[tool]
/// fn whoami(#[ctx] agent: AgentInfo) -> String {
///     format!("{} (step {} of run {})", agent.name, agent.iteration, agent.run_id)
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AgentInfo {
    /// The agent's name ([`ReActAgentBuilder::name`](crate::agent::ReActAgentBuilder::name); `"agent"`
    /// by default). Several agents may share a name.
    pub name: Arc<str>,
    /// The agent's id, unique per agent instance ([`ReActAgent::id`](crate::ReActAgent::id)).
    pub id: Arc<str>,
    /// The run's id, unique per `run`, `run_stream` or `run_with_external_tools` call; a run
    /// continued with `resume_with_results` or `resume` (in any agent or process) keeps its id.
    pub run_id: Arc<str>,
    /// The model turn of the run whose calls are running (1-based).
    pub iteration: usize,
}

impl AgentInfo {
    /// An agent reference made by hand: to test a tool that takes `AgentInfo` by putting one
    /// in the call's context (`ToolContext::new().with(AgentInfo::new(..))`).
    pub fn new(
        name: impl Into<Arc<str>>,
        id: impl Into<Arc<str>>,
        run_id: impl Into<Arc<str>>,
        iteration: usize,
    ) -> Self {
        AgentInfo {
            name: name.into(),
            id: id.into(),
            run_id: run_id.into(),
            iteration,
        }
    }
}

impl FromToolContext for AgentInfo {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ContextRejection> {
        ctx.get::<AgentInfo>()
            .map(|info| (*info).clone())
            .ok_or_else(|| ContextRejection::new(
                "AgentInfo",
                "AgentInfo is supplied only to tools run by a ReActAgent, and this call was made outside one (e.g. with Toolkit::call); take `Option<AgentInfo>` in a tool that may run either way",
            ))
    }

    fn context_reads() -> ContextReads {
        ContextReads::of::<AgentInfo>()
    }
}
