//! The parts that carry client-side tools over A2A: tool definitions from the client, tool calls
//! from the agent, tool results back.
//!
//! Two dialects travel in the same parts. The project's own convention (protocols.md §1.6) and
//! the literal form of design document 000 differ in the shape of the calls and in how results
//! come back; both are read everywhere, and each is spoken to the peer that uses it.
//!
//! | what | the project's convention | design document 000 |
//! |------|--------------------------|---------------------|
//! | tool definitions, client → agent | data part `{"tools": [{type: "function", function: {name, description, parameters}}]}`, `metadata {type: "tool-definitions", format: "openai"}` | the same part with `format: "langchain"` |
//! | tool calls, agent → client | data part `{"tool_calls": [{id, type: "function", function: {name, arguments: "<JSON text>"}}]}`, `metadata {type: "tool-calls", format: "openai"}` | `{"tool_calls": [{id, name, args: {…}, type: "tool_call"}]}` (LangChain's `ToolCall`), `format: "langchain"` |
//! | tool results, client → agent | data part `{"tool_results": [{tool_call_id, name, content, is_error}]}`, `metadata {type: "tool-results"}` | a text part: `Tool results: [{"name", "result"} \| {"name", "error"}]`, `Tool "NAME" returned: <JSON>` or `Tool NAME failed: <message>` |
//!
//! The `format` of a client's tool definitions names the shape it wants its calls in
//! ([`requested_call_format`]): `"langchain"` gets [`CallFormat::LangChain`], anything else (or
//! no `format`) [`CallFormat::OpenAi`]. [`extract_tool_calls`] reads both shapes, and also a data
//! part holding a `tool_calls` array without any `metadata.type`, as document-style servers may
//! send it. [`extract_text_results`] reads the document's three result texts; those carry no
//! call ids, so a reader matches them to its calls by name.
//!
//! Every reader validates the whole part and lists every problem with its JSON path
//! ([`InvalidToolsPart`]); nothing is silently dropped or guessed.
//!
//! The functions here build and read A2A 1.0 [`Part`]s (the official `a2a-lf` types); the 0.3
//! form of the same part (`kind: "data"`, no `mediaType`) is produced by the 0.3 conversion
//! layer at the transport boundary.

mod calls;
mod results;

use std::collections::HashMap;

use a2a::{Message, Part, PartContent};
use serde_json::{Map, Value, json};

use crate::ToolDefinition;

pub(crate) use calls::is_tool_calls_part;
pub use calls::{extract_tool_calls, tool_calls_part, tool_calls_part_as};
pub use results::{
    ToolResultEntry, extract_text_results, extract_tool_results, tool_results_part,
    tool_results_text,
};

/// `metadata.type` of a part carrying tool definitions.
pub const TOOL_DEFINITIONS: &str = "tool-definitions";
/// `metadata.type` of a part carrying tool calls.
pub const TOOL_CALLS: &str = "tool-calls";
/// `metadata.type` of a part carrying tool results.
pub const TOOL_RESULTS: &str = "tool-results";

const JSON_MEDIA_TYPE: &str = "application/json";

/// The shape tool calls travel in (`metadata.format` of the parts that carry them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CallFormat {
    /// The OpenAI Chat Completions wire shape, `{id, type: "function", function: {name,
    /// arguments}}` with the arguments as JSON text: the project's convention.
    #[default]
    OpenAi,
    /// LangChain's `ToolCall`, `{id, name, args, type: "tool_call"}` with the arguments as an
    /// object: what design document 000's clients read.
    LangChain,
}

impl CallFormat {
    /// The `metadata.format` value: `"openai"` or `"langchain"`.
    pub fn as_str(self) -> &'static str {
        match self {
            CallFormat::OpenAi => "openai",
            CallFormat::LangChain => "langchain",
        }
    }
}

/// What is wrong with a tools part: every problem found, each with its JSON path.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid {kind} part: {}", problems.join("; "))]
pub struct InvalidToolsPart {
    /// Which convention the part claimed to follow (`tool-definitions`, `tool-calls`, ...).
    pub kind: &'static str,
    /// One entry per problem, e.g. `tools[1].function.description: missing`.
    pub problems: Vec<String>,
}

fn data_part(data: Value, kind: &str, format: Option<&str>) -> Part {
    let mut metadata = HashMap::new();
    metadata.insert("type".to_string(), Value::from(kind));
    if let Some(format) = format {
        metadata.insert("format".to_string(), Value::from(format));
    }
    let mut part = Part::data(data).with_media_type(JSON_MEDIA_TYPE);
    part.metadata = Some(metadata);
    part
}

