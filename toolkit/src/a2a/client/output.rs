//! Reading what a remote agent sends back: progress for the local emitter, artifacts and parts
//! as a [`ToolOutput`], failures as a [`ToolError`].

use std::collections::HashMap;

use a2a::{Artifact, Message, Part, PartContent, Task};
use serde_json::{Value, json};

use crate::a2a::extensions::RESULT_WRAPPED;
use crate::a2a::parts::integral_floats_to_ints;
use crate::context::{LogLevel, ToolEmitter};
use crate::error::{ToolError, ToolErrorKind};
use crate::tool::ToolOutput;

/// Progress in a WORKING status message → the local emitter. A data part with a numeric
/// `progress` (or `done`) is a progress report (`total` and `message` optional); any other data
/// part with a `chunk` string, and any text part, is a chunk of partial output; a data part
/// with a `log` level is a log message.
pub(super) fn forward_progress(emitter: &ToolEmitter, message: &Message) {
    for part in &message.parts {
        match &part.content {
            PartContent::Data(Value::Object(data)) => {
                let done = data
                    .get("progress")
                    .or_else(|| data.get("done"))
                    .and_then(Value::as_f64);
                if let Some(done) = done {
                    let total = data.get("total").and_then(Value::as_f64);
                    let text = data
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    emitter.progress(done, total, text);
                } else if let Some(chunk) = data.get("chunk").and_then(Value::as_str) {
                    emitter.chunk(chunk);
                } else if let Some(level) = data.get("log").and_then(Value::as_str) {
                    // A log message of the remote tool; an unknown level is logged as `info`.
                    let level = level.parse().unwrap_or(LogLevel::Info);
                    let text = data.get("message").and_then(Value::as_str);
                    emitter.log(level, text.unwrap_or_default());
                }
            }
            PartContent::Text(text) if !text.is_empty() => emitter.chunk(text.clone()),
            _ => {}
        }
    }
}

pub(super) fn add_artifact(task: &mut Task, artifact: Artifact, append: bool) {
    let artifacts = task.artifacts.get_or_insert_with(Vec::new);
    match artifacts
        .iter_mut()
        .find(|a| a.artifact_id == artifact.artifact_id)
    {
        Some(existing) if append => existing.parts.extend(artifact.parts),
        Some(existing) => *existing = artifact,
        None => artifacts.push(artifact),
    }
}

/// The error a failed remote call reports. Servers of this crate say what kind of failure it
/// was (`error_kind`, `retryable` in the artifact metadata): an argument error stays one (the
/// model corrects it), a remote timeout stays a timeout (retried only for read-only or
/// idempotent tools), and the tool's own transient errors stay retryable. Anything else is an
/// execution error.
pub(super) fn remote_tool_error(artifacts: &[&Artifact], message: String) -> ToolError {
    let meta = |key: &str| {
        artifacts
            .iter()
            .find_map(|a| a.metadata.as_ref().and_then(|m| m.get(key)).cloned())
    };
    let kind = meta("error_kind")
        .as_ref()
        .and_then(Value::as_str)
        .and_then(|kind| kind.parse::<ToolErrorKind>().ok());
    match kind {
        Some(ToolErrorKind::InvalidArguments | ToolErrorKind::HiddenArgument) => {
            ToolError::invalid_arguments(message)
        }
        Some(ToolErrorKind::Timeout) => ToolError::new(ToolErrorKind::Timeout, message),
        _ => ToolError::execution(message)
            .with_retryable(meta("retryable") == Some(Value::Bool(true))),
    }
}

/// The output of the artifacts that hold a call's result. One artifact flagged
/// [`RESULT_WRAPPED`] gives the `result` member of its data part: text when a text part is
/// beside it and the value is a string, else JSON. Anything else is read by its parts
/// ([`parts_output`]): a data part alone (design 004's form, whatever discriminator the part
/// carried) is JSON output.
pub(super) fn result_output(artifacts: &[&Artifact]) -> ToolOutput {
    if let [one] = artifacts
        && meta_flag(one.metadata.as_ref(), RESULT_WRAPPED)
        && let Some(mut value) = one.parts.iter().find_map(|p| match &p.content {
            PartContent::Data(Value::Object(data)) => data.get("result").cloned(),
            _ => None,
        })
    {
        let has_text = one
            .parts
            .iter()
            .any(|p| matches!(p.content, PartContent::Text(_)));
        if let (true, Value::String(text)) = (has_text, &value) {
            return ToolOutput::text(text.clone());
        }
        integral_floats_to_ints(&mut value);
        return ToolOutput::json(&value).unwrap_or_else(|_| ToolOutput::text(value.to_string()));
    }
    let parts: Vec<Part> = artifacts.iter().flat_map(|a| a.parts.clone()).collect();
    parts_output(&parts)
}

