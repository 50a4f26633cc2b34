//! The request body's parts: the tools as Responses wants them, the `tool_choice`, and the
//! conversation as `input` items.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::{PROGRAM_TOOL, PROVIDER, SEARCH_TOOL_NAME};
use crate::dialect::{Dialect, NameMap};
use crate::model::openai::{normalize_calls, wire_name};
use crate::model::text_calls::plain_history;
use crate::model::{
    AssistantMessage, ChatRequest, ChatResponse, DeferredTool, Message, ToolChoice, ToolMessage,
};
use crate::tool::ToolDefinition;
// Named in the documentation.
#[allow(unused_imports)]
use crate::tool::ToolCall;

/// Every tool definition the request names: the callable, declared and deferred ones and those
/// added mid-conversation, each once, in that order.
fn all_definitions(request: &ChatRequest) -> Vec<ToolDefinition> {
    let declared = request.declared_tools.iter().flatten();
    let mut seen = HashSet::new();
    request
        .tools
        .iter()
        .chain(declared)
        .chain(later_definitions(request))
        .filter(|def| seen.insert(def.name()))
        .cloned()
        .collect()
}

/// Wire names for every tool the request names. The declared list (when there is one) comes
/// first, so that its names do not depend on what is callable this turn.
pub(super) fn name_map(dialect: Dialect, request: &ChatRequest) -> NameMap {
    let declared = request.declared_tools.iter().flatten();
    NameMap::new(
        dialect,
        declared
            .chain(&request.tools)
            .chain(later_definitions(request))
            .map(ToolDefinition::name),
    )
}

/// The tools a request names besides its tools and its declared list: the deferred ones, then
/// those its recorded tool changes added.
fn later_definitions(request: &ChatRequest) -> impl Iterator<Item = &ToolDefinition> {
    let deferred = request.deferred_tools.iter().map(|d| &d.definition);
    deferred.chain(request.added_tools())
}

/// Undo what strict mode did to the arguments of the calls (see
/// [`normalize_calls`]), for every tool the request names.
pub(super) fn normalize(dialect: Dialect, request: &ChatRequest, response: &mut ChatResponse) {
    if dialect == Dialect::OpenAiStrict {
        normalize_calls(dialect, &all_definitions(request), response);
    }
}

/// A function tool as Responses wants it: flat, with an explicit `strict`; with
/// `programmatic`, callable from the model's programs as well as directly.
pub(super) fn function_tool(
    dialect: Dialect,
    def: &ToolDefinition,
    names: &NameMap,
    deferred: bool,
    programmatic: bool,
) -> Value {
    let wire = wire_name(names, def.name());
    let mut rendered = dialect.render(def, &wire);
    let function = rendered.get_mut("function").map(Value::take);
    let field = |key: &str| function.as_ref().and_then(|f| f.get(key)).cloned();
    let mut tool = Map::new();
    tool.insert("type".into(), json!("function"));
    tool.insert("name".into(), json!(wire));
    tool.insert("description".into(), json!(def.description()));
    tool.insert(
        "parameters".into(),
        field("parameters").unwrap_or_else(|| dialect.parameters(def.parameters())),
    );
    let strict = field("strict").and_then(|s| s.as_bool()).unwrap_or(false);
    tool.insert("strict".into(), json!(strict));
    if deferred {
        tool.insert("defer_loading".into(), json!(true));
    }
    if programmatic {
        tool.insert("allowed_callers".into(), json!(["direct", "programmatic"]));
    }
    Value::Object(tool)
}

/// Deferred tools: those of a group inside one `namespace` per group, the others alone, in
/// the order each group or tool first appears.
pub(super) fn deferred_tools(
    dialect: Dialect,
    deferred: &[DeferredTool],
    names: &NameMap,
    programmatic: bool,
) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    // Group name → the index of its namespace in `out`.
    let mut namespaces: Vec<(&str, usize)> = Vec::new();
    for tool in deferred {
        let function = function_tool(dialect, &tool.definition, names, true, programmatic);
        let Some(group) = &tool.group else {
            out.push(function);
            continue;
        };
        match namespaces.iter().find(|(name, _)| *name == group.name) {
            Some(&(_, index)) => {
                if let Some(tools) = out[index].get_mut("tools").and_then(Value::as_array_mut) {
                    tools.push(function);
                }
            }
            None => {
                namespaces.push((&group.name, out.len()));
                out.push(json!({
                    "type": "namespace",
                    "name": dialect.sanitize_name(&group.name),
                    "description": group.description,
                    "tools": [function],
                }));
            }
        }
    }
    out
}

