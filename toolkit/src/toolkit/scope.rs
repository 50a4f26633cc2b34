//! Group state of one scope: the toolkit-wide default, or a view's overrides on top of it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rustc_hash::FxHashSet;
use tokio::sync::watch;

use super::ViewTool;
use super::compile::Entry;
use super::snapshot::ToolSnapshot;
use crate::util::lock;

/// What a snapshot depends on: the toolkit-wide group state, this scope's group state, and the
/// tool sets registered with [`ToolkitBuilder::dynamic`](super::ToolkitBuilder::dynamic).
pub(super) type Versions = [u64; 3];

/// The snapshot built for one set of state versions.
type Cached = (Versions, ToolSnapshot);

/// One scope's group switches and its cached definitions.
pub(super) struct Scope {
    /// For the root scope every entry is `Some`; for a view, `None` means "follow the root".
    state: Mutex<Vec<Option<bool>>>,
    version: AtomicU64,
    /// Told the new version on every change, for [`ToolChanges`](super::ToolChanges).
    changes: watch::Sender<u64>,
    cache: Mutex<Option<Cached>>,
    /// Deferred tools found in this scope, by name.
    found: Mutex<FxHashSet<String>>,
    /// Tools of this view alone ([`Toolkit::view_with_tools`](super::Toolkit::view_with_tools)).
    tools: Vec<(Arc<Entry>, Arc<dyn ViewTool>)>,
}

impl Scope {
    pub(super) fn root(active: Vec<bool>) -> Self {
        Scope {
            state: Mutex::new(active.into_iter().map(Some).collect()),
            version: AtomicU64::new(0),
            changes: watch::Sender::new(0),
            cache: Mutex::new(None),
            found: Mutex::new(FxHashSet::default()),
            tools: Vec::new(),
        }
    }

    /// A view's scope: no group switched yet, with `tools` of its own.
    pub(super) fn overlay(groups: usize, tools: Vec<(Arc<Entry>, Arc<dyn ViewTool>)>) -> Self {
        Scope {
            state: Mutex::new(vec![None; groups]),
            version: AtomicU64::new(0),
            changes: watch::Sender::new(0),
            cache: Mutex::new(None),
            found: Mutex::new(FxHashSet::default()),
            tools,
        }
    }

    /// The tools of this view alone, in the order given.
    pub(super) fn tools(&self) -> impl Iterator<Item = &Arc<Entry>> {
        self.tools.iter().map(|(entry, _)| entry)
    }

    /// Whether this view has tools of its own.
    pub(super) fn has_tools(&self) -> bool {
        !self.tools.is_empty()
    }

    /// The tool of this view alone called `name`.
    pub(super) fn tool(&self, name: &str) -> Option<&Arc<Entry>> {
        self.tools().find(|e| e.definition.name() == name)
    }

    /// How the tool of this view alone called `name` offers itself.
    pub(super) fn view_tool(&self, name: &str) -> Option<&Arc<dyn ViewTool>> {
        self.tools
            .iter()
            .find(|(e, _)| e.definition.name() == name)
            .map(|(_, tool)| tool)
    }

    pub(super) fn set(&self, group: usize, active: bool) {
        let mut state = lock(&self.state);
        if state[group] != Some(active) {
            state[group] = Some(active);
            let version = self.version.fetch_add(1, Ordering::Release) + 1;
            self.changes.send_replace(version);
        }
    }

    /// Mark these deferred tools found; the names newly found.
    pub(super) fn find(&self, names: impl IntoIterator<Item = String>) -> Vec<String> {
        let mut found = lock(&self.found);
        let new: Vec<String> = names
            .into_iter()
            .filter(|name| found.insert(name.clone()))
            .collect();
        drop(found);
        if !new.is_empty() {
            let version = self.version.fetch_add(1, Ordering::Release) + 1;
            self.changes.send_replace(version);
        }
        new
    }

    /// The deferred tools found in this scope, by name.
    pub(super) fn found(&self) -> FxHashSet<String> {
        lock(&self.found).clone()
    }

    /// Whether this deferred tool was found in this scope.
    pub(super) fn is_found(&self, name: &str) -> bool {
        lock(&self.found).contains(name)
    }

    pub(super) fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// A receiver told about every later change of this scope's switches.
    pub(super) fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// The root's state (every entry set).
    pub(super) fn snapshot(&self) -> Vec<bool> {
        lock(&self.state)
            .iter()
            .map(|s| s.unwrap_or(false))
            .collect()
    }

    /// This view's overrides applied to the root's state.
    pub(super) fn overlay_on(&self, mut base: Vec<bool>) -> Vec<bool> {
        for (b, o) in base.iter_mut().zip(lock(&self.state).iter()) {
            if let Some(o) = o {
                *b = *o;
            }
        }
        base
    }

    /// The cached snapshot for `versions`, rebuilt with `build` when stale.
    pub(super) fn cached(
        &self,
        versions: Versions,
        build: impl FnOnce() -> ToolSnapshot,
    ) -> ToolSnapshot {
        let mut cache = lock(&self.cache);
        match &*cache {
            Some((v, defs)) if *v == versions => defs.clone(),
            _ => {
                let defs = build();
                *cache = Some((versions, defs.clone()));
                defs
            }
        }
    }
}
