//! A2A 0.3 ↔ 1.0: the `kind`-tagged JSON of A2A 0.3 to and from the official `a2a-lf` 1.0 types.
//!
//! The official Rust crates speak A2A 1.0 only, so peers still on 0.3 (the `a2a-sdk==0.3.x`
//! Python SDK, older agents) go through these functions at the transport boundary: the server
//! converts a 0.3 request into the 1.0 request its handler takes and the 1.0 answer back into
//! 0.3 JSON, and a client does the reverse. Each function converts one protocol object:
//!
//! | object | 1.0 → 0.3 | 0.3 → 1.0 |
//! |---|---|---|
//! | [`Part`] | [`part_to_v03`] | [`part_from_v03`] |
//! | [`Message`] | [`message_to_v03`] | [`message_from_v03`] |
//! | [`TaskState`] | [`state_to_v03`] | [`state_from_v03`] |
//! | [`TaskStatus`] | [`status_to_v03`] | [`status_from_v03`] |
//! | [`Artifact`] | [`artifact_to_v03`] | [`artifact_from_v03`] |
//! | [`Task`] | [`task_to_v03`] | [`task_from_v03`] |
//! | [`TaskStatusUpdateEvent`](a2a::TaskStatusUpdateEvent) | [`status_update_to_v03`] (adds `final`) | [`status_update_from_v03`] |
//! | [`TaskArtifactUpdateEvent`](a2a::TaskArtifactUpdateEvent) | [`artifact_update_to_v03`] | [`artifact_update_from_v03`] |
//! | [`SendMessageRequest`](a2a::SendMessageRequest) (0.3 `MessageSendParams`) | [`send_params_to_v03`] | [`send_params_from_v03`] |
//! | [`SendMessageResponse`](a2a::SendMessageResponse) | [`send_response_to_v03`] | [`send_response_from_v03`] |
//! | [`StreamResponse`](a2a::StreamResponse) | [`stream_response_to_v03`] | [`stream_response_from_v03`] |
//! | [`GetTaskRequest`](a2a::GetTaskRequest) (0.3 `TaskQueryParams`) | [`get_task_params_to_v03`] | [`get_task_params_from_v03`] |
//! | [`CancelTaskRequest`](a2a::CancelTaskRequest) (0.3 `TaskIdParams`) | [`cancel_params_to_v03`] | [`cancel_params_from_v03`] |
//! | [`SubscribeToTaskRequest`](a2a::SubscribeToTaskRequest) (0.3 `TaskIdParams`) | [`subscribe_params_to_v03`] | [`subscribe_params_from_v03`] |
//! | [`AgentCard`](a2a::AgentCard) | [`card_to_v03`] (the merged 1.0 + 0.3 card) | [`card_from_v03`] |
//! | JSON-RPC method names | [`method_to_v03`] | [`method_from_v03`] |
//!
//! The differences handled (A2A spec, "what's new in v1"; `reference/protocols.md` §1.5):
//! parts carry `kind` (`text`, `data`, `file` with `file.{uri|bytes, mimeType, name}`) where 1.0
//! tells them apart by member (`text`, `data`, `url`, `raw`, with `mediaType`, `filename`); 0.3
//! data must be a JSON object, so other values are wrapped as `{"result": v}`; roles and states
//! are lowercase (`"user"`, `"input-required"`) where 1.0 has `ROLE_USER` and
//! `TASK_STATE_INPUT_REQUIRED`; objects carry `kind` where 1.0 wraps them (`{"task": …}`); a
//! status update carries `final` where 1.0 closes the stream; `configuration.blocking` is the
//! inverse of `returnImmediately`; and the card names one `url` + `preferredTransport` +
//! `protocolVersion` where 1.0 lists `supportedInterfaces`.
//!
//! Reading is lenient where it costs nothing (a missing `kind` is inferred from the members
//! present, `protocolVersion: "0.3.0"` is read as `"0.3"`) and strict where a guess could be
//! wrong (an unknown role, state or part kind is an error naming the path).

use a2a::{Artifact, Message, Part, Task, TaskState, TaskStatus};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

/// The protocol version string of A2A 0.3 as cards and headers carry it (`Major.Minor`).
pub const V03: &str = "0.3";