/// The `tool_choice`. With a declared tool list that is not what may be called now, the
/// callable tools are named in an `allowed_tools` choice instead of changing `tools`; the
/// tool search, the deferred tools and the programs ([`ChatRequest::hosted_code`]) stay
/// allowed.
pub(super) fn tool_choice(request: &ChatRequest, names: &NameMap, searching: bool) -> Value {
    let restricted = request.declared_tools.as_ref().is_some_and(|declared| {
        let declared: HashSet<&str> = declared.iter().map(ToolDefinition::name).collect();
        let callable: HashSet<&str> = request.tools.iter().map(ToolDefinition::name).collect();
        declared != callable
    });
    let mode = match &request.tool_choice {
        ToolChoice::None => return json!("none"),
        ToolChoice::Specific(name) => {
            return json!({"type": "function", "name": wire_name(names, name)});
        }
        ToolChoice::Auto if !restricted => return json!("auto"),
        ToolChoice::Required if !restricted => return json!("required"),
        ToolChoice::Auto => "auto",
        ToolChoice::Required => "required",
    };
    let deferred = request.deferred_tools.iter().map(|d| &d.definition);
    let callable = request.tools.iter().chain(deferred);
    // A deferred tool found earlier may be among the callable ones too: named once.
    let mut seen = HashSet::new();
    let mut allowed: Vec<Value> = callable
        .filter(|def| seen.insert(def.name()))
        .map(|def| json!({"type": "function", "name": wire_name(names, def.name())}))
        .collect();
    if searching {
        allowed.push(json!({"type": "tool_search"}));
    }
    if request.hosted_code {
        allowed.push(json!({"type": PROGRAM_TOOL}));
    }
    if allowed.is_empty() {
        // Nothing may be called now; an empty `allowed_tools` is not a valid choice.
        return json!("none");
    }
    json!({"type": "allowed_tools", "mode": mode, "tools": allowed})
}

/// The `input` items of the conversation. With `client_search` (the model searches through
/// the caller), a `search_tools` call of a turn whose own items cannot be sent back is sent as
/// the client-side `tool_search_call` it stands for.
pub(super) fn input(
    dialect: Dialect,
    request: &ChatRequest,
    names: &NameMap,
    client_search: bool,
) -> Vec<Value> {
    let messages = plain_history(&request.messages);
    // Tools the model has been given so far: the declared ones, then those added by
    // `additional_tools` items (each is added once, even if it was switched off and on).
    let mut given: HashSet<&str> = request
        .declared_tools
        .iter()
        .flatten()
        .map(ToolDefinition::name)
        .collect();
    // Call ids of the client-side tool searches sent so far: their results are
    // `tool_search_output` items.
    let mut searches: HashSet<&str> = HashSet::new();
    let mut out = Vec::with_capacity(messages.len());
    for message in messages.iter() {
        match message {
            Message::ToolChange(change) => {
                if request.declared_tools.is_none() {
                    continue;
                }
                let tools: Vec<Value> = change
                    .added
                    .iter()
                    .filter(|def| given.insert(def.name()))
                    .map(|def| function_tool(dialect, def, names, false, request.hosted_code))
                    .collect();
                if !tools.is_empty() {
                    out.push(json!({
                        "type": "additional_tools",
                        "role": "developer",
                        "tools": tools,
                    }));
                }
            }
            Message::System { content } => out.push(text_message("system", content)),
            Message::User { content } => out.push(text_message("user", content)),
            Message::Assistant(turn) => match replayable(turn) {
                Some(items) => {
                    for item in items {
                        if let Some(id) = client_search_id(item) {
                            searches.insert(id);
                        }
                        out.push(replayed(item));
                    }
                }
                None => {
                    if !turn.content.is_empty() {
                        out.push(text_message("assistant", &turn.content));
                    }
                    for call in &turn.tool_calls {
                        if client_search && call.name == SEARCH_TOOL_NAME {
                            searches.insert(&call.id);
                            let arguments = serde_json::from_str::<Value>(&call.arguments)
                                .unwrap_or_else(|_| json!({}));
                            out.push(json!({
                                "type": "tool_search_call",
                                "call_id": call.id,
                                "execution": "client",
                                "arguments": arguments,
                                "status": "completed",
                            }));
                        } else {
                            out.push(json!({
                                "type": "function_call",
                                "call_id": call.id,
                                "name": wire_name(names, &call.name),
                                "arguments": call.arguments,
                            }));
                        }
                    }
                }
            },
            Message::Tool(result) => {
                let call_id = &*result.call_id;
                if searches.contains(call_id) {
                    out.push(search_output(dialect, call_id, result, request, names));
                } else {
                    out.push(json!({
                        "type": "function_call_output",
                        "call_id": call_id,
                        "output": result.content,
                    }));
                }
            }
        }
    }
    out
}

