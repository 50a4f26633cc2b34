//! Code mode (feature `code`): the model writes one JavaScript program that calls many tools,
//! instead of one model turn per call. The program runs in an embedded QuickJS sandbox; each
//! call it makes goes through the toolkit exactly like a model's call, and is journaled, so a
//! program paused at an approval or cut off by a crash resumes without running a finished call
//! again.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! use agent_toolkit::code::CodeMode;
//! use agent_toolkit::{ToolContext, Toolkit, tool};
//!
//! /// The forecast high for a city, in °C.
//! #[tool]
//! async fn forecast(city: String) -> i64 {
//!     city.len() as i64 * 3
//! }
//!
//! let toolkit = Toolkit::builder().register(Forecast).build().unwrap();
//! let code = CodeMode::new();
//! // What the model sees: one tool, `run_code`, whose description declares the API.
//! assert!(code.definition(&toolkit).description().contains("forecast(args: { city: string })"));
//! let program = r#"
//!     const cities = ["Oslo", "Lisbon", "Rome"];
//!     const highs = await Promise.all(cities.map(city => tools.forecast({ city })));
//!     return cities[highs.indexOf(Math.max(...highs))];
//! "#;
//! let result = code.run(&toolkit, "call_1", program, &ToolContext::new()).await;
//! assert_eq!(result.model_text(), "Lisbon");
//! # }
//! ```
//!
//! **What a program sees**: `tools.NAME(args)` for each tool of the toolkit view (async: it
//! returns the tool's structured output, or its text; a failed call throws a `ToolError` with
//! `tool`, `kind` and `message`), `search_tools(query, limit?)` to find deferred tools (which
//! become callable as `tools.NAME` once found), and `text(...)` / `print(...)` /
//! `console.log(...)` to write to its result. It is the body of an async function: `await`
//! anywhere, `return` the answer. Its result, what the model sees, is what it printed followed
//! by what it returned (strings as they are, other values as JSON), cut to the toolkit's result
//! budget.
//!
//! **A tool called with one value** instead of an arguments object (`tools.forecast("Oslo")`:
//! programs call functions that way, and real models write them so) gets the value as its one
//! parameter, when it has exactly one, or exactly one required. Otherwise the call is refused
//! as written, and the error shows a valid call.
//!
//! **What it cannot do**: reach the host. There is no module loader (`import` fails), no file
//! system, network, environment, timers or host objects; hidden parameters cannot be set from
//! code (the toolkit refuses them as it refuses a model's). It runs under limits
//! ([`CodeLimits`]: memory, stack, CPU time, wall time, calls), and a program that passes one
//! ends with an error result, the host unharmed.
//!
//! **Replay** ([`Journal`]): `Math.random` is seeded and `Date` frozen at the program's start, and
//! calls that wait at the same time are answered together, in the order they were made. So a
//! program run again with its journal makes the same calls, which are answered from the journal.
//! What makes a program non-replayable: different code, or a decision on something that changed
//! since — a tool list without the tool it called, a limit it reached at another point. Either
//! way the first call that differs from the journal stops it with an error saying so; nothing
//! new runs.
//!
//! | File | Owns |
//! |---|---|
//! | `mod.rs` | [`CodeMode`] and [`CodeLimits`]: the settings, the tool the model sees, running a program |
//! | `sandbox` | the QuickJS runtime on its thread: the prelude, limits, the call protocol |
//! | `program` | one program's run: the journal between the sandbox and the toolkit |
//! | `journal` | [`Journal`], [`JournalStore`] and [`MemoryJournalStore`] |
//! | `signatures` | TypeScript-style signatures written from the tools' JSON Schemas |
//! | `tool` | [`CodeTool`]: `run_code` registered in a toolkit, run in the calling view (a background job, say) |
//! | `sql_store` | `SqlJournalStore`: journals in SQLite or Postgres (features `sqlite`, `postgres`) |

mod journal;
mod program;
mod sandbox;
mod signatures;
#[cfg(durable)]
mod sql_store;
mod tool;

pub use journal::{Journal, JournalEntry, JournalError, JournalStore, MemoryJournalStore, Outcome};
#[cfg(durable)]
pub use sql_store::SqlJournalStore;
pub use tool::CodeTool;

