//! [`ReActAgent`]: a model and a toolkit in a loop — the model calls tools (several at once
//! when it asks for several), sees their results, and answers.
//!
//! | Module | Owns |
//! |---|---|
//! | `mod.rs` | [`ReActAgent`] and [`ReActAgentBuilder`]: what an agent is made of |
//! | `run` | the loop: [`run`](ReActAgent::run), [`run_stream`](ReActAgent::run_stream), one model request per turn, a turn's calls, approvals asked through the stream |
//! | `events` | what a run reports: [`AgentEvent`], [`ApprovalResponder`], [`AgentError`] |
//! | `external` | tools that run elsewhere: [`RunOutcome`], stopping at their calls and resuming with their results |
//! | `paused_run` | [`PausedRun`], [`PendingApproval`] and [`PendingQuestion`]: a run stopped at approvals, questions or external calls, as a value to store |
//! | `resume` | continuing a [`PausedRun`] in any agent built like the one that paused it: [`resume`](ReActAgent::resume) |
//! | `resume_error` | [`ResumeError`]: a state that cannot be read, decided or resumed |
//! | `search` | deferred tools: [`ToolSearch`] (the `search_tools` meta tool or the provider's own search), and the tool-list changes told to providers that keep their prompt cache |
//!
//! The meta tools — `search_tools` ([`SearchTools`](crate::toolkit::SearchTools)) and
//! `reset_equipped_tools` ([`EquipGroups`](crate::toolkit::EquipGroups)) for the groups the agent
//! manages — are tools of the agent's view ([`Toolkit::view_with_tools`]): their calls run
//! through the execution stack like every other call.
//!
//! Each turn the agent takes a [`ToolSnapshot`](crate::toolkit::ToolSnapshot) of its toolkit
//! view: the tools shown to the model are exactly the tools it may call that turn, whatever is
//! toggled meanwhile. Calls run through the toolkit's engine (timeouts, retries, approval,
//! tracing). Conversation memory survives across [`run`](ReActAgent::run)s.
//!
//! Context values reach the agent's tools from three levels: the toolkit's, the agent's
//! ([`ReActAgentBuilder::context`], plus the [`AgentInfo`] of each step) and the call's — in a
//! run, the values given to [`run_with_context`](ReActAgent::run_with_context); a value at a
//! nearer level shadows one of the same type further out (call, then agent, then toolkit).
//!
//! Tools that run elsewhere (a client's own tools, sent over A2A) can be offered for a run with
//! [`run_with_external_tools`](ReActAgent::run_with_external_tools): the run stops at their
//! calls and continues with [`resume_with_results`](ReActAgent::resume_with_results).
//!
//! An agent built with [`pause_at_approvals`](ReActAgentBuilder::pause_at_approvals) asks no
//! approver: a turn with calls of `requires_approval` tools runs its other calls, then pauses
//! and hands back a [`PausedRun`] — plain data to store (as JSON, in a file or a database) and
//! resume hours later, in another process, with [`resume`](ReActAgent::resume) once the
//! decisions are in. A tool of such an agent that asks a question
//! ([`Elicitor`](crate::context::Elicitor), [`Sampler`](crate::context::Sampler)) with no
//! [`Caller`](crate::context::Caller) in its context pauses the run the same way: the question
//! is in [`PausedRun::pending_questions`], the application answers it
//! ([`PausedRun::answer`]), and on resume the call runs again with the answer. Runs stopped at
//! external calls can be stored the same way ([`paused_run`](ReActAgent::paused_run)).

mod code;
mod events;
mod external;
mod paused_run;
mod resume;
mod resume_error;
mod run;
mod search;

pub use crate::context::AgentInfo;
pub use events::{AgentError, AgentEvent, ApprovalResponder};
pub use external::RunOutcome;
pub use paused_run::{PausedRun, PendingApproval, PendingQuestion};
pub use resume_error::ResumeError;
pub use search::ToolSearch;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::background::JobId;
use crate::context::{Level, ToolContext};
use crate::exec::ApprovalHook;
use crate::model::{ChatModel, GenerationOptions, Message, ToolChoice};
use crate::tool::ToolCall;
use crate::toolkit::{CodeExecution, GroupInfo, ProgramMode, Toolkit};

