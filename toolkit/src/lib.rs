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
/// `h`), `retries = N`. They are stored in [`ToolOptions`].
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
/// the value (or an `Arc` of it) once to register every tool.
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

/// Items the macros expand to. Not public API: no stability promise.
#[doc(hidden)]
pub mod __private {
    pub use crate::args::{ArgErrors, ArgSink, ToolArgs};
    pub use crate::context::FromToolContext;
    pub use crate::error::ToolError;
    pub use crate::schema::{param_schema, schema_generator};
    pub use crate::tool::{
        AgentTool, IntoToolOutput, ParamKind, ParamSpec, ToolFuture, ToolOptions, ToolSpec,
    };
    pub use crate::toolkit::{IntoTools, ToolSet};
    pub use schemars::{JsonSchema, SchemaGenerator};
    pub use serde::de::DeserializeOwned;
    pub use serde::de::{IgnoredAny, MapAccess};
    pub use serde_json::Value;
    pub use std::borrow::Cow;
    pub use std::boxed::Box;
    pub use std::option::Option;
    pub use std::result::Result::{self, Err, Ok};
    pub use std::string::ToString;
    pub use std::sync::Arc;
    pub use std::time::Duration;
    pub use std::vec::Vec;

    /// A ready future carrying an error, for argument failures found before the tool runs.
    pub fn ready_err(error: ToolError) -> ToolFuture {
        Box::pin(std::future::ready(Err(error)))
    }

    /// The sink of a tool without JSON parameters.
    pub struct NoArgs;

    impl crate::args::ArgSink for NoArgs {
        fn accept<'de, A: MapAccess<'de>>(
            &mut self,
            _: usize,
            map: &mut A,
        ) -> Result<(), A::Error> {
            map.next_value::<IgnoredAny>().map(drop)
        }
        fn present(&self, _: usize) -> bool {
            false
        }
        fn bind(&mut self, _: usize, _: &str) -> bool {
            false
        }
    }

    /// Everything generated code does with a visible parameter's type, behind one trait, so
    /// a type missing `Deserialize` or `JsonSchema` raises one obligation at every use site
    /// and the compiler reports it once, on the parameter's type.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a model-visible tool parameter",
        label = "needs `serde::Deserialize` and `schemars::JsonSchema`",
        note = "derive them: `#[derive(serde::Deserialize, schemars::JsonSchema)]`, or hide the parameter with `#[preset]` (bound at registration) or `#[ctx]` (injected from the context)"
    )]
    pub trait VisibleParam: Sized {
        /// Schema of the type.
        fn schema(generator: &mut SchemaGenerator) -> Value;
        /// Build-time check of a bound value.
        fn check(text: &str) -> Result<(), crate::args::TypeMismatch>;
        /// Fast path: the next map value (`None` for JSON `null`).
        fn next<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Option<Self>, A::Error>;
        /// Fast path: a bound value.
        fn parse(text: &str) -> Option<Self>;
        /// Thorough path: the resolved value, if any.
        fn value(args: &ToolArgs, index: usize) -> Result<Option<Self>, ToolError>;
        /// Thorough path: the resolved value, which must exist.
        fn required(args: &ToolArgs, index: usize) -> Result<Self, ToolError>;
    }

    impl<T: DeserializeOwned + JsonSchema> VisibleParam for T {
        fn schema(generator: &mut SchemaGenerator) -> Value {
            crate::schema::param_schema::<T>(generator)
        }
        fn check(text: &str) -> Result<(), crate::args::TypeMismatch> {
            crate::args::deserialize::<T>(text).map(drop)
        }
        fn next<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Option<Self>, A::Error> {
            map.next_value::<Option<T>>()
        }
        fn parse(text: &str) -> Option<Self> {
            serde_json::from_str(text).ok()
        }
        fn value(args: &ToolArgs, index: usize) -> Result<Option<Self>, ToolError> {
            args.value(index)
        }
        fn required(args: &ToolArgs, index: usize) -> Result<Self, ToolError> {
            args.required(index)
        }
    }

    /// The same for `#[preset]` parameters, which need only `Deserialize` (no schema).
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a `#[preset]` parameter",
        label = "needs `serde::Deserialize`",
        note = "preset values are given as JSON-serializable values to `.preset(..)` and read back into the parameter's type; derive `serde::Deserialize`"
    )]
    pub trait PresetParam: Sized {
        /// Build-time check of the bound value.
        fn check(text: &str) -> Result<(), crate::args::TypeMismatch>;
        /// Fast path: never reached for a hidden parameter (the visitor refuses or skips the
        /// key first), but the sink's match needs an arm.
        fn next<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Option<Self>, A::Error>;
        /// Fast path: the bound value.
        fn parse(text: &str) -> Option<Self>;
        /// Thorough path: the bound value.
        fn required(args: &ToolArgs, index: usize) -> Result<Self, ToolError>;
    }

    impl<T: DeserializeOwned> PresetParam for T {
        fn check(text: &str) -> Result<(), crate::args::TypeMismatch> {
            crate::args::deserialize::<T>(text).map(drop)
        }
        fn next<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Option<Self>, A::Error> {
            map.next_value::<Option<T>>()
        }
        fn parse(text: &str) -> Option<Self> {
            serde_json::from_str(text).ok()
        }
        fn required(args: &ToolArgs, index: usize) -> Result<Self, ToolError> {
            args.required(index)
        }
    }
}