pub(crate) use program::{ProgramEnd, Run};

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use crate::context::ToolContext;
use crate::error::{ToolError, ToolErrorKind};
use crate::tool::{Suspension, ToolDefinition, ToolOutput, ToolResult};
use crate::toolkit::{HoldsApprovals, Resumption, ToolSnapshot, Toolkit};

/// The name of the code tool the model calls.
pub const CODE_TOOL: &str = "run_code";

/// Limits on one program. A program that passes one ends with an error result.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CodeLimits {
    /// Heap the program may use, in bytes (default 64 MiB).
    pub memory: usize,
    /// Native stack its recursion may use, in bytes (default 512 KiB).
    pub stack: usize,
    /// Time it may spend running JavaScript, not counting the time its calls take (default 2 s).
    pub cpu: Duration,
    /// Time from its start to its end, calls included (default 5 min).
    pub wall: Duration,
    /// Tool calls it may make (default 1,000).
    pub max_calls: usize,
}

impl Default for CodeLimits {
    fn default() -> Self {
        CodeLimits {
            memory: 64 << 20,
            stack: 512 << 10,
            cpu: Duration::from_secs(2),
            wall: Duration::from_secs(300),
            max_calls: 1000,
        }
    }
}

pub use crate::toolkit::CodeExecution;

/// Code mode's settings: the sandbox's limits, where programs run, and where their journals are
/// kept. Run a program with [`run`](Self::run); give it to an agent with
/// [`ReActAgentBuilder::code_mode`](crate::agent::ReActAgentBuilder::code_mode).
#[derive(Clone)]
pub struct CodeMode {
    pub(crate) limits: CodeLimits,
    pub(crate) execution: CodeExecution,
    pub(crate) store: Option<Arc<dyn JournalStore>>,
    pub(crate) max_output_bytes: Option<usize>,
    pub(crate) instructions: Option<String>,
}

/// What an agent in local code mode adds to its system prompt by default
/// ([`CodeMode::instructions`]).
pub const CODE_INSTRUCTIONS: &str = "You have one tool, `run_code`. To use the tools it declares, \
    call it with a JavaScript program that calls them (`await tools.NAME({...})`, several at once \
    with `Promise.all`) and returns what you need; then answer from its result. Use it before \
    answering anything its tools can answer.";

impl std::fmt::Debug for CodeMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodeMode")
            .field("limits", &self.limits)
            .field("execution", &self.execution)
            .field("store", &self.store.is_some())
            .finish_non_exhaustive()
    }
}

impl Default for CodeMode {
    fn default() -> Self {
        Self::new()
    }
}

impl CodeMode {
    /// Default limits, programs run where the model has code execution
    /// ([`CodeExecution::Auto`]), journals kept with the run only.
    pub fn new() -> Self {
        CodeMode {
            limits: CodeLimits::default(),
            execution: CodeExecution::Auto,
            store: None,
            max_output_bytes: None,
            instructions: Some(CODE_INSTRUCTIONS.to_string()),
        }
    }

    crate::util::setters! {
        /// Replace the limits.
        pub fn limits(limits: CodeLimits) => limits = limits;

        /// Heap a program may use, in bytes.
        pub fn memory_limit(bytes: usize) => limits.memory = bytes;

        /// Stack a program's recursion may use, in bytes.
        pub fn stack_limit(bytes: usize) => limits.stack = bytes;

        /// JavaScript running time a program may use (its calls' time not counted).
        pub fn cpu_limit(limit: Duration) => limits.cpu = limit;

        /// Time from a program's start to its end, its calls included.
        pub fn time_limit(limit: Duration) => limits.wall = limit;

        /// Tool calls a program may make.
        pub fn max_calls(calls: usize) => limits.max_calls = calls;

        /// Where the agent's model runs programs: [`CodeExecution::Local`] forces the sandbox.
        pub fn execution(execution: CodeExecution) => execution = execution;

        /// Keep each program's journal in `store`, saved before and after each batch of its calls:
        /// a program run again with the same id (after a crash, in another process) replays from
        /// it.
        pub fn journal_store(store: impl JournalStore) => store = Some(Arc::new(store));

        /// The longest program result handed to the model, in bytes (the toolkit's result budget
        /// by default).
        pub fn max_output_bytes(bytes: usize) => max_output_bytes = Some(bytes);

        /// What an agent running programs locally adds to its system prompt, to tell its model to
        /// use the [`CODE_TOOL`] ([`CODE_INSTRUCTIONS`] by default; `None` adds nothing). Small
        /// models tend to answer from memory without it.
        pub fn instructions(instructions: Option<String>) => instructions = instructions;
    }

