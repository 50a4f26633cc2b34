//! Large tool lists: how the agent lets its model find deferred tools ([`ToolSearch`]: the
//! `search_tools` meta tool, or the provider's own search), and how it tells a provider that
//! keeps its prompt cache across tool changes what changed ([`ToolList`]).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::ReActAgent;
use crate::model::{DeferredTool, Message, ToolChange};
use crate::tool::ToolDefinition;
use crate::toolkit::ToolSnapshot;

/// How an agent lets its model find the toolkit's deferred tools
/// ([`ReActAgentBuilder::tool_search`](super::ReActAgentBuilder::tool_search)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolSearch {
    /// The provider's own tool search where the model has one
    /// ([`ToolFeatures::native_search`](crate::model::ToolFeatures::native_search)), the `search_tools` meta tool elsewhere.
    #[default]
    Auto,
    /// Always the `search_tools` meta tool ([`SearchTools`](crate::toolkit::SearchTools), a
    /// tool of the agent's view, answered from
    /// [`Toolkit::search_tools`](crate::Toolkit::search_tools)): works with every provider and
    /// with tool calls written as text.
    Local,
    /// Always the provider's own search (building the agent fails for a model without one).
    Native,
}

/// Where the model finds deferred tools in one turn.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum SearchMode {
    /// No deferred tool to find.
    Off,
    /// The `search_tools` meta tool.
    Local,
    /// The provider's search.
    Native,
}

/// What a provider that keeps its prompt cache across tool changes has been told in this
/// conversation: the tool list declared at its start, the deferred tools it was shown (in the
/// order it first saw them: the list only grows, so its bytes stay put), and the tools it
/// knows are callable now.
#[derive(Default)]
pub(super) struct ToolList {
    declared: Option<Vec<ToolDefinition>>,
    deferred: Vec<DeferredTool>,
    deferred_names: HashSet<String>,
    known: HashSet<String>,
}

impl ToolList {
    /// Tools the provider made callable itself (its search found them, or a search's answer
    /// referenced them): not announced again as added.
    pub(super) fn provider_loaded(&mut self, names: impl IntoIterator<Item = String>) {
        self.known.extend(names);
    }
}

impl ReActAgent {
    /// Where the model finds deferred tools this turn.
    pub(super) fn search_mode(&self, snapshot: &ToolSnapshot) -> SearchMode {
        if snapshot.deferred().len() == 0 {
            return SearchMode::Off;
        }
        let native = self.model.tool_features().native_search;
        match self.settings.tool_search {
            ToolSearch::Native => SearchMode::Native,
            ToolSearch::Auto if native => SearchMode::Native,
            _ => SearchMode::Local,
        }
    }

    /// The deferred tools of `snapshot` as a request carries them, with their groups.
    pub(super) fn deferred_tools(&self, snapshot: &ToolSnapshot) -> Vec<DeferredTool> {
        let groups: Vec<Arc<_>> = self
            .toolkit
            .groups()
            .iter()
            .cloned()
            .map(Arc::new)
            .collect();
        self.toolkit
            .deferred_with_groups(snapshot)
            .into_iter()
            .map(|(definition, group)| {
                DeferredTool::new(definition, group.map(|g| groups[g].clone()))
            })
            .collect()
    }

    /// For a model whose provider keeps its cache across tool changes: record in the
    /// conversation how the tools changed since the last turn, and return the declared list
    /// and the deferred tools to send (grown, never reordered).
    pub(super) fn track_tool_list(
        &mut self,
        tools: &[ToolDefinition],
        deferred: Vec<DeferredTool>,
    ) -> (Vec<ToolDefinition>, Vec<DeferredTool>) {
        let list = &mut self.found.tool_list;
        for tool in deferred {
            if list
                .deferred_names
                .insert(tool.definition.name().to_string())
            {
                list.deferred.push(tool);
            }
        }
        let now: HashSet<String> = tools.iter().map(|d| d.name().to_string()).collect();
        match &list.declared {
            None => list.declared = Some(tools.to_vec()),
            Some(_) => {
                let added: Vec<ToolDefinition> = tools
                    .iter()
                    .filter(|d| !list.known.contains(d.name()))
                    .cloned()
                    .collect();
                let mut removed: Vec<String> = list.known.difference(&now).cloned().collect();
                removed.sort();
                let change = ToolChange::new(added, removed);
                if !change.is_empty() {
                    self.memory.push(Message::tool_change(change));
                }
            }
        }
        let list = &mut self.found.tool_list;
        list.known = now;
        (
            list.declared.clone().unwrap_or_default(),
            list.deferred.clone(),
        )
    }
}

/// What an agent's searches found: the tools each of this turn's searches made callable (by
/// call id), and what a provider that keeps its cache across tool changes was told so far.
#[derive(Default)]
pub(super) struct Found {
    pub(super) tool_list: ToolList,
    pub(super) search_references: References,
}

/// References made by this turn's searches, by call id: attached to the tool messages.
pub(super) type References = HashMap<Arc<str>, Vec<String>>;

/// The default number of tools a search lists.
pub(super) const SEARCH_LIMIT: usize = crate::search::DEFAULT_SEARCH_LIMIT;
