//! The [`Toolkit`]: a registry of tools with groups switched at runtime, the argument resolver,
//! and dispatch of model calls.

mod builder;
mod compile;
mod dynamic;
mod loop_guard;
mod meta;
mod programs;
mod scope;
mod search;
mod snapshot;
mod turn;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use futures::{Stream, StreamExt};
use rustc_hash::FxHashMap;
use serde_json::Value;

pub use crate::args::{DEFAULT_MAX_ARGUMENT_BYTES, HiddenArgs, UnknownArgs};
pub use builder::{
    DEFAULT_BACKGROUND_CAPACITY, DEFAULT_MAX_CONCURRENCY, DEFAULT_MAX_OUTPUT_BYTES, IntoTools,
    ToolSet, ToolkitBuilder,
};
use compile::{Entry, ExecBase, Origin};
use dynamic::DynamicRegistration;
pub use dynamic::{DynamicTools, ToolChanges, WeakDynamicTools};
pub use loop_guard::AnsweredCall;
pub(crate) use loop_guard::repeats;
pub use meta::{
    EQUIP_TOOL, EquipGroups, FOUND_KEY, LOADED_KEY, Offer, Offered, SearchTools, ViewTool,
    search_answer,
};
pub use programs::{CodeExecution, ProgramMode};
use scope::{Scope, Versions};
use snapshot::GroupMasks;
pub use snapshot::ToolSnapshot;
pub use turn::{
    CallAnswer, Guardrail, GuardrailDecision, GuardrailStop, HoldsApprovals, RepairHook,
    RepairRequest, Resumption, Turn, TurnOutcome,
};

use crate::args::{self, ArgPolicy};
use crate::context::{CallInfo, ContextReads, ToolContext, Values};
use crate::dialect::{Dialect, NameMap};
use crate::error::{ConfigError, ToolError, ToolErrorKind};
use crate::exec::batch::{self, BatchItem};
use crate::exec::{self, ApprovalHook, ExecSettings, ToolInvocation};
use crate::jobs::BackgroundJobs;
use crate::param::ParamKind;
pub use crate::tool::GroupInfo;
use crate::tool::{AgentTool, ToolCall, ToolDefinition, ToolOptions, ToolResult};

struct Inner {
    /// Registrations; index `i` here, in `settings`, `table` and `masks` is the same tool.
    entries: Vec<Entry>,
    /// Each registration's settings in this toolkit.
    settings: Vec<Arc<ExecSettings>>,
    /// Every definition, in registration order (what snapshots index into).
    table: Arc<[ToolDefinition]>,
    /// Group membership of every tool.
    masks: GroupMasks,
    by_name: FxHashMap<String, usize>,
    groups: Vec<GroupInfo>,
    name_maps: [NameMap; Dialect::ALL.len()],
    /// The toolkit-level context values.
    context: Arc<Values>,
    policy: ArgPolicy,
    default_scope: Arc<Scope>,
    /// The execution stack every call runs through.
    stack: exec::Stack,
    max_concurrency: usize,
    background: Arc<BackgroundJobs>,
    /// Tool sets that change at run time, in registration order.
    dynamic: Vec<DynamicRegistration>,
    /// What the settings of dynamic tools are made from.
    exec_base: ExecBase,
    /// Asked about calls a turn refuses for their tool or arguments.
    repair: Option<Arc<dyn RepairHook>>,
    /// Checks on calls and results, for every tool or one.
    guardrails: turn::Guardrails,
    /// Whether a turn answers a repeat of the previous step's call without running it.
    loop_guard: bool,
    /// Spans record content (see [`ToolkitBuilder::trace_content`]).
    trace_content: bool,
    /// The search index over every tool, built on the first search.
    search: std::sync::Mutex<search::SearchState>,
}

/// Tools, their groups, and dispatch of model calls.
///
/// Cloning is cheap and clones share everything, group state included. For independent group
/// state over the same tools (one per agent or session), use [`view`](Self::view).
///
/// ```
/// use agent_toolkit::prelude::*;
///
/// /// Add two numbers.
/// #[tool]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// # tokio_test_block(async {
/// let toolkit = Toolkit::builder().register(Add).build().unwrap();
/// let result = toolkit.call(ToolCall::new("1", "add", r#"{"a": 2, "b": 3}"#), &ToolContext::new()).await;
/// assert_eq!(result.model_text(), "5");
/// # });
/// # fn tokio_test_block(f: impl std::future::Future<Output = ()>) {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
/// # }
/// ```
#[derive(Clone)]
pub struct Toolkit(Arc<Handle>);

/// What a [`Toolkit`] handle is: the shared tools, one scope of group state, an approver. Kept
/// behind one `Arc`, so that a handle is cloned with one reference count and the calling view
/// rides in every call's context for free ([`CallingView`]).
struct Handle {
    inner: Arc<Inner>,
    scope: Arc<Scope>,
    /// Who approves calls of `requires_approval` tools made through this handle.
    approver: Option<Arc<dyn ApprovalHook>>,
}

