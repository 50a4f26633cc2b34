//! Tools that change after the toolkit is built ([`DynamicTools`]), and [`ToolChanges`], which
//! tells a watcher that the tools active in a scope may have changed.
//!
//! A toolkit's registered tools are fixed by [`build`](super::ToolkitBuilder::build): their
//! definitions, group masks and argument plans sit in tables indexed by position. Tools whose
//! set is only known at run time (imported from an MCP server, which may add and remove tools
//! whenever it likes) live in a [`DynamicTools`] set instead, registered in one group with
//! [`ToolkitBuilder::dynamic`](super::ToolkitBuilder::dynamic). The set is swapped as a whole;
//! the toolkit consults the current set when it builds a snapshot (the set's version is part
//! of what the cached snapshot depends on) and when a call names a tool it has no registration
//! for. Everything else — groups, the precedence rule, the execution stack — is the same as
//! for registered tools.

use std::sync::{Arc, RwLock, Weak};

use rustc_hash::FxHashMap;
use tokio::sync::watch;

use super::compile::{Entry, Origin, compile};
use crate::error::{BuildError, ConfigError};
use crate::tool::AgentTool;

/// A set of tools that can be replaced while the toolkits it is registered in are in use.
///
/// Register it with [`ToolkitBuilder::dynamic`](super::ToolkitBuilder::dynamic); then every
/// [`replace`](Self::replace) is seen by those toolkits (and their views) from their next
/// snapshot or call on. Clones share the set. A call already running keeps the tool it
/// started with.
///
/// ```
/// use std::sync::Arc;
/// use agent_toolkit::prelude::*;
/// use agent_toolkit::{AgentTool, toolkit::DynamicTools};
///
/// /// Say hello.
/// #[tool]
/// fn hello() -> &'static str { "hello" }
///
/// let tools = DynamicTools::new();
/// let toolkit = Toolkit::builder()
///     .group("remote", "Tools found at run time")
///     .dynamic("remote", &tools)
///     .build()
///     .unwrap();
/// assert!(toolkit.definitions().is_empty());
/// tools.replace(vec![Arc::new(Hello) as Arc<dyn AgentTool>]).unwrap();
/// assert_eq!(toolkit.definitions()[0].name(), "hello");
/// ```
#[derive(Clone, Default)]
pub struct DynamicTools {
    shared: Arc<Shared>,
}

/// A handle that does not keep a [`DynamicTools`] alive (for background tasks that refresh a
/// set only as long as someone uses it).
#[derive(Clone, Debug)]
pub struct WeakDynamicTools(Weak<Shared>);

struct Shared {
    current: RwLock<Arc<DynSet>>,
    /// The set's version, bumped by every replacement.
    changes: watch::Sender<u64>,
}

impl Default for Shared {
    fn default() -> Self {
        Shared {
            current: RwLock::new(Arc::new(DynSet::default())),
            changes: watch::Sender::new(0),
        }
    }
}

/// One version of a dynamic set.
#[derive(Default)]
pub(crate) struct DynSet {
    pub(crate) entries: Vec<Arc<Entry>>,
    by_name: FxHashMap<String, usize>,
}

impl DynSet {
    pub(crate) fn get(&self, name: &str) -> Option<&Arc<Entry>> {
        self.by_name.get(name).map(|&i| &self.entries[i])
    }
}

impl DynamicTools {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replace every tool of the set with `tools`. Checked like a registration: names must be
    /// unique, and a tool may not have `#[preset]` parameters (nothing could bind them). On
    /// error the set is left as it was and every problem is reported.
    ///
    /// Input schemas are compiled here, once per replacement (with the `validate` feature):
    /// calls are checked against them. A tool whose schema does not compile is kept, a
    /// `tracing` warning is logged, and each of its calls fails with an error saying so.
    pub fn replace(
        &self,
        tools: impl IntoIterator<Item = Arc<dyn AgentTool>>,
    ) -> Result<(), BuildError> {
        let mut errors = Vec::new();
        let mut set = DynSet::default();
        for tool in tools {
            let spec = tool.spec();
            let name = spec.name.to_string();
            if set
                .by_name
                .insert(name.clone(), set.entries.len())
                .is_some()
            {
                errors.push(ConfigError::DuplicateTool(name.clone()));
            }
            let entry = compile(&name, tool, spec, &[], Origin::Dynamic, &mut errors);
            set.entries.push(Arc::new(entry));
        }
        if !errors.is_empty() {
            return Err(BuildError { errors });
        }
        *crate::util::write(&self.shared.current) = Arc::new(set);
        self.shared.changes.send_modify(|v| *v += 1);
        Ok(())
    }