/// A ReAct agent. Build one with [`ReActAgent::builder`].
///
/// An agent has a name (given to the builder) and an id made when it is built; tools it runs
/// receive both, with the run and the step, as [`AgentInfo`].
pub struct ReActAgent {
    name: Arc<str>,
    id: Arc<str>,
    model: Arc<dyn ChatModel>,
    toolkit: Toolkit,
    /// How it asks the model and runs the turns.
    settings: Settings,
    context: ToolContext,
    /// Call-level context of the run in progress ([`run_with_context`](Self::run_with_context));
    /// empty otherwise.
    run_context: ToolContext,
    managed_groups: Vec<GroupInfo>,
    memory: Vec<Message>,
    /// Background jobs this agent started and has not reported yet, oldest first. Tracked by
    /// job id: the model may have used one call id for several of them.
    pending_background: Vec<JobId>,
    /// Background calls reported finished: by call id, the call and its result's text (`None`
    /// for a job that failed). The loop guard answers a repeat of such a call with its result,
    /// not with the "running in the background" it first got; a failed one's repeat runs.
    finished_background: HashMap<Arc<str>, (ToolCall, Option<String>)>,
    /// A run stopped at calls that wait for approval or for external results. Its
    /// `messages` stay empty: the memory is the conversation.
    suspended: Option<PausedRun>,
    /// What searches found and what a provider that keeps its cache was told.
    found: search::Found,
    /// Code mode: the model writes programs that call the tools.
    programs: Option<Arc<dyn ProgramMode>>,
}

/// An agent's settings: what each model request carries and how a run goes.
struct Settings {
    system_prompt: Option<String>,
    max_iterations: usize,
    tool_choice: ToolChoice,
    parallel_tool_calls: bool,
    options: GenerationOptions,
    argument_budget: u32,
    return_directly: HashSet<String>,
    /// Pause at calls that need approval instead of asking an approver.
    pause_at_approvals: bool,
    /// How the model finds deferred tools.
    tool_search: ToolSearch,
}

impl std::fmt::Debug for ReActAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReActAgent")
            .field("name", &self.name)
            .field("id", &self.id)
            .field("model", &self.model.name())
            .field("max_iterations", &self.settings.max_iterations)
            .field("memory", &self.memory.len())
            .finish_non_exhaustive()
    }
}

impl ReActAgent {
    /// Start building an agent around `model`.
    pub fn builder(model: impl ChatModel) -> ReActAgentBuilder {
        ReActAgentBuilder {
            name: None,
            model: Arc::new(model),
            toolkit: None,
            system_prompt: None,
            max_iterations: 10,
            tool_choice: ToolChoice::Auto,
            parallel_tool_calls: true,
            options: GenerationOptions::default(),
            context: ToolContext::new(),
            approvals: Approvals::Toolkit,
            argument_budget: 3,
            return_directly: HashSet::new(),
            managed_groups: Vec::new(),
            tool_search: ToolSearch::Auto,
            search_limit: search::SEARCH_LIMIT,
            programs: None,
        }
    }

    /// The agent's name ([`ReActAgentBuilder::name`]; `"agent"` by default).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The agent's id: a random 128-bit value written as a UUID (version 4), made when the
    /// agent is built, so two agents never share one even when they share a name. Not a
    /// secret: it comes from a fast, non-cryptographic generator.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The conversation so far (without the system prompt).
    pub fn memory(&self) -> &[Message] {
        &self.memory
    }

    /// Forget the conversation (and any run waiting for approvals or external results).
    pub fn clear_memory(&mut self) {
        self.memory.clear();
        self.finished_background.clear();
        self.suspended = None;
        self.found.tool_list = search::ToolList::default();
    }

    /// This agent's view of its toolkit (its own group state).
    pub fn toolkit(&self) -> &Toolkit {
        &self.toolkit
    }

    /// The run waiting in this agent for approvals or external results, or the run that ended
    /// with [`AgentError::Model`] (to ask the model again from where it failed), as a
    /// [`PausedRun`] to store (with the whole conversation); `None` when no run waits. The
    /// agent keeps waiting: continue here or in another agent with [`resume`](Self::resume).
    /// A new [`run`](Self::run) drops it.
    pub fn paused_run(&self) -> Option<PausedRun> {
        let mut run = self.suspended.clone()?;
        run.messages = self.memory.clone();
        run.equipped_groups = self
            .managed_groups
            .iter()
            .map(|g| {
                let on = self.toolkit.is_group_active(&g.name).unwrap_or(false);
                (g.name.clone(), on)
            })
            .collect();
        Some(run)
    }
}

