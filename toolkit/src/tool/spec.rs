//! [`ToolSpec`] and [`ToolOptions`]: what a tool declares about itself.

use std::borrow::Cow;
use std::time::Duration;

use serde_json::{Map, Value};

use super::ToolAnnotations;
use crate::param::ParamSpec;

/// Options given in `#[tool(...)]` or by hand. Stored for every tool; the execution engine and
/// the agent give them behaviour.
///
/// The behaviour hints (`read_only`, `idempotent`, `destructive`) are declared once, in
/// [`annotations`](Self::annotations): the engine reads them there (only `read_only` or
/// `idempotent` tools are retried after a timeout) and the model-facing
/// [`ToolDefinition`](super::ToolDefinition) carries the same value.
///
/// ```
/// use std::time::Duration;
/// use agent_toolkit::tool::ToolOptions;
///
/// let options = ToolOptions::default().read_only().group("search").timeout(Duration::from_secs(5));
/// assert!(options.annotations.read_only);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolOptions {
    /// Groups the tool belongs to; ungrouped tools are always active.
    pub groups: Vec<Cow<'static, str>>,
    /// Behaviour hints: read-only, idempotent, destructive.
    pub annotations: ToolAnnotations,
    /// Runs alone, in call order, as a barrier within a batch.
    pub sequential: bool,
    /// Runs in the background task queue; the call returns a pending result at once.
    pub background: bool,
    /// Pauses for approval before running.
    pub requires_approval: bool,
    /// Not shown to the model up front: the tool is found by searching
    /// ([`Toolkit::search_tools`](crate::Toolkit::search_tools), or the provider's own tool
    /// search) and callable once found.
    pub defer_loading: bool,
    /// Deadline per attempt.
    pub timeout: Option<Duration>,
    /// Retries allowed after the first attempt.
    pub retries: Option<u32>,
    /// The tool's result budget: output longer than this many bytes is cut (head and tail
    /// kept) before the model sees it; overrides the toolkit's
    /// [`max_output_bytes`](crate::toolkit::ToolkitBuilder::max_output_bytes).
    pub max_output_bytes: Option<usize>,
    /// A synchronous (non-`async`) function: the engine runs it on tokio's blocking pool until
    /// its calls prove quick (8 in a row under 100 µs), inline after that; a slow call sends it
    /// back to the pool, and after three it stays there.
    pub blocking: bool,
}

impl ToolOptions {
    /// Add the tool to `group`.
    pub fn group(mut self, group: impl Into<Cow<'static, str>>) -> Self {
        self.groups.push(group.into());
        self
    }

    crate::util::setters! {
        /// The tool does not change its environment.
        pub fn read_only() => annotations.read_only = true;

        /// Calling the tool twice with the same arguments has no additional effect.
        pub fn idempotent() => annotations.idempotent = true;

        /// The tool may perform destructive updates.
        pub fn destructive() => annotations.destructive = true;

        /// Calls run alone, in call order, as a barrier within a batch.
        pub fn sequential() => sequential = true;

        /// Calls run in the background queue and answer with a pending result at once.
        pub fn background() => background = true;

        /// Calls wait for approval before they run.
        pub fn requires_approval() => requires_approval = true;

        /// The tool is deferred: found by search rather than shown up front.
        pub fn defer_loading() => defer_loading = true;

        /// The deadline of one attempt.
        pub fn timeout(timeout: Duration) => timeout = Some(timeout);

        /// Retries allowed after the first attempt (for retryable errors, and timeouts of
        /// read-only or idempotent tools).
        pub fn retries(retries: u32) => retries = Some(retries);
    }

    /// Whether a timed-out attempt may be run again: the tool says a repeat is harmless.
    pub(crate) fn retry_timeouts(&self) -> bool {
        self.annotations.read_only || self.annotations.idempotent
    }
}

/// A declared tool group (declared with
/// [`ToolkitBuilder::group`](crate::toolkit::ToolkitBuilder::group) and its siblings; also at
/// `agent_toolkit::toolkit::GroupInfo`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct GroupInfo {
    /// The group's name.
    pub name: String,
    /// What its tools are for (shown to agents that manage their own groups).
    pub description: String,
    /// Its tools are deferred: found by search rather than shown up front
    /// ([`ToolkitBuilder::deferred_group`](crate::toolkit::ToolkitBuilder::deferred_group)).
    pub deferred: bool,
}

/// Everything a tool declares about itself.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ToolSpec {
    /// The tool's name.
    pub name: Cow<'static, str>,
    /// What it does, for the model.
    pub description: Cow<'static, str>,
    /// Declared parameters, in signature order.
    pub params: Vec<ParamSpec>,
    /// Shared `$defs` referenced by the parameter schemas.
    pub defs: Map<String, Value>,
    /// For tools without declared parameters: the whole input schema, passed through as-is.
    /// The toolkit then hands the model's whole argument object to the tool, once it fits
    /// this schema (`validate` feature).
    pub input_schema: Option<Value>,
    /// JSON Schema of the structured output, if any.
    pub output_schema: Option<Value>,
    /// Options.
    pub options: ToolOptions,
    /// The tool parses its arguments itself (`#[tool]` and [`Tool`](super::Tool) tools, with
    /// serde); the toolkit then does not resolve them up front, nor check them against the
    /// schema.
    pub(crate) self_parsing: bool,
}

impl ToolSpec {
    /// A spec with no parameters and default options.
    pub fn new(
        name: impl Into<Cow<'static, str>>,
        description: impl Into<Cow<'static, str>>,
    ) -> Self {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            params: Vec::new(),
            defs: Map::new(),
            input_schema: None,
            output_schema: None,
            options: ToolOptions::default(),
            self_parsing: false,
        }
    }

    /// Take a dynamic input schema: the model's argument object goes to the tool whole.
    pub fn with_input_schema(mut self, schema: Value) -> Self {
        self.input_schema = Some(schema);
        self
    }

    /// Declare the parameters one by one (hand-written tools whose parameters are known).
    pub fn with_params(mut self, params: impl IntoIterator<Item = ParamSpec>) -> Self {
        self.params.extend(params);
        self
    }

    crate::util::setters! {
        /// The JSON Schema of the structured output.
        pub fn with_output_schema(schema: Value) => output_schema = Some(schema);

        /// The tool's options.
        pub fn with_options(options: ToolOptions) => options = options;
    }
}