    /// Remove every tool.
    pub fn clear(&self) {
        // An empty list has nothing to check.
        let _ = self.replace(Vec::new());
    }

    /// The names of the tools in the set now, in the order they were given.
    pub fn names(&self) -> Vec<String> {
        self.current()
            .entries
            .iter()
            .map(|e| e.definition.name().to_string())
            .collect()
    }

    /// How many tools the set holds now.
    pub fn len(&self) -> usize {
        self.current().entries.len()
    }

    /// Whether the set holds no tool now.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A handle that does not keep the set alive.
    pub fn downgrade(&self) -> WeakDynamicTools {
        WeakDynamicTools(Arc::downgrade(&self.shared))
    }

    pub(crate) fn current(&self) -> Arc<DynSet> {
        crate::util::read(&self.shared.current).clone()
    }

    /// How many times the set was replaced.
    pub(crate) fn version(&self) -> u64 {
        *self.shared.changes.borrow()
    }

    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.shared.changes.subscribe()
    }
}

impl WeakDynamicTools {
    /// The set, if anybody still holds it.
    pub fn upgrade(&self) -> Option<DynamicTools> {
        self.0.upgrade().map(|shared| DynamicTools { shared })
    }
}

impl std::fmt::Debug for DynamicTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamicTools")
            .field("tools", &self.names())
            .field("version", &self.version())
            .finish()
    }
}

/// A dynamic set as registered in one toolkit.
pub(super) struct DynamicRegistration {
    /// The group its tools belong to.
    pub(super) group: usize,
    /// That group is deferred: so are all its tools.
    pub(super) deferred: bool,
    pub(super) tools: DynamicTools,
}

/// Tells when the tools active in one scope of a toolkit may have changed: a group switched
/// in the toolkit-wide state or in the scope itself, or a dynamic set replaced. Made by
/// [`Toolkit::watch_changes`](super::Toolkit::watch_changes).
///
/// A wake-up means "look again": compare [`Toolkit::snapshot`](super::Toolkit::snapshot)s if
/// only real differences matter (switching a group without tools changes nothing visible).
/// Changes made while nobody waits are not lost: the next [`changed`](Self::changed) returns
/// at once.
pub struct ToolChanges {
    receivers: Vec<watch::Receiver<u64>>,
}

impl ToolChanges {
    pub(super) fn new(receivers: Vec<watch::Receiver<u64>>) -> Self {
        ToolChanges { receivers }
    }

    /// Wait for the next change. Returns `false` when nothing can change any more (every
    /// handle on the toolkit, and on its dynamic sets, is gone).
    pub async fn changed(&mut self) -> bool {
        loop {
            if self.receivers.is_empty() {
                return false;
            }
            let waits = self.receivers.iter_mut().map(|rx| Box::pin(rx.changed()));
            let (result, index, _) = futures::future::select_all(waits).await;
            match result {
                Ok(()) => return true,
                // That source is gone for good; the others may still change.
                Err(_) => {
                    self.receivers.swap_remove(index);
                }
            }
        }
    }
}

