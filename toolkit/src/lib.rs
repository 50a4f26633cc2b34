#![doc = include_str!("../../README.md")]
#![deny(missing_docs)]

#[cfg(feature = "a2a")]
#[cfg_attr(docsrs, doc(cfg(feature = "a2a")))]
pub mod a2a;
pub mod agent;
mod args;
pub mod background;
pub mod context;
pub mod error;
pub mod exec;
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub mod mcp;
pub mod model;
mod param;
pub mod schema;
pub mod testing;
pub mod tool;
pub mod toolkit;
mod util;
mod validate;

/// Turn a function into an agent tool.
///
/// Generates a unit struct named in PascalCase (`get_weather` → `GetWeather`) that implements
/// [`AgentTool`]; register it with [`ToolkitBuilder::register`](toolkit::ToolkitBuilder::register). The function itself is left
/// as it was and stays callable. `async fn` and plain `fn` both work.
///
/// **Options** (`#[tool(...)]`): `name = ".."` (default: the function's name),
/// `description = ".."` (default: the doc comment; one of the two is required),
/// `group = ".."` (repeatable), the flags `read_only`, `idempotent`, `destructive`,
/// `sequential`, `background`, `requires_approval`, and `timeout = "30s"` (`ms`, `s`, `m`,
/// `h`), `retries = N`. They are stored in [`ToolOptions`](tool::ToolOptions). `read_only` and `destructive`
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
/// [`ToolkitBuilder::preset`](toolkit::ToolkitBuilder::preset); the build fails if it is not) and `#[ctx]` (any
/// [`FromToolContext`] type, e.g. [`Ctx<T>`], [`ToolEmitter`], [`CallInfo`], [`AgentInfo`],
/// [`CancellationToken`]).
///
/// **Returns**: anything [`IntoToolOutput`](tool::IntoToolOutput). Mistakes are compile errors at the offending
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

pub use agent::AgentInfo;
pub use agent::{AgentEvent, ReActAgent};
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
pub use context::{CallInfo, CancellationToken, Ctx, FromToolContext, ToolContext, ToolEmitter};
pub use error::{BuildError, ToolError};
pub use exec::RetryPolicy;
pub use model::{ChatModel, ToolChoice};
pub use schema::Dialect;
pub use tool::{AgentTool, Json, Tool, ToolCall, ToolDefinition, ToolOutput, ToolResult};
pub use toolkit::Toolkit;

/// Re-exported so users need not depend on schemars/serde versions of their own to derive
/// parameter types (`#[derive(JsonSchema)]` still needs `schemars` in scope).
pub use schemars;
pub use serde_json;

/// Everything a tool author needs: `use agent_toolkit::prelude::*;`.
pub mod prelude {
    pub use crate::{
        AgentInfo, AgentTool, CallInfo, CancellationToken, Ctx, FromToolContext, Json, Tool,
        ToolCall, ToolContext, ToolEmitter, ToolError, ToolOutput, ToolResult, Toolkit, tool,
        tools,
    };
}

/// The macros' runtime, named after the crate version (the rule is in `private.rs`).
#[doc(hidden)]
#[path = "private.rs"]
pub mod __private_v0_1_0;