/// A 0.3 object that cannot be read as its 1.0 counterpart.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid A2A 0.3 JSON at `{path}`: {problem}")]
pub struct CompatError {
    /// Where in the object, e.g. `message.parts[1].kind`.
    pub path: String,
    /// What is wrong there.
    pub problem: String,
}

fn err(path: impl Into<String>, problem: impl Into<String>) -> CompatError {
    CompatError {
        path: path.into(),
        problem: problem.into(),
    }
}

type Result<T, E = CompatError> = std::result::Result<T, E>;

/// The 1.0 types hold only string-keyed maps and JSON values, so serializing them cannot fail;
/// `Null` stands in rather than a panic should that ever change.
fn to_json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn from_json<T: DeserializeOwned>(value: Value, path: &str) -> Result<T> {
    serde_json::from_value(value).map_err(|e| err(path, e.to_string()))
}

fn object<'v>(value: &'v Value, path: &str) -> Result<&'v Map<String, Value>> {
    value.as_object().ok_or_else(|| {
        err(
            path,
            format!("expected an object, found {}", kind_of(value)),
        )
    })
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Copies the listed members of `from` that are present (and not null) into `to`.
fn copy(from: &Map<String, Value>, to: &mut Map<String, Value>, keys: &[&str]) {
    for key in keys {
        if let Some(v) = from.get(*key).filter(|v| !v.is_null()) {
            to.insert((*key).to_string(), v.clone());
        }
    }
}

/// Maps each element of the array at `key` (if present) with `f`, into `to[key]`.
fn map_array(
    from: &Map<String, Value>,
    to: &mut Map<String, Value>,
    key: &str,
    path: &str,
    f: impl Fn(&Value, &str) -> Result<Value>,
) -> Result<()> {
    match from.get(key) {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Array(items)) => {
            let mapped = items
                .iter()
                .enumerate()
                .map(|(i, v)| f(v, &format!("{path}.{key}[{i}]")))
                .collect::<Result<Vec<_>>>()?;
            to.insert(key.to_string(), Value::Array(mapped));
            Ok(())
        }
        Some(other) => Err(err(
            format!("{path}.{key}"),
            format!("expected an array, found {}", kind_of(other)),
        )),
    }
}

/// The 1.0 → 0.3 direction of [`map_array`]: its input was serialized from typed 1.0 values,
/// so there is nothing to reject.
fn map_array_v1(
    from: &Map<String, Value>,
    to: &mut Map<String, Value>,
    key: &str,
    f: impl Fn(&Value) -> Value,
) {
    if let Some(Value::Array(items)) = from.get(key) {
        to.insert(key.to_string(), items.iter().map(f).collect());
    }
}

fn empty() -> Map<String, Value> {
    Map::new()
}

// ---------------------------------------------------------------------------------------------
// Parts

/// The 0.3 form of a part: `{"kind":"text"|"data"|"file", …}`. Data that is not a JSON object
/// is wrapped as `{"result": data}` (0.3 data parts must hold an object); `mediaType` survives
/// only on file parts (as `file.mimeType`).
pub fn part_to_v03(part: &Part) -> Value {
    part_v1_to_v03(&to_json(part))
}

fn part_v1_to_v03(v: &Value) -> Value {
    let e = empty();
    let p = v.as_object().unwrap_or(&e);
    let mut out = Map::new();
    if let Some(text) = p.get("text") {
        out.insert("kind".into(), "text".into());
        out.insert("text".into(), text.clone());
    } else if let Some(data) = p.get("data") {
        out.insert("kind".into(), "data".into());
        let data = if data.is_object() {
            data.clone()
        } else {
            json!({ "result": data })
        };
        out.insert("data".into(), data);
    } else if p.contains_key("url") || p.contains_key("raw") {
        let mut file = Map::new();
        if let Some(url) = p.get("url") {
            file.insert("uri".into(), url.clone());
        } else if let Some(raw) = p.get("raw") {
            file.insert("bytes".into(), raw.clone());
        }
        if let Some(m) = p.get("mediaType") {
            file.insert("mimeType".into(), m.clone());
        }
        if let Some(n) = p.get("filename") {
            file.insert("name".into(), n.clone());
        }
        out.insert("kind".into(), "file".into());
        out.insert("file".into(), Value::Object(file));
    }
    copy(p, &mut out, &["metadata"]);
    Value::Object(out)
}