/// The data part that offers `tools` to an agent, in the OpenAI function format:
/// `{"data":{"tools":[{"type":"function","function":{name, description, parameters}}]},
/// "mediaType":"application/json","metadata":{"type":"tool-definitions","format":"openai"}}`.
///
/// `format: "openai"` asks for calls in the OpenAI wire shape (the project's convention); a
/// design-document client sends `"langchain"` instead and gets LangChain-shaped calls.
/// `parameters` is the canonical schema of each definition; the agent renders it for its own
/// model.
pub fn to_data_part(tools: &[ToolDefinition]) -> Part {
    let tools: Vec<Value> = tools
        .iter()
        .map(|def| {
            json!({
                "type": "function",
                "function": {
                    "name": def.name(),
                    "description": def.description(),
                    "parameters": def.parameters(),
                }
            })
        })
        .collect();
    data_part(
        json!({ "tools": tools }),
        TOOL_DEFINITIONS,
        Some(CallFormat::OpenAi.as_str()),
    )
}

/// The `metadata.type` of a part, if it has one.
fn part_type(part: &Part) -> Option<&str> {
    part.metadata
        .as_ref()
        .and_then(|m| m.get("type"))
        .and_then(Value::as_str)
}

/// The data parts of `message` whose `metadata.type` is `kind`.
fn parts_of_kind<'m>(message: &'m Message, kind: &'m str) -> impl Iterator<Item = &'m Value> {
    message
        .parts
        .iter()
        .filter_map(move |part| match &part.content {
            PartContent::Data(data) if part_type(part) == Some(kind) => Some(data),
            _ => None,
        })
}

/// Whether `message` carries a part of the given convention (`TOOL_DEFINITIONS`, ...).
pub fn has_part(message: &Message, kind: &str) -> bool {
    parts_of_kind(message, kind).next().is_some()
}

/// The call format the client asks for in `message`: the `format` of its tool definitions
/// (`"langchain"` → [`CallFormat::LangChain`], anything else → [`CallFormat::OpenAi`]), or
/// `None` when the message carries no tool definitions.
pub fn requested_call_format(message: &Message) -> Option<CallFormat> {
    let part = message
        .parts
        .iter()
        .find(|p| part_type(p) == Some(TOOL_DEFINITIONS))?;
    let format = part
        .metadata
        .as_ref()
        .and_then(|m| m.get("format"))
        .and_then(Value::as_str);
    Some(if format == Some(CallFormat::LangChain.as_str()) {
        CallFormat::LangChain
    } else {
        CallFormat::OpenAi
    })
}

/// The array under `key` of each data value, concatenated, each item with its path; a value
/// without the array is a problem.
fn entries<'m>(
    parts: impl Iterator<Item = &'m Value>,
    key: &str,
    problems: &mut Vec<String>,
) -> Vec<(String, &'m Value)> {
    let mut out = Vec::new();
    for (p, data) in parts.enumerate() {
        match data.get(key) {
            Some(Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    out.push((format!("{key}[{i}]"), item));
                }
            }
            Some(other) => problems.push(format!(
                "part {p}: `{key}` must be an array, found {}",
                type_name(other)
            )),
            None => problems.push(format!("part {p}: `data.{key}` is missing")),
        }
    }
    out
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn string_field<'v>(
    obj: &'v Map<String, Value>,
    key: &str,
    path: &str,
    problems: &mut Vec<String>,
) -> Option<&'v str> {
    match obj.get(key) {
        Some(Value::String(s)) if !s.is_empty() => Some(s),
        Some(Value::String(_)) => {
            problems.push(format!("{path}.{key}: must not be empty"));
            None
        }
        Some(other) => {
            problems.push(format!(
                "{path}.{key}: must be a string, found {}",
                type_name(other)
            ));
            None
        }
        None => {
            problems.push(format!("{path}.{key}: missing"));
            None
        }
    }
}

/// The tool definitions a client attached to `message` (parts with `metadata.type =
/// "tool-definitions"`, whatever their `format`), validated.
///
/// Returns an empty list when the message has no such part. When a part is there but any tool
/// in it is invalid (not `type: "function"`, no string name or description, `parameters` not an
/// object, a name used twice), the error lists every problem with its path; nothing is
/// silently dropped. Integral floats in the schemas (`3.0`, as protobuf-based peers send them)
/// are turned back into integers.
pub fn extract_tools(message: &Message) -> Result<Vec<ToolDefinition>, InvalidToolsPart> {
    let mut problems = Vec::new();
    let mut tools = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let parts = parts_of_kind(message, TOOL_DEFINITIONS);
    for (path, item) in entries(parts, "tools", &mut problems) {
        let Some(obj) = item.as_object() else {
            problems.push(format!(
                "{path}: must be an object, found {}",
                type_name(item)
            ));
            continue;
        };
        match obj.get("type") {
            Some(Value::String(t)) if t == "function" => {}
            Some(other) => {
                problems.push(format!("{path}.type: must be \"function\", found {other}"))
            }
            None => problems.push(format!("{path}.type: missing (must be \"function\")")),
        }
        let Some(function) = obj.get("function").and_then(Value::as_object) else {
            problems.push(format!("{path}.function: missing or not an object"));
            continue;
        };
        let fpath = format!("{path}.function");
        let name = string_field(function, "name", &fpath, &mut problems);
        let description = string_field(function, "description", &fpath, &mut problems);
        let parameters = match function.get("parameters") {
            Some(Value::Object(p)) => Some(Value::Object(p.clone())),
            Some(other) => {
                problems.push(format!(
                    "{fpath}.parameters: must be an object, found {}",
                    type_name(other)
                ));
                None
            }
            None => {
                problems.push(format!("{fpath}.parameters: missing"));
                None
            }
        };
        if let Some(name) = name
            && !seen.insert(name.to_string())
        {
            problems.push(format!("{fpath}.name: `{name}` is defined twice"));
        }
        if let (Some(name), Some(description), Some(mut parameters)) =
            (name, description, parameters)
        {
            integral_floats_to_ints(&mut parameters);
            tools.push(ToolDefinition::new(name, description, parameters));
        }
    }
    if problems.is_empty() {
        Ok(tools)
    } else {
        Err(InvalidToolsPart {
            kind: TOOL_DEFINITIONS,
            problems,
        })
    }
}