impl Toolkit {
    /// Whether spans record content ([`ToolkitBuilder::trace_content`]).
    pub(crate) fn traces_content(&self) -> bool {
        self.0.inner.trace_content
    }

    /// Whether a turn answers a repeat of the previous step's call without running it
    /// ([`ToolkitBuilder::loop_guard`]).
    pub(crate) fn guards_loops(&self) -> bool {
        self.0.inner.loop_guard
    }

    /// A call's arguments as a span records them: without any value the model gave for one of
    /// the tool's hidden parameters.
    pub(crate) fn recorded_arguments<'c>(&self, call: &'c ToolCall) -> std::borrow::Cow<'c, str> {
        match self.lookup(&call.name) {
            Some(i) => args::without_hidden(&self.0.inner.entries[i].plan, &call.arguments),
            None => std::borrow::Cow::Borrowed(&call.arguments),
        }
    }

    fn from_parts(
        inner: Arc<Inner>,
        scope: Arc<Scope>,
        approver: Option<Arc<dyn ApprovalHook>>,
    ) -> Toolkit {
        Toolkit(Arc::new(Handle {
            inner,
            scope,
            approver,
        }))
    }
}

/// A [`Toolkit`] handle that does not keep it alive ([`Toolkit::downgrade`]).
///
/// It holds its scope weakly too: the handle of a [`view`](Toolkit::view) upgrades while
/// some clone of that view is alive; the toolkit's own handle, while the toolkit is.
#[derive(Clone)]
pub struct WeakToolkit {
    inner: std::sync::Weak<Inner>,
    scope: std::sync::Weak<Scope>,
    approver: Option<Arc<dyn ApprovalHook>>,
}

impl WeakToolkit {
    /// The toolkit handle this was made from, if the toolkit (and, for a view, the view) is
    /// still alive.
    pub fn upgrade(&self) -> Option<Toolkit> {
        Some(Toolkit::from_parts(
            self.inner.upgrade()?,
            self.scope.upgrade()?,
            self.approver.clone(),
        ))
    }
}

impl std::fmt::Debug for WeakToolkit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WeakToolkit")
            .field("alive", &(self.inner.strong_count() > 0))
            .finish_non_exhaustive()
    }
}

/// Whether a tool may be called in a scope.
enum Availability {
    Active,
    /// Its groups are all off.
    Off,
    /// It is deferred and was not found in this scope.
    Deferred,
}

/// A tool a call names: a registration, or a tool of a dynamic set.
enum Found {
    Registered(usize),
    Dynamic(Arc<Entry>),
}

impl std::fmt::Debug for Toolkit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Toolkit")
            .field("tools", &self.0.inner.entries.len())
            .field("groups", &self.0.inner.groups)
            .field(
                "view",
                &!Arc::ptr_eq(&self.0.scope, &self.0.inner.default_scope),
            )
            .finish()
    }
}

impl Toolkit {
    /// Start building a toolkit.
    pub fn builder() -> ToolkitBuilder {
        ToolkitBuilder::new()
    }

    /// A handle over the same tools with its own group state: toggles made through it are seen
    /// only by it (and its clones), while groups it never toggled follow the toolkit-wide
    /// state. Give one to each agent or session sharing a toolkit. Cheap: no tool is copied.
    pub fn view(&self) -> Toolkit {
        Toolkit::from_parts(
            self.0.inner.clone(),
            Arc::new(Scope::overlay(self.0.inner.groups.len(), Vec::new())),
            self.0.approver.clone(),
        )
    }

    /// A [`view`](Self::view) with `tools` of its own besides the toolkit's: they are listed in
    /// its [`snapshot`](Self::snapshot) after the toolkit's tools (those of dynamic sets too), and called like every other
    /// tool — through the execution stack (user layers, tracing, timeouts, approval) with the
    /// rule for arguments. A registered tool of the same name hides one of these. This is how an
    /// agent adds its meta tools (`search_tools`, `reset_equipped_tools`) to its view.
    ///
    /// Fails as [`build`](ToolkitBuilder::build) would for such a tool (a schema that does not
    /// compile, two tools of one name).
    pub fn view_with_tools(
        &self,
        tools: impl IntoIterator<Item = Arc<dyn ViewTool>>,
    ) -> Result<Toolkit, ConfigError> {
        let mut errors = Vec::new();
        let mut entries: Vec<(Arc<Entry>, Arc<dyn ViewTool>)> = Vec::new();
        for tool in tools {
            let spec = tool.spec();
            let name = spec.name.to_string();
            if entries.iter().any(|(e, _)| e.definition.name() == name) {
                return Err(ConfigError::DuplicateTool(name));
            }
            let as_tool: Arc<dyn AgentTool> = tool.clone();
            let entry =
                compile::compile(&name, as_tool, spec, &[], Origin::Registered, &mut errors);
            entries.push((Arc::new(entry), tool));
        }
        if let Some(error) = errors.into_iter().next() {
            return Err(error);
        }
        Ok(Toolkit::from_parts(
            self.0.inner.clone(),
            Arc::new(Scope::overlay(self.0.inner.groups.len(), entries)),
            self.0.approver.clone(),
        ))
    }