/// Reads a 0.3 part (`kind` `text`, `data` or `file`; inferred from the members when absent).
pub fn part_from_v03(value: &Value) -> Result<Part> {
    from_json(part_v03_to_v1(value, "part")?, "part")
}

fn part_v03_to_v1(v: &Value, path: &str) -> Result<Value> {
    let p = object(v, path)?;
    let kind = match p.get("kind") {
        Some(Value::String(k)) => k.as_str(),
        Some(other) => {
            return Err(err(
                format!("{path}.kind"),
                format!("expected a string, found {}", kind_of(other)),
            ));
        }
        None if p.contains_key("text") => "text",
        None if p.contains_key("data") => "data",
        None if p.contains_key("file") => "file",
        None => return Err(err(path, "a part needs `kind` (text, data or file)")),
    };
    let mut out = Map::new();
    match kind {
        "text" => match p.get("text") {
            Some(t @ Value::String(_)) => {
                out.insert("text".into(), t.clone());
            }
            _ => {
                return Err(err(
                    format!("{path}.text"),
                    "a text part needs a string `text`",
                ));
            }
        },
        "data" => {
            let Some(data) = p.get("data") else {
                return Err(err(format!("{path}.data"), "a data part needs `data`"));
            };
            out.insert("data".into(), data.clone());
            out.insert("mediaType".into(), "application/json".into());
        }
        "file" => {
            let fpath = format!("{path}.file");
            let file = object(p.get("file").unwrap_or(&Value::Null), &fpath)?;
            match (file.get("uri"), file.get("bytes")) {
                (Some(uri @ Value::String(_)), _) => {
                    out.insert("url".into(), uri.clone());
                }
                (_, Some(bytes @ Value::String(_))) => {
                    out.insert("raw".into(), bytes.clone());
                }
                _ => return Err(err(fpath, "a file needs a string `uri` or `bytes`")),
            }
            if let Some(m @ Value::String(_)) = file.get("mimeType") {
                out.insert("mediaType".into(), m.clone());
            }
            if let Some(n @ Value::String(_)) = file.get("name") {
                out.insert("filename".into(), n.clone());
            }
        }
        other => {
            return Err(err(
                format!("{path}.kind"),
                format!("unknown part kind `{other}` (expected text, data or file)"),
            ));
        }
    }
    copy(p, &mut out, &["metadata"]);
    Ok(Value::Object(out))
}

// ---------------------------------------------------------------------------------------------
// Messages

/// The 0.3 form of a message: `kind: "message"`, role `"user"`/`"agent"`, 0.3 parts.
pub fn message_to_v03(message: &Message) -> Value {
    message_v1_to_v03(&to_json(message))
}

fn role_v1_to_v03(role: &Value) -> Value {
    match role.as_str() {
        Some("ROLE_USER") => "user".into(),
        Some("ROLE_AGENT") => "agent".into(),
        // Unspecified has no 0.3 spelling; keep it recognisably invalid rather than guess.
        _ => "unspecified".into(),
    }
}

fn message_v1_to_v03(v: &Value) -> Value {
    let e = empty();
    let m = v.as_object().unwrap_or(&e);
    let mut out = Map::new();
    out.insert("kind".into(), "message".into());
    copy(
        m,
        &mut out,
        &[
            "messageId",
            "contextId",
            "taskId",
            "metadata",
            "extensions",
            "referenceTaskIds",
        ],
    );
    out.insert(
        "role".into(),
        role_v1_to_v03(m.get("role").unwrap_or(&Value::Null)),
    );
    out.insert("parts".into(), Value::Array(Vec::new()));
    map_array_v1(m, &mut out, "parts", part_v1_to_v03);
    Value::Object(out)
}

/// Reads a 0.3 message. `role` must be `"user"` or `"agent"`; `parts` must be an array.
pub fn message_from_v03(value: &Value) -> Result<Message> {
    from_json(message_v03_to_v1(value, "message")?, "message")
}

