//! Turn ordinary Rust functions into LLM agent tools.
//!
//! Put [`#[tool]`](macro@tool) on an `async fn` (or a plain `fn`) and it becomes a tool with a
//! JSON Schema the model sees, built from the signature and doc comments. Parameters the model
//! must not see — *presets* bound at registration and *context* values injected by type —
//! stay out of the schema and are filled at call time. A [`Toolkit`] holds the tools, switches
//! tool groups at runtime, applies one precedence rule for where each argument comes from, and
//! answers every model call with exactly one [`ToolResult`].
//!
//! ```
//! use agent_toolkit::prelude::*;
//!
//! /// Get the weather forecast for a city.
//! #[tool(read_only)]
//! async fn get_weather(
//!     /// City name, e.g. "Paris".
//!     city: String,
//!     #[arg(default = 1)] days: u32,
//!     #[preset] api_key: String, // hidden: bound at registration
//! ) -> String {
//!     format!("{days} day(s) of sun in {city} (key {}…)", &api_key[..3])
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let toolkit = Toolkit::builder().register(GetWeather).preset("api_key", "sk-secret").build()?;
//! let call = ToolCall::new("call_1", "get_weather", r#"{"city": "Paris"}"#);
//! let result = toolkit.call(call, &ToolContext::new()).await;
//! assert_eq!(result.model_text(), "1 day(s) of sun in Paris (key sk-…)");
//! # Ok::<(), agent_toolkit::BuildError>(()) }).unwrap();
//! ```
//!
//! # The life of a call, and where each step lives
//!
//! 1. **Declaration** — `#[tool]` (or a hand-written [`Tool`] / [`AgentTool`]) declares a
//!    [`tool::ToolSpec`]: name, description, [`tool::ParamSpec`]s (visible, preset or context),
//!    [`tool::ToolOptions`]. The schema of each parameter comes from `schemars`.
//! 2. **Registration** — [`toolkit::ToolkitBuilder`] binds presets and defaults, puts tools in
//!    groups, and compiles each registration once: the argument plan and the
//!    [`ToolDefinition`] the model is shown (the canonical JSON Schema of the visible
//!    parameters). [`toolkit::DynamicTools`] sets (MCP imports, remote A2A tools) compile the
//!    same way when they change.
//! 3. **Presentation** — [`Toolkit::definitions`] (or [`Toolkit::definitions_for`] a
//!    [`Dialect`]: OpenAI strict and non-strict, Anthropic, Gemini, MCP) gives the active tools,
//!    in the form a provider accepts, with tool names mapped both ways ([`dialect`]).
//! 4. **Dispatch** — a model's [`ToolCall`] is looked up, checked against the active groups,
//!    and its arguments resolved by the one precedence rule (model → presets → context by type,
//!    call > agent > toolkit → defaults → error), the hidden ones refused if the model sent
//!    them ([`toolkit::HiddenArgs`]). Context values come from [`ToolContext`] through
//!    [`FromToolContext`] extractors ([`Ctx`], [`ToolEmitter`], [`CallInfo`], [`AgentInfo`],
//!    [`CancellationToken`], and [`Toolkit`] itself — the view the call is made through, so a
//!    tool that searches, equips groups or runs a program is an ordinary tool; the [`context`]
//!    module).
//! 5. **Execution** — the call runs through a stack of tower services ([`exec`]): tracing,
//!    your layers, approval, the whole-call limit, retries ([`RetryPolicy`]), the per-attempt
//!    limit, a panic guard, the tool. [`Toolkit::call_all`] runs one model turn's calls
//!    concurrently, in call order; `background` tools answer at once and report later
//!    ([`background`]), from this process's queue or, with the `sqlite` and `postgres`
//!    features, from a durable queue that worker processes on other machines serve.
//! 6. **Result** — exactly one [`ToolResult`] per call: a [`ToolOutput`] for the model (text or
//!    JSON, plus metadata it never sees), or a [`ToolError`] with a kind
//!    ([`error::ToolErrorKind`]) and a message the model can act on.
//!
//! Around it: a [`ReActAgent`] runs a [`ChatModel`] ([`model`]: OpenAI-compatible, OpenAI
//! Responses and Anthropic providers, a text tool-call parser) and a toolkit in a loop
//! ([`agent`]), streaming [`AgentEvent`]s; with thousands of tools, deferred groups keep them
//! out of every request until the model finds them ([`search`]: the `search_tools` meta tool,
//! or the provider's own tool search); with the `code` feature the model can write one
//! JavaScript program that calls many tools instead (`code`: a QuickJS sandbox, every call through
//! the same rules, journaled so that a paused or crashed program resumes without running a
//! finished call again); [`testing`] has a scripted model for tests and examples;
//! `a2a` and `mcp` (cargo features) carry tools to and from other agents; `tls` says which
//! `https://` servers every HTTP client of the library trusts.
//!
//! The [`prelude`] holds what a tool author needs; everything else is reached through its
//! module.
//!
//! # Modules and their layers
//!
//! Each module owns one concept and may use only the modules listed in its row (and the
//! foundations `error` and `util`, which use nothing). The rows go from the bottom layer up: a
//! row lists only modules whose rows come before it. CI checks the order of the rows, and
//! every `crate::` path in the sources against this table (`.ci/layers.py`, which reads it
//! from here), re-exports included: `crate::Toolkit` counts as `toolkit`.
//!
//! <!-- layers -->
//! | module | what it owns | what it may use |
//! |---|---|---|
//! | `context` | [`ToolContext`] and the extractors of `#[ctx]` parameters | — |
//! | `param` | the kinds of parameter (visible, preset, context) | `context` |
//! | `schema` | JSON Schemas of parameters, from `schemars` | `param` |
//! | `args` | reading a call's JSON arguments into a tool's parameters | `context`, `param` |
//! | `tool` | what a tool is: [`ToolSpec`](tool::ToolSpec), calls, results, output | `args`, `context`, `param`, `schema` |
//! | `dialect` | the forms of a tool definition each provider accepts | `schema`, `tool` |
//! | `search` | tool search: a BM25F index over tool definitions | `tool` |
//! | `exec` | the tower stack one call runs through; [`RetryPolicy`] | `args`, `context`, `tool` |
//! | `trace_context` | W3C trace context across hops, and links to spans elsewhere (feature `otel`) | — |
//! | `storage` | `storage::Database`, migrations, the versioned stored form | — |
//! | `jobs` | background jobs: submission, the backend seam and the in-process backend | `context`, `exec`, `storage`, `tool` |
//! | `toolkit` | [`Toolkit`]: registration, groups, deferred tools, dispatch, batches; the calling view; one turn (`toolkit::Turn`: refusals, approvals held, repair, guardrails); a view's own tools and the meta tools (`search_tools`, `reset_equipped_tools`); the program-mode seam | `args`, `context`, `dialect`, `exec`, `jobs`, `param`, `schema`, `search`, `tool` |
//! | `durable` | the durable job backend and `background::Worker`, over the public call path | `context`, `jobs`, `storage`, `tool`, `toolkit`, `trace_context` |
//! | `background` | the public face of `jobs` and `durable` | `durable`, `jobs` |
//! | `private` | what `#[tool]`'s expansion calls | `args`, `context`, `param`, `schema`, `tool`, `toolkit` |
//! | `tls` | which certificates the HTTP clients trust | — |
//! | `endpoint` | how a remote HTTP endpoint is reached (token, headers, roots, timeouts) | `tls` |
//! | `model` | [`ChatModel`] and the HTTP providers; a model answering sampling requests | `context`, `dialect`, `endpoint`, `exec`, `schema`, `search`, `tls`, `tool` |
//! | `testing` | a scripted model | `model`, `tool` |
//! | `code` | code mode: programs in a QuickJS sandbox, their journals, the `run_code` tool | `context`, `exec`, `search`, `storage`, `tool`, `toolkit` |
//! | `agent` | [`ReActAgent`]: the loop, memory, approvals, paused runs, tool search, code mode (through `toolkit::ProgramMode`) | `background`, `context`, `exec`, `model`, `search`, `storage`, `tool`, `toolkit`, `trace_context` |
//! | `mcp` | MCP server and client, tool import, background tools as MCP tasks | `args`, `background`, `context`, `dialect`, `endpoint`, `tls`, `tool`, `toolkit`, `trace_context` |
//! | `a2a` | A2A servers, clients, remote tools, client-side tool sessions | `agent`, `args`, `context`, `endpoint`, `model`, `storage`, `tls`, `tool`, `toolkit`, `trace_context` |
//! <!-- /layers -->
//!
//! A module adds no inherent methods to another module's type, except in the impls listed
//! here, each with its reason; moving the methods home, or into an extension trait, removes a
//! row. CI checks this list too: an inherent impl of another module's type that is not listed
//! fails, and so does a row whose impl is gone.
//!
//! <!-- impls -->
//! | impl | where | why |
//! |---|---|---|
//! | `toolkit::Toolkit` | `mcp/toolkit.rs` | `serve_mcp_stdio` and `mcp_http_service` return `mcp`'s types (`McpError`, `McpHttpService`) and exist only with the `mcp` feature; `toolkit` may not use `mcp` |
//! <!-- /impls -->
//!
//! # Cargo features
//!
//! | feature | what it adds | default |
//! |---|---|---|
//! | `validate` | arguments checked against the canonical schema before a tool runs (`jsonschema`) | yes |
//! | `openai` | `model::OpenAiChat`: any OpenAI-compatible chat endpoint; `model::OpenAiResponses`: OpenAI's Responses API | no |
//! | `anthropic` | `model::AnthropicMessages` | no |
//! | `a2a` | A2A 1.0 and 0.3 servers and clients (`axum`, the official `a2a` crates) | no |
//! | `mcp` | MCP server (stdio, streamable HTTP) and client (`rmcp`) | no |
//! | `sqlite` | durable background jobs in one SQLite file | no |
//! | `postgres` | durable background jobs and A2A tasks in Postgres | no |
//! | `code` | code mode: the model's programs, calling the tools, run in an embedded QuickJS sandbox (`code::CodeMode`, `code::CodeTool`) | no |
//! | `cli` | the `agent-toolkit` binary (`a2a` + `mcp`) | no |
//! | `otel` | W3C trace context on MCP requests, adopted by the MCP server: one OpenTelemetry trace across the hop (`tracing-opentelemetry`) | no |
//!
//! `sqlite` and `postgres` together set one private `cfg(durable)`: the code names "a durable
//! store is compiled in" once, not as a list of features. So do `openai`, `anthropic`, `a2a`
//! and `mcp` with `cfg(http)`: "an HTTP client is built".

