//! Large tool lists: how the agent lets its model find deferred tools ([`ToolSearch`]: the
//! `search_tools` meta tool, or the provider's own search), and how it tells a provider that
//! keeps its prompt cache across tool changes what changed ([`ToolList`]).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::ReActAgent;
use crate::error::{ToolError, ToolErrorKind};
use crate::model::{DeferredTool, Message, ToolChange};
use crate::search::{self, DEFAULT_SEARCH_LIMIT, SEARCH_TOOL};
use crate::tool::{ToolCall, ToolDefinition, ToolOutput, ToolResult};
use crate::toolkit::{ToolSnapshot, Toolkit};

/// How an agent lets its model find the toolkit's deferred tools
/// ([`ReActAgentBuilder::tool_search`](super::ReActAgentBuilder::tool_search)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolSearch {
    /// The provider's own tool search where the model has one
    /// ([`ToolFeatures::native_search`](crate::model::ToolFeatures::native_search)), the `search_tools` meta tool elsewhere.
    #[default]
    Auto,
    /// Always the `search_tools` meta tool, answered here from
    /// [`Toolkit::search_tools`]: works with every provider and with tool calls written as
    /// text.
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
        match self.tool_search {
            ToolSearch::Native => SearchMode::Native,
            ToolSearch::Auto if native => SearchMode::Native,
            _ => SearchMode::Local,
        }
    }

    /// The `search_tools` definition, naming the deferred groups.
    pub(super) fn search_tool(&self) -> ToolDefinition {
        let catalog: Vec<String> = self
            .toolkit
            .groups()
            .iter()
            .filter(|g| g.deferred)
            .map(|g| format!("{} ({})", g.name, g.description))
            .collect();
        search::search_tool_definition(&catalog.join("; "))
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
        let list = &mut self.tool_list;
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
        let list = &mut self.tool_list;
        list.known = now;
        (
            list.declared.clone().unwrap_or_default(),
            list.deferred.clone(),
        )
    }

    /// Answer a `search_tools` call: search this agent's view, make the tools found callable
    /// from the next step, and say which they are. Returns the result and the tools it made
    /// callable (the references a provider with client-side search sends).
    pub(super) fn run_search(
        &self,
        call: &ToolCall,
        toolkit: &Toolkit,
    ) -> (ToolResult, Vec<String>) {
        let (query, limit) = match search::parse_search_arguments(&call.arguments) {
            Ok(args) => args,
            Err(message) => {
                let error = ToolError::new(ToolErrorKind::InvalidArguments, message);
                return (
                    ToolResult::new(call.id.clone(), call.name.clone(), Err(error), 1),
                    Vec::new(),
                );
            }
        };
        let limit = limit.unwrap_or(self.search_limit);
        let hits = toolkit.search_tools(&query, limit);
        let snapshot = toolkit.snapshot();
        let newly: Vec<String> = hits
            .iter()
            .filter(|h| snapshot.get_deferred(&h.name).is_some())
            .map(|h| h.name.clone())
            .collect();
        toolkit.load_tools(&newly);
        let text = if hits.is_empty() {
            format!("No tool matches \"{query}\". Try other words, or fewer.")
        } else {
            let lines: Vec<String> = hits
                .iter()
                .map(|h| {
                    let params = snapshot
                        .get_deferred(&h.name)
                        .or_else(|| snapshot.get(&h.name))
                        .map(parameter_names)
                        .unwrap_or_default();
                    let known = if newly.contains(&h.name) {
                        ""
                    } else {
                        " (already available)"
                    };
                    format!("- {}({params}): {}{known}", h.name, h.summary)
                })
                .collect();
            format!(
                "Tools matching \"{query}\", now available:\n{}\nGo on with the task: call the \
                 tool it needs.",
                lines.join("\n")
            )
        };
        let result = ToolResult::new(
            call.id.clone(),
            call.name.clone(),
            Ok(ToolOutput::text(text)),
            1,
        );
        (result, newly)
    }
}

/// The names of a tool's parameters, comma-separated: a one-line signature for a search's
/// answer.
fn parameter_names(definition: &ToolDefinition) -> String {
    definition
        .parameters()
        .get("properties")
        .and_then(serde_json::Value::as_object)
        .map(|p| p.keys().cloned().collect::<Vec<_>>().join(", "))
        .unwrap_or_default()
}

/// References made by this turn's searches, by call id: attached to the tool messages.
pub(super) type References = HashMap<Arc<str>, Vec<String>>;

/// The default number of tools a search lists.
pub(super) const SEARCH_LIMIT: usize = DEFAULT_SEARCH_LIMIT;

/// Whether `call` is the agent's search (not a user tool that happens to have its name).
pub(super) fn is_search_call(call: &ToolCall, snapshot: &ToolSnapshot) -> bool {
    call.name == SEARCH_TOOL && snapshot.get(SEARCH_TOOL).is_none()
}
