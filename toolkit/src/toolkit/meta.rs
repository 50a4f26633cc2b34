//! The meta tools: tools over the toolkit view they are called in (the calling view, which any
//! tool gets as a `#[ctx] toolkit: Toolkit` parameter). [`SearchTools`] finds deferred tools and
//! makes them callable; [`EquipGroups`] switches the groups handed to the model. They are
//! ordinary tools: an agent adds them to its view ([`Toolkit::view_with_tools`]), and their
//! calls run through the execution stack like every other call.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{ToolSnapshot, Toolkit};
use crate::context::FromToolContext;
use crate::error::{ToolError, ToolErrorKind};
use crate::search::{self, DEFAULT_SEARCH_LIMIT, SEARCH_TOOL};
use crate::tool::{
    AgentTool, GroupInfo, ToolArgs, ToolDefinition, ToolFuture, ToolOutput, ToolSpec,
};

/// The name of the tool that switches the model's groups ([`EquipGroups`]).
pub const EQUIP_TOOL: &str = "reset_equipped_tools";

/// The metadata key of a search's answer listing the tools it found: an array of
/// `{"name", "description", "parameters"}` (the application's, never the model's).
pub const FOUND_KEY: &str = "agent_toolkit.found";

/// The metadata key of an answer listing the tools it made callable (a search's): an agent
/// sends them back as references where the provider takes them.
pub const LOADED_KEY: &str = "agent_toolkit.loaded";

/// How a tool of a view is offered to the model in a turn ([`ViewTool::offer`]).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Offer {
    /// Shown with its registered definition, and callable.
    AsRegistered,
    /// Shown with this definition (rendered for the view this turn), and callable.
    Rendered(ToolDefinition),
    /// Callable, not shown (a provider shows its own form of it).
    Hidden,
    /// Neither shown nor callable this turn.
    Off,
}

/// A tool of a view alone ([`Toolkit::view_with_tools`]): an ordinary tool that also says, each
/// turn, how it is offered — so that no tool name is special where a turn's tools are chosen.
pub trait ViewTool: AgentTool {
    /// How the tool is offered this turn in `view`, whose tools are `snapshot`.
    fn offer(&self, view: &Toolkit, snapshot: &ToolSnapshot) -> Offer {
        let _ = (view, snapshot);
        Offer::AsRegistered
    }
}

/// What a view offers its model in a turn ([`Toolkit::offered`]).
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Offered {
    /// The toolkit's tools (registered and of dynamic sets), as shown.
    pub tools: Vec<ToolDefinition>,
    /// The view's own tools, as they offer themselves.
    pub view: Vec<ToolDefinition>,
    /// Every tool that may be called, by name (shown or not).
    pub callable: Vec<std::sync::Arc<str>>,
}

/// The calling view, or the error saying the tool ran outside a toolkit.
fn calling_view(args: &ToolArgs) -> Result<Toolkit, ToolError> {
    Toolkit::from_tool_context(args.context())
        .map_err(|rejection| ToolError::new(ToolErrorKind::Execution, rejection.hint))
}

/// `search_tools`: searches the calling view ([`Toolkit::search_tools`]), makes the deferred
/// tools it finds callable there ([`Toolkit::load_tools`]), and lists them for the model. Its
/// arguments are [`search::search_tool_definition`]'s and are read by
/// [`search::parse_search_arguments`]; its answer is [`search_answer`]'s.
#[derive(Clone, Debug)]
pub struct SearchTools {
    limit: usize,
    catalog: String,
    hidden: bool,
}

impl SearchTools {
    /// The search over `toolkit`'s deferred groups (named in its description), listing
    /// [`DEFAULT_SEARCH_LIMIT`] tools when the model does not say.
    pub fn new(toolkit: &Toolkit) -> Self {
        SearchTools {
            limit: DEFAULT_SEARCH_LIMIT,
            catalog: toolkit.deferred_catalog(),
            hidden: false,
        }
    }

    crate::util::setters! {
        /// Answer searches without offering the tool: the provider shows its own search (its
        /// client-side search calls this one), or programs search with their own function.
        pub fn hidden() => hidden = true;

        /// How many tools a search lists when the model does not say (1 to 20).
        pub fn limit(limit: usize) => limit = limit.clamp(1, 20);
    }

    /// The definition the model is shown.
    pub fn definition(&self) -> ToolDefinition {
        search::search_tool_definition(&self.catalog)
    }
}

