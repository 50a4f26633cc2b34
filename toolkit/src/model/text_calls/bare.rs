//! Calls written as bare JSON objects, the way small local models write them when their chat
//! template has no tool-call syntax the server understands: `{"name": "get_weather",
//! "arguments": {"city": "Paris"}}`, one per line, in a JSON array, or in a fenced code block.
//!
//! There is no marker here, so the shape is the marker, and it is narrow on purpose: an object
//! at the top level of the reply (not inside other JSON) whose keys are `name` (a string) and
//! `arguments` or `parameters` (an object, or a string holding one), plus at most an `id` and a
//! `"type": "function"`. The OpenAI shape `{"type": "function", "function": {"name", "arguments"}}`
//! counts too. Data that merely has a `name` is not a call; JSON that does not parse is prose.

use serde_json::{Map, Value};

use super::syntax::{Found, Parameters, RawCall};

/// The bare call objects of `text` (top-level objects of the call shape, alone or in arrays).
pub(super) fn find(text: &str) -> Found {
    let mut found = Found::default();
    let mut pos = 0;
    while let Some(offset) = text[pos..].find(['{', '[']) {
        let start = pos + offset;
        let mut values = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        match values.next() {
            Some(Ok(value)) => {
                let end = start + values.byte_offset();
                let calls = match &value {
                    Value::Object(object) => call(object).map(|c| vec![c]),
                    Value::Array(items) if !items.is_empty() => items
                        .iter()
                        .map(|item| item.as_object().and_then(call))
                        .collect::<Option<Vec<_>>>(),
                    _ => None,
                };
                if let Some(calls) = calls {
                    found.push(start..end, calls);
                }
                // Whatever it was, its inside is data, not calls of this reply.
                pos = end;
            }
            // Not JSON from here: a brace or bracket of prose.
            _ => pos = start + 1,
        }
    }
    found
}

/// The call an object of the call shape is, or `None` for any other object.
pub(super) fn call(object: &Map<String, Value>) -> Option<RawCall> {
    if let Some(Value::Object(function)) = object.get("function") {
        // OpenAI's shape: only `type`, `id` and `function` around it.
        let allowed = object
            .keys()
            .all(|k| matches!(k.as_str(), "type" | "id" | "function"));
        let typed = object.get("type").is_none_or(|t| t == "function");
        return if allowed && typed {
            inner(function, object.get("id"))
        } else {
            None
        };
    }
    inner(object, object.get("id"))
}

fn inner(object: &Map<String, Value>, id: Option<&Value>) -> Option<RawCall> {
    let name = object.get("name")?.as_str()?;
    let allowed = object.keys().all(|k| {
        matches!(
            k.as_str(),
            "name" | "arguments" | "parameters" | "id" | "type"
        )
    });
    if !allowed || object.get("type").is_some_and(|t| t != "function") {
        return None;
    }
    let arguments = match object
        .get("arguments")
        .or_else(|| object.get("parameters"))?
    {
        object @ Value::Object(_) => object.clone(),
        // Some models write the arguments as JSON text, as the Chat Completions wire does.
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(object @ Value::Object(_)) => object,
            _ => return None,
        },
        _ => return None,
    };
    let id = match id {
        Some(Value::String(id)) => Some(id.clone()),
        Some(Value::Number(id)) => Some(id.to_string()),
        _ => None,
    };
    Some(RawCall {
        id,
        name: Some(name.to_owned()),
        parameters: Some(Parameters::Json(arguments)),
        form: super::syntax::Form::Bare,
        unreadable: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<String> {
        find(text)
            .blocks
            .into_iter()
            .flat_map(|b| b.calls)
            .map(|c| c.name.unwrap_or_default())
            .collect()
    }

    #[test]
    fn objects_one_per_line_arrays_and_the_openai_shape() {
        let text =
            "{\"name\": \"a\", \"arguments\": {\"x\": 1}}\n{\"name\": \"b\", \"parameters\": {}}";
        assert_eq!(names(text), ["a", "b"]);
        assert_eq!(
            names(r#"[{"name": "a", "arguments": {}}, {"name": "b", "arguments": "{\"y\": 2}"}]"#),
            ["a", "b"]
        );
        assert_eq!(
            names(r#"{"type": "function", "function": {"name": "c", "arguments": "{}"}}"#),
            ["c"]
        );
        let found = find("Sure:\n{\"name\": \"a\", \"arguments\": {}} done");
        assert_eq!(found.blocks[0].span, 6..36);
    }

    #[test]
    fn data_is_not_a_call() {
        for text in [
            r#"{"name": "Alice", "age": 3}"#,
            r#"{"name": "a", "arguments": {}, "extra": 1}"#,
            r#"{"name": "a", "arguments": [1]}"#,
            r#"{"name": "a"}"#,
            r#"{"data": {"name": "a", "arguments": {}}}"#,
            r#"[{"name": "a", "arguments": {}}, 3]"#,
            r#"{"type": "object", "name": "a", "parameters": {}}"#,
            r#"{"name": "a", "arguments": {"unclosed": 1}"#,
            "a set {1, 2} and [x]",
        ] {
            assert!(find(text).blocks.is_empty(), "{text}");
        }
    }
}
