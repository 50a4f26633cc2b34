//! Stream events and `message/send` results: `kind`-tagged in 0.3, wrapped in 1.0.

use a2a::{
    SendMessageResponse, StreamResponse, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent,
};
use serde_json::{Map, Value};

use super::json::{Result, copy, err, from_json, object, to_json};
use super::objects::{
    artifact_to_v03, artifact_v03_to_v1, message_from_v03, message_to_v03, status_to_v03,
    task_from_v03, task_to_v03, with_status_v03_to_v1,
};

/// Whether a 0.3 stream ends after a status in this state: terminal states, and the interrupted
/// ones (`input-required`, `auth-required`) after which the agent waits for the client.
pub fn is_final_v03(state: &TaskState) -> bool {
    state.is_terminal() || matches!(state, TaskState::InputRequired | TaskState::AuthRequired)
}

/// The 0.3 form of a status update: `kind: "status-update"` and `final`, which is true for
/// terminal and interrupted states (see [`is_final_v03`]).
pub fn status_update_to_v03(event: &TaskStatusUpdateEvent) -> Value {
    let v = to_json(event);
    let mut out = Map::new();
    out.insert("kind".into(), "status-update".into());
    if let Some(e) = v.as_object() {
        copy(e, &mut out, &["taskId", "contextId", "metadata"]);
    }
    out.insert("status".into(), status_to_v03(&event.status));
    out.insert("final".into(), is_final_v03(&event.status.state).into());
    Value::Object(out)
}

/// Reads a 0.3 status update (`final` is dropped: in 1.0 the stream's end says it).
pub fn status_update_from_v03(value: &Value) -> Result<TaskStatusUpdateEvent> {
    from_json(
        status_update_v03_to_v1(value, "statusUpdate")?,
        "statusUpdate",
    )
}

fn status_update_v03_to_v1(v: &Value, path: &str) -> Result<Value> {
    let e = object(v, path)?;
    let ids = ["taskId", "contextId", "metadata"];
    Ok(Value::Object(with_status_v03_to_v1(e, &ids, path)?))
}

/// The 0.3 form of an artifact update: `kind: "artifact-update"`, a 0.3 artifact.
pub fn artifact_update_to_v03(event: &TaskArtifactUpdateEvent) -> Value {
    let v = to_json(event);
    let mut out = Map::new();
    out.insert("kind".into(), "artifact-update".into());
    if let Some(e) = v.as_object() {
        copy(
            e,
            &mut out,
            &["taskId", "contextId", "append", "lastChunk", "metadata"],
        );
    }
    out.insert("artifact".into(), artifact_to_v03(&event.artifact));
    Value::Object(out)
}

/// Reads a 0.3 artifact update.
pub fn artifact_update_from_v03(value: &Value) -> Result<TaskArtifactUpdateEvent> {
    let path = "artifactUpdate";
    let e = object(value, path)?;
    let mut out = Map::new();
    copy(
        e,
        &mut out,
        &["taskId", "contextId", "append", "lastChunk", "metadata"],
    );
    out.insert(
        "artifact".into(),
        artifact_v03_to_v1(
            e.get("artifact").unwrap_or(&Value::Null),
            &format!("{path}.artifact"),
        )?,
    );
    from_json(Value::Object(out), path)
}

/// The 0.3 form of one streaming result: the object itself, told apart by `kind`.
pub fn stream_response_to_v03(event: &StreamResponse) -> Value {
    match event {
        StreamResponse::Task(t) => task_to_v03(t),
        StreamResponse::Message(m) => message_to_v03(m),
        StreamResponse::StatusUpdate(s) => status_update_to_v03(s),
        StreamResponse::ArtifactUpdate(a) => artifact_update_to_v03(a),
    }
}

/// Which 0.3 object `value` is: its `kind`, or inferred from its members when it has none.
fn v03_kind(value: &Value) -> Option<&str> {
    let o = value.as_object()?;
    if let Some(kind) = o.get("kind").and_then(Value::as_str) {
        return Some(kind);
    }
    if o.contains_key("taskId") && o.contains_key("status") {
        Some("status-update")
    } else if o.contains_key("taskId") && o.contains_key("artifact") {
        Some("artifact-update")
    } else if o.contains_key("status") {
        Some("task")
    } else if o.contains_key("role") {
        Some("message")
    } else {
        None
    }
}

/// Reads one 0.3 streaming result (a task, message, status update or artifact update).
pub fn stream_response_from_v03(value: &Value) -> Result<StreamResponse> {
    match v03_kind(value) {
        Some("task") => task_from_v03(value).map(StreamResponse::Task),
        Some("message") => message_from_v03(value).map(StreamResponse::Message),
        Some("status-update") => status_update_from_v03(value).map(StreamResponse::StatusUpdate),
        Some("artifact-update") => {
            artifact_update_from_v03(value).map(StreamResponse::ArtifactUpdate)
        }
        Some(other) => Err(err(
            "result.kind",
            format!(
                "unknown kind `{other}` (expected task, message, status-update or artifact-update)"
            ),
        )),
        None => Err(err(
            "result",
            "not a task, message, status update or artifact update",
        )),
    }
}

/// The 0.3 result of `message/send`: the task or message itself (with `kind`), not wrapped.
pub fn send_response_to_v03(response: &SendMessageResponse) -> Value {
    match response {
        SendMessageResponse::Task(t) => task_to_v03(t),
        SendMessageResponse::Message(m) => message_to_v03(m),
    }
}

/// Reads the 0.3 result of `message/send`.
pub fn send_response_from_v03(value: &Value) -> Result<SendMessageResponse> {
    match v03_kind(value) {
        Some("task") => task_from_v03(value).map(SendMessageResponse::Task),
        Some("message") => message_from_v03(value).map(SendMessageResponse::Message),
        Some(other) => Err(err(
            "result.kind",
            format!("`message/send` answers a task or a message, not `{other}`"),
        )),
        None => Err(err("result", "neither a task nor a message")),
    }
}
