//! [`ToolkitBuilder`]: registration, presets, groups and context, checked all at once by
//! [`build`](ToolkitBuilder::build).

use std::collections::HashMap;
use std::sync::Arc;

use std::time::Duration;

use serde::Serialize;
use tower::{Layer, Service};

use super::compile::{self, Binding, ExecBase, Origin};
use super::dynamic::{DynamicRegistration, DynamicTools};
use super::turn::Guardrails;
use super::{GroupInfo, GroupMasks, Guardrail, Inner, RepairHook, Scope, Toolkit};
use crate::args::{ArgPolicy, HiddenArgs, UnknownArgs};
use crate::context::Values;
use crate::dialect::{Dialect, NameMap};
use crate::error::{BuildError, ConfigError, ToolError};
use crate::exec::{self, ApprovalHook, BoxToolService, LayerFn, RetryPolicy, ToolInvocation};
use crate::jobs::{BackgroundJobs, MakeJobBackend, ResultCallback};
use crate::tool::{AgentTool, ToolDefinition, ToolOutput, ToolResult, ToolSpec};

/// Something that can be registered: one tool, or a set of tools sharing state.
///
/// Implemented for every [`AgentTool`] (what `#[tool]` generates), for `Arc<dyn AgentTool>`,
/// and, through [`ToolSet`], for the types `#[tools]` is put on (by value or in an `Arc`).
pub trait IntoTools {
    /// The tools, ready to register.
    fn into_tools(self) -> Vec<Arc<dyn AgentTool>>;
}

impl<T: AgentTool> IntoTools for T {
    fn into_tools(self) -> Vec<Arc<dyn AgentTool>> {
        vec![Arc::new(self)]
    }
}

impl IntoTools for Arc<dyn AgentTool> {
    fn into_tools(self) -> Vec<Arc<dyn AgentTool>> {
        vec![self]
    }
}

/// A value whose methods are tools; `#[tools]` on an `impl` block implements it.
pub trait ToolSet: Send + Sync + 'static {
    /// One tool per `#[tool]` method, each holding the shared value.
    fn tools(self: Arc<Self>) -> Vec<Arc<dyn AgentTool>>;
}

impl<T: ToolSet> IntoTools for Arc<T> {
    fn into_tools(self) -> Vec<Arc<dyn AgentTool>> {
        self.tools()
    }
}

struct GroupDecl {
    name: String,
    description: String,
    active: bool,
    deferred: bool,
}

struct Registration {
    tools: Vec<Arc<dyn AgentTool>>,
    rename: Option<String>,
    bindings: Vec<Binding>,
    extra_groups: Vec<String>,
    overrides: compile::Overrides,
}

impl Registration {
    fn new(tools: Vec<Arc<dyn AgentTool>>, rename: Option<String>) -> Self {
        Registration {
            tools,
            rename,
            bindings: Vec::new(),
            extra_groups: Vec::new(),
            overrides: compile::Overrides::default(),
        }
    }
}

/// Builds a [`Toolkit`]. Every method is infallible; [`build`](Self::build) reports every
/// configuration mistake at once.
///
/// Registration options (`preset`, `default_arg`, `in_group`) apply to the tools of the
/// `register` call just before them.
#[must_use = "call .build() to get a Toolkit"]
pub struct ToolkitBuilder {
    groups: Vec<GroupDecl>,
    registrations: Vec<Registration>,
    /// Dynamic tool sets and the group each was registered in.
    dynamic: Vec<(String, DynamicTools)>,
    context: Values,
    policy: ArgPolicy,
    errors: Vec<ConfigError>,
    exec: ExecDefaults,
    /// How [`Toolkit::search_tools`] ranks.
    search: super::search::SearchState,
}

/// Toolkit-wide execution settings, before per-tool overrides.
struct ExecDefaults {
    base: ExecBase,
    max_concurrency: usize,
    layers: Vec<LayerFn>,
    approval: Option<Arc<dyn ApprovalHook>>,
    background_capacity: usize,
    callbacks: Vec<ResultCallback>,
    /// Another backend than the in-process one ([`job_queue`](ToolkitBuilder::job_queue) sets it).
    job_backend: Option<Arc<dyn MakeJobBackend>>,
    /// Asked about calls refused for their tool or their arguments ([`Turn`](super::Turn)).
    repair: Option<Arc<dyn RepairHook>>,
    /// Checks on calls and results, for every tool or one ([`Turn`](super::Turn)).
    guardrails: Guardrails,
    /// The loop guard, on unless switched off.
    loop_guard: bool,
    trace_content: bool,
}

