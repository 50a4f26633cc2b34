//! Tool definitions, client → agent: the part that offers a client's tools, and the call
//! shape it asks for.

use a2a::{Message, Part};
use serde_json::{Value, json};

use super::data::{
    CallFormat, InvalidToolsPart, TOOL_DEFINITIONS, data_part, entries, found,
    integral_floats_to_ints, object, part_type, parts_of_kind, string_field,
};
use crate::tool::ToolDefinition;
use crate::util::json_kind;

/// The data part that offers `tools` to an agent, in the OpenAI function format:
/// `{"data":{"tools":[{"type":"function","function":{name, description, parameters}}]},
/// "mediaType":"application/json","metadata":{"type":"tool-definitions","format":"openai"}}`.
///
/// `format: "openai"` asks for calls in the OpenAI wire shape (the project's convention); a
/// design-document client sends `"langchain"` instead and gets LangChain-shaped calls.
/// `parameters` is the canonical schema of each definition; the agent renders it for its own
/// model.
pub fn to_data_part(tools: &[ToolDefinition]) -> Part {
    to_data_part_as(tools, CallFormat::OpenAi)
}

/// [`to_data_part`] asking for calls in `format`: `"format": "langchain"` is what a peer
/// written from design document 000 expects, and it answers with LangChain-shaped calls.
pub fn to_data_part_as(tools: &[ToolDefinition], format: CallFormat) -> Part {
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
        Some(format.as_str()),
    )
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
        let Some(obj) = object(item, &path, &mut problems) else {
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
                    json_kind(other)
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
    found(tools, TOOL_DEFINITIONS, problems)
}

#[cfg(test)]
mod tests {
    use super::super::data::message;
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
}