#![deny(missing_docs)]

/// Modules built only with an HTTP client: `cfg(http)`, which is private (toolkit/build.rs),
/// so the docs name the features it stands for.
macro_rules! with_http {
    ($($item:item)*) => {$(
        #[cfg(http)]
        #[cfg_attr(
            docsrs,
            doc(cfg(any(
                feature = "openai",
                feature = "anthropic",
                feature = "a2a",
                feature = "mcp"
            )))
        )]
        $item
    )*};
}

#[cfg(feature = "a2a")]
#[cfg_attr(docsrs, doc(cfg(feature = "a2a")))]
pub mod a2a;
pub mod agent;
mod args;
pub mod background;
#[cfg(feature = "code")]
#[cfg_attr(docsrs, doc(cfg(feature = "code")))]
pub mod code;
pub mod context;
pub mod dialect;
#[cfg(durable)]
mod durable;
with_http! {
    pub mod endpoint;
    pub mod tls;
}
pub mod error;
pub mod exec;
mod jobs;
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub mod mcp;
pub mod model;
mod param;
mod schema;
pub mod search;
pub mod storage;
pub mod testing;
pub mod tool;
pub mod toolkit;
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
mod trace_context;
mod util;

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
pub use context::{
    AgentInfo, CallInfo, CancellationToken, Ctx, FromToolContext, ToolContext, ToolEmitter,
};
pub use dialect::Dialect;
pub use error::{BuildError, Cause, ToolError};
pub use exec::RetryPolicy;
pub use model::{ChatModel, ToolChoice};
pub use tool::{AgentTool, Json, Tool, ToolCall, ToolDefinition, ToolOutput, ToolResult};
pub use toolkit::Toolkit;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

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