impl AgentTool for SearchTools {
    fn spec(&self) -> ToolSpec {
        let definition = self.definition();
        let mut spec = ToolSpec::new(SEARCH_TOOL, definition.description().to_string())
            .with_input_schema(definition.parameters().clone());
        // Read by `parse_search_arguments`, which also takes the `{query, paths}` a provider's
        // client-side search sends.
        spec.self_parsing = true;
        spec.options = spec.options.read_only();
        spec
    }

    fn call(&self, args: ToolArgs) -> ToolFuture {
        let default = self.limit;
        Box::pin(async move {
            let view = calling_view(&args)?;
            let (query, limit) = search::parse_search_arguments(args.raw())
                .map_err(|message| ToolError::new(ToolErrorKind::InvalidArguments, message))?;
            Ok(search_answer(&view, &query, limit.unwrap_or(default)))
        })
    }
}

impl Toolkit {
    /// Whether a search could ever find something here: a deferred group, a tool registered
    /// `defer_loading`, or a dynamic set (whose tools may be deferred). An agent adds no search
    /// to a view where none could.
    pub(crate) fn may_defer(&self) -> bool {
        self.groups().iter().any(|g| g.deferred)
            || self.0.inner.entries.iter().any(|e| e.options.defer_loading)
            || !self.0.inner.dynamic.is_empty()
    }

    /// What the deferred groups cover, in a line: "name (description); …" (empty without
    /// deferred groups): how the search and the program tool name what is left to find.
    pub(crate) fn deferred_catalog(&self) -> String {
        let groups: Vec<String> = self
            .groups()
            .iter()
            .filter(|g| g.deferred)
            .map(|g| format!("{} ({})", g.name, g.description))
            .collect();
        groups.join("; ")
    }
}

/// Offered while the view has deferred tools to find (callable but not shown when
/// [`hidden`](SearchTools::hidden)).
impl ViewTool for SearchTools {
    fn offer(&self, _: &Toolkit, snapshot: &ToolSnapshot) -> Offer {
        if snapshot.deferred().len() == 0 {
            Offer::Off
        } else if self.hidden {
            Offer::Hidden
        } else {
            Offer::AsRegistered
        }
    }
}

/// One search's answer, wherever it is asked (the `search_tools` tool, a program's
/// `search_tools(...)`): the best `limit` tools of `view` for `query`, the deferred ones among
/// them made callable in `view`. The model reads the text; the metadata lists the tools found
/// ([`FOUND_KEY`]) and those made callable ([`LOADED_KEY`]).
pub fn search_answer(view: &Toolkit, query: &str, limit: usize) -> ToolOutput {
    let hits = view.search_tools(query, limit);
    let snapshot = view.snapshot();
    let newly: Vec<String> = hits
        .iter()
        .filter(|h| snapshot.get_deferred(&h.name).is_some())
        .map(|h| h.name.clone())
        .collect();
    view.load_tools(&newly);
    let mut found = Vec::with_capacity(hits.len());
    let mut lines = Vec::with_capacity(hits.len());
    for hit in &hits {
        let definition = snapshot
            .get_deferred(&hit.name)
            .or_else(|| snapshot.get(&hit.name));
        let params = definition.map(parameter_names).unwrap_or_default();
        let known = if newly.contains(&hit.name) {
            ""
        } else {
            " (already available)"
        };
        lines.push(format!("- {}({params}): {}{known}", hit.name, hit.summary));
        found.push(json!({
            "name": hit.name,
            "description": hit.summary,
            "parameters": definition.map(|d| d.parameters().clone()).unwrap_or(Value::Null),
        }));
    }
    let text = if hits.is_empty() {
        format!("No tool matches \"{query}\". Try other words, or fewer.")
    } else {
        format!(
            "Tools matching \"{query}\", now available:\n{}\nGo on with the task: call the tool \
             it needs.",
            lines.join("\n")
        )
    };
    ToolOutput::text(text)
        .with_metadata(FOUND_KEY, Value::Array(found))
        .with_metadata(LOADED_KEY, json!(newly))
}

/// The names of a tool's parameters, comma-separated: a one-line signature for a search's
/// answer.
fn parameter_names(definition: &ToolDefinition) -> String {
    definition
        .parameters()
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect::<Vec<_>>().join(", "))
        .unwrap_or_default()
}

