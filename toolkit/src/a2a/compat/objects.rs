//! The protocol objects both generations share: parts, messages, task states and statuses,
//! artifacts and tasks, each converted both ways.

#[cfg(test)]
use a2a::Part;
use a2a::{Artifact, Message, Task, TaskState, TaskStatus};
use serde_json::{Map, Value, json};

use super::json::{
    Result, copy, err, from_json, map_array, map_array_v1, members, object, to_json,
};
use crate::util::json_kind;

// ---------------------------------------------------------------------------------------------
// Parts

/// The 0.3 form of a part: `{"kind":"text"|"data"|"file", …}`. Data that is not a JSON object
/// is wrapped as `{"result": data}` (0.3 data parts must hold an object); `mediaType` survives
/// only on file parts (as `file.mimeType`).
#[cfg(test)] // The server and the client convert whole messages; the tests check this alone.
pub fn part_to_v03(part: &Part) -> Value {
    part_v1_to_v03(&to_json(part))
}

fn part_v1_to_v03(v: &Value) -> Value {
    let p = members(v);
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
#[cfg(test)] // The server and the client convert whole messages; the tests check this alone.
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
                format!("expected a string, found {}", json_kind(other)),
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

/// The fields a message has under the same name and shape in 0.3 and 1.0.
const MESSAGE_FIELDS: &[&str] = &[
    "messageId",
    "contextId",
    "taskId",
    "metadata",
    "extensions",
    "referenceTaskIds",
];

fn message_v1_to_v03(v: &Value) -> Value {
    let m = members(v);
    let mut out = Map::new();
    out.insert("kind".into(), "message".into());
    copy(m, &mut out, MESSAGE_FIELDS);
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

pub(super) fn message_v03_to_v1(v: &Value, path: &str) -> Result<Value> {
    let m = object(v, path)?;
    let mut out = Map::new();
    copy(m, &mut out, MESSAGE_FIELDS);
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
                format!("expected an array, found {}", json_kind(other)),
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
#[cfg(test)] // The server and the client convert whole messages; the tests check this alone.
pub fn state_to_v03(state: &TaskState) -> &'static str {
    STATES
        .iter()
        .find(|(s, _, _)| s == state)
        .map_or("unknown", |(_, v03, _)| v03)
}

/// The task state a 0.3 name stands for, or `None` for a name 0.3 does not have.
#[cfg(test)] // The server and the client convert whole messages; the tests check this alone.
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
        .ok_or_else(|| err(path, format!("expected a string, found {}", json_kind(v))))?;
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
    let s = members(v);
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
#[cfg(test)] // The server and the client convert whole messages; the tests check this alone.
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

/// The members `ids` of the 0.3 object `o` (at `path`) as they are, and its `status` in 1.0
/// form: how a task and a status update both begin.
pub(super) fn with_status_v03_to_v1(
    o: &Map<String, Value>,
    ids: &[&str],
    path: &str,
) -> Result<Map<String, Value>> {
    let mut out = Map::new();
    copy(o, &mut out, ids);
    let status = o.get("status").unwrap_or(&Value::Null);
    out.insert(
        "status".into(),
        status_v03_to_v1(status, &format!("{path}.status"))?,
    );
    Ok(out)
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
    let a = members(v);
    let mut out = Map::new();
    copy(a, &mut out, &ARTIFACT_KEYS);
    out.insert("parts".into(), Value::Array(Vec::new()));
    map_array_v1(a, &mut out, "parts", part_v1_to_v03);
    Value::Object(out)
}

pub(super) fn artifact_v03_to_v1(v: &Value, path: &str) -> Result<Value> {
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
    let t = members(&v);
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
    let mut out = with_status_v03_to_v1(t, &["id", "contextId", "metadata"], path)?;
    map_array(t, &mut out, "history", path, message_v03_to_v1)?;
    map_array(t, &mut out, "artifacts", path, artifact_v03_to_v1)?;
    Ok(Value::Object(out))
}