/// Who decides about calls of `requires_approval` tools.
enum Approvals {
    /// The toolkit's own approval hook (none: such calls are denied).
    Toolkit,
    /// The agent's approver.
    Hook(Arc<dyn ApprovalHook>),
    /// Nobody now: the run pauses.
    Pause,
}

/// The name of an agent built without [`ReActAgentBuilder::name`].
const DEFAULT_NAME: &str = "agent";

/// A random 128-bit id in the UUID version 4 text form: ids of agents and of runs.
pub(crate) fn new_id() -> Arc<str> {
    let (high, low) = (fastrand::u64(..), fastrand::u64(..));
    // Version 4 and the RFC 4122 variant, so the text is a well-formed UUID.
    let high = (high & !0xf000) | 0x4000;
    let low = (low & !(0b11 << 62)) | (0b10 << 62);
    // Written digit by digit rather than through `format!`: an id is made for every run.
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let nibbles = (0..16)
        .map(|i| (high >> (60 - 4 * i)) & 0xf)
        .chain((0..16).map(|i| (low >> (60 - 4 * i)) & 0xf));
    let mut text = String::with_capacity(36);
    for (i, nibble) in nibbles.enumerate() {
        if matches!(i, 8 | 12 | 16 | 20) {
            text.push('-');
        }
        text.push(char::from(DIGITS[nibble as usize]));
    }
    Arc::from(text)
}

/// Builds a [`ReActAgent`].
#[must_use = "call .build() to get the agent"]
pub struct ReActAgentBuilder {
    name: Option<String>,
    model: Arc<dyn ChatModel>,
    toolkit: Option<Toolkit>,
    system_prompt: Option<String>,
    max_iterations: usize,
    tool_choice: ToolChoice,
    parallel_tool_calls: bool,
    options: GenerationOptions,
    context: ToolContext,
    approvals: Approvals,
    argument_budget: u32,
    return_directly: HashSet<String>,
    managed_groups: Vec<String>,
    tool_search: ToolSearch,
    search_limit: usize,
    programs: Option<Arc<dyn ProgramMode>>,
}

impl ReActAgentBuilder {
    /// The agent's name, which tools receive in [`AgentInfo`] (default
    /// `"agent"`). Names need not be unique; [`ReActAgent::id`] is.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The tools. The agent works on its own [`view`](Toolkit::view), so its group toggles
    /// never affect another agent sharing the toolkit.
    pub fn toolkit(mut self, toolkit: &Toolkit) -> Self {
        self.toolkit = Some(toolkit.view());
        self
    }

    /// The system prompt.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// Most model turns per run (default 10); reaching it ends the run with
    /// [`AgentError::MaxIterations`].
    pub fn max_iterations(mut self, n: usize) -> Self {
        self.max_iterations = n.max(1);
        self
    }

    /// Whether and which tools the model may call (default [`ToolChoice::Auto`]).
    pub fn tool_choice(mut self, choice: ToolChoice) -> Self {
        self.tool_choice = choice;
        self
    }

    /// Whether the model may ask for several calls in one turn (default true).
    pub fn parallel_tool_calls(mut self, on: bool) -> Self {
        self.parallel_tool_calls = on;
        self
    }

    /// Sampling and length settings of every request.
    pub fn generation_options(mut self, options: GenerationOptions) -> Self {
        self.options = options;
        self
    }