    /// The limits in force.
    pub fn current_limits(&self) -> &CodeLimits {
        &self.limits
    }

    pub(crate) fn output_budget(&self, toolkit: &Toolkit) -> usize {
        self.max_output_bytes
            .unwrap_or_else(|| toolkit.max_output_bytes())
    }

    /// The [`CODE_TOOL`] as the model sees it for `toolkit`'s view: its description declares
    /// `tools` with a TypeScript-style signature per callable tool, and names the deferred
    /// groups `search_tools` finds more in.
    pub fn definition(&self, toolkit: &Toolkit) -> ToolDefinition {
        self.definition_in(toolkit, &toolkit.snapshot())
    }

    /// The [`CODE_TOOL`] for the tools of `snapshot` (taken of `toolkit`).
    pub(crate) fn definition_in(
        &self,
        toolkit: &Toolkit,
        snapshot: &ToolSnapshot,
    ) -> ToolDefinition {
        let mut description = String::from(
            "Run a JavaScript program that calls tools; prefer it to calling tools one by one. \
             The program is the body of an async function: use `await`, call tools in parallel \
             with `Promise.all`, and `return` what you want to see (or print it with \
             `text(...)`); only that comes back to you, not each call's result. A failed call \
             throws a ToolError (`e.tool`, `e.kind`, `e.message`). No network, files or \
             imports; only these tools:\n\ndeclare const tools: {\n",
        );
        for definition in snapshot.iter().filter(|d| !is_meta_tool(d.name())) {
            for line in signatures::signature(definition).lines() {
                description.push_str("  ");
                description.push_str(line);
                description.push('\n');
            }
        }
        description.push_str("};\n");
        let deferred = toolkit.deferred_catalog();
        if snapshot.deferred().len() > 0 {
            description.push_str(&format!(
                "declare function search_tools(query: string, limit?: number): Promise<{{ name: string; description: string; signature: string }}[]>;\n\
                 More tools are found with `search_tools` (then callable as `tools.NAME`){}.\n",
                if deferred.is_empty() {
                    String::new()
                } else {
                    format!(", in: {deferred}")
                }
            ));
        }
        ToolDefinition::new(CODE_TOOL, description, tool::parameters())
    }

    /// Run `code` as program `id` through `toolkit`, with `ctx` as every call's context; the
    /// result is what the model sees, under the call id `id`.
    ///
    /// With a [`journal_store`](Self::journal_store), a program of this id that ran before
    /// resumes from its journal: its finished calls are answered from it, and a program that
    /// finished hands back its result without running anything. Approvals are asked of the
    /// toolkit's approver, as for any call.
    pub async fn run(
        &self,
        toolkit: &Toolkit,
        id: &str,
        code: &str,
        ctx: &ToolContext,
    ) -> ToolResult {
        let journal = match self.load(id, code).await {
            Ok(journal) => journal,
            Err(error) => return ToolResult::new(id, CODE_TOOL, Err(error), 0),
        };
        let run = Run {
            mode: self,
            toolkit,
            ctx,
            id,
            call_id: id,
            tool: CODE_TOOL,
            pause_at_approvals: false,
        };
        match run.run(journal).await {
            ProgramEnd::Finished(result, _) => result,
            // Not asked to pause: approvals go to the toolkit's approver.
            ProgramEnd::Paused { .. } => unreachable_pause(id),
        }
    }

