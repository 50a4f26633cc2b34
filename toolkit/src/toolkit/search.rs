//! The toolkit's search index: every registered tool, indexed on the first search, and the
//! tools of dynamic sets, brought up to date incrementally whenever a set changed.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::search::{SearchSettings, ToolIndex};
use crate::tool::ToolDefinition;

#[derive(Default)]
pub(super) struct SearchState {
    /// How the index ranks ([`ToolkitBuilder::search_settings`](super::ToolkitBuilder::search_settings)).
    pub(super) settings: SearchSettings,
    /// The embedding model, when ranking by meaning too.
    #[cfg(feature = "semantic")]
    pub(super) embeddings: Option<std::sync::Arc<crate::search::Embeddings>>,
    index: Option<ToolIndex>,
    /// The dynamic sets' summed version the index reflects.
    dynamic_version: Option<u64>,
    /// The tools of dynamic sets in the index, by name.
    dynamic: FxHashMap<String, ToolDefinition>,
}

impl SearchState {
    /// The index, brought up to date: build it over `table` the first time, then follow the
    /// dynamic sets (at `version`; `dynamic` lists their tools, earlier sets first).
    pub(super) fn refresh(
        &mut self,
        table: &[ToolDefinition],
        version: u64,
        dynamic: impl FnOnce() -> Vec<ToolDefinition>,
    ) -> &ToolIndex {
        let index = self.index.get_or_insert_with(|| {
            #[cfg(feature = "semantic")]
            let mut index = match &self.embeddings {
                Some(model) => ToolIndex::with_embeddings(self.settings, model.clone()),
                None => ToolIndex::with_settings(self.settings),
            };
            #[cfg(not(feature = "semantic"))]
            let mut index = ToolIndex::with_settings(self.settings);
            for definition in table {
                index.insert(definition);
            }
            index
        });
        if self.dynamic_version == Some(version) {
            return index;
        }
        let registered: FxHashSet<&str> = table.iter().map(ToolDefinition::name).collect();
        let mut now: FxHashMap<String, ToolDefinition> = FxHashMap::default();
        for definition in dynamic() {
            // A registered tool, or a tool of an earlier set, hides one of the same name.
            if registered.contains(definition.name()) || now.contains_key(definition.name()) {
                continue;
            }
            now.insert(definition.name().to_string(), definition);
        }
        for name in self.dynamic.keys() {
            if !now.contains_key(name) {
                index.remove(name);
            }
        }
        for (name, definition) in &now {
            if self.dynamic.get(name) != Some(definition) {
                index.insert(definition);
            }
        }
        self.dynamic = now;
        self.dynamic_version = Some(version);
        index
    }
}
