//! Hidden values a tool receives by type: [`ToolContext`] and the [`FromToolContext`] extractors.
//!
//! A context is three layers looked up in order **call > agent > toolkit**: a value put in the
//! call's context shadows one of the same type in the agent's, which shadows the toolkit's.
//! Parameters marked `#[ctx]` are filled through [`FromToolContext`], a small trait anyone can
//! implement, the way axum's `FromRequestParts` works; [`Ctx<T>`], [`ToolEmitter`],
//! [`CallInfo`], [`AgentInfo`] and [`CancellationToken`] are ordinary implementations of it.

use std::any::{Any, TypeId, type_name};
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use tokio::sync::mpsc;
pub use tokio_util::sync::CancellationToken;

/// One layer of typed values. Small by nature (a handful of types), so a vector beats a hash map.
#[derive(Clone, Default)]
struct Layer {
    values: Vec<(TypeId, &'static str, Arc<dyn Any + Send + Sync>)>,
}

impl Layer {
    fn insert<T: Send + Sync + 'static>(&mut self, value: Arc<T>) {
        let id = TypeId::of::<T>();
        match self.values.iter_mut().find(|(t, _, _)| *t == id) {
            Some(slot) => slot.2 = value,
            None => self.values.push((id, type_name::<T>(), value)),
        }
    }

    fn get(&self, id: TypeId) -> Option<&Arc<dyn Any + Send + Sync>> {
        self.values
            .iter()
            .find(|(t, _, _)| *t == id)
            .map(|(_, _, v)| v)
    }
}

/// Which layer of a [`ToolContext`] a value goes into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContextLayer {
    /// Values for one call or one batch (highest precedence).
    Call,
    /// Values of one agent.
    Agent,
    /// Values of the toolkit, given to [`ToolkitBuilder::context`](crate::ToolkitBuilder::context)
    /// (lowest precedence).
    Toolkit,
}

/// Typed values handed to tools at call time, plus the per-call facilities (call info,
/// cancellation, progress sink).
///
/// Cloning is cheap: layers are shared and copied only when written after being shared.
#[derive(Clone, Default)]
pub struct ToolContext {
    layers: [Option<Arc<Layer>>; 3],
    call: Option<CallInfo>,
    cancel: Option<CancellationToken>,
    progress: Option<mpsc::Sender<ToolProgress>>,
}

impl ToolContext {
    /// An empty context.
    pub fn new() -> Self {
        Self::default()
    }

    /// Put `value` into the call layer. Replaces a value of the same type in that layer.
    pub fn with<T: Send + Sync + 'static>(self, value: T) -> Self {
        self.with_in(ContextLayer::Call, value)
    }

    /// Put `value` into the given layer.
    pub fn with_in<T: Send + Sync + 'static>(mut self, layer: ContextLayer, value: T) -> Self {
        self.insert_in(layer, value);
        self
    }

    /// Put `value` into the given layer, in place.
    pub fn insert_in<T: Send + Sync + 'static>(&mut self, layer: ContextLayer, value: T) {
        self.insert_shared_in(layer, Arc::new(value));
    }

    /// Put a shared value into the call layer: tools get this same `Arc` through [`Ctx<T>`],
    /// so the caller can watch or change what they see.
    pub fn with_shared<T: Send + Sync + 'static>(mut self, value: Arc<T>) -> Self {
        self.insert_shared_in(ContextLayer::Call, value);
        self
    }

    /// Put a shared value into the given layer, in place.
    pub fn insert_shared_in<T: Send + Sync + 'static>(
        &mut self,
        layer: ContextLayer,
        value: Arc<T>,
    ) {
        let slot = &mut self.layers[layer as usize];
        Arc::make_mut(slot.get_or_insert_with(Default::default)).insert(value);
    }

    /// Use `agent`'s agent layer as this context's agent layer (keeping this context's own call
    /// layer): how an agent places its values between the call's and the toolkit's.
    pub fn with_layer_from_agent(mut self, agent: &ToolContext) -> Self {
        let i = ContextLayer::Agent as usize;
        self.layers[i] = agent.layers[i].clone();
        self
    }

    /// The value of type `T`, looking in the call, agent and toolkit layers in that order.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        let id = TypeId::of::<T>();
        self.layers
            .iter()
            .flatten()
            .find_map(|layer| layer.get(id))
            .and_then(|v| Arc::clone(v).downcast::<T>().ok())
    }

    /// Which layer holds the value of type `T`, if any.
    pub fn layer_of<T: Send + Sync + 'static>(&self) -> Option<ContextLayer> {
        let id = TypeId::of::<T>();
        [
            ContextLayer::Call,
            ContextLayer::Agent,
            ContextLayer::Toolkit,
        ]
        .into_iter()
        .find(|l| {
            self.layers[*l as usize]
                .as_ref()
                .is_some_and(|layer| layer.get(id).is_some())
        })
    }

    /// Type names of every value present, for error messages.
    pub fn type_names(&self) -> Vec<&'static str> {
        let mut names: Vec<_> = self
            .layers
            .iter()
            .flatten()
            .flat_map(|l| l.values.iter().map(|(_, n, _)| *n))
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// Cancel the tools of this context when `token` is cancelled.
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// The cancellation token set on this context, if any.
    pub fn cancellation_token(&self) -> Option<CancellationToken> {
        self.cancel.clone()
    }

    /// The cancellation token of this context (a fresh, never-cancelled one if none was set).
    pub fn cancellation(&self) -> CancellationToken {
        self.cancel.clone().unwrap_or_default()
    }

    /// Deliver [`ToolEmitter`] progress of the calls made with this context to `sink`.
    ///
    /// Delivery never blocks a tool: when the channel is full the event is dropped (and
    /// counted in [`ToolEmitter::dropped`]). Size the channel for the burst you expect.
    pub fn with_progress(mut self, sink: mpsc::Sender<ToolProgress>) -> Self {
        self.progress = Some(sink);
        self
    }

    /// A context with a fresh progress channel of `capacity` events, and its receiver.
    pub fn progress_channel(self, capacity: usize) -> (Self, mpsc::Receiver<ToolProgress>) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        (self.with_progress(tx), rx)
    }

    /// The call this context is serving, if it is serving one.
    pub fn call_info(&self) -> Option<&CallInfo> {
        self.call.as_ref()
    }

    /// The same context, bound to one call. Done by the toolkit before a tool runs.
    pub(crate) fn for_call(&self, info: CallInfo, toolkit: Option<&ToolkitLayer>) -> Self {
        let mut ctx = self.clone();
        // An empty toolkit layer would only cost reference counts on every call.
        if let Some(layer) = toolkit.filter(|l| !l.0.values.is_empty()) {
            ctx.layers[ContextLayer::Toolkit as usize] = Some(layer.0.clone());
        }
        ctx.call = Some(info);
        ctx
    }
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("types", &self.type_names())
            .field("call", &self.call)
            .finish_non_exhaustive()
    }
}

