//! Hidden values a tool receives by type: [`ToolContext`] and the [`FromToolContext`] extractors.
//!
//! A context holds values at three levels, looked up in order **call > agent > toolkit**: a
//! value put in the call's context ([`ToolContext::with`]) shadows one of the same type put in
//! an agent's ([`ReActAgentBuilder::context`](crate::agent::ReActAgentBuilder::context)), which
//! shadows the toolkit's ([`ToolkitBuilder::context`](crate::toolkit::ToolkitBuilder::context)).
//! Each level is filled the same way: `context(value)` (or `with(value)` on a call's context)
//! moves a value in, and its `_shared` form puts in an `Arc` the application keeps a handle on.
//!
//! Parameters marked `#[ctx]` are filled through [`FromToolContext`], a small trait anyone can
//! implement, the way axum's `FromRequestParts` works; [`Ctx<T>`], [`ToolEmitter`],
//! [`CallInfo`], [`AgentInfo`], [`CancellationToken`], and [`Elicitor`] and [`Sampler`]
//! (asking the caller, over the [`Caller`] in the context) are ordinary implementations of it.
//! Where no caller is set, an agent run that pauses holds a tool's question as a [`Question`]
//! for the application to give an [`Answer`] to.

mod agent_info;
mod ask;
mod emitter;
mod extract;
mod questions;

use std::any::{Any, TypeId, type_name};
use std::fmt;
use std::sync::Arc;

use tokio::sync::mpsc;
pub use tokio_util::sync::CancellationToken;

pub use agent_info::AgentInfo;
#[cfg(feature = "mcp")]
pub(crate) use ask::caller_of;
pub use ask::{AskError, Caller, Elicitation, Elicited, Elicitor, Sampled, Sampler, Sampling};
pub use emitter::{LogLevel, ProgressEvent, ToolEmitter, ToolProgress};
pub use extract::{CallInfo, ContextReads, ContextRejection, Ctx, FromToolContext};
pub(crate) use questions::QuestionBook;
pub use questions::{Answer, Question};

/// The values of one level. Small by nature (a handful of types), so a vector beats a hash map.
#[derive(Clone, Default)]
pub(crate) struct Values {
    values: Vec<(TypeId, &'static str, Arc<dyn Any + Send + Sync>)>,
}

impl Values {
    pub(crate) fn insert<T: Send + Sync + 'static>(&mut self, value: Arc<T>) {
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

    fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

impl fmt::Debug for Values {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.values.iter().map(|(_, n, _)| n))
            .finish()
    }
}

/// The levels of a context, highest precedence first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    /// Values for one call or one batch.
    Call,
    /// Values of one agent.
    Agent,
    /// Values of the toolkit.
    Toolkit,
}

/// Typed values handed to tools at call time, plus the per-call facilities (call info,
/// cancellation, progress sink).
///
/// Cloning is cheap: levels are shared and copied only when written after being shared.
#[derive(Clone, Default)]
pub struct ToolContext {
    levels: [Option<Arc<Values>>; 3],
    call: Option<CallInfo>,
    /// Behind one pointer: a context is moved with every call, and these are seldom set.
    signals: Option<Arc<Signals>>,
}

/// What a context carries besides its values and the call: each seldom set.
#[derive(Clone, Default)]
struct Signals {
    cancel: Option<CancellationToken>,
    progress: Option<mpsc::Sender<ToolProgress>>,
    /// The toolkit handle the call is made through (type-erased: the toolkit sits above this
    /// module), read back by the toolkit's extractor of the calling view.
    caller: Option<Arc<dyn Any + Send + Sync>>,
}

impl ToolContext {
    /// An empty context.
    pub fn new() -> Self {
        Self::default()
    }