    /// What this view offers its model in a turn whose tools are `snapshot` (taken of this
    /// view): the toolkit's tools as they are, the view's own as each offers itself
    /// ([`ViewTool::offer`]), and every name that may be called.
    pub fn offered(&self, snapshot: &ToolSnapshot) -> Offered {
        // Sized once: the view's own tools are few, and the caller appends them to `tools`.
        let mut offered = Offered {
            tools: Vec::with_capacity(snapshot.len() + 2),
            view: Vec::new(),
            callable: Vec::with_capacity(snapshot.len()),
        };
        for definition in snapshot.iter() {
            let name = definition.name();
            let own = self
                .0
                .scope
                .view_tool(name)
                .filter(|_| !self.0.inner.by_name.contains_key(name));
            let Some(tool) = own else {
                offered.tools.push(definition.clone());
                offered.callable.push(definition.shared_name());
                continue;
            };
            match tool.offer(self, snapshot) {
                Offer::AsRegistered => offered.view.push(definition.clone()),
                Offer::Rendered(rendered) => offered.view.push(rendered),
                Offer::Hidden => {}
                Offer::Off => continue,
            }
            offered.callable.push(definition.shared_name());
        }
        offered
    }

    /// The same handle (same tools, same group state) whose calls of `requires_approval` tools
    /// are approved by `hook` instead of the toolkit's
    /// ([`ToolkitBuilder::approval_hook`]). An agent, a session or a request gets its own
    /// approver this way; without any, such calls are denied.
    pub fn with_approval_hook(&self, hook: impl ApprovalHook) -> Toolkit {
        self.with_approver(Some(Arc::new(hook)))
    }

    /// A handle that does not keep the toolkit alive: for what the toolkit itself holds (a
    /// tool that calls the toolkit it is registered in, such as code mode's `CodeTool`), which
    /// would otherwise make a reference cycle. [`WeakToolkit::upgrade`] gives this same handle
    /// back (same tools, same group state, same approver) while the toolkit lives.
    pub fn downgrade(&self) -> WeakToolkit {
        WeakToolkit {
            inner: Arc::downgrade(&self.0.inner),
            scope: Arc::downgrade(&self.0.scope),
            approver: self.0.approver.clone(),
        }
    }

    pub(crate) fn with_approver(&self, approver: Option<Arc<dyn ApprovalHook>>) -> Toolkit {
        Toolkit::from_parts(self.0.inner.clone(), self.0.scope.clone(), approver)
    }

    /// Switch a group on or off in this toolkit's scope (toolkit-wide for the toolkit itself,
    /// local for a [`view`](Self::view)).
    pub fn set_group_active(&self, group: &str, active: bool) -> Result<(), ConfigError> {
        let id = self.group_id(group)?;
        self.0.scope.set(id, active);
        Ok(())
    }

    /// Whether a group is on in this scope.
    pub fn is_group_active(&self, group: &str) -> Result<bool, ConfigError> {
        let id = self.group_id(group)?;
        Ok(self.0.active_groups()[id])
    }

    /// Every declared group.
    pub fn groups(&self) -> &[GroupInfo] {
        &self.0.inner.groups
    }