/// The toolkit's own context layer, built once by the builder.
#[derive(Clone, Default)]
pub struct ToolkitLayer(Arc<Layer>);

impl ToolkitLayer {
    pub(crate) fn insert<T: Send + Sync + 'static>(&mut self, value: Arc<T>) {
        Arc::make_mut(&mut self.0).insert(value);
    }
}

impl fmt::Debug for ToolkitLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.0.values.iter().map(|(_, n, _)| n))
            .finish()
    }
}

/// Why a `#[ctx]` parameter could not be filled.
#[derive(Clone, Debug)]
pub struct ContextRejection {
    /// What was missing, e.g. the type name.
    pub missing: String,
    /// How to fix it, for the operator.
    pub hint: String,
}

impl ContextRejection {
    /// A rejection for a missing value of type `T`.
    pub fn missing<T: ?Sized>() -> Self {
        ContextRejection {
            missing: type_name::<T>().to_string(),
            hint: format!(
                "put a `{}` in the call context (`ToolContext::with`), the agent's context or the toolkit's (`ToolkitBuilder::context`)",
                type_name::<T>()
            ),
        }
    }
}

/// Build a value from the [`ToolContext`] of a call. Implement it for your own extractors.
///
/// ```
/// use agent_toolkit::{ContextRejection, FromToolContext, ToolContext};
///
/// struct TenantId(String);
/// struct Session { tenant: String }
///
/// impl FromToolContext for TenantId {
///     fn from_tool_context(ctx: &ToolContext) -> Result<Self, ContextRejection> {
///         ctx.get::<Session>()
///             .map(|s| TenantId(s.tenant.clone()))
///             .ok_or_else(ContextRejection::missing::<Session>)
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be injected into a tool as a `#[ctx]` parameter",
    label = "not a context extractor",
    note = "use `Ctx<{Self}>` to inject a value put into the context, or implement `FromToolContext` for `{Self}`",
    note = "built-in extractors: `Ctx<T>`, `ToolEmitter`, `CallInfo`, `AgentInfo`, `CancellationToken`, `ToolContext`, and `Option<E>` of any extractor"
)]
pub trait FromToolContext: Sized {
    /// Extract the value, or say what is missing.
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ContextRejection>;
}

/// A value of type `T` taken from the context, shared (no clone of `T`).
pub struct Ctx<T>(pub Arc<T>);

impl<T> Deref for Ctx<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> Clone for Ctx<T> {
    fn clone(&self) -> Self {
        Ctx(self.0.clone())
    }
}

impl<T: fmt::Debug> fmt::Debug for Ctx<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<T: Send + Sync + 'static> FromToolContext for Ctx<T> {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ContextRejection> {
        ctx.get::<T>()
            .map(Ctx)
            .ok_or_else(ContextRejection::missing::<T>)
    }
}

impl<E: FromToolContext> FromToolContext for Option<E> {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ContextRejection> {
        Ok(E::from_tool_context(ctx).ok())
    }
}

impl FromToolContext for ToolContext {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ContextRejection> {
        Ok(ctx.clone())
    }
}

impl FromToolContext for CancellationToken {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ContextRejection> {
        Ok(ctx.cancellation())
    }
}