/// Default cap on calls running at once in a batch.
pub const DEFAULT_MAX_CONCURRENCY: usize = 16;
/// Default result budget: the longest output passed to the model, 64 KiB (about 16,000
/// tokens), so that one large result cannot fill a model's context.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 64 << 10;
/// Default number of background jobs running at once.
pub const DEFAULT_BACKGROUND_CAPACITY: usize = 64;

impl Default for ToolkitBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ToolkitBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        ToolkitBuilder {
            groups: Vec::new(),
            registrations: Vec::new(),
            dynamic: Vec::new(),
            context: Values::default(),
            policy: ArgPolicy::default(),
            errors: Vec::new(),
            search: Default::default(),
            exec: ExecDefaults {
                base: ExecBase {
                    timeout: None,
                    total_timeout: None,
                    retry: RetryPolicy::none(),
                    max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
                },
                max_concurrency: DEFAULT_MAX_CONCURRENCY,
                layers: Vec::new(),
                approval: None,
                background_capacity: DEFAULT_BACKGROUND_CAPACITY,
                job_backend: None,
                repair: None,
                guardrails: Vec::new(),
                loop_guard: true,
                trace_content: crate::exec::trace::content_from_env(),
                callbacks: Vec::new(),
            },
        }
    }

    /// Declare a tool group, active from the start.
    pub fn group(self, name: impl Into<String>, description: impl Into<String>) -> Self {
        self.declare(name.into(), description.into(), true)
    }

    /// Declare a tool group that starts switched off.
    pub fn inactive_group(self, name: impl Into<String>, description: impl Into<String>) -> Self {
        self.declare(name.into(), description.into(), false)
    }

    /// Declare a group of *deferred* tools, active from the start: its tools (registered ones,
    /// and every tool of a [`DynamicTools`] set registered in it — a whole imported MCP server
    /// or remote A2A agent) are not shown to the model up front. The model finds them by
    /// searching ([`Toolkit::search_tools`], an agent's `search_tools` meta tool or the
    /// provider's own tool search); a tool found in a scope is callable there from then on
    /// ([`Toolkit::load_tools`]). Switching the group off hides its tools, found or not.
    pub fn deferred_group(self, name: impl Into<String>, description: impl Into<String>) -> Self {
        let mut this = self.declare(name.into(), description.into(), true);
        if let Some(g) = this.groups.last_mut() {
            g.deferred = true;
        }
        this
    }

    fn declare(mut self, name: String, description: String, active: bool) -> Self {
        if self.groups.iter().any(|g| g.name == name) {
            self.errors.push(ConfigError::DuplicateGroup(name));
        } else {
            self.groups.push(GroupDecl {
                name,
                description,
                active,
                deferred: false,
            });
        }
        self
    }

    /// Register a tool (or every tool of a `#[tools]` value).
    pub fn register(mut self, tools: impl IntoTools) -> Self {
        self.registrations
            .push(Registration::new(tools.into_tools(), None));
        self
    }

    /// Register one tool under another name. The same tool may be registered several times
    /// under different names, each with its own presets.
    pub fn register_as(mut self, name: impl Into<String>, tool: impl AgentTool) -> Self {
        self.registrations
            .push(Registration::new(vec![Arc::new(tool)], Some(name.into())));
        self
    }

    /// Bind `param` of the last registration to `value` and hide it from the model. Required
    /// for every `#[preset]` parameter; allowed on visible parameters too (which then leave the
    /// schema). A model value for it is refused (see [`HiddenArgs`]).
    pub fn preset(self, param: impl Into<String>, value: impl Serialize) -> Self {
        self.bind("preset", param.into(), value, true)
    }

    /// Give a visible `param` of the last registration a default. It stays in the schema (no
    /// longer required); a value from the model wins.
    pub fn default_arg(self, param: impl Into<String>, value: impl Serialize) -> Self {
        self.bind("default_arg", param.into(), value, false)
    }

    fn bind(self, what: &'static str, param: String, value: impl Serialize, hides: bool) -> Self {
        let value = serde_json::value::to_raw_value(&value).map_err(|e| e.to_string());
        self.on_last(what, |reg| {
            reg.bindings.push(Binding {
                param,
                value,
                hides,
            })
        })
    }

    /// Register a set of tools that may change after the toolkit is built (for example tools
    /// imported from an MCP server), as members of `group`, which must be declared.
    ///
    /// Every tool the set holds at any moment belongs to `group` only (groups its spec names
    /// are ignored) and gets the toolkit's execution settings plus its own options. A tool whose
    /// name is also the name of a registered tool, or of a tool of a set registered earlier,
    /// is hidden behind that one. Dynamic tools are not in the toolkit's name maps: give them
    /// names every dialect you use accepts as they are (e.g. `^[A-Za-z_][A-Za-z0-9_-]{0,62}$`).
    /// See [`DynamicTools`].
    pub fn dynamic(mut self, group: impl Into<String>, tools: &DynamicTools) -> Self {
        self.dynamic.push((group.into(), tools.clone()));
        self
    }

    /// Add the tools of the last registration to `group` (besides the groups they declare).
    pub fn in_group(self, group: impl Into<String>) -> Self {
        self.on_last("in_group", |reg| reg.extra_groups.push(group.into()))
    }

    /// Give the tools of the last registration their own per-attempt timeout (overrides
    /// `#[tool(timeout)]` and [`timeout`](Self::timeout)).
    pub fn tool_timeout(self, timeout: Duration) -> Self {
        self.on_last("tool_timeout", |reg| reg.overrides.timeout = Some(timeout))
    }

    /// Give the tools of the last registration their own number of retries (overrides
    /// `#[tool(retries)]` and the toolkit's [`retry`](Self::retry) policy's count).
    pub fn tool_retries(self, retries: u32) -> Self {
        self.on_last("tool_retries", |reg| reg.overrides.retries = Some(retries))
    }

    /// Give the tools of the last registration their own result budget (overrides
    /// `#[tool(max_output_bytes)]` and [`max_output_bytes`](Self::max_output_bytes)).
    pub fn tool_max_output_bytes(self, bytes: usize) -> Self {
        self.on_last("tool_max_output_bytes", |reg| {
            reg.overrides.max_output_bytes = Some(bytes.max(1))
        })
    }

    /// Apply `change` to the last registration; without one, `method` (a method that changes
    /// the last registration) was called too early, which the build reports.
    fn on_last(mut self, method: &'static str, change: impl FnOnce(&mut Registration)) -> Self {
        match self.registrations.last_mut() {
            Some(reg) => change(reg),
            None => self.errors.push(ConfigError::NothingRegistered(method)),
        }
        self
    }

    crate::util::setters! {
        /// Default deadline of one attempt of any tool (a tool's own `timeout` wins). None by
        /// default.
        pub fn timeout(timeout: Duration) => exec.base.timeout = Some(timeout);

        /// Deadline of a whole call, retries and backoff included. None by default.
        pub fn total_timeout(timeout: Duration) => exec.base.total_timeout = Some(timeout);

        /// Retry policy of every tool (a tool's own `retries` overrides the count). No retries by
        /// default.
        pub fn retry(policy: RetryPolicy) => exec.base.retry = policy;

        /// Most calls of one batch running at once (default 16; at least 1).
        pub fn max_concurrency(max: usize) => exec.max_concurrency = max.max(1);

        /// The result budget of every tool: the longest output handed to the model, in bytes
        /// (default [`DEFAULT_MAX_OUTPUT_BYTES`], 64 KiB, about 16,000 tokens; at least 1). A
        /// tool's own `#[tool(max_output_bytes = N)]` or
        /// [`tool_max_output_bytes`](Self::tool_max_output_bytes) wins.
        ///
        /// Longer output is cut in the middle: its start and its end are kept (two thirds and one
        /// third of the budget), with a note between them saying how many bytes of how many were
        /// cut and that calling the tool again asking for less (a narrower query, a range, a page)
        /// shows them. JSON that is cut becomes text. The application-side metadata of the output
        /// is kept whole.
        pub fn max_output_bytes(bytes: usize) => exec.base.max_output_bytes = bytes.max(1);
    }

    /// Add a tower layer around every call, inside the tracing span and outside approval,
    /// deadlines, retries and timeouts. The first layer added is the outermost. The layer's
    /// service must keep the stack's types: requests [`ToolInvocation`](crate::exec::ToolInvocation),
    /// responses [`ToolOutput`](crate::ToolOutput), errors [`ToolError`](crate::ToolError).
    pub fn layer<L>(mut self, layer: L) -> Self
    where
        L: Layer<BoxToolService> + Send + Sync + 'static,
        L::Service: Service<ToolInvocation, Response = ToolOutput, Error = ToolError>
            + Clone
            + Send
            + Sync
            + 'static,
        <L::Service as Service<ToolInvocation>>::Future: Send + 'static,
    {
        self.exec.layers.push(Arc::new(move |inner| {
            BoxToolService::new(layer.layer(inner))
        }));
        self
    }

    /// How [`Toolkit::search_tools`] (and an agent's `search_tools` meta tool) ranks the
    /// toolkit's tools; the defaults are the measured ones ([`SearchSettings`](crate::search::SearchSettings)).
    pub fn search_settings(mut self, settings: crate::search::SearchSettings) -> Self {
        self.search.settings = settings;
        self
    }

    /// Rank tools by meaning too when searching (feature `semantic`): the toolkit's index
    /// embeds each tool with `embeddings` and fuses the ranking by meaning with BM25's, so a
    /// search for "save this text" finds `write_file`. See
    /// [`ToolIndex::with_embeddings`](crate::search::ToolIndex::with_embeddings).
    #[cfg(feature = "semantic")]
    pub fn search_embeddings(mut self, embeddings: Arc<crate::search::Embeddings>) -> Self {
        self.search.embeddings = Some(embeddings);
        self
    }

    crate::util::setters! {
        /// The hook asked before tools marked `requires_approval` run (a handle made with
        /// [`Toolkit::with_approval_hook`] asks its own instead).
        /// wins). Without any hook such calls are denied.
        pub fn approval_hook(hook: impl ApprovalHook) => exec.approval = Some(Arc::new(hook));

        /// Mend calls that would be refused — a tool name not offered, arguments that do not fit —
        /// with `hook` (see [`RepairHook`]); applied wherever a turn's calls are answered
        /// ([`Toolkit::turn`]: agent runs, resumed runs, code-mode programs).
        pub fn repair_calls(hook: impl RepairHook) => exec.repair = Some(Arc::new(hook));

        /// Answer a call that repeats one of the model's previous step — same tool, same
        /// arguments, a result already given — without running it again (on by default): a
        /// read-only or idempotent tool's earlier result is given again with a line saying so,
        /// any other tool's call is refused with that result, and a call denied in that step is
        /// refused again with the reason (the approver is not asked twice). See
        /// [`AnsweredCall`](super::AnsweredCall) and
        /// [`Turn::after`](super::Turn::after).
        pub fn loop_guard(on: bool) => exec.loop_guard = on;

        /// Record content on the spans (default: off, unless the environment variable
        /// `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` is `true`): a call's arguments
        /// as the model wrote them (`gen_ai.tool.call.arguments`) and its result as the model
        /// reads it (`gen_ai.tool.call.result`) on its `execute_tool` span, and, for an agent
        /// on this toolkit, the messages sent and the answer (`gen_ai.input.messages`,
        /// `gen_ai.output.messages`) on each `chat` span. Hidden parameters are never
        /// recorded: preset and context values are not part of a call's arguments, and a
        /// value a model wrote for a hidden parameter is left out wherever its call is
        /// recorded.
        pub fn trace_content(on: bool) => exec.trace_content = on;
    }

    /// Check every tool's calls and results with `guardrail` (see [`Guardrail`]), wherever a
    /// turn's calls are answered ([`Toolkit::turn`]). Guardrails are asked in the order added;
    /// the first that does not allow decides.
    pub fn guardrail(mut self, guardrail: impl Guardrail) -> Self {
        self.exec.guardrails.push((None, Arc::new(guardrail)));
        self
    }

    /// Check the calls and results of the tool `tool` (its registered name) with `guardrail`.
    pub fn tool_guardrail(mut self, tool: impl Into<String>, guardrail: impl Guardrail) -> Self {
        self.exec
            .guardrails
            .push((Some(tool.into()), Arc::new(guardrail)));
        self
    }

    crate::util::setters! {
        /// Most background jobs running at once (default 64); calls beyond it get an error result.
        pub fn background_capacity(capacity: usize) => exec.background_capacity = capacity.max(1);

        /// Keep background jobs in a durable queue (`JobQueue`, features `sqlite` or `postgres`;
        /// see [`background`](crate::background)) instead of this process: calls are stored before
        /// their pending result is returned, run by the queue's `Worker`s, and the ledger is read
        /// from there. The toolkit's [`background_capacity`](Self::background_capacity) does not
        /// apply (workers have their own concurrency).
        pub fn job_queue(queue: impl MakeJobBackend) => exec.job_backend = Some(Arc::new(queue));
    }

    /// Call `callback` with the result of every background call when it finishes.
    pub fn on_tool_result(
        mut self,
        callback: impl Fn(&ToolResult) + Send + Sync + 'static,
    ) -> Self {
        self.exec.callbacks.push(Arc::new(callback));
        self
    }

    /// Put `value` into the toolkit's context layer (the lowest: agent and call contexts
    /// override it for the same type).
    pub fn context<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.context.insert(Arc::new(value));
        self
    }

    /// Put a shared value into the toolkit's context layer: tools get this same `Arc` through
    /// [`Ctx<T>`](crate::Ctx), so the application can keep a handle on it.
    pub fn context_shared<T: Send + Sync + 'static>(mut self, value: Arc<T>) -> Self {
        self.context.insert(value);
        self
    }

    crate::util::setters! {
        /// What to do when the model sends a value for a hidden parameter (default: reject).
        pub fn hidden_args(policy: HiddenArgs) => policy.hidden = policy;

        /// What to do with arguments a tool does not declare (default: reject).
        pub fn unknown_args(policy: UnknownArgs) => policy.unknown = policy;

        /// Largest argument text accepted for one call (default 4 MiB); larger calls get a
        /// model-visible error without being parsed.
        pub fn max_argument_bytes(bytes: usize) => policy.max_bytes = bytes;

        /// Whether a model's quoted scalar is read as the value the schema asks for, when its
        /// arguments would fail otherwise (default: on): `{"id": "7"}` runs as `{"id": 7}`
        /// for an `integer` parameter, `"2.5"` as `2.5` for a `number`, `"true"`/`"false"`
        /// as booleans for a `boolean` (also inside objects and arrays, and for `Option<T>`).
        ///
        /// On by default because nothing is lost and nothing is guessed: only a string whose
        /// text is exactly the value converts (never `"7.0"` to an integer, `"1e3"`, `" 7"`,
        /// `"yes"`, or a value out of range), only where the schema the model was shown asks
        /// for that one type (never where it also allows a string, or offers alternatives),
        /// and never for a hidden parameter (a model value for one is refused as before).
        /// Small models quote scalars often, and each refusal spends one of their few
        /// corrections. It costs nothing on valid arguments: the coerced text is tried only
        /// after the arguments failed, and it runs only if it then passes every check. Each
        /// coercion is traced (`debug`, target `agent_toolkit::args`), and the tool's
        /// [`ToolArgs::raw`](crate::tool::ToolArgs::raw) is the coerced text.
        ///
        /// Applies to `#[tool]` tools, [`Tool`](crate::tool::Tool) implementations, hand-written
        /// tools with [`ParamSpec`](crate::tool::ParamSpec)s, and tools with a whole input
        /// schema or from a [`DynamicTools`] set (their arguments are checked against the
        /// schema with the `validate` feature; without it they are passed on unchecked, so
        /// never coerced). The toolkit's own meta tools (tool search, group switching) read
        /// their arguments themselves and are not coerced.
        pub fn coerce_arguments(on: bool) => policy.coerce = on;
    }

    /// Check everything and build the toolkit. Fails with every mistake found: unbound
    /// `#[preset]`s, duplicate tool or group names, undeclared groups, bindings naming a
    /// parameter that does not exist or has the wrong type, and input schemas of hand-written
    /// tools that do not compile (with the `validate` feature).
    pub fn build(self) -> Result<Toolkit, BuildError> {
        let ToolkitBuilder {
            groups,
            registrations,
            dynamic,
            context,
            policy,
            mut errors,
            exec: defaults,
            search,
        } = self;
        let group_ids: HashMap<&str, usize> = groups
            .iter()
            .enumerate()
            .map(|(i, g)| (g.name.as_str(), i))
            .collect();

        let mut entries = Vec::new();
        let mut settings = Vec::new();
        let mut definitions = Vec::new();
        let mut tool_group_ids = Vec::new();
        let mut deferred = Vec::new();
        let mut by_name = rustc_hash::FxHashMap::default();
        for reg in registrations {
            let specs: Vec<ToolSpec> = reg.tools.iter().map(|t| t.spec()).collect();
            compile::check_bindings_exist(&reg.bindings, &specs, &mut errors);
            for (tool, spec) in reg.tools.into_iter().zip(specs) {
                let name = reg.rename.clone().unwrap_or_else(|| spec.name.to_string());
                let mut tool_groups = Vec::new();
                for g in spec
                    .options
                    .groups
                    .iter()
                    .map(|g| &**g)
                    .chain(reg.extra_groups.iter().map(String::as_str))
                {
                    match group_ids.get(g) {
                        Some(&id) if !tool_groups.contains(&id) => tool_groups.push(id),
                        Some(_) => {}
                        None => errors.push(ConfigError::UnknownGroup {
                            tool: name.clone(),
                            group: g.to_string(),
                        }),
                    }
                }
                if by_name.insert(name.clone(), entries.len()).is_some() {
                    errors.push(ConfigError::DuplicateTool(name.clone()));
                }
                let entry = compile::compile(
                    &name,
                    tool,
                    spec,
                    &reg.bindings,
                    Origin::Registered,
                    &mut errors,
                );
                settings.push(Arc::new(compile::settings_for(
                    &entry.options,
                    reg.overrides,
                    &defaults.base,
                )));
                definitions.push(entry.definition.clone());
                deferred.push(
                    entry.options.defer_loading || tool_groups.iter().any(|&g| groups[g].deferred),
                );
                tool_group_ids.push(tool_groups);
                entries.push(entry);
            }
        }
        let mut dynamic_sets = Vec::new();
        for (group, tools) in dynamic {
            match group_ids.get(group.as_str()) {
                Some(&id) => dynamic_sets.push(DynamicRegistration {
                    group: id,
                    deferred: groups[id].deferred,
                    tools,
                }),
                None => errors.push(ConfigError::UnknownGroup {
                    tool: "(dynamic tool set)".into(),
                    group,
                }),
            }
        }
        if !errors.is_empty() {
            return Err(BuildError { errors });
        }

        let name_maps =
            Dialect::ALL.map(|d| NameMap::new(d, definitions.iter().map(ToolDefinition::name)));
        let default_active: Vec<bool> = groups.iter().map(|g| g.active).collect();
        let masks = GroupMasks::new(groups.len(), tool_group_ids.into_iter(), deferred);
        let table: Arc<[ToolDefinition]> = definitions.into();
        let inner = Inner {
            table,
            masks,
            entries,
            settings,
            by_name,
            groups: groups
                .into_iter()
                .map(|g| GroupInfo {
                    name: g.name,
                    description: g.description,
                    deferred: g.deferred,
                })
                .collect(),
            search: std::sync::Mutex::new(search),
            name_maps,
            context: Arc::new(context),
            policy,
            default_scope: Arc::new(Scope::root(default_active)),
            stack: exec::build_stack(&defaults.layers, defaults.trace_content),
            trace_content: defaults.trace_content,
            dynamic: dynamic_sets,
            exec_base: defaults.base,
            max_concurrency: defaults.max_concurrency,
            repair: defaults.repair,
            guardrails: defaults.guardrails,
            loop_guard: defaults.loop_guard,
            background: Arc::new(BackgroundJobs::new(
                defaults.background_capacity,
                defaults.callbacks,
                defaults.job_backend.as_deref(),
            )),
        };
        let inner = Arc::new(inner);
        let scope = inner.default_scope.clone();
        Ok(Toolkit::from_parts(inner, scope, defaults.approval))
    }
}