fn message_v03_to_v1(v: &Value, path: &str) -> Result<Value> {
    let m = object(v, path)?;
    let mut out = Map::new();
    copy(
        m,
        &mut out,
        &[
            "messageId",
            "contextId",
            "taskId",
            "metadata",
            "extensions",
            "referenceTaskIds",
        ],
    );
    if !out.contains_key("messageId") {
        return Err(err(format!("{path}.messageId"), "missing"));
    }
    let role = match m.get("role").and_then(Value::as_str) {
        Some("user") => "ROLE_USER",
        Some("agent") => "ROLE_AGENT",
        Some(other) => {
            return Err(err(
                format!("{path}.role"),
                format!("unknown role `{other}` (expected \"user\" or \"agent\")"),
            ));
        }
        None => return Err(err(format!("{path}.role"), "missing or not a string")),
    };
    out.insert("role".into(), role.into());
    match m.get("parts") {
        Some(Value::Array(_)) => map_array(m, &mut out, "parts", path, part_v03_to_v1)?,
        Some(other) => {
            return Err(err(
                format!("{path}.parts"),
                format!("expected an array, found {}", kind_of(other)),
            ));
        }
        None => return Err(err(format!("{path}.parts"), "missing")),
    }
    Ok(Value::Object(out))
}

// ---------------------------------------------------------------------------------------------
// States, statuses, artifacts, tasks

const STATES: [(TaskState, &str, &str); 9] = [
    (TaskState::Submitted, "submitted", "TASK_STATE_SUBMITTED"),
    (TaskState::Working, "working", "TASK_STATE_WORKING"),
    (
        TaskState::InputRequired,
        "input-required",
        "TASK_STATE_INPUT_REQUIRED",
    ),
    (TaskState::Completed, "completed", "TASK_STATE_COMPLETED"),
    (TaskState::Canceled, "canceled", "TASK_STATE_CANCELED"),
    (TaskState::Failed, "failed", "TASK_STATE_FAILED"),
    (TaskState::Rejected, "rejected", "TASK_STATE_REJECTED"),
    (
        TaskState::AuthRequired,
        "auth-required",
        "TASK_STATE_AUTH_REQUIRED",
    ),
    (TaskState::Unspecified, "unknown", "TASK_STATE_UNSPECIFIED"),
];

/// The 0.3 name of a task state (`"input-required"`, …; unspecified is `"unknown"`).
pub fn state_to_v03(state: &TaskState) -> &'static str {
    STATES
        .iter()
        .find(|(s, _, _)| s == state)
        .map_or("unknown", |(_, v03, _)| v03)
}

/// The task state a 0.3 name stands for, or `None` for a name 0.3 does not have.
pub fn state_from_v03(name: &str) -> Option<TaskState> {
    STATES
        .iter()
        .find(|(_, v03, _)| *v03 == name)
        .map(|(s, _, _)| s.clone())
}

fn state_v1_to_v03(v: &Value) -> Value {
    STATES
        .iter()
        .find(|(_, _, v1)| v.as_str() == Some(v1))
        .map_or("unknown", |(_, v03, _)| v03)
        .into()
}

fn state_v03_to_v1(v: &Value, path: &str) -> Result<Value> {
    let name = v
        .as_str()
        .ok_or_else(|| err(path, format!("expected a string, found {}", kind_of(v))))?;
    STATES
        .iter()
        .find(|(_, v03, _)| *v03 == name)
        .map(|(_, _, v1)| Value::from(*v1))
        .ok_or_else(|| err(path, format!("unknown task state `{name}`")))
}

/// The 0.3 form of a task status (`state` in 0.3 spelling, a 0.3 `message`).
pub fn status_to_v03(status: &TaskStatus) -> Value {
    status_v1_to_v03(&to_json(status))
}

fn status_v1_to_v03(v: &Value) -> Value {
    let e = empty();
    let s = v.as_object().unwrap_or(&e);
    let mut out = Map::new();
    out.insert(
        "state".into(),
        state_v1_to_v03(s.get("state").unwrap_or(&Value::Null)),
    );
    if let Some(m) = s.get("message").filter(|m| !m.is_null()) {
        out.insert("message".into(), message_v1_to_v03(m));
    }
    copy(s, &mut out, &["timestamp"]);
    Value::Object(out)
}

