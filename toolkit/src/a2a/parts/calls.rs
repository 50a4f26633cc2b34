//! Tool calls, agent → client, in the OpenAI wire shape and in LangChain's.

use a2a::{Message, Part, PartContent};
use serde_json::{Map, Value, json};

use super::data::{
    CallFormat, InvalidToolsPart, TOOL_CALLS, data_part, entries, found, integral_floats_to_ints,
    object, part_type, string_field,
};
use crate::tool::ToolCall;
use crate::util::json_kind;

/// The data part asking the client to run `calls` in the OpenAI wire shape (arguments as JSON
/// text), `metadata {type: "tool-calls", format: "openai"}`.
pub fn tool_calls_part(calls: &[ToolCall]) -> Part {
    tool_calls_part_as(calls, CallFormat::OpenAi)
}

/// The data part asking the client to run `calls`, in `format`.
///
/// [`CallFormat::LangChain`] writes `{"id", "name", "args", "type": "tool_call"}` with `args`
/// the parsed arguments. A model's arguments are a JSON object in every well-formed call; when
/// they are not, `args` holds them as they came (the parsed value, or the raw text when it is
/// not JSON) rather than an invented `{}`.
pub fn tool_calls_part_as(calls: &[ToolCall], format: CallFormat) -> Part {
    let calls: Vec<Value> = calls
        .iter()
        .map(|call| match format {
            CallFormat::OpenAi => json!({
                "id": &*call.id,
                "type": "function",
                "function": { "name": call.name, "arguments": call.arguments },
            }),
            CallFormat::LangChain => json!({
                "id": &*call.id,
                "name": call.name,
                "args": serde_json::from_str::<Value>(&call.arguments)
                    .unwrap_or_else(|_| Value::String(call.arguments.clone())),
                "type": "tool_call",
            }),
        })
        .collect();
    data_part(
        json!({ "tool_calls": calls }),
        TOOL_CALLS,
        Some(format.as_str()),
    )
}

/// Whether `part` carries tool calls: `metadata.type = "tool-calls"`, or no `metadata.type` and
/// a data object with a `tool_calls` array (how design-document servers may send them).
pub(crate) fn is_tool_calls_part(part: &Part) -> bool {
    let PartContent::Data(data) = &part.content else {
        return false;
    };
    match part_type(part) {
        Some(kind) => kind == TOOL_CALLS,
        None => data.get("tool_calls").is_some(),
    }
}

/// The tool calls an agent asked for in `message`, from every data part with `metadata.type =
/// "tool-calls"`, or with no `metadata.type` and a `tool_calls` array (how design-document
/// servers may send them), in either shape:
///
/// - OpenAI: `{id, type: "function", function: {name, arguments}}`; `arguments` is JSON text
///   (an object is accepted too and turned into text; missing or `null` means `{}`);
/// - LangChain: `{id, name, args, type: "tool_call"}`; `args` must be an object (missing or
///   `null` means `{}`), and `type`, when present, must be `"tool_call"`. LangChain leaves `id`
///   optional; a call without one is given `NAME-INDEX` (its position in the part), unique
///   within the message.
///
/// An entry in neither shape, or with a wrong field, is a problem with its path; all of them
/// are listed in the error, and no call is returned then.
pub fn extract_tool_calls(message: &Message) -> Result<Vec<ToolCall>, InvalidToolsPart> {
    let mut problems = Vec::new();
    let mut calls = Vec::new();
    let parts = message
        .parts
        .iter()
        .filter(|p| is_tool_calls_part(p))
        .filter_map(|p| match &p.content {
            PartContent::Data(data) => Some(data),
            _ => None,
        });
    for (index, (path, item)) in entries(parts, "tool_calls", &mut problems)
        .into_iter()
        .enumerate()
    {
        let Some(obj) = object(item, &path, &mut problems) else {
            continue;
        };
        let call = if obj.contains_key("function") {
            openai_call(obj, &path, &mut problems)
        } else if obj.contains_key("name") || obj.contains_key("args") {
            langchain_call(obj, &path, index, &mut problems)
        } else {
            let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
            problems.push(format!(
                "{path}: neither an OpenAI tool call ({{id, type: \"function\", function: \
                 {{name, arguments}}}}) nor a LangChain one ({{id, name, args, type: \
                 \"tool_call\"}}); found the keys [{}]",
                keys.join(", ")
            ));
            None
        };
        calls.extend(call);
    }
    found(calls, TOOL_CALLS, problems)
}

fn openai_call(
    obj: &Map<String, Value>,
    path: &str,
    problems: &mut Vec<String>,
) -> Option<ToolCall> {
    let id = string_field(obj, "id", path, problems);
    let Some(function) = obj.get("function").and_then(Value::as_object) else {
        problems.push(format!("{path}.function: must be an object"));
        return None;
    };
    let fpath = format!("{path}.function");
    let name = string_field(function, "name", &fpath, problems);
    let arguments = arguments(
        function.get("arguments"),
        true,
        &format!("{fpath}.arguments"),
        problems,
    );
    Some(ToolCall::new(id?, name?, arguments?))
}