/// `reset_equipped_tools`: lets the model choose which of the groups handed to it are on in the
/// calling view — the groups it names on, the others it was handed off. It touches only those
/// groups, and only the view it is called in.
#[derive(Clone, Debug)]
pub struct EquipGroups {
    groups: Vec<GroupInfo>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EquipArgs {
    groups: Vec<String>,
}

impl EquipGroups {
    /// The tool over `groups` (each a group of the toolkit it will be called in).
    pub fn new(groups: Vec<GroupInfo>) -> Self {
        EquipGroups { groups }
    }

    /// The groups the model may switch.
    pub fn groups(&self) -> &[GroupInfo] {
        &self.groups
    }

    fn apply(&self, view: &Toolkit, arguments: &str) -> Result<ToolOutput, ToolError> {
        let args: EquipArgs = serde_json::from_str(if arguments.trim().is_empty() {
            "{}"
        } else {
            arguments
        })
        .map_err(|e| {
            ToolError::invalid_arguments(format!("invalid arguments for tool `{EQUIP_TOOL}`: {e}"))
        })?;
        let unknown: Vec<&str> = args
            .groups
            .iter()
            .filter(|g| !self.groups.iter().any(|m| &m.name == *g))
            .map(String::as_str)
            .collect();
        if !unknown.is_empty() {
            let allowed: Vec<&str> = self.groups.iter().map(|g| g.name.as_str()).collect();
            return Err(ToolError::new(
                ToolErrorKind::InvalidArguments,
                format!(
                    "you cannot equip {}; the groups you manage are: {}",
                    unknown.join(", "),
                    allowed.join(", ")
                ),
            ));
        }
        for group in &self.groups {
            let on = args.groups.contains(&group.name);
            view.set_group_active(&group.name, on)
                .map_err(|e| ToolError::execution("could not switch the group").with_source(e))?;
        }
        let tools: Vec<String> = view
            .snapshot()
            .iter()
            .map(|d| d.name().to_string())
            .filter(|name| name != EQUIP_TOOL && name != SEARCH_TOOL)
            .collect();
        Ok(ToolOutput::text(format!(
            "Equipped groups: {}. Tools available from your next step: {}. Go on with the task: \
             call the tool it needs.",
            if args.groups.is_empty() {
                "none".to_string()
            } else {
                args.groups.join(", ")
            },
            tools.join(", ")
        )))
    }
}

impl EquipGroups {
    /// The definition the model is shown. With `view`, each group says whether it is equipped
    /// there now (an agent shows this one each turn); without, only what it is for.
    pub fn definition(&self, view: Option<&Toolkit>) -> ToolDefinition {
        let names: Vec<&str> = self.groups.iter().map(|g| g.name.as_str()).collect();
        let listing: String = self
            .groups
            .iter()
            .map(|g| {
                let state = match view.map(|v| v.is_group_active(&g.name).unwrap_or(false)) {
                    Some(true) => " (equipped)",
                    Some(false) => " (not equipped)",
                    None => "",
                };
                format!("\n- {}{state}: {}", g.name, g.description)
            })
            .collect();
        ToolDefinition::new(
            EQUIP_TOOL,
            format!(
                "Choose which tool groups you have equipped. The groups you name are switched \
                 on and the others listed here off; the change applies from your next step. \
                 Groups:{listing}"
            ),
            json!({
                "type": "object",
                "properties": {
                    "groups": {
                        "type": "array",
                        "items": {"type": "string", "enum": names},
                        "description": "Every group to have equipped (an empty list unequips all)."
                    }
                },
                "required": ["groups"],
                "additionalProperties": false
            }),
        )
    }
}

/// Shown with each group's state in the view this turn.
impl ViewTool for EquipGroups {
    fn offer(&self, view: &Toolkit, _: &ToolSnapshot) -> Offer {
        Offer::Rendered(self.definition(Some(view)))
    }
}

impl AgentTool for EquipGroups {
    fn spec(&self) -> ToolSpec {
        let definition = self.definition(None);
        let mut spec = ToolSpec::new(EQUIP_TOOL, definition.description().to_string())
            .with_input_schema(definition.parameters().clone());
        // Read here, so that a group it does not manage gets the message naming those it does.
        spec.self_parsing = true;
        spec
    }

    fn call(&self, args: ToolArgs) -> ToolFuture {
        let tool = self.clone();
        Box::pin(async move {
            let view = calling_view(&args)?;
            tool.apply(&view, args.raw())
        })
    }
}