    /// Put `value` into this call's context (it shadows a value of the same type of the agent
    /// or the toolkit); a value of the same type put before is replaced.
    pub fn with<T: Send + Sync + 'static>(self, value: T) -> Self {
        self.with_shared(Arc::new(value))
    }

    /// Put a shared value into this call's context: tools get this same `Arc` through
    /// [`Ctx<T>`], so the caller can watch or change what they see.
    pub fn with_shared<T: Send + Sync + 'static>(mut self, value: Arc<T>) -> Self {
        self.insert(Level::Call, value);
        self
    }

    /// The value of type `T`, looking at the call's, the agent's and the toolkit's values in
    /// that order.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        let id = TypeId::of::<T>();
        self.levels
            .iter()
            .flatten()
            .find_map(|level| level.get(id))
            .and_then(|v| Arc::clone(v).downcast::<T>().ok())
    }

    /// Cancel the tools of this context when `token` is cancelled.
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.signals_mut().cancel = Some(token);
        self
    }

    /// The cancellation token set on this context, if any. (A tool taking
    /// `#[ctx] token: CancellationToken` gets a never-cancelled token when none was set.)
    pub fn cancellation(&self) -> Option<&CancellationToken> {
        self.signals.as_ref()?.cancel.as_ref()
    }

    /// Deliver [`ToolEmitter`] progress of the calls made with this context to `sink`.
    ///
    /// Delivery never blocks a tool: when the channel is full the event is dropped (and
    /// counted in [`ToolEmitter::dropped`]). Size the channel for the burst you expect.
    pub fn with_progress(mut self, sink: mpsc::Sender<ToolProgress>) -> Self {
        self.signals_mut().progress = Some(sink);
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

    /// Put a shared value at one level, in place.
    pub(crate) fn insert<T: Send + Sync + 'static>(&mut self, level: Level, value: Arc<T>) {
        let slot = &mut self.levels[level as usize];
        Arc::make_mut(slot.get_or_insert_with(Default::default)).insert(value);
    }

    /// Use `agent`'s agent-level values as this context's (keeping this context's own call
    /// values): how an agent places its values between the call's and the toolkit's.
    pub(crate) fn with_agent_values_of(mut self, agent: &ToolContext) -> Self {
        let i = Level::Agent as usize;
        self.levels[i] = agent.levels[i].clone();
        self
    }

    /// Type names of every value present, for error messages.
    pub(crate) fn type_names(&self) -> Vec<&'static str> {
        let mut names: Vec<_> = self
            .levels
            .iter()
            .flatten()
            .flat_map(|l| l.values.iter().map(|(_, n, _)| *n))
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// The types (id and name) of the values at the call and agent levels: those a durable
    /// background job does not carry.
    #[cfg_attr(not(durable), allow(dead_code))]
    pub(crate) fn local_types(&self) -> Vec<(TypeId, &'static str)> {
        [Level::Call, Level::Agent]
            .iter()
            .filter_map(|l| self.levels[*l as usize].as_ref())
            .flat_map(|l| l.values.iter().map(|(id, name, _)| (*id, *name)))
            .collect()
    }

    /// The same context, bound to one call. Done by the toolkit before a tool runs.
    pub(crate) fn for_call(
        &self,
        info: CallInfo,
        toolkit: Option<&Arc<Values>>,
        caller: Option<Arc<dyn Any + Send + Sync>>,
    ) -> Self {
        let mut ctx = self.clone();
        if caller.is_some() {
            ctx.signals_mut().caller = caller;
        }
        // An empty toolkit level would only cost reference counts on every call.
        if let Some(toolkit) = toolkit.filter(|t| !t.is_empty()) {
            ctx.levels[Level::Toolkit as usize] = Some(toolkit.clone());
        }
        ctx.call = Some(info);
        ctx
    }

    /// The handle the call is made through, as [`for_call`](Self::for_call) was given it.
    pub(crate) fn caller(&self) -> Option<&Arc<dyn Any + Send + Sync>> {
        self.signals.as_ref()?.caller.as_ref()
    }

    /// The progress sink, for [`ToolEmitter`].
    pub(crate) fn progress(&self) -> Option<&mpsc::Sender<ToolProgress>> {
        self.signals.as_ref()?.progress.as_ref()
    }

    /// The signals, for writing (copied first when shared with another context).
    fn signals_mut(&mut self) -> &mut Signals {
        Arc::make_mut(self.signals.get_or_insert_default())
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::{Level, ToolContext, Values};

    #[derive(Debug, PartialEq)]
    struct Who(&'static str);

    #[test]
    fn values_are_looked_up_call_then_agent_then_toolkit() {
        let mut toolkit = Values::default();
        toolkit.insert(Arc::new(Who("toolkit")));
        let toolkit = Arc::new(toolkit);
        let info = super::CallInfo {
            call_id: Arc::from("1"),
            tool_name: Arc::from("t"),
        };
        let ctx = ToolContext::new().for_call(info.clone(), Some(&toolkit), None);
        assert_eq!(*ctx.get::<Who>().unwrap(), Who("toolkit"));

        let mut agent = ToolContext::new();
        agent.insert(Level::Agent, Arc::new(Who("agent")));
        let ctx = ToolContext::new().with_agent_values_of(&agent).for_call(
            info.clone(),
            Some(&toolkit),
            None,
        );
        assert_eq!(*ctx.get::<Who>().unwrap(), Who("agent"));

        let ctx = ToolContext::new()
            .with(Who("call"))
            .with_agent_values_of(&agent)
            .for_call(info, Some(&toolkit), None);
        assert_eq!(*ctx.get::<Who>().unwrap(), Who("call"));
    }
}