fn text_message(role: &str, text: &str) -> Value {
    json!({"type": "message", "role": role, "content": text})
}

/// The call id of an item that is one of a turn's [`ToolCall`]s: a `function_call`, or a
/// client-side `tool_search_call`.
fn call_id(item: &Value) -> Option<&str> {
    match item.get("type").and_then(Value::as_str) {
        Some("function_call") => item.get("call_id").and_then(Value::as_str),
        Some("tool_search_call") => client_search_id(item),
        _ => None,
    }
}

/// The call id of a client-side `tool_search_call`.
fn client_search_id(item: &Value) -> Option<&str> {
    let is_client = item.get("type").and_then(Value::as_str) == Some("tool_search_call")
        && item.get("execution").and_then(Value::as_str) == Some("client");
    is_client
        .then(|| item.get("call_id").and_then(Value::as_str))
        .flatten()
}

/// The items of an assistant turn to send back as they came: those this provider wrote, as
/// long as their calls are the message's calls.
fn replayable(turn: &AssistantMessage) -> Option<&[Value]> {
    let native = turn.native_of(PROVIDER)?;
    let mut sent: Vec<&str> = native.items.iter().filter_map(call_id).collect();
    let mut kept: Vec<&str> = turn.tool_calls.iter().map(|c| &*c.id).collect();
    sent.sort_unstable();
    kept.sort_unstable();
    (sent == kept).then_some(native.items.as_slice())
}

/// An output item sent back as input, unchanged but for the server's item id: nothing is
/// stored (`store: false`), so the id names nothing the server could find. A `program` or
/// `program_output` item goes back whole, its id and `fingerprint` included: the API's replay
/// items require them.
fn replayed(item: &Value) -> Value {
    let mut item = item.clone();
    let kind = item.get("type").and_then(Value::as_str);
    if matches!(kind, Some("program" | "program_output")) {
        return item;
    }
    if let Some(fields) = item.as_object_mut() {
        fields.remove("id");
    }
    item
}

/// The answer to a client-side tool search: the definitions of the deferred tools it found.
fn search_output(
    dialect: Dialect,
    call_id: &str,
    result: &ToolMessage,
    request: &ChatRequest,
    names: &NameMap,
) -> Value {
    let tools: Vec<Value> = result
        .tool_references
        .iter()
        .filter_map(|name| {
            let found = request
                .deferred_tools
                .iter()
                .find(|d| d.definition.name() == name);
            if found.is_none() {
                tracing::debug!(tool = %name, "a tool search found a tool that is not deferred");
            }
            found.map(|d| function_tool(dialect, &d.definition, names, true, request.hosted_code))
        })
        .collect();
    json!({
        "type": "tool_search_output",
        "call_id": call_id,
        "execution": "client",
        "status": "completed",
        "tools": tools,
    })
}
