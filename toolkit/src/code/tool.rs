//! [`CodeTool`]: code mode as a tool registered in a toolkit (`run_code`), which runs each
//! program through the toolkit view it is called in — so that a program can be a background job
//! of a durable queue, and a worker that dies mid-program leaves it to the next worker to
//! resume from its journal.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{CODE_TOOL, CodeMode};
use crate::context::FromToolContext;
use crate::error::{ToolError, ToolErrorKind};
use crate::tool::{AgentTool, ToolArgs, ToolFuture, ToolOptions, ToolSpec};
use crate::toolkit::Toolkit;

/// What the model is told `run_code` does, unless [`CodeTool::description`] says otherwise.
const DESCRIPTION: &str = "Run a JavaScript program that calls the other tools; prefer it to \
    calling tools one by one when a task takes several calls. The program is the body of an \
    async function. Each tool is `tools.NAME(args)`: it takes the same arguments object as the \
    tool NAME and resolves to its result (a failed call throws a ToolError with `e.tool`, \
    `e.kind`, `e.message`). Call tools in parallel with `Promise.all`, and `return` what you \
    want to see (or print it with `text(...)`): only that comes back to you, not each call's \
    result. No network, files or imports.";

/// Code mode as a registered tool: `run_code`, taking `{"code": string}` (the parameters of
/// [`CodeMode::definition`]), which runs the program with [`CodeMode::run`] through the toolkit
/// view it is called in (the calling view, as a `#[ctx] toolkit: Toolkit` parameter gets it),
/// the call's id as the program id.
///
/// Register it like any tool ([`register`](crate::toolkit::ToolkitBuilder::register), or in a
/// [`DynamicTools`](crate::toolkit::DynamicTools) set). It holds no toolkit: a program's calls
/// go through the handle that called `run_code` — a view's group state and found tools, its
/// approver.
///
/// **As a background job**: with [`background`](Self::background) and a toolkit with a durable
/// `background::JobQueue` (features `sqlite`, `postgres`), a call of `run_code` is queued and
/// answered pending; a `background::Worker` runs the program. Give the workers' code mode a
/// durable [`journal_store`](CodeMode::journal_store) (a `SqlJournalStore` on the queue's
/// database): a worker that dies
/// mid-program then leaves the job to another worker, which resumes the program from its
/// journal under the same call id — its finished calls answered from the journal, a call the
/// crash cut off run again only if its tool is `read_only` or `idempotent`.
///
/// With a journal store, `run_code` is declared `idempotent` (running a call again resumes its
/// program rather than repeating it), which is what lets the queue and the retry policy run it
/// again; without one it is not.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use agent_toolkit::code::{CodeMode, CodeTool, MemoryJournalStore};
/// use agent_toolkit::{ToolCall, ToolContext, Toolkit, tool};
///
/// /// Add two numbers.
/// #[tool]
/// fn add(a: i64, b: i64) -> i64 {
///     a + b
/// }
///
/// let mode = CodeMode::new().journal_store(MemoryJournalStore::new());
/// let toolkit = Toolkit::builder()
///     .register(Add)
///     .register(CodeTool::new(mode))
///     .build()
///     .unwrap();
/// let program = r#"{"code": "const [x, y] = await Promise.all([tools.add({a: 1, b: 2}), tools.add({a: 3, b: 4})]); return x * y;"}"#;
/// let result = toolkit.call(ToolCall::new("call_1", "run_code", program), &ToolContext::new()).await;
/// assert_eq!(result.model_text(), "21");
/// # }
/// ```
#[derive(Clone)]
pub struct CodeTool {
    mode: Arc<CodeMode>,
    options: ToolOptions,
    description: Option<String>,
}

impl std::fmt::Debug for CodeTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodeTool")
            .field("mode", &self.mode)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl CodeTool {
    /// `run_code` running programs with `mode` (its limits and journal store), with default
    /// options.
    pub fn new(mode: CodeMode) -> Self {
        CodeTool {
            mode: Arc::new(mode),
            options: ToolOptions::default(),
            description: None,
        }
    }

    crate::util::setters! {
        /// Run programs in the background queue: a call answers pending at once, and a worker
        /// runs the program ([`ToolOptions::background`]).
        pub fn background() => options.background = true;

        /// Replace the tool's options (groups, timeout, retries, approval, background…). With a
        /// journal store, `idempotent` is set whatever they say.
        pub fn options(options: ToolOptions) => options = options;

        /// What the model is told the tool does, instead of the default (which explains the
        /// program's API and refers to the toolkit's other tools, which the model sees).
        pub fn description(description: impl Into<String>)
            => description = Some(description.into());
    }

    /// The code mode programs run with.
    pub fn mode(&self) -> &CodeMode {
        &self.mode
    }
}

/// The arguments of `run_code`, as [`CodeMode::definition`] declares them.
pub(super) fn parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "code": {"type": "string", "description": "The JavaScript program (an async function body)."}
        },
        "required": ["code"],
        "additionalProperties": false
    })
}

/// The program of a call's arguments: the one parser of `run_code`'s arguments (unknown fields
/// and an empty program are refused).
fn code_of(raw: &str) -> Result<String, ToolError> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Arguments {
        code: String,
    }
    let bad = |why: String| {
        ToolError::invalid_arguments(format!(
            "`{CODE_TOOL}` takes {{\"code\": \"<JavaScript>\"}}, the program: {why}"
        ))
    };
    let code = serde_json::from_str::<Arguments>(raw)
        .map(|a| a.code)
        .map_err(|e| bad(e.to_string()))?;
    if code.trim().is_empty() {
        return Err(bad("the program is empty".into()));
    }
    Ok(code)
}

/// As a tool of a view (an agent's, in local code mode): shown each turn with a description
/// declaring the view's tools ([`CodeMode::definition`]).
impl crate::toolkit::ViewTool for CodeTool {
    fn offer(
        &self,
        view: &Toolkit,
        snapshot: &crate::toolkit::ToolSnapshot,
    ) -> crate::toolkit::Offer {
        crate::toolkit::Offer::Rendered(self.mode.definition_in(view, snapshot))
    }
}

impl AgentTool for CodeTool {
    fn spec(&self) -> ToolSpec {
        let mut options = self.options.clone();
        if self.mode.store.is_some() {
            options.annotations.idempotent = true;
        }
        let description = self
            .description
            .as_deref()
            .unwrap_or(DESCRIPTION)
            .to_string();
        ToolSpec::new(CODE_TOOL, description)
            .with_input_schema(parameters())
            .with_options(options)
    }

    fn call(&self, args: ToolArgs) -> ToolFuture {
        let mode = Arc::clone(&self.mode);
        Box::pin(async move {
            let toolkit = Toolkit::from_tool_context(args.context())
                .map_err(|rejection| ToolError::new(ToolErrorKind::Execution, rejection.hint))?;
            let code = code_of(args.raw())?;
            let ctx = args.context().clone();
            let Some(id) = ctx.call_info().map(|c| c.call_id.clone()) else {
                return Err(ToolError::new(
                    ToolErrorKind::Execution,
                    "the code tool ran outside a toolkit call (no call id to name its program)",
                ));
            };
            mode.run_call(&toolkit, &id, &code, &ctx).await
        })
    }
}
