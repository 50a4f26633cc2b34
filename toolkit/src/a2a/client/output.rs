//! Reading what a remote agent sends back: progress for the local emitter, artifacts and parts
//! as a [`ToolOutput`], failures as a [`ToolError`].

use std::collections::HashMap;

use a2a::{Artifact, Message, Part, PartContent, Task};
use serde_json::{Value, json};

use crate::a2a::parts::integral_floats_to_ints;
use crate::context::ToolEmitter;
use crate::error::{ToolError, ToolErrorKind};
use crate::tool::ToolOutput;

/// Progress in a WORKING status message → the local emitter. A data part with a numeric
/// `progress` (or `done`) is a progress report (`total` and `message` optional); any other data
/// part with a `chunk` string, and any text part, is a chunk of partial output.
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
    match meta("error_kind").as_ref().and_then(Value::as_str) {
        Some("invalid_arguments" | "hidden_argument") => ToolError::invalid_arguments(message),
        Some("timeout") => ToolError::new(ToolErrorKind::Timeout, message),
        _ => ToolError::execution(message)
            .with_retryable(meta("retryable") == Some(Value::Bool(true))),
    }
}

pub(super) fn meta_flag(metadata: Option<&HashMap<String, Value>>, key: &str) -> bool {
    metadata
        .and_then(|m| m.get(key))
        .is_some_and(|v| v == &Value::Bool(true))
}

/// The text of parts (text parts as they are, data parts as JSON), one per line.
pub(crate) fn parts_text(parts: &[Part]) -> String {
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