    /// Definitions of the tools active in this scope, in registration order. Built from the
    /// cached [`snapshot`](Self::snapshot); costs one reference count per active tool.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.snapshot().to_vec()
    }

    /// The tools active in this scope, as a shared snapshot. Rebuilt only when the active set
    /// changes (a bit scan over the tools); otherwise two reference counts.
    pub fn snapshot(&self) -> ToolSnapshot {
        self.0.snapshot()
    }

    /// Make these deferred tools callable in this scope (toolkit-wide for the toolkit itself,
    /// local for a [`view`](Self::view)), as a search that found them does; returns the names
    /// newly made callable. Names of tools that are not deferred, not in an active group, or
    /// unknown are skipped. A view sees the tools found toolkit-wide as well as its own.
    pub fn load_tools<S: AsRef<str>>(&self, names: impl IntoIterator<Item = S>) -> Vec<String> {
        let wanted: Vec<String> = names
            .into_iter()
            .filter(|n| matches!(self.find(n.as_ref()), Some((_, Availability::Deferred))))
            .map(|n| self.canonical_name(n.as_ref()))
            .collect();
        self.0.scope.find(wanted)
    }

    /// The tools of this scope best matching `query` (BM25F over name, description and
    /// parameters; see [`search`](crate::search)), at most `limit`, best first: the deferred
    /// tools not found yet and the tools already callable alike, of active groups only. The
    /// index is built on the first search and follows [`DynamicTools`] changes incrementally.
    /// Searching finds; it does not load ([`load_tools`](Self::load_tools)).
    pub fn search_tools(&self, query: &str, limit: usize) -> Vec<crate::search::SearchHit> {
        // Asked only about the best-ranked tools: a lookup each.
        let reachable = |name: &str| {
            matches!(
                self.find(name),
                Some((_, Availability::Active | Availability::Deferred))
            )
        };
        let mut state = crate::util::lock(&self.0.inner.search);
        let version = self.0.inner.dynamic.iter().map(|d| d.tools.version()).sum();
        let index = state.refresh(&self.0.inner.table, version, || self.dynamic_definitions());
        index.search_where(query, limit, reachable)
    }

    /// The deferred tools of `snapshot` (from this toolkit), each with the index of its group
    /// (its first, for a registered tool in several) among [`groups`](Self::groups).
    pub(crate) fn deferred_with_groups(
        &self,
        snapshot: &ToolSnapshot,
    ) -> Vec<(ToolDefinition, Option<usize>)> {
        let fixed = snapshot.deferred_indices().map(|i| {
            (
                self.0.inner.table[i].clone(),
                self.0.inner.masks.first_group(i),
            )
        });
        let dynamic = snapshot.deferred_dynamic_entries().iter().map(|e| {
            let name = e.definition.name();
            let group = self
                .0
                .inner
                .dynamic
                .iter()
                .find(|d| d.tools.current().get(name).is_some())
                .map(|d| d.group);
            (e.definition.clone(), group)
        });
        fixed.chain(dynamic).collect()
    }

    /// The toolkit's result budget: the longest output handed to the model, in bytes
    /// ([`ToolkitBuilder::max_output_bytes`]).
    pub fn max_output_bytes(&self) -> usize {
        self.0.inner.exec_base.max_output_bytes
    }

    /// Whether this scope has deferred tools not found yet.
    pub fn has_deferred(&self) -> bool {
        self.snapshot().deferred().len() > 0
    }

    fn is_found(&self, name: &str) -> bool {
        self.0.inner.default_scope.is_found(name) || self.0.scope.is_found(name)
    }

    /// Every tool of the dynamic sets now, earlier sets first (hidden duplicates included).
    fn dynamic_definitions(&self) -> Vec<ToolDefinition> {
        self.0
            .inner
            .dynamic
            .iter()
            .flat_map(|d| {
                let set = d.tools.current();
                set.entries
                    .iter()
                    .map(|e| e.definition.clone())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Wake-ups for every later change that may alter the tools active in this scope: a group
    /// switched toolkit-wide or in this view, or a [`DynamicTools`] set replaced. This is how
    /// a server pushes "the tool list changed" to its clients.
    pub fn watch_changes(&self) -> ToolChanges {
        let mut receivers = vec![self.0.inner.default_scope.subscribe()];
        if !Arc::ptr_eq(&self.0.scope, &self.0.inner.default_scope) {
            receivers.push(self.0.scope.subscribe());
        }
        receivers.extend(self.0.inner.dynamic.iter().map(|d| d.tools.subscribe()));
        ToolChanges::new(receivers)
    }

    /// The active tools in one provider's wire format (names sanitised for it; calls using
    /// the sanitised names are mapped back by [`call`](Self::call)).
    pub fn definitions_for(&self, dialect: Dialect) -> Vec<Value> {
        let map = &self.0.inner.name_maps[dialect as usize];
        let snapshot = self.snapshot();
        let fixed = snapshot.indices().map(|i| {
            let def = &self.0.inner.table[i];
            self.0.inner.entries[i].rendered[dialect as usize]
                .get_or_init(|| {
                    let name = map.wire_name(def.name()).unwrap_or(def.name());
                    dialect.render(def, name)
                })
                .clone()
        });
        // Dynamic tools are not in the name maps; their names are sanitised one by one.
        let dynamic = snapshot.dynamic_entries().iter().map(|e| {
            e.rendered[dialect as usize]
                .get_or_init(|| {
                    let def = &e.definition;
                    dialect.render(def, &dialect.sanitize_name(def.name()))
                })
                .clone()
        });
        fixed.chain(dynamic).collect()
    }

    /// The definition of one registered tool (active or not). Tools of [`DynamicTools`] sets
    /// are not registrations: find them in a [`snapshot`](Self::snapshot).
    pub fn definition(&self, name: &str) -> Option<&ToolDefinition> {
        self.lookup(name).map(|i| &self.0.inner.table[i])
    }

    /// The options of one registered tool (not of a tool of a [`DynamicTools`] set).
    pub fn options(&self, name: &str) -> Option<&ToolOptions> {
        self.lookup(name).map(|i| &*self.0.inner.entries[i].options)
    }

    /// The registered name behind a name used on the wire of `dialect`.
    pub fn original_name<'a>(&'a self, dialect: Dialect, wire: &'a str) -> Option<&'a str> {
        self.0.inner.name_maps[dialect as usize].original_name(wire)
    }

    /// Run one call through the execution stack. Always returns exactly one result: unknown or
    /// switched-off tools, argument errors, tool failures, timeouts, panics and cancellation all
    /// become model-visible error results. A call of a `background` tool returns a pending
    /// result at once (see [`background`](Self::background)).
    pub async fn call(&self, call: ToolCall, ctx: &ToolContext) -> ToolResult {
        self.call_as(call, ctx, true).await
    }

    /// Run the call here and wait for its result, even when the tool is `background` (which
    /// [`call`](Self::call) submits and answers pending): what a worker of a durable queue does
    /// with each job, and a way to test a background tool's own behaviour. Everything else is
    /// as for `call` (the stack, the rule for arguments, exactly one result).
    pub async fn call_now(&self, call: ToolCall, ctx: &ToolContext) -> ToolResult {
        self.call_as(call, ctx, false).await
    }

    async fn call_as(&self, call: ToolCall, ctx: &ToolContext, submit: bool) -> ToolResult {
        let ToolCall {
            id,
            name,
            arguments,
        } = call;
        let inv = match self.prepare(&id, &name, arguments, ctx) {
            Ok(inv) => inv,
            Err(error) => return rejected(id, name, error),
        };
        if submit && inv.options().background {
            // The ledger keeps the call as the model made it.
            let arguments = inv
                .args
                .as_ref()
                .map(|a| a.raw().to_string())
                .unwrap_or_default();
            // Boxed: the submission (a database round trip with a durable queue) would
            // otherwise grow every call's future, foreground ones included.
            return Box::pin(self.submit(
                ToolCall {
                    id,
                    name,
                    arguments,
                },
                inv,
                ctx,
            ))
            .await;
        }
        let attempts = inv.attempt_counter();
        let outcome = self.0.inner.stack.run(inv).await;
        ToolResult::new(id, name, outcome, attempts.load(Ordering::Relaxed))
    }

    /// Run a batch of calls (one model turn) and return their results in call order.
    ///
    /// Calls run concurrently, at most [`max_concurrency`](ToolkitBuilder::max_concurrency) at a
    /// time; each call of a `sequential` tool waits for the calls before it and runs alone.
    /// Calls of `background` tools are submitted all together (with a durable queue, in one
    /// transaction) and do not count against the cap: they answer pending at once. A
    /// call id used twice gets an error result for the second call. Dropping the returned
    /// future cancels every call still running (their futures are dropped).
    pub async fn call_all(&self, calls: Vec<ToolCall>, ctx: &ToolContext) -> Vec<ToolResult> {
        let count = calls.len();
        let mut slots: Vec<Option<ToolResult>> = (0..count).map(|_| None).collect();
        let mut stream = std::pin::pin!(self.indexed_stream(calls, ctx));
        while let Some((index, result)) = stream.next().await {
            slots[index] = Some(result);
        }
        slots.into_iter().flatten().collect()
    }

    /// Like [`call_all`](Self::call_all), but yields each result as soon as its call finishes;
    /// results carry their call id. Sequential tools still act as barriers.
    pub fn call_stream<'a>(
        &'a self,
        calls: Vec<ToolCall>,
        ctx: &'a ToolContext,
    ) -> impl Stream<Item = ToolResult> + Send + 'a {
        self.indexed_stream(calls, ctx).map(|(_, result)| result)
    }

    fn indexed_stream<'a>(
        &'a self,
        calls: Vec<ToolCall>,
        ctx: &'a ToolContext,
    ) -> impl Stream<Item = (usize, ToolResult)> + Send + 'a {
        let max = self.0.inner.max_concurrency;
        let options = |name: &str| match self.find(name) {
            Some((Found::Registered(i), _)) => Some(self.0.inner.entries[i].options.clone()),
            Some((Found::Dynamic(e), _)) => Some(e.options.clone()),
            None => None,
        };
        let segments = batch::plan(calls, |call| {
            options(&call.name).is_some_and(|o| o.sequential)
        });
        futures::stream::iter(segments).flat_map(move |segment| {
            // Background calls only submit (each answers pending at once): they all go
            // together, whatever the cap, so that a durable queue stores them in one
            // transaction. The cap is for the calls that run here.
            let (submits, runs): (Vec<_>, Vec<_>) =
                segment.into_iter().partition(|(_, item)| match item {
                    BatchItem::Run(call) => options(&call.name).is_some_and(|o| o.background),
                    BatchItem::Answered(_) => false,
                });
            let run = move |(index, item): (usize, BatchItem)| async move {
                match item {
                    BatchItem::Run(call) => (index, self.call(call, ctx).await),
                    BatchItem::Answered(result) => (index, result),
                }
            };
            let together = submits.len().max(1);
            futures::stream::select(
                futures::stream::iter(submits)
                    .map(run)
                    .buffer_unordered(together),
                futures::stream::iter(runs).map(run).buffer_unordered(max),
            )
        })
    }

    /// Most calls running at once: the cap on a batch of [`call_all`](Self::call_all), which
    /// servers built on the toolkit apply across their concurrent requests too.
    pub fn max_concurrency(&self) -> usize {
        self.0.inner.max_concurrency
    }

    /// The toolkit's background queue and ledger (shared by all clones and views).
    pub fn background(&self) -> &BackgroundJobs {
        &self.0.inner.background
    }

    /// Submit a background call to the toolkit's queue ([`BackgroundJobs::submit`]), answering
    /// a refusal like any call refused before its tool ran.
    async fn submit(&self, call: ToolCall, inv: ToolInvocation, ctx: &ToolContext) -> ToolResult {
        let (id, name) = (call.id.clone(), call.name.clone());
        let reads = self.context_reads(&call.name);
        let stack = self.0.inner.stack.clone();
        match self
            .0
            .inner
            .background
            .submit(call, inv, stack, reads, ctx)
            .await
        {
            Ok(pending) => pending,
            Err(error) => rejected(id, name, error),
        }
    }

    /// What each `#[ctx]` parameter of a registered tool reads from the context, by its Rust
    /// type (a backend that cannot carry a call's context refuses calls that need it).
    fn context_reads(&self, name: &str) -> Vec<(&'static str, ContextReads)> {
        let Some(i) = self.lookup(name) else {
            return Vec::new();
        };
        self.0.inner.entries[i]
            .plan
            .params
            .iter()
            .filter(|p| p.kind == ParamKind::Context)
            .map(|p| {
                (
                    p.rust_type,
                    p.reads.map_or(ContextReads::Nothing, |reads| reads()),
                )
            })
            .collect()
    }

    /// Look the tool up, check it is active, resolve its arguments, and build the invocation.
    fn prepare(
        &self,
        id: &Arc<str>,
        name: &str,
        arguments: String,
        ctx: &ToolContext,
    ) -> Result<ToolInvocation, ToolError> {
        let Some((found, availability)) = self.find(name) else {
            return Err(ToolError::new(
                ToolErrorKind::UnknownTool,
                format!(
                    "there is no tool named `{name}`; available tools: {}",
                    self.available_list()
                ),
            ));
        };
        match availability {
            Availability::Active => {}
            Availability::Off => {
                return Err(ToolError::new(
                    ToolErrorKind::Unavailable,
                    format!(
                        "tool `{name}` is not available; available tools: {}",
                        self.available_list()
                    ),
                ));
            }
            Availability::Deferred => {
                return Err(ToolError::new(
                    ToolErrorKind::Unavailable,
                    format!(
                        "tool `{name}` is not loaded yet: search for it first (the `{}` tool), then call it; available tools: {}",
                        crate::search::SEARCH_TOOL,
                        self.available_list()
                    ),
                ));
            }
        }
        let (entry, settings) = match &found {
            Found::Registered(i) => (&self.0.inner.entries[*i], self.0.inner.settings[*i].clone()),
            Found::Dynamic(entry) => {
                // A dynamic set may sit in several toolkits: its settings are this one's.
                let settings = compile::settings_for(
                    &entry.options,
                    compile::Overrides::default(),
                    &self.0.inner.exec_base,
                );
                (&**entry, Arc::new(settings))
            }
        };
        let info = CallInfo {
            call_id: id.clone(),
            tool_name: entry.plan.tool.clone(),
        };
        // The calling view rides along (one reference count): a tool that searches, equips or runs
        // a program takes it with `#[ctx] toolkit: Toolkit`.
        let caller = entry.wants_caller.then(|| {
            let caller: Arc<dyn std::any::Any + Send + Sync> = self.0.clone();
            caller
        });
        let call_ctx = ctx.for_call(info.clone(), Some(&self.0.inner.context), caller);
        let args = args::resolve(&entry.plan, arguments, call_ctx, &self.0.inner.policy);
        Ok(ToolInvocation::new(
            entry.tool.clone(),
            entry.options.clone(),
            settings,
            self.0.approver.clone(),
            args,
            info,
            entry.pace.clone(),
        ))
    }

    /// For an agent that pauses at approvals: the registered name of the tool `call` reaches
    /// when the engine would ask an approver about it — the tool is known, active and
    /// `requires_approval`, and the arguments pass `ToolArgs::validate` — which are exactly the
    /// calls the approval layer sends to its hook. `None` for every other call, which the
    /// engine answers itself (runs it, or refuses it with the error it gives anyway).
    pub(crate) fn approval_needed(&self, call: &ToolCall, ctx: &ToolContext) -> Option<Arc<str>> {
        let inv = self
            .prepare(&call.id, &call.name, call.arguments.clone(), ctx)
            .ok()?;
        if !inv.options().requires_approval {
            return None;
        }
        let tool = inv.info().tool_name.clone();
        let mut args = inv.args.ok()?;
        args.validate().ok()?;
        Some(tool)
    }

    /// Whether the tool a call of `name` reaches requires approval; `None` when no tool of
    /// this toolkit answers to `name`.
    pub(crate) fn requires_approval(&self, name: &str) -> Option<bool> {
        match self.find(name)? {
            (Found::Registered(i), _) => Some(self.0.inner.entries[i].options.requires_approval),
            (Found::Dynamic(e), _) => Some(e.options.requires_approval),
        }
    }

    /// The tool a call of `name` reaches, and whether it may be called in this scope.
    /// Registered tools are found by their name or a dialect's wire name for it; a name no
    /// registration has is looked up in the dynamic sets, where earlier sets hide later ones.
    /// Whether a call of `name` is given the calling view (and so may make turns of its own):
    /// its tool takes a [`Toolkit`] or the whole context, or does not say what it reads.
    /// Whether calling `name` twice with the same arguments gives what calling it once does
    /// (a read-only or idempotent tool).
    pub(crate) fn repeatable(&self, name: &str) -> bool {
        let hints = |d: &ToolDefinition| d.annotations().read_only || d.annotations().idempotent;
        match self.definition(name) {
            Some(definition) => hints(definition),
            None => self.snapshot().get(name).is_some_and(hints),
        }
    }

    pub(crate) fn gives_calling_view(&self, name: &str) -> bool {
        match self.find(name) {
            Some((Found::Registered(i), _)) => self.0.inner.entries[i].wants_caller,
            Some((Found::Dynamic(entry), _)) => entry.wants_caller,
            // A wire name of a dialect, or an unknown tool: refused, or answered for the name
            // behind it; assume it may.
            None => true,
        }
    }

    fn find(&self, name: &str) -> Option<(Found, Availability)> {
        if let Some(i) = self.lookup(name) {
            let masks = &self.0.inner.masks;
            let availability = if masks.is_always_active(i) {
                Availability::Active
            } else {
                let snapshot = self.snapshot();
                if snapshot.contains_index(i) {
                    Availability::Active
                } else if snapshot.contains_deferred_index(i) {
                    Availability::Deferred
                } else {
                    Availability::Off
                }
            };
            return Some((Found::Registered(i), availability));
        }
        if let Some(entry) = self.0.scope.tool(name) {
            return Some((Found::Dynamic(entry.clone()), Availability::Active));
        }
        let (registration, entry) = self
            .0
            .inner
            .dynamic
            .iter()
            .find_map(|d| d.tools.current().get(name).map(|e| (d, e.clone())))?;
        let availability = if !self.0.active_groups()[registration.group] {
            Availability::Off
        } else if (registration.deferred || entry.options.defer_loading)
            && !self.is_found(entry.definition.name())
        {
            Availability::Deferred
        } else {
            Availability::Active
        };
        Some((Found::Dynamic(entry), availability))
    }

    /// The registered name behind `name` (a wire name is mapped back); other names as given.
    fn canonical_name(&self, name: &str) -> String {
        self.lookup(name)
            .map_or(name, |i| self.0.inner.table[i].name())
            .to_string()
    }

    fn lookup(&self, name: &str) -> Option<usize> {
        if let Some(&i) = self.0.inner.by_name.get(name) {
            return Some(i);
        }
        self.0
            .inner
            .name_maps
            .iter()
            .find_map(|m| m.original_name(name))
            .and_then(|original| self.0.inner.by_name.get(original).copied())
    }

    fn available_list(&self) -> String {
        let snapshot = self.snapshot();
        let names: Vec<&str> = snapshot.iter().map(|d| d.name()).collect();
        if names.is_empty() {
            "none".into()
        } else {
            names.join(", ")
        }
    }

    /// The index of a declared group, or the error naming the groups there are.
    pub(crate) fn group_id(&self, group: &str) -> Result<usize, ConfigError> {
        self.0
            .inner
            .groups
            .iter()
            .position(|g| g.name == group)
            .ok_or_else(|| ConfigError::NoSuchGroup {
                name: group.to_string(),
                known: self
                    .0
                    .inner
                    .groups
                    .iter()
                    .map(|g| g.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

/// The calling view: a tool with a `#[ctx] toolkit: Toolkit` parameter gets the toolkit handle
/// it is being called through — its view's group state, the tools found in it, its approver —
/// so that a tool which searches, equips a group or runs a program is an ordinary tool. Calls
/// through an agent get the agent's view; a durable background job run by a worker gets the
/// worker's toolkit.
impl crate::context::FromToolContext for Toolkit {
    fn context_reads() -> crate::context::ContextReads {
        crate::context::ContextReads::of::<Toolkit>()
    }

    fn from_tool_context(ctx: &ToolContext) -> Result<Self, crate::context::ContextRejection> {
        ctx.caller()
            .and_then(|caller| Arc::clone(caller).downcast::<Handle>().ok())
            .map(Toolkit)
            .ok_or_else(|| {
                crate::context::ContextRejection::new(
                    "Toolkit",
                    "the calling toolkit exists only while a toolkit runs the call",
                )
            })
    }
}

impl Handle {
    /// The tools active in this scope, as a shared snapshot. Rebuilt only when the active set
    /// changes (a bit scan over the tools); otherwise two reference counts.
    fn snapshot(&self) -> ToolSnapshot {
        // A view that has switched no group and found no tool (version 0) sees exactly what
        // the toolkit sees: the toolkit's cached snapshot serves it, so that fresh views (an MCP
        // session, a stateless request) cost no rebuild.
        if self.scope.version() == 0
            && !self.scope.has_tools()
            && !Arc::ptr_eq(&self.scope, &self.inner.default_scope)
        {
            let root = Handle {
                inner: self.inner.clone(),
                scope: self.inner.default_scope.clone(),
                approver: None,
            };
            return root.snapshot();
        }
        // Versions first: a toggle racing with the rebuild then invalidates what we cache.
        let versions = self.versions();
        self.scope.cached(versions, || {
            let active = self.active_groups();
            let found = self.found();
            let table = &self.inner.table;
            let snapshot = ToolSnapshot::build(table, &self.inner.masks, &active, |i| {
                found.contains(table[i].name())
            });
            if self.inner.dynamic.is_empty() && !self.scope.has_tools() {
                return snapshot;
            }
            let (dynamic, deferred) = self.active_dynamic(&active, &found);
            // The dynamic sets' tools, then the view's own (unless a registered tool hides one;
            // a view's tool hides a dynamic one).
            let mine = |name: &str| self.scope.tool(name).is_some();
            let loaded = dynamic
                .into_iter()
                .filter(|e| !mine(e.definition.name()))
                .chain(
                    self.scope
                        .tools()
                        .filter(|e| !self.inner.by_name.contains_key(e.definition.name()))
                        .cloned(),
                )
                .collect();
            snapshot.with_dynamic(loaded, deferred)
        })
    }

    /// Deferred tools found in this scope and toolkit-wide.
    fn found(&self) -> rustc_hash::FxHashSet<String> {
        let mut found = self.inner.default_scope.found();
        if !Arc::ptr_eq(&self.scope, &self.inner.default_scope) {
            found.extend(self.scope.found());
        }
        found
    }

    /// The tools of dynamic sets in these active groups, without hidden duplicates: those
    /// callable, and the deferred ones not found yet.
    fn active_dynamic(
        &self,
        active: &[bool],
        found: &rustc_hash::FxHashSet<String>,
    ) -> (Vec<Arc<Entry>>, Vec<Arc<Entry>>) {
        let mut seen = rustc_hash::FxHashSet::default();
        let mut out = Vec::new();
        let mut deferred = Vec::new();
        for registration in &self.inner.dynamic {
            let set = registration.tools.current();
            for entry in &set.entries {
                let name = entry.definition.name();
                if self.inner.by_name.contains_key(name) || !seen.insert(name.to_string()) {
                    tracing::warn!(
                        tool = name,
                        "a tool of a dynamic set has the name of another tool and is hidden"
                    );
                    continue;
                }
                if !active[registration.group] {
                    continue;
                }
                if (registration.deferred || entry.options.defer_loading) && !found.contains(name) {
                    deferred.push(entry.clone());
                } else {
                    out.push(entry.clone());
                }
            }
        }
        (out, deferred)
    }

    /// Effective group state of this scope: its overrides over the toolkit-wide state.
    fn active_groups(&self) -> Vec<bool> {
        let base = self.inner.default_scope.snapshot();
        if Arc::ptr_eq(&self.scope, &self.inner.default_scope) {
            return base;
        }
        self.scope.overlay_on(base)
    }

    fn versions(&self) -> Versions {
        let dynamic = self.inner.dynamic.iter().map(|d| d.tools.version()).sum();
        [
            self.inner.default_scope.version(),
            self.scope.version(),
            dynamic,
        ]
    }
}

/// The result of a call refused before any tool ran, traced like every other call.
fn rejected(call_id: Arc<str>, name: String, error: ToolError) -> ToolResult {
    let span = exec::trace::span(&name, &call_id);
    span.record("error.type", error.kind().as_str());
    span.record("gen_ai.tool.attempts", 0);
    span.in_scope(|| tracing::info!(error.type = error.kind().as_str(), error.message = error.message(), "tool call refused"));
    ToolResult::new(call_id, name, Err(error), 0)
}