/// Reads a 0.3 task status.
pub fn status_from_v03(value: &Value) -> Result<TaskStatus> {
    from_json(status_v03_to_v1(value, "status")?, "status")
}

fn status_v03_to_v1(v: &Value, path: &str) -> Result<Value> {
    let s = object(v, path)?;
    let mut out = Map::new();
    out.insert(
        "state".into(),
        state_v03_to_v1(
            s.get("state").unwrap_or(&Value::Null),
            &format!("{path}.state"),
        )?,
    );
    if let Some(m) = s.get("message").filter(|m| !m.is_null()) {
        out.insert(
            "message".into(),
            message_v03_to_v1(m, &format!("{path}.message"))?,
        );
    }
    copy(s, &mut out, &["timestamp"]);
    Ok(Value::Object(out))
}

const ARTIFACT_KEYS: [&str; 5] = [
    "artifactId",
    "name",
    "description",
    "metadata",
    "extensions",
];

/// The 0.3 form of an artifact (0.3 parts; the other members are the same).
pub fn artifact_to_v03(artifact: &Artifact) -> Value {
    artifact_v1_to_v03(&to_json(artifact))
}

fn artifact_v1_to_v03(v: &Value) -> Value {
    let e = empty();
    let a = v.as_object().unwrap_or(&e);
    let mut out = Map::new();
    copy(a, &mut out, &ARTIFACT_KEYS);
    out.insert("parts".into(), Value::Array(Vec::new()));
    map_array_v1(a, &mut out, "parts", part_v1_to_v03);
    Value::Object(out)
}

/// Reads a 0.3 artifact.
pub fn artifact_from_v03(value: &Value) -> Result<Artifact> {
    from_json(artifact_v03_to_v1(value, "artifact")?, "artifact")
}

fn artifact_v03_to_v1(v: &Value, path: &str) -> Result<Value> {
    let a = object(v, path)?;
    let mut out = Map::new();
    copy(a, &mut out, &ARTIFACT_KEYS);
    out.insert("parts".into(), Value::Array(Vec::new()));
    map_array(a, &mut out, "parts", path, part_v03_to_v1)?;
    Ok(Value::Object(out))
}

/// The 0.3 form of a task: `kind: "task"`, 0.3 status, history and artifacts.
pub fn task_to_v03(task: &Task) -> Value {
    let v = to_json(task);
    let e = empty();
    let t = v.as_object().unwrap_or(&e);
    let mut out = Map::new();
    out.insert("kind".into(), "task".into());
    copy(t, &mut out, &["id", "contextId", "metadata"]);
    out.insert("status".into(), status_to_v03(&task.status));
    map_array_v1(t, &mut out, "history", message_v1_to_v03);
    map_array_v1(t, &mut out, "artifacts", artifact_v1_to_v03);
    Value::Object(out)
}

/// Reads a 0.3 task.
pub fn task_from_v03(value: &Value) -> Result<Task> {
    from_json(task_v03_to_v1(value, "task")?, "task")
}

fn task_v03_to_v1(v: &Value, path: &str) -> Result<Value> {
    let t = object(v, path)?;
    let mut out = Map::new();
    copy(t, &mut out, &["id", "contextId", "metadata"]);
    out.insert(
        "status".into(),
        status_v03_to_v1(
            t.get("status").unwrap_or(&Value::Null),
            &format!("{path}.status"),
        )?,
    );
    map_array(t, &mut out, "history", path, message_v03_to_v1)?;
    map_array(t, &mut out, "artifacts", path, artifact_v03_to_v1)?;
    Ok(Value::Object(out))
}

mod card;
mod events;
mod params;

pub use card::{card_from_v03, card_to_v03};
pub use events::{
    artifact_update_from_v03, artifact_update_to_v03, is_final_v03, send_response_from_v03,
    send_response_to_v03, status_update_from_v03, status_update_to_v03, stream_response_from_v03,
    stream_response_to_v03,
};
pub use params::{
    cancel_params_from_v03, cancel_params_to_v03, get_task_params_from_v03, get_task_params_to_v03,
    method_from_v03, method_to_v03, send_params_from_v03, send_params_to_v03,
    subscribe_params_from_v03, subscribe_params_to_v03,
};

#[cfg(test)]
mod tests;
