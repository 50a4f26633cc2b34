#![doc = include_str!("../../README.md")]
#![deny(missing_docs)]

pub mod args;
pub mod context;
pub mod definition;
pub mod error;
pub mod schema;
pub mod tool;
pub mod toolkit;

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
/// [`FromToolContext`] type, e.g. [`Ctx<T>`], [`ToolEmitter`], [`CallInfo`],
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
pub use context::{
    CallInfo, CancellationToken, ContextLayer, ContextRejection, Ctx, FromToolContext,
    ProgressEvent, ToolContext, ToolEmitter, ToolProgress,
};
pub use definition::{ToolAnnotations, ToolDefinition};
pub use error::{BuildError, ConfigError, IntoToolError, ToolError, ToolErrorKind};
pub use schema::{Dialect, NameMap};
pub use tool::{
    AgentTool, Content, IntoToolOutput, Json, ParamKind, ParamSpec, ToolCall, ToolFuture,
    ToolOptions, ToolOutput, ToolResult, ToolSpec,
};
pub use toolkit::{GroupInfo, IntoTools, ToolSet, ToolSnapshot, Toolkit, ToolkitBuilder};

/// Re-exported so users need not depend on schemars/serde versions of their own to derive
/// parameter types (`#[derive(JsonSchema)]` still needs `schemars` in scope).
pub use schemars;
pub use serde_json;

/// Everything a tool author needs: `use agent_toolkit::prelude::*;`.
pub mod prelude {
    pub use crate::{
        AgentTool, CallInfo, CancellationToken, Ctx, Dialect, FromToolContext, HiddenArgs, Json,
        ToolCall, ToolContext, ToolDefinition, ToolEmitter, ToolError, ToolOutput, ToolResult,
        Toolkit, tool, tools,
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

    /// Type check for `.preset` / `.default_arg` values, run at build time.
    pub fn check_json<T: DeserializeOwned>(text: &str) -> Result<(), crate::args::TypeMismatch> {
        crate::args::deserialize::<T>(text).map(drop)
    }

    /// Deserialize a bound value (fast path of generated tools).
    pub fn check_json_value<T: DeserializeOwned>(text: &str) -> Result<T, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// Compile-time assertions emitted per parameter, so an error lands on that parameter's type.
    pub fn assert_visible_param<T: DeserializeOwned + JsonSchema>() {}
    /// See [`assert_visible_param`].
    pub fn assert_preset_param<T: DeserializeOwned>() {}
    /// See [`assert_visible_param`].
    pub fn assert_ctx_param<T: FromToolContext>() {}
    /// See [`assert_visible_param`].
    pub fn assert_output<T: IntoToolOutput>() {}
}