impl std::fmt::Debug for ToolChanges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolChanges")
            .field("sources", &self.receivers.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::context::ToolContext;
    use crate::error::ToolErrorKind;
    use crate::tool::{Echo, ToolCall};
    use crate::toolkit::Toolkit;

    fn echo(name: &'static str) -> Arc<dyn AgentTool> {
        Arc::new(Echo(name))
    }

    fn names(toolkit: &Toolkit) -> Vec<String> {
        toolkit
            .definitions()
            .iter()
            .map(|d| d.name().to_string())
            .collect()
    }

    fn toolkit(tools: &DynamicTools) -> Toolkit {
        Toolkit::builder()
            .group("remote", "remote tools")
            .register_as("local", Echo("local"))
            .dynamic("remote", tools)
            .build()
            .unwrap()
    }

    #[tokio::test]
    async fn replaced_tools_are_listed_and_callable() {
        let tools = DynamicTools::new();
        let toolkit = toolkit(&tools);
        assert_eq!(names(&toolkit), ["local"]);
        tools.replace(vec![echo("a"), echo("b")]).unwrap();
        assert_eq!(names(&toolkit), ["local", "a", "b"]);
        let ctx = ToolContext::new();
        let result = toolkit
            .call(ToolCall::new("1", "b", "{\"x\":1}"), &ctx)
            .await;
        assert_eq!(result.model_text(), "b:{\"x\":1}");
        assert_eq!(result.attempts, 1);

        tools.replace(vec![echo("c")]).unwrap();
        assert_eq!(names(&toolkit), ["local", "c"]);
        let gone = toolkit.call(ToolCall::new("2", "b", "{}"), &ctx).await;
        assert_eq!(gone.error().unwrap().kind(), ToolErrorKind::UnknownTool);
        assert!(gone.model_text().contains("available tools: local, c"));
        // Rendering for providers covers dynamic tools too.
        assert_eq!(toolkit.definitions_for(crate::Dialect::Mcp).len(), 2);
    }

    #[tokio::test]
    async fn group_switches_and_views_apply() {
        let tools = DynamicTools::new();
        tools.replace(vec![echo("a")]).unwrap();
        let toolkit = toolkit(&tools);
        let view = toolkit.view();
        view.set_group_active("remote", false).unwrap();
        assert_eq!(names(&view), ["local"]);
        assert_eq!(names(&toolkit), ["local", "a"]);
        let off = view
            .call(ToolCall::new("1", "a", "{}"), &ToolContext::new())
            .await;
        assert_eq!(off.error().unwrap().kind(), ToolErrorKind::Unavailable);
    }

    #[test]
    fn static_names_win_and_bad_sets_are_refused() {
        let tools = DynamicTools::new();
        let toolkit = toolkit(&tools);
        tools.replace(vec![echo("local"), echo("x")]).unwrap();
        // The registered `local` hides the dynamic one of the same name.
        assert_eq!(names(&toolkit), ["local", "x"]);
        let err = tools.replace(vec![echo("y"), echo("y")]).unwrap_err();
        assert_eq!(err.errors, [ConfigError::DuplicateTool("y".into())]);
        assert_eq!(
            tools.names(),
            ["local", "x"],
            "a refused set changes nothing"
        );
        let unknown = Toolkit::builder().dynamic("nope", &tools).build();
        assert!(unknown.unwrap_err().to_string().contains("`nope`"));
    }

    async fn quick(changes: &mut ToolChanges) -> Result<bool, tokio::time::error::Elapsed> {
        tokio::time::timeout(Duration::from_millis(200), changes.changed()).await
    }

    #[tokio::test]
    async fn changes_wake_watchers_of_affected_scopes() {
        let tools = DynamicTools::new();
        let toolkit = Toolkit::builder()
            .group("remote", "remote tools")
            .inactive_group("admin", "admin tools")
            .dynamic("remote", &tools)
            .build()
            .unwrap();
        let view = toolkit.view();
        let mut root_changes = toolkit.watch_changes();
        let mut view_changes = view.watch_changes();

        // A view's own toggle reaches only that view's watchers.
        view.set_group_active("admin", true).unwrap();
        assert_eq!(quick(&mut view_changes).await, Ok(true));
        assert!(quick(&mut root_changes).await.is_err());
        // A toolkit-wide toggle and a replaced set reach both.
        toolkit.set_group_active("remote", false).unwrap();
        assert_eq!(quick(&mut root_changes).await, Ok(true));
        assert_eq!(quick(&mut view_changes).await, Ok(true));
        tools.replace(vec![echo("a")]).unwrap();
        assert_eq!(quick(&mut root_changes).await, Ok(true));
        assert_eq!(quick(&mut view_changes).await, Ok(true));
        // Nothing happened since: no wake-up.
        assert!(quick(&mut root_changes).await.is_err());

        drop((toolkit, view, tools));
        assert_eq!(quick(&mut root_changes).await, Ok(false));
    }
}