/// The message of a failed call: its text parts; without any, the `error` string of a data
/// part (`{"error": message}`); else the parts as text.
pub(super) fn error_message(parts: &[Part]) -> String {
    let texts: Vec<&str> = parts.iter().filter_map(Part::as_text).collect();
    if !texts.is_empty() {
        return texts.join("\n");
    }
    let error = parts.iter().find_map(|p| match &p.content {
        PartContent::Data(Value::Object(data)) => data.get("error").and_then(Value::as_str),
        _ => None,
    });
    match error {
        Some(error) => error.to_string(),
        None => parts_text(parts),
    }
}

/// `output` with what the result artifacts said about the call, for the application (never
/// shown to the model): `execution_time_ms` when the agent reported it, and
/// `a2a_artifact_metadata`, the artifact's metadata (an array of them, in order, when the
/// result came in several artifacts). Integral floats (1.x peers send `12` as `12.0`) become
/// integers.
pub(super) fn with_artifact_metadata(
    mut output: ToolOutput,
    artifacts: &[&Artifact],
) -> ToolOutput {
    let metadata = |a: &Artifact| {
        let mut value = a
            .metadata
            .as_ref()
            .map(|m| Value::Object(m.iter().map(|(k, v)| (k.clone(), v.clone())).collect()))
            .unwrap_or(Value::Null);
        integral_floats_to_ints(&mut value);
        value
    };
    let all: Vec<Value> = artifacts.iter().map(|a| metadata(a)).collect();
    if let Some(ms) = all
        .iter()
        .find_map(|m| m.get("execution_time_ms"))
        .filter(|v| v.is_number())
    {
        output = output.with_metadata("execution_time_ms", ms.clone());
    }
    let artifact_metadata = match <[Value; 1]>::try_from(all) {
        Ok([one]) => one,
        Err(all) if all.iter().all(Value::is_null) => Value::Null,
        Err(all) => Value::Array(all),
    };
    if !artifact_metadata.is_null() {
        output = output.with_metadata("a2a_artifact_metadata", artifact_metadata);
    }
    output
}

pub(super) fn meta_flag(metadata: Option<&HashMap<String, Value>>, key: &str) -> bool {
    metadata
        .and_then(|m| m.get(key))
        .is_some_and(|v| v == &Value::Bool(true))
}

