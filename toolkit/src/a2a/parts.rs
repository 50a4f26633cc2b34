//! The data parts that carry tools over A2A (client-side tools, design (a)).
//!
//! Three application conventions, each a data part told apart by `metadata.type`:
//!
//! | `metadata.type`      | `data`                                                   | direction |
//! |----------------------|----------------------------------------------------------|-----------|
//! | `tool-definitions`   | `{"tools": [OpenAI function tools]}` (`format: langchain`) | client → agent |
//! | `tool-calls`         | `{"tool_calls": [OpenAI wire tool calls]}` (`format: openai`) | agent → client, task `INPUT_REQUIRED` |
//! | `tool-results`       | `{"tool_results": [{tool_call_id, name, content, is_error}]}` | client → agent, same task |
//!
//! The functions here build and read A2A 1.0 [`Part`]s (the official `a2a-lf` types); the 0.3
//! form of the same part (`kind: "data"`, no `mediaType`) is produced by the 0.3 conversion
//! layer at the transport boundary.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use a2a::{Message, Part, PartContent};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::model;
use crate::{ToolCall, ToolDefinition, ToolResult};

/// `metadata.type` of a part carrying tool definitions.
pub const TOOL_DEFINITIONS: &str = "tool-definitions";
/// `metadata.type` of a part carrying tool calls.
pub const TOOL_CALLS: &str = "tool-calls";
/// `metadata.type` of a part carrying tool results.
pub const TOOL_RESULTS: &str = "tool-results";

const JSON_MEDIA_TYPE: &str = "application/json";

/// What is wrong with a tools part: every problem found, each with its JSON path.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid {kind} part: {}", problems.join("; "))]
pub struct InvalidToolsPart {
    /// Which convention the part claimed to follow (`tool-definitions`, `tool-calls`, ...).
    pub kind: &'static str,
    /// One entry per problem, e.g. `tools[1].function.description: missing`.
    pub problems: Vec<String>,
}

/// One tool result as it travels back to the agent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResultEntry {
    /// The id of the call it answers.
    pub tool_call_id: String,
    /// The tool's name.
    pub name: String,
    /// The tool's output as text (or the error message).
    pub content: String,
    /// Whether the call failed.
    #[serde(default)]
    pub is_error: bool,
}

impl From<&ToolResult> for ToolResultEntry {
    fn from(result: &ToolResult) -> Self {
        ToolResultEntry {
            tool_call_id: result.call_id.to_string(),
            name: result.name.clone(),
            content: result.model_text().into_owned(),
            is_error: result.is_error(),
        }
    }
}

impl ToolResultEntry {
    /// The tool message a model sees for this result.
    pub fn to_message(&self) -> model::Message {
        let mut message = model::Message::user(self.content.clone());
        message.role = model::Role::Tool;
        message.tool_call_id = Some(Arc::from(self.tool_call_id.as_str()));
        message.name = Some(self.name.clone());
        message.is_error = self.is_error;
        message
    }
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
/// "mediaType":"application/json","metadata":{"type":"tool-definitions","format":"langchain"}}`.
///
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
        Some("langchain"),
    )
}

/// The data part asking the client to run `calls` (OpenAI wire shape, arguments as JSON text).
pub fn tool_calls_part(calls: &[ToolCall]) -> Part {
    let calls: Vec<Value> = calls
        .iter()
        .map(|call| {
            json!({
                "id": &*call.id,
                "type": "function",
                "function": { "name": call.name, "arguments": call.arguments },
            })
        })
        .collect();
    data_part(json!({ "tool_calls": calls }), TOOL_CALLS, Some("openai"))
}

/// The data part returning `results` to the agent.
pub fn tool_results_part<'a>(results: impl IntoIterator<Item = &'a ToolResultEntry>) -> Part {
    let results: Vec<&ToolResultEntry> = results.into_iter().collect();
    data_part(json!({ "tool_results": results }), TOOL_RESULTS, None)
}

/// The data parts of `message` whose `metadata.type` is `kind`.
fn parts_of_kind<'m>(message: &'m Message, kind: &'m str) -> impl Iterator<Item = &'m Value> {
    message
        .parts
        .iter()
        .filter_map(move |part| match &part.content {
            PartContent::Data(data)
                if part
                    .metadata
                    .as_ref()
                    .and_then(|m| m.get("type"))
                    .and_then(Value::as_str)
                    == Some(kind) =>
            {
                Some(data)
            }
            _ => None,
        })
}

/// Whether `message` carries a part of the given convention (`TOOL_DEFINITIONS`, ...).
pub fn has_part(message: &Message, kind: &str) -> bool {
    parts_of_kind(message, kind).next().is_some()
}