fn langchain_call(
    obj: &Map<String, Value>,
    path: &str,
    index: usize,
    problems: &mut Vec<String>,
) -> Option<ToolCall> {
    let name = string_field(obj, "name", path, problems);
    let id = match obj.get("id") {
        None | Some(Value::Null) => name.map(|n| format!("{n}-{index}")),
        Some(_) => string_field(obj, "id", path, problems).map(str::to_string),
    };
    match obj.get("type") {
        None | Some(Value::Null) => {}
        Some(Value::String(t)) if t == "tool_call" => {}
        Some(other) => problems.push(format!("{path}.type: must be \"tool_call\", found {other}")),
    }
    let arguments = arguments(obj.get("args"), false, &format!("{path}.args"), problems);
    Some(ToolCall::new(id?, name?, arguments?))
}

/// A call's arguments as JSON text: an object (its integral floats made integers), `{}` when
/// there are none, or, where `text` allows it (OpenAI's form), JSON text as it is. Anything
/// else is a problem at `path`.
fn arguments(
    value: Option<&Value>,
    text: bool,
    path: &str,
    problems: &mut Vec<String>,
) -> Option<String> {
    match value {
        Some(Value::String(s)) if text => Some(s.clone()),
        Some(v @ Value::Object(_)) => {
            let mut v = v.clone();
            integral_floats_to_ints(&mut v);
            Some(v.to_string())
        }
        None | Some(Value::Null) => Some("{}".to_string()),
        Some(other) => {
            let expected = if text {
                "JSON text or an object"
            } else {
                "an object"
            };
            problems.push(format!(
                "{path}: must be {expected}, found {}",
                json_kind(other)
            ));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::data::message;
    use super::*;

    /// `part`, made of `calls`, is marked with `format`, its first call is `first` on the wire,
    /// and the calls read back as they were.
    fn round_trips(calls: &[ToolCall], part: Part, format: &str, first: Value) {
        let wire = serde_json::to_value(&part).unwrap();
        assert_eq!(
            wire["metadata"],
            json!({"type": "tool-calls", "format": format})
        );
        assert_eq!(wire["data"]["tool_calls"][0], first);
        assert_eq!(extract_tool_calls(&message(vec![part])).unwrap(), calls);
    }

    #[test]
    fn openai_calls_round_trip() {
        let calls = vec![
            ToolCall::new("c1", "get_weather", r#"{"city":"Paris"}"#),
            ToolCall::new("c2", "add", r#"{"a":1}"#),
        ];
        round_trips(
            &calls,
            tool_calls_part(&calls),
            "openai",
            json!({"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}),
        );
    }

    #[test]
    fn langchain_calls_round_trip() {
        let calls = vec![ToolCall::new("c1", "get_weather", r#"{"city":"Paris"}"#)];
        round_trips(
            &calls,
            tool_calls_part_as(&calls, CallFormat::LangChain),
            "langchain",
            json!({"id": "c1", "name": "get_weather", "args": {"city": "Paris"}, "type": "tool_call"}),
        );
    }

    #[test]
    fn arguments_that_are_not_an_object_are_kept_as_they_came() {
        let calls = vec![ToolCall::new("c1", "f", "not json")];
        let part = tool_calls_part_as(&calls, CallFormat::LangChain);
        let wire = serde_json::to_value(&part).unwrap();
        assert_eq!(wire["data"]["tool_calls"][0]["args"], "not json");
    }

    #[test]
    fn a_bare_tool_calls_part_is_read_and_langchain_ids_are_optional() {
        // A document-style server's part: no metadata, LangChain calls, one without an id.
        let part = Part::data(json!({"tool_calls": [
            {"name": "add", "args": {"a": 1.0, "b": 2.5}},
            {"id": "x", "name": "add", "args": {}, "type": "tool_call"}
        ]}));
        let calls = extract_tool_calls(&message(vec![Part::text("Let me add."), part])).unwrap();
        assert_eq!(
            calls,
            vec![
                ToolCall::new("add-0", "add", r#"{"a":1,"b":2.5}"#),
                ToolCall::new("x", "add", "{}"),
            ]
        );
        // Data parts that are something else are not calls.
        let other = Part::data(json!({"answer": 42}));
        assert!(
            extract_tool_calls(&message(vec![other]))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn calls_in_no_known_shape_list_every_problem() {
        let part = data_part(
            json!({"tool_calls": [
                {"tool": "get_weather", "input": {"city": "Paris"}},
                {"function": {"name": "add", "arguments": 3}},
                {"id": 7, "name": "add", "args": [1], "type": "function"},
                "call me"
            ]}),
            TOOL_CALLS,
            None,
        );
        let err = extract_tool_calls(&message(vec![part])).unwrap_err();
        assert_eq!(
            err.problems,
            vec![
                "tool_calls[0]: neither an OpenAI tool call ({id, type: \"function\", function: \
                 {name, arguments}}) nor a LangChain one ({id, name, args, type: \
                 \"tool_call\"}); found the keys [tool, input]",
                "tool_calls[1].id: missing",
                "tool_calls[1].function.arguments: must be JSON text or an object, found a number",
                "tool_calls[2].id: must be a string, found a number",
                "tool_calls[2].type: must be \"tool_call\", found \"function\"",
                "tool_calls[2].args: must be an object, found an array",
                "tool_calls[3]: must be an object, found a string",
            ]
        );
        assert!(err.to_string().starts_with("invalid tool-calls part: "));
    }
}