    /// Put `value` into the agent's context values: they shadow the toolkit's values of the
    /// same type, and a call's shadow them.
    pub fn context<T: Send + Sync + 'static>(self, value: T) -> Self {
        self.context_shared(Arc::new(value))
    }

    /// Put a shared value into the agent's context values: tools get this same `Arc` through
    /// [`Ctx<T>`](crate::Ctx), so the application can keep a handle on it.
    pub fn context_shared<T: Send + Sync + 'static>(mut self, value: Arc<T>) -> Self {
        self.context.insert(Level::Agent, value);
        self
    }

    /// Who approves calls of `requires_approval` tools during [`run`](ReActAgent::run)
    /// (closures work). In [`run_stream`](ReActAgent::run_stream) the consumer decides
    /// through [`AgentEvent::ApprovalRequested`] instead.
    ///
    /// Replaces [`pause_at_approvals`](Self::pause_at_approvals) (the last of the two wins).
    pub fn approver(mut self, approver: impl ApprovalHook) -> Self {
        self.approvals = Approvals::Hook(Arc::new(approver));
        self
    }

    /// Ask no one about calls of `requires_approval` tools: a turn that has some runs its other
    /// calls, then the run pauses and hands back a [`PausedRun`] — in
    /// [`RunOutcome::Paused`] from the methods that return a [`RunOutcome`], in
    /// [`AgentError::Paused`] from [`run`](ReActAgent::run) and
    /// [`run_stream`](ReActAgent::run_stream). Store it, give the decisions, and continue with
    /// [`ReActAgent::resume`], in this agent or another built the same way (another process
    /// included).
    ///
    /// Only calls the engine would ask an approver about pause: a call with invalid
    /// arguments gets its argument error at once.
    ///
    /// A tool that asks a question ([`Elicitor`](crate::context::Elicitor),
    /// [`Sampler`](crate::context::Sampler)) where no [`Caller`](crate::context::Caller) is in
    /// the context pauses the run the same way: the question waits in
    /// [`PausedRun::pending_questions`], [`PausedRun::answer`] gives the answer, and on resume
    /// the call runs again from its start, its tool getting the answers in the order it asks. Replaces an [`approver`](Self::approver) and
    /// the toolkit's approval hook (the last of `approver` and this wins).
    pub fn pause_at_approvals(mut self) -> Self {
        self.approvals = Approvals::Pause;
        self
    }

    /// How many invalid-argument errors in a row one tool may get before the run stops
    /// (default 3): the model gets each error and a chance to correct itself until then.
    pub fn argument_budget(mut self, budget: u32) -> Self {
        self.argument_budget = budget.max(1);
        self
    }

    /// When this tool succeeds, its output is the run's answer ("return directly").
    pub fn return_directly(mut self, tool: impl Into<String>) -> Self {
        self.return_directly.insert(tool.into());
        self
    }

    /// Let the model switch these groups itself, through the `reset_equipped_tools` tool.
    /// Groups not named here stay the developer's to switch.
    pub fn agent_managed_groups<S: Into<String>>(
        mut self,
        groups: impl IntoIterator<Item = S>,
    ) -> Self {
        self.managed_groups
            .extend(groups.into_iter().map(Into::into));
        self
    }

    /// How the model finds the toolkit's deferred tools (default [`ToolSearch::Auto`]: the
    /// provider's own search where the model has one, the `search_tools` meta tool elsewhere).
    /// Tools a search finds are callable from the model's next step, in this agent's view.
    pub fn tool_search(mut self, search: ToolSearch) -> Self {
        self.tool_search = search;
        self
    }

    /// How many tools a `search_tools` call lists when the model does not say (default 5).
    pub fn search_limit(mut self, limit: usize) -> Self {
        self.search_limit = limit.clamp(1, 20);
        self
    }

    /// Code mode (feature `code`): the model writes JavaScript programs that call the tools,
    /// instead of calling them one model turn at a time. Where the model's provider runs
    /// programs itself ([`ToolFeatures::hosted_code`](crate::model::ToolFeatures), with
    /// [`CodeExecution::Auto`]), the request asks for that,
    /// and the program's calls of the tools arrive as ordinary calls, answered with the same
    /// rules. Elsewhere (or with [`CodeExecution::Local`]) the
    /// model is shown one tool, `run_code` (the program tool of the agent's view), whose description declares
    /// the tools as TypeScript signatures, and its programs run here in the sandbox through the
    /// turn's toolkit view: approvals (asked, or pausing the run — the program replays to the
    /// waiting call on [`resume`](ReActAgent::resume)), timeouts, retries and progress as for a
    /// model's calls.
    pub fn code_mode(mut self, mode: impl ProgramMode) -> Self {
        self.programs = Some(Arc::new(mode));
        self
    }

    /// Build the agent. Fails if a managed group does not exist, or if
    /// [`ToolSearch::Native`] was asked of a model without a search of its own, or
    /// [`CodeExecution::Hosted`] of a model without code
    /// execution of its own.
    pub fn build(self) -> Result<ReActAgent, crate::error::ConfigError> {
        let toolkit = match self.toolkit {
            Some(t) => t,
            None => Toolkit::builder().build().map_err(|e| {
                e.errors
                    .into_iter()
                    .next()
                    .unwrap_or(crate::error::ConfigError::NothingRegistered("toolkit"))
            })?,
        };
        if self.tool_search == ToolSearch::Native && !self.model.tool_features().native_search {
            return Err(crate::error::ConfigError::NoNativeToolSearch {
                model: self.model.name().to_string(),
            });
        }
        let hosted = self.model.tool_features().hosted_code;
        if let Some(mode) = &self.programs
            && mode.execution() == CodeExecution::Hosted
            && !hosted
        {
            return Err(crate::error::ConfigError::NoHostedCode {
                model: self.model.name().to_string(),
            });
        }
        let mut managed = Vec::new();
        for name in &self.managed_groups {
            let id = toolkit.group_id(name)?;
            managed.push(toolkit.groups()[id].clone());
        }
        // The meta tools, as tools of the agent's view (a registered tool of the same name
        // hides one, and stays the user's).
        let mut meta: Vec<Arc<dyn crate::toolkit::ViewTool>> = Vec::new();
        if !managed.is_empty() {
            meta.push(Arc::new(crate::toolkit::EquipGroups::new(managed.clone())));
        }
        // Programs that run here run as a tool of the view too.
        let local_programs = self.programs.as_ref().is_some_and(|mode| {
            mode.execution() == CodeExecution::Local
                || (mode.execution() == CodeExecution::Auto && !hosted)
        });
        if let Some(mode) = self.programs.as_ref().filter(|_| local_programs) {
            meta.push(mode.tool());
        }
        // The search: shown where the model finds deferred tools with it; answered but not
        // shown where the provider's own search does (its client-side search calls it), or
        // where programs search with their own function.
        let native = match self.tool_search {
            ToolSearch::Native => true,
            ToolSearch::Auto => self.model.tool_features().native_search,
            _ => false,
        };
        let mut search = crate::toolkit::SearchTools::new(&toolkit).limit(self.search_limit);
        if native || local_programs {
            search = search.hidden();
        }
        if toolkit.may_defer() {
            meta.push(Arc::new(search));
        }
        let toolkit = toolkit.view_with_tools(meta)?;
        // The agent's approver (else the toolkit's) approves the calls it makes in `run`.
        let (toolkit, pause_at_approvals) = match self.approvals {
            Approvals::Toolkit => (toolkit, false),
            Approvals::Hook(approver) => (toolkit.with_approver(Some(approver)), false),
            // Fail closed: a call that reached the approval layer anyway would be denied.
            Approvals::Pause => (toolkit.with_approver(None), true),
        };
        Ok(ReActAgent {
            name: Arc::from(self.name.as_deref().unwrap_or(DEFAULT_NAME)),
            id: new_id(),
            model: self.model,
            toolkit,
            settings: Settings {
                system_prompt: self.system_prompt,
                max_iterations: self.max_iterations,
                tool_choice: self.tool_choice,
                parallel_tool_calls: self.parallel_tool_calls,
                options: self.options,
                argument_budget: self.argument_budget,
                return_directly: self.return_directly,
                pause_at_approvals,
                tool_search: self.tool_search,
            },
            context: self.context,
            run_context: ToolContext::new(),
            managed_groups: managed,
            memory: Vec::new(),
            pending_background: Vec::new(),
            finished_background: HashMap::new(),
            suspended: None,
            found: search::Found::default(),
            programs: self.programs,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::new_id;

    #[test]
    fn ids_are_distinct_version_4_uuids() {
        let ids: std::collections::HashSet<_> = (0..1000).map(|_| new_id()).collect();
        assert_eq!(ids.len(), 1000);
        for id in &ids {
            let groups: Vec<&str> = id.split('-').collect();
            let lengths: Vec<usize> = groups.iter().map(|g| g.len()).collect();
            assert_eq!(lengths, [8, 4, 4, 4, 12], "{id}");
            assert!(groups[2].starts_with('4'), "version 4: {id}");
            assert!(
                matches!(&groups[3][..1], "8" | "9" | "a" | "b"),
                "RFC 4122 variant: {id}"
            );
            assert!(
                id.chars().all(|c| c == '-' || c.is_ascii_hexdigit()),
                "{id}"
            );
        }
    }
}