/// The array under `key` of every part of `kind`, concatenated, or the problems found.
fn entries<'m>(
    message: &'m Message,
    kind: &'static str,
    key: &str,
    problems: &mut Vec<String>,
) -> Vec<(String, &'m Value)> {
    let mut out = Vec::new();
    for (p, data) in parts_of_kind(message, kind).enumerate() {
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
/// "tool-definitions"`), validated.
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
    for (path, item) in entries(message, TOOL_DEFINITIONS, "tools", &mut problems) {
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

/// The tool calls an agent asked for in `message` (parts with `metadata.type = "tool-calls"`).
///
/// `function.arguments` is JSON text in the OpenAI wire shape; an object (LangChain's form) is
/// accepted and turned into text.
pub fn extract_tool_calls(message: &Message) -> Result<Vec<ToolCall>, InvalidToolsPart> {
    let mut problems = Vec::new();
    let mut calls = Vec::new();
    for (path, item) in entries(message, TOOL_CALLS, "tool_calls", &mut problems) {
        let Some(obj) = item.as_object() else {
            problems.push(format!(
                "{path}: must be an object, found {}",
                type_name(item)
            ));
            continue;
        };
        let id = string_field(obj, "id", &path, &mut problems);
        let Some(function) = obj.get("function").and_then(Value::as_object) else {
            problems.push(format!("{path}.function: missing or not an object"));
            continue;
        };
        let fpath = format!("{path}.function");
        let name = string_field(function, "name", &fpath, &mut problems);
        let arguments = match function.get("arguments") {
            Some(Value::String(s)) => Some(s.clone()),
            Some(v @ Value::Object(_)) => {
                let mut v = v.clone();
                integral_floats_to_ints(&mut v);
                Some(v.to_string())
            }
            None | Some(Value::Null) => Some("{}".to_string()),
            Some(other) => {
                problems.push(format!(
                    "{fpath}.arguments: must be JSON text or an object, found {}",
                    type_name(other)
                ));
                None
            }
        };
        if let (Some(id), Some(name), Some(arguments)) = (id, name, arguments) {
            calls.push(ToolCall::new(id, name, arguments));
        }
    }
    if problems.is_empty() {
        Ok(calls)
    } else {
        Err(InvalidToolsPart {
            kind: TOOL_CALLS,
            problems,
        })
    }
}

/// The tool results a client returned in `message` (parts with `metadata.type =
/// "tool-results"`). `content` may be text or any JSON value (kept as its JSON text).
pub fn extract_tool_results(message: &Message) -> Result<Vec<ToolResultEntry>, InvalidToolsPart> {
    let mut problems = Vec::new();
    let mut results = Vec::new();
    for (path, item) in entries(message, TOOL_RESULTS, "tool_results", &mut problems) {
        let Some(obj) = item.as_object() else {
            problems.push(format!(
                "{path}: must be an object, found {}",
                type_name(item)
            ));
            continue;
        };
        let id = string_field(obj, "tool_call_id", &path, &mut problems);
        let name = obj.get("name").and_then(Value::as_str).unwrap_or_default();
        let content = match obj.get("content") {
            Some(Value::String(s)) => s.clone(),
            None | Some(Value::Null) => String::new(),
            Some(other) => other.to_string(),
        };
        let is_error = match obj.get("is_error") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(other) => {
                problems.push(format!(
                    "{path}.is_error: must be a boolean, found {}",
                    type_name(other)
                ));
                false
            }
        };
        if let Some(id) = id {
            results.push(ToolResultEntry {
                tool_call_id: id.to_string(),
                name: name.to_string(),
                content,
                is_error,
            });
        }
    }
    if problems.is_empty() {
        Ok(results)
    } else {
        Err(InvalidToolsPart {
            kind: TOOL_RESULTS,
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

impl fmt::Display for ToolResultEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let flag = if self.is_error { " (error)" } else { "" };
        write!(
            f,
            "[{} {}]{} {}",
            self.name, self.tool_call_id, flag, self.content
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a::Role;

    fn message(parts: Vec<Part>) -> Message {
        Message::new(Role::User, parts)
    }

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
                "metadata": {"type": "tool-definitions", "format": "langchain"}
            })
        );
        let back = extract_tools(&message(vec![Part::text("hi"), part])).unwrap();
        assert_eq!(back, vec![def]);
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
    fn calls_and_results_round_trip() {
        let calls = vec![
            ToolCall::new("c1", "get_weather", r#"{"city":"Paris"}"#),
            ToolCall::new("c2", "add", r#"{"a":1}"#),
        ];
        let part = tool_calls_part(&calls);
        let wire = serde_json::to_value(&part).unwrap();
        assert_eq!(
            wire["metadata"],
            json!({"type": "tool-calls", "format": "openai"})
        );
        assert_eq!(
            wire["data"]["tool_calls"][0],
            json!({"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}})
        );
        assert_eq!(extract_tool_calls(&message(vec![part])).unwrap(), calls);

        let entries = vec![
            ToolResultEntry {
                tool_call_id: "c1".into(),
                name: "get_weather".into(),
                content: "18C".into(),
                is_error: false,
            },
            ToolResultEntry {
                tool_call_id: "c2".into(),
                name: "add".into(),
                content: "Error: boom".into(),
                is_error: true,
            },
        ];
        let part = tool_results_part(&entries);
        assert_eq!(
            serde_json::to_value(&part).unwrap()["metadata"],
            json!({"type": "tool-results"})
        );
        assert_eq!(extract_tool_results(&message(vec![part])).unwrap(), entries);
        let msg = entries[1].to_message();
        assert!(msg.is_error);
        assert_eq!(msg.tool_call_id.as_deref(), Some("c2"));
    }

    #[test]
    fn object_arguments_and_float_integers_are_accepted() {
        let part = data_part(
            json!({"tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "add", "arguments": {"a": 1.0, "b": 2.5}}}]}),
            TOOL_CALLS,
            None,
        );
        let calls = extract_tool_calls(&message(vec![part])).unwrap();
        assert_eq!(calls[0].arguments, r#"{"a":1,"b":2.5}"#);
        let bad = data_part(
            json!({"tool_calls": [{"function": {"name": "add", "arguments": 3}}]}),
            TOOL_CALLS,
            None,
        );
        let err = extract_tool_calls(&message(vec![bad])).unwrap_err();
        assert_eq!(
            err.problems,
            vec![
                "tool_calls[0].id: missing",
                "tool_calls[0].function.arguments: must be JSON text or an object, found a number"
            ]
        );
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