/// Turns every float with no fractional part (`3.0`) into an integer (`3`), recursively.
///
/// A2A 1.x peers built on protobuf carry all JSON numbers as doubles, so `{"days": 3}` arrives
/// as `{"days": 3.0}`, which serde refuses for an integer field. A float parameter still
/// accepts the integer, so the conversion is safe for typed tools. Values beyond ±2^53 are
/// left alone (they were not exact to begin with).
pub fn integral_floats_to_ints(value: &mut Value) {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    match value {
        Value::Number(n) if n.is_f64() => {
            if let Some(f) = n.as_f64()
                && f.fract() == 0.0
                && f.abs() <= EXACT
            {
                *value = Value::from(f as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_floats_to_ints),
        Value::Object(map) => map.values_mut().for_each(integral_floats_to_ints),
        _ => {}
    }
}

#[cfg(test)]
fn message(parts: Vec<Part>) -> Message {
    Message::new(a2a::Role::User, parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_round_trip_in_the_documented_wire_shape() {
        let def = ToolDefinition::new(
            "get_weather",
            "Current weather",
            json!({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}),
        );
        let part = to_data_part(std::slice::from_ref(&def));
        assert_eq!(
            serde_json::to_value(&part).unwrap(),
            json!({
                "data": {"tools": [{"type": "function", "function": {
                    "name": "get_weather", "description": "Current weather",
                    "parameters": {"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]},
                "mediaType": "application/json",
                "metadata": {"type": "tool-definitions", "format": "openai"}
            })
        );
        let msg = message(vec![Part::text("hi"), part]);
        assert_eq!(extract_tools(&msg).unwrap(), vec![def]);
        assert_eq!(requested_call_format(&msg), Some(CallFormat::OpenAi));
    }

    #[test]
    fn the_format_of_the_definitions_names_the_call_shape_wanted() {
        let with_format = |format: Option<&str>| {
            message(vec![data_part(
                json!({"tools": []}),
                TOOL_DEFINITIONS,
                format,
            )])
        };
        assert_eq!(
            requested_call_format(&with_format(Some("langchain"))),
            Some(CallFormat::LangChain)
        );
        assert_eq!(
            requested_call_format(&with_format(Some("openai"))),
            Some(CallFormat::OpenAi)
        );
        assert_eq!(
            requested_call_format(&with_format(None)),
            Some(CallFormat::OpenAi)
        );
        assert_eq!(
            requested_call_format(&message(vec![Part::text("hi")])),
            None
        );
    }

    #[test]
    fn a_message_without_a_tools_part_has_no_tools() {
        assert!(
            extract_tools(&message(vec![Part::text("hi")]))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn invalid_definitions_list_every_problem() {
        let part = data_part(
            json!({"tools": [
                {"type": "function", "function": {"name": "ok", "description": "fine", "parameters": {"type": "object"}}},
                {"type": "tool", "function": {"name": 7, "parameters": []}},
                "nope",
                {"type": "function", "function": {"name": "ok", "description": "again", "parameters": {}}}
            ]}),
            TOOL_DEFINITIONS,
            None,
        );
        let err = extract_tools(&message(vec![part])).unwrap_err();
        assert_eq!(
            err.problems,
            vec![
                "tools[1].type: must be \"function\", found \"tool\"",
                "tools[1].function.name: must be a string, found a number",
                "tools[1].function.description: missing",
                "tools[1].function.parameters: must be an object, found an array",
                "tools[2]: must be an object, found a string",
                "tools[3].function.name: `ok` is defined twice",
            ]
        );
        assert!(
            err.to_string()
                .starts_with("invalid tool-definitions part: ")
        );
        let missing = data_part(json!({"other": 1}), TOOL_DEFINITIONS, None);
        let err = extract_tools(&message(vec![missing])).unwrap_err();
        assert_eq!(err.problems, vec!["part 0: `data.tools` is missing"]);
    }

    #[test]
    fn integral_floats_become_integers() {
        let mut v = json!({"a": 3.0, "b": [1.0, 1.5, -2.0], "c": {"d": 1e300, "e": 4}});
        integral_floats_to_ints(&mut v);
        assert_eq!(
            v,
            json!({"a": 3, "b": [1, 1.5, -2], "c": {"d": 1e300, "e": 4}})
        );
    }
}