/// The text of parts (text parts as they are, data parts as JSON), one per line.
pub(super) fn parts_text(parts: &[Part]) -> String {
    parts
        .iter()
        .filter_map(|p| match &p.content {
            PartContent::Text(t) => Some(t.clone()),
            PartContent::Data(d) => Some(d.to_string()),
            PartContent::Url(u) => Some(u.clone()),
            PartContent::Raw(_) => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A tool output from result parts: one data part is JSON output (integral floats, which 1.x
/// peers send for every integer, turned back into integers); text parts are text; a mix is a
/// JSON array of the parts' values.
pub(super) fn parts_output(parts: &[Part]) -> ToolOutput {
    let value = |p: &Part| match &p.content {
        PartContent::Data(d) => {
            let mut d = d.clone();
            integral_floats_to_ints(&mut d);
            Some(d)
        }
        PartContent::Text(t) => Some(Value::String(t.clone())),
        PartContent::Url(u) => Some(json!({ "url": u })),
        PartContent::Raw(_) => None,
    };
    match parts {
        [] => ToolOutput::text(""),
        [one] if matches!(one.content, PartContent::Data(_)) => {
            let v = value(one).unwrap_or(Value::Null);
            ToolOutput::json(&v).unwrap_or_else(|_| ToolOutput::text(v.to_string()))
        }
        _ if parts
            .iter()
            .all(|p| matches!(p.content, PartContent::Text(_))) =>
        {
            ToolOutput::text(parts_text(parts))
        }
        _ => {
            let all: Vec<Value> = parts.iter().filter_map(value).collect();
            ToolOutput::json(&all).unwrap_or_else(|_| ToolOutput::text(parts_text(parts)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn artifact(metadata: Value, parts: Vec<Part>) -> Artifact {
        Artifact {
            artifact_id: "a".into(),
            name: None,
            description: None,
            parts,
            metadata: serde_json::from_value(metadata).unwrap(),
            extensions: None,
        }
    }

    fn json_of(output: &ToolOutput) -> Value {
        serde_json::from_str(output.as_text()).unwrap()
    }

    #[test]
    fn wrapped_results_are_unwrapped_and_text_stays_text() {
        let wrapped = json!({"_tool_result": true, "wrapped": true});
        // JSON that is not an object (1.x peers send integers as doubles).
        let number = artifact(wrapped.clone(), vec![Part::data(json!({"result": 5.0}))]);
        assert_eq!(json_of(&result_output(&[&number])), json!(5));
        // A JSON string without a text part stays JSON.
        let string = artifact(wrapped.clone(), vec![Part::data(json!({"result": "hi"}))]);
        let output = result_output(&[&string]);
        assert_eq!(output.structured().unwrap().get(), r#""hi""#);
        // Text: the data part and the text beside it give text.
        let text = artifact(
            wrapped.clone(),
            vec![Part::data(json!({"result": "hi"})), Part::text("hi")],
        );
        let output = result_output(&[&text]);
        assert!(output.structured().is_none());
        assert_eq!(output.as_text(), "hi");
        // Flagged but without a `result` member: read by its parts, nothing lost.
        let odd = artifact(wrapped, vec![Part::data(json!({"other": 1}))]);
        assert_eq!(json_of(&result_output(&[&odd])), json!({"other": 1}));
    }

    #[test]
    fn unflagged_results_are_read_by_their_parts() {
        let plain = json!({"_tool_result": true});
        // 004's form: one data part, an object that happens to have `result`.
        let data = artifact(plain.clone(), vec![Part::data(json!({"result": 5}))]);
        assert_eq!(json_of(&result_output(&[&data])), json!({"result": 5}));
        // A data part and a text part from a peer that does not flag them: both kept.
        let mixed = artifact(plain, vec![Part::data(json!({"a": 1})), Part::text("note")]);
        assert_eq!(
            json_of(&result_output(&[&mixed])),
            json!([{"a": 1}, "note"])
        );
    }

    #[test]
    fn error_messages_come_from_text_else_the_data_error() {
        assert_eq!(
            error_message(&[Part::data(json!({"error": "boom"})), Part::text("boom")]),
            "boom"
        );
        assert_eq!(
            error_message(&[Part::data(json!({"error": "boom"}))]),
            "boom"
        );
        assert_eq!(
            error_message(&[Part::data(json!({"code": 7}))]),
            r#"{"code":7}"#
        );
    }

    #[test]
    fn artifact_metadata_reaches_the_output_metadata() {
        let one = artifact(
            json!({"_tool_result": true, "tool_name": "t", "execution_time_ms": 12.0}),
            vec![],
        );
        let output = with_artifact_metadata(ToolOutput::text("x"), &[&one]);
        assert_eq!(output.metadata["execution_time_ms"], json!(12));
        assert_eq!(
            output.metadata["a2a_artifact_metadata"],
            json!({"_tool_result": true, "tool_name": "t", "execution_time_ms": 12})
        );
        // Several artifacts: every metadata, in order.
        let two = artifact(json!({"_tool_result": true}), vec![]);
        let output = with_artifact_metadata(ToolOutput::text("x"), &[&one, &two]);
        assert_eq!(
            output.metadata["a2a_artifact_metadata"][1],
            json!({"_tool_result": true})
        );
        // No timing reported: none invented; no metadata: no entry.
        let bare = Artifact {
            metadata: None,
            ..two.clone()
        };
        let output = with_artifact_metadata(ToolOutput::text("x"), &[&bare]);
        assert!(output.metadata.is_empty(), "{:?}", output.metadata);
        let output = with_artifact_metadata(ToolOutput::text("x"), &[&two]);
        assert!(!output.metadata.contains_key("execution_time_ms"));
    }
}