    /// Run `code` as the call `call_id` of a turn through `toolkit` (what [`CodeTool`] does):
    /// keyed by run, step and call when an agent runs it (an [`AgentInfo`](crate::AgentInfo) in
    /// `ctx`; a model may use one call id in every step), by the call id otherwise. In a turn
    /// that holds calls needing approval ([`HoldsApprovals`] in `ctx`) a program's such call
    /// suspends it ([`ToolOutput::suspended`]: the journal is its state); made again with a
    /// [`Resumption`] in `ctx`, it replays to that call and goes on with the decision.
    pub(crate) async fn run_call(
        &self,
        toolkit: &Toolkit,
        call_id: &str,
        code: &str,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let (key, journal) = match ctx.get::<Resumption>() {
            Some(resumption) => resumed(&resumption)?,
            None => {
                let key = match ctx.get::<crate::context::AgentInfo>() {
                    Some(info) => format!("{}/{}/{call_id}", info.run_id, info.iteration),
                    None => call_id.to_string(),
                };
                let journal = self.load(&key, code).await?;
                (key, journal)
            }
        };
        let run = Run {
            mode: self,
            toolkit,
            ctx,
            id: &key,
            call_id,
            tool: CODE_TOOL,
            pause_at_approvals: ctx.get::<HoldsApprovals>().is_some(),
        };
        match run.run(journal).await {
            ProgramEnd::Finished(result, _) => result.outcome,
            ProgramEnd::Paused {
                call,
                tool,
                seq,
                journal,
            } => {
                let mut state = serde_json::Map::new();
                state.insert("key".into(), json!(key));
                state.insert("seq".into(), json!(seq));
                state.insert(
                    "journal".into(),
                    serde_json::to_value(&journal).unwrap_or(serde_json::Value::Null),
                );
                let text = format!(
                    "the program waits for approval of its call of `{tool}` ({})",
                    call.id
                );
                Ok(ToolOutput::suspended(
                    text,
                    Suspension::new(call, tool, state),
                ))
            }
        }
    }

    /// The journal to start program `id` with: the stored one (which must be of this code), or a
    /// new one.
    pub(crate) async fn load(&self, id: &str, code: &str) -> Result<Journal, ToolError> {
        let Some(store) = &self.store else {
            return Ok(Journal::new(code));
        };
        match store.load(id).await {
            Ok(Some(journal)) if journal.code == code => Ok(journal),
            Ok(Some(_)) => Err(ToolError::new(
                ToolErrorKind::InvalidArguments,
                format!(
                    "program `{id}` was journaled with other code: a program resumes only with the code it started with"
                ),
            )),
            Ok(None) => Ok(Journal::new(code)),
            Err(e) => Err(ToolError::new(
                ToolErrorKind::Execution,
                format!("the program did not start: {e}"),
            )),
        }
    }
}

/// Whether `name` is a tool a program does not call as `tools.NAME`: the code tool itself (a
/// program does not start programs) and the view's meta tools (a program searches with its own
/// `search_tools(...)`).
pub(crate) fn is_meta_tool(name: &str) -> bool {
    name == CODE_TOOL || name == crate::search::SEARCH_TOOL || name == crate::toolkit::EQUIP_TOOL
}

/// The key and journal of a program resumed at the call it waited at, decided.
fn resumed(resumption: &Resumption) -> Result<(String, Journal), ToolError> {
    let unreadable = |what: &str| {
        ToolError::new(
            ToolErrorKind::Execution,
            format!("the paused program's state is unreadable: {what}"),
        )
    };
    let state = &resumption.state;
    let key = state
        .get("key")
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| unreadable("no key"))?;
    let seq = state
        .get("seq")
        .and_then(serde_json::Value::as_u64)
        .ok_or_else(|| unreadable("no call number"))?;
    let journal = state.get("journal").cloned().unwrap_or_default();
    let mut journal: Journal =
        serde_json::from_value(journal).map_err(|e| unreadable(&format!("its journal: {e}")))?;
    journal.decide(seq as usize, resumption.decision.clone());
    Ok((key.to_string(), journal))
}

/// Code mode as an agent's way to call its tools: the model is shown [`CODE_TOOL`] (its
/// description declaring the view's tools), which runs as a [`CodeTool`] of the agent's view.
impl crate::toolkit::ProgramMode for CodeMode {
    fn tool(&self) -> Arc<dyn crate::toolkit::ViewTool> {
        Arc::new(CodeTool::new(self.clone()))
    }

    fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    fn execution(&self) -> CodeExecution {
        self.execution
    }
}

fn unreachable_pause(id: &str) -> ToolResult {
    ToolResult::new(
        id,
        CODE_TOOL,
        Err(ToolError::new(
            ToolErrorKind::Execution,
            "the program stopped at a call waiting for approval",
        )),
        0,
    )
}
