//! Call blocks of [`TextCallFormat::Json`](super::syntax::TextCallFormat::Json): JSON objects with a
//! `"tool_calls"` key, found anywhere in the reply. A block that is not valid JSON as written
//! is read leniently (`lenient.rs`) before it is refused.

use serde_json::{Map, Value};

use super::error::{TextCallError, json_error, json_error_offset};
use super::lenient;
use super::syntax::{Form, Found, Parameters, RawCall};
use crate::util::json_kind as kind;

/// The call blocks of `text`. Every `"tool_calls":` marker must lie inside one.
pub(super) fn find(text: &str) -> Result<Found, TextCallError> {
    let markers = markers(text);
    let mut found = Found::default();
    let Some(&last_marker) = markers.last() else {
        return Ok(found);
    };
    let mut pos = 0;
    // Try a JSON value at each `{` before the last marker; a block is an object holding the
    // key. Objects without it are stepped into, since the block may be nested in one.
    while let Some(offset) = text[pos..].find('{') {
        let start = pos + offset;
        if start > last_marker {
            break;
        }
        let mut values = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        match values.next() {
            Some(Ok(Value::Object(object))) => {
                if let Some(list) = call_list(&object) {
                    let mut calls = Vec::new();
                    read_calls(list, found.calls(), &mut calls)?;
                    let end = start + values.byte_offset();
                    found.push(start..end, calls);
                    pos = end;
                    continue;
                }
            }
            Some(Err(error)) => {
                // A marker between this `{` and the error means the block itself is broken;
                // otherwise the `{` was only prose.
                let at = start + json_error_offset(&text[start..], &error);
                if markers.iter().any(|&m| m > start && m < at) {
                    // Read leniently (a missing last brace, single quotes, ...) before refusing.
                    if let Ok(read) = lenient::value(&text[start..])
                        && let Value::Object(object) = &read.value
                        && let Some(list) = call_list(object)
                    {
                        let mut calls = Vec::new();
                        read_calls(list, found.calls(), &mut calls)?;
                        let end = start + read.len;
                        found.push(start..end, calls);
                        pos = end;
                        continue;
                    }
                    return Err(TextCallError::Malformed(format!(
                        "the tool call block is not valid JSON: {}",
                        json_error(&text[start..], &error)
                    )));
                }
            }
            _ => {}
        }
        pos = start + 1;
    }
    if markers.iter().any(|&m| !found.covers(m)) {
        return Err(TextCallError::Malformed(
            "the reply uses \"tool_calls\" as a JSON key, but not inside a complete JSON \
             object that starts with `{`"
                .to_owned(),
        ));
    }
    Ok(found)
}

/// Byte offsets of `"tool_calls"` / `"tool_call"` followed by optional whitespace and `:`.
fn markers(text: &str) -> Vec<usize> {
    let mut markers = Vec::new();
    let mut from = 0;
    while let Some(offset) = text[from..].find("\"tool_call") {
        let start = from + offset;
        from = start + 1;
        let rest = &text[start + "\"tool_call".len()..];
        let Some(rest) = rest.strip_prefix('"').or_else(|| rest.strip_prefix("s\"")) else {
            continue;
        };
        if rest.trim_start().starts_with(':') {
            markers.push(start);
        }
    }
    markers
}

fn call_list(object: &Map<String, Value>) -> Option<&Value> {
    object.get("tool_calls").or_else(|| object.get("tool_call"))
}

/// Read the calls of one block into `calls`; `before` calls came in earlier blocks (for the
/// numbers in messages).
fn read_calls(list: &Value, before: usize, calls: &mut Vec<RawCall>) -> Result<(), TextCallError> {
    let items = match list {
        Value::Array(items) => items.as_slice(),
        Value::Object(_) => std::slice::from_ref(list),
        other => {
            return Err(TextCallError::Malformed(format!(
                "\"tool_calls\" must be a list of calls, but it is {}",
                kind(other)
            )));
        }
    };
    for item in items {
        let Value::Object(call) = item else {
            return Err(TextCallError::Malformed(format!(
                "tool call #{} must be a JSON object with \"name\" and \"parameters\", but it is {}",
                before + calls.len() + 1,
                kind(item)
            )));
        };
        let id = match call.get("id") {
            Some(Value::String(id)) => Some(id.clone()),
            Some(Value::Number(id)) => Some(id.to_string()),
            _ => None,
        };
        calls.push(RawCall {
            id,
            name: call.get("name").and_then(Value::as_str).map(str::to_owned),
            parameters: call
                .get("parameters")
                .or_else(|| call.get("arguments"))
                .cloned()
                .map(Parameters::Json),
            form: Form::ToolCallsKey,
            unreadable: None,
        });
    }
    Ok(())
}
