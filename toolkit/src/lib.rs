#![doc = include_str!("../../README.md")]
#![deny(missing_docs)]

#[cfg(feature = "a2a")]
#[cfg_attr(docsrs, doc(cfg(feature = "a2a")))]
pub mod a2a;
pub mod agent;
pub mod args;
pub mod background;
pub mod context;
pub mod definition;
pub mod error;
pub mod exec;
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub mod mcp;
pub mod model;
pub mod schema;
pub mod tool;
pub mod toolkit;
mod validate;

/// Turn a function into an agent tool.
///
/// Generates a unit struct named in PascalCase (`get_weather` → `GetWeather`) that implements
/// [`AgentTool`]; register it with [`ToolkitBuilder::register`]. The function itself is left
/// as it was and stays callable. `async fn` and plain `fn` both work.
///
/// **Options** (`#[tool(...)]`): `name = ".."` (default: the function's name),
/// `description = ".."` (default: the doc comment; one of the two is required),
/// `group = ".."` (repeatable), the flags `read_only`, `idempotent`, `destructive`,
/// `sequential`, `background`, `requires_approval`, and `timeout = "30s"` (`ms`, `s`, `m`,
/// `h`), `retries = N`. They are stored in [`ToolOptions`]. `read_only` and `destructive`
/// contradict each other and are refused together; on a `background` tool, `sequential`
/// makes the job start only after the calls before it in the batch have returned.
///
/// `crate = "path"` names the path to this crate for crates that rename it or reach it
/// through a re-export (`use agent_toolkit as at;` then `#[at::tool(crate = "at")]`), like
/// serde's `#[serde(crate = "..")]`; the default is `::agent_toolkit`.
///
/// **Parameters**: unmarked parameters are visible to the model and need
/// `serde::Deserialize + schemars::JsonSchema`; `Option<T>` is not required, and
/// `#[arg(default = expr)]` (or `#[arg(default)]` for `Default::default()`) makes one optional
/// with a default. `#[arg(rename = "..", description = "..")]` or a `///` comment on the
/// parameter set its wire name and description. Hidden parameters: `#[preset]` (bound with
/// [`ToolkitBuilder::preset`]; the build fails if it is not) and `#[ctx]` (any
/// [`FromToolContext`] type, e.g. [`Ctx<T>`], [`ToolEmitter`], [`CallInfo`], [`AgentInfo`],
/// [`CancellationToken`]).
///
/// **Returns**: anything [`IntoToolOutput`]. Mistakes are compile errors at the offending
/// token, all reported at once.
///
/// ```
/// use agent_toolkit::prelude::*;
///
/// /// Search the document index.
/// #[tool(read_only, timeout = "5s")]
/// async fn search(
///     /// What to look for.
///     query: String,
///     #[arg(default = 10)] limit: usize,
///     #[preset] index: String,
/// ) -> String {
///     format!("{limit} results for {query} in {index}")
/// }
///
/// let toolkit = Toolkit::builder().register(Search).preset("index", "docs").build().unwrap();
/// assert_eq!(toolkit.definitions()[0].name(), "search");
/// ```
#[doc(inline)]
pub use agent_toolkit_macros::tool;

pub use agent::{
    AgentError, AgentEvent, ApprovalResponder, ReActAgent, ReActAgentBuilder, RunOutcome,
};
/// Turn every `#[tool]` method of an `impl` block into a tool sharing `&self`.
///
/// The methods must take `&self`: the value is shared behind an `Arc` by all calls. Register
/// the value (or an `Arc` of it) once to register every tool. Each method takes the options
/// of [`macro@tool`]; the block's only option is `#[tools(crate = "path")]`, for all of them.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use agent_toolkit::prelude::*;
///
/// struct Counter(AtomicU64);
///
/// #[tools]
/// impl Counter {
///     /// Add one and return the new count.
///     #[tool]
///     fn increment(&self) -> u64 { self.0.fetch_add(1, Ordering::Relaxed) + 1 }
///
///     /// Read the count.
///     #[tool(read_only)]
///     fn get(&self) -> u64 { self.0.load(Ordering::Relaxed) }
/// }
///
/// let toolkit = Toolkit::builder().register(Counter(AtomicU64::new(0))).build().unwrap();
/// assert_eq!(toolkit.definitions().len(), 2);
/// ```
#[doc(inline)]
pub use agent_toolkit_macros::tools;
pub use args::{ArgPolicy, ArgSink, HiddenArgs, ToolArgs, TypeMismatch, UnknownArgs};
pub use background::{BackgroundJobs, JobId, JobRecord, JobStatus};
pub use context::{
    AgentInfo, CallInfo, CancellationToken, ContextLayer, ContextRejection, Ctx, FromToolContext,
    ProgressEvent, ToolContext, ToolEmitter, ToolProgress,
};
pub use definition::{ToolAnnotations, ToolDefinition};
pub use error::{BuildError, ConfigError, IntoToolError, ToolError, ToolErrorKind};
pub use exec::{
    ApprovalDecision, ApprovalHook, ApprovalRequest, BoxToolService, ExecSettings, RetryPolicy,
    ToolInvocation,
};
#[cfg(feature = "anthropic")]
pub use model::{AnthropicMessages, AnthropicMessagesBuilder};
pub use model::{
    ChatEvent, ChatModel, ChatRequest, ChatResponse, FinishReason, GenerationOptions, Message,
    ModelError, ParsedReply, Role, ScriptedModel, ScriptedTurn, TextCallError, TextCallFormat,
    TextToolCalls, ToolChoice, Usage, parse_tool_calls,
};
#[cfg(feature = "openai")]
pub use model::{OpenAiChat, OpenAiChatBuilder};
pub use schema::{Dialect, NameMap};
pub use tool::{
    AgentTool, Content, IntoToolOutput, Json, ParamKind, ParamSpec, ToolCall, ToolFuture,
    ToolOptions, ToolOutput, ToolResult, ToolSpec,
};
pub use toolkit::{
    DynamicTools, GroupInfo, IntoTools, ToolChanges, ToolSet, ToolSnapshot, Toolkit,
    ToolkitBuilder, WeakDynamicTools,
};

/// Re-exported so users need not depend on schemars/serde versions of their own to derive
/// parameter types (`#[derive(JsonSchema)]` still needs `schemars` in scope).
pub use schemars;
pub use serde_json;

/// Everything a tool author needs: `use agent_toolkit::prelude::*;`.
pub mod prelude {
    pub use crate::{
        AgentEvent, AgentInfo, AgentTool, ApprovalDecision, ApprovalRequest, CallInfo,
        CancellationToken, ChatModel, Ctx, Dialect, FromToolContext, HiddenArgs, Json, ReActAgent,
        RetryPolicy, ScriptedModel, ScriptedTurn, ToolCall, ToolChoice, ToolContext,
        ToolDefinition, ToolEmitter, ToolError, ToolOutput, ToolResult, Toolkit, tool, tools,
    };
}

/// The macros' runtime, named after the crate version (the rule is in `private.rs`).
#[doc(hidden)]
#[path = "private.rs"]
pub mod __private_v0_1_0;