/// Which call a tool is serving.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallInfo {
    /// The call id the model gave.
    pub call_id: Arc<str>,
    /// The tool's registered name.
    pub tool_name: Arc<str>,
}

impl FromToolContext for CallInfo {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ContextRejection> {
        ctx.call.clone().ok_or_else(|| ContextRejection {
            missing: "CallInfo".into(),
            hint: "CallInfo exists only while the toolkit runs a call".into(),
        })
    }
}

/// Which agent is running the call — the agent reference of a tool (AgentScope's
/// `getAgentName(Agent agent)`): its name and id, the run, and the step.
///
/// A [`ReActAgent`](crate::ReActAgent) puts one into its context layer for every step, so any
/// tool it runs can take `#[ctx] agent: AgentInfo`. A call made outside an agent
/// ([`Toolkit::call`](crate::Toolkit::call)) has none and fails with a
/// [`MissingContext`](crate::ToolErrorKind::MissingContext) error; a tool that may run either
/// way takes `#[ctx] agent: Option<AgentInfo>`. Like any context value it follows the layer
/// order: one put in the call context wins over the agent's, the agent's over the toolkit's.
///
/// ```
/// use agent_toolkit::prelude::*;
///
/// /// Say who is asking.
/// #[tool]
/// fn whoami(#[ctx] agent: AgentInfo) -> String {
///     format!("{} (step {} of run {})", agent.name, agent.iteration, agent.run_id)
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentInfo {
    /// The agent's name ([`ReActAgentBuilder::name`](crate::ReActAgentBuilder::name); `"agent"`
    /// by default). Several agents may share a name.
    pub name: Arc<str>,
    /// The agent's id, unique per agent instance ([`ReActAgent::id`](crate::ReActAgent::id)).
    pub id: Arc<str>,
    /// The run's id, unique per `run`, `run_stream` or `run_with_external_tools` call; a run
    /// continued with `resume_with_results` keeps its id.
    pub run_id: Arc<str>,
    /// The model turn of the run whose calls are running (1-based).
    pub iteration: usize,
}

impl FromToolContext for AgentInfo {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ContextRejection> {
        ctx.get::<AgentInfo>()
            .map(|info| (*info).clone())
            .ok_or_else(|| ContextRejection {
                missing: "AgentInfo".into(),
                hint: "AgentInfo is supplied only to tools run by a ReActAgent, and this call was made outside one (e.g. with Toolkit::call); take `Option<AgentInfo>` in a tool that may run either way".into(),
            })
    }
}

/// One progress event from a running tool.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolProgress {
    /// The call that reported it.
    pub call_id: Arc<str>,
    /// The tool that reported it.
    pub tool_name: Arc<str>,
    /// What was reported.
    pub event: ProgressEvent,
}

/// What a tool reported through its [`ToolEmitter`].
#[derive(Clone, Debug, PartialEq)]
pub enum ProgressEvent {
    /// `done` of `total` units (total unknown when `None`), with a message.
    Progress {
        /// Units done.
        done: f64,
        /// Units in all, if known.
        total: Option<f64>,
        /// What is happening.
        message: String,
    },
    /// A free-form chunk of partial output.
    Chunk(String),
}

/// The progress sink of one call. Sending never blocks and never fails the tool: with no
/// subscriber the event is discarded; with a full channel it is dropped and counted.
#[derive(Clone)]
pub struct ToolEmitter {
    call: Option<CallInfo>,
    sink: Option<mpsc::Sender<ToolProgress>>,
    dropped: Arc<std::sync::atomic::AtomicU64>,
}

impl ToolEmitter {
    /// Report `done` of `total` units.
    pub fn progress(
        &self,
        done: impl Into<f64>,
        total: impl Into<Option<f64>>,
        message: impl Into<String>,
    ) {
        self.send(ProgressEvent::Progress {
            done: done.into(),
            total: total.into(),
            message: message.into(),
        });
    }

    /// Report a chunk of partial output.
    pub fn chunk(&self, text: impl Into<String>) {
        self.send(ProgressEvent::Chunk(text.into()));
    }

    /// Whether anybody listens; lets a tool skip building expensive messages.
    pub fn is_connected(&self) -> bool {
        self.sink.as_ref().is_some_and(|s| !s.is_closed())
    }

    /// How many events were dropped because the subscriber's channel was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn send(&self, event: ProgressEvent) {
        let (Some(sink), Some(call)) = (&self.sink, &self.call) else {
            return;
        };
        let progress = ToolProgress {
            call_id: call.call_id.clone(),
            tool_name: call.tool_name.clone(),
            event,
        };
        if let Err(mpsc::error::TrySendError::Full(_)) = sink.try_send(progress) {
            self.dropped
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

impl fmt::Debug for ToolEmitter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolEmitter")
            .field("call", &self.call)
            .field("connected", &self.is_connected())
            .finish()
    }
}

impl FromToolContext for ToolEmitter {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ContextRejection> {
        Ok(ToolEmitter {
            call: ctx.call.clone(),
            sink: ctx.progress.clone(),
            dropped: Default::default(),
        })
    }
}
