//! The data parts every tools part is: their `metadata.type` and `format`, building and finding
//! them, and reading their arrays with every problem listed. The vocabulary the readers and
//! writers of [definitions](super::to_data_part), [calls](super::extract_tool_calls) and
//! [results](super::extract_tool_results) share.

use std::collections::HashMap;

use a2a::{Message, Part, PartContent};
use serde_json::{Map, Value};

use crate::util::json_kind;

/// `metadata.type` of a part carrying tool definitions.
pub const TOOL_DEFINITIONS: &str = "tool-definitions";
/// `metadata.type` of a part carrying tool calls.
pub const TOOL_CALLS: &str = "tool-calls";
/// `metadata.type` of a part carrying tool results.
pub const TOOL_RESULTS: &str = "tool-results";

const JSON_MEDIA_TYPE: &str = "application/json";

/// The shape tool calls travel in (`metadata.format` of the parts that carry them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
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
#[non_exhaustive]
pub struct InvalidToolsPart {
    /// Which convention the part claimed to follow (`tool-definitions`, `tool-calls`, ...).
    pub kind: &'static str,
    /// One entry per problem, e.g. `tools[1].function.description: missing`.
    pub problems: Vec<String>,
}

/// A JSON data part marked `metadata.type = kind` (and `format`, when given).
pub(super) fn data_part(data: Value, kind: &str, format: Option<&str>) -> Part {
    let mut metadata = HashMap::new();
    metadata.insert("type".to_string(), Value::from(kind));
    if let Some(format) = format {
        metadata.insert("format".to_string(), Value::from(format));
    }
    let mut part = Part::data(data).with_media_type(JSON_MEDIA_TYPE);
    part.metadata = Some(metadata);
    part
}

/// The `metadata.type` of a part, if it has one.
pub(super) fn part_type(part: &Part) -> Option<&str> {
    part.metadata
        .as_ref()
        .and_then(|m| m.get("type"))
        .and_then(Value::as_str)
}

/// The data parts of `message` whose `metadata.type` is `kind`.
pub(super) fn parts_of_kind<'m>(
    message: &'m Message,
    kind: &'m str,
) -> impl Iterator<Item = &'m Value> {
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

/// The array under `key` of each data value, concatenated, each item with its path; a value
/// without the array is a problem.
pub(super) fn entries<'m>(
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
                json_kind(other)
            )),
            None => problems.push(format!("part {p}: `data.{key}` is missing")),
        }
    }
    out
}

/// `item` as an object; anything else is a problem at `path`.
pub(super) fn object<'v>(
    item: &'v Value,
    path: &str,
    problems: &mut Vec<String>,
) -> Option<&'v Map<String, Value>> {
    let object = item.as_object();
    if object.is_none() {
        problems.push(format!(
            "{path}: must be an object, found {}",
            json_kind(item)
        ));
    }
    object
}

/// What was read from the parts of `kind` when there were no problems, else the error listing
/// every problem.
pub(super) fn found<T>(
    items: Vec<T>,
    kind: &'static str,
    problems: Vec<String>,
) -> Result<Vec<T>, InvalidToolsPart> {
    if problems.is_empty() {
        Ok(items)
    } else {
        Err(InvalidToolsPart { kind, problems })
    }
}

pub(super) fn string_field<'v>(
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
                json_kind(other)
            ));
            None
        }
        None => {
            problems.push(format!("{path}.{key}: missing"));
            None
        }
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
pub(super) fn message(parts: Vec<Part>) -> Message {
    Message::new(a2a::Role::User, parts)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

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
