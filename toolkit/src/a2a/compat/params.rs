//! Request params (`MessageSendParams`, `TaskQueryParams`, `TaskIdParams`) and method names.

use a2a::{CancelTaskRequest, GetTaskRequest, SendMessageRequest, SubscribeToTaskRequest};
use serde_json::{Map, Value, json};

use super::json::{Result, copy, err, from_json, object, to_json};
use super::objects::{message_to_v03, message_v03_to_v1};
use crate::util::json_kind;

/// The 0.3 `MessageSendParams` for a 1.0 request: a 0.3 message, `configuration.blocking` as
/// the inverse of `returnImmediately`, `pushNotificationConfig` in its 0.3 shape. The 1.0
/// `tenant` has no 0.3 counterpart and is dropped.
pub fn send_params_to_v03(request: &SendMessageRequest) -> Value {
    let mut out = Map::new();
    out.insert("message".into(), message_to_v03(&request.message));
    if let Some(config) = &request.configuration {
        let mut c = Map::new();
        if let Some(modes) = &config.accepted_output_modes {
            c.insert("acceptedOutputModes".into(), json!(modes));
        }
        if let Some(n) = config.history_length {
            c.insert("historyLength".into(), n.into());
        }
        if let Some(r) = config.return_immediately {
            c.insert("blocking".into(), (!r).into());
        }
        if let Some(push) = &config.task_push_notification_config {
            let mut p = Map::new();
            p.insert("url".into(), push.url.clone().into());
            if let Some(id) = &push.id {
                p.insert("id".into(), id.clone().into());
            }
            if let Some(token) = &push.token {
                p.insert("token".into(), token.clone().into());
            }
            if let Some(auth) = &push.authentication {
                let mut a = Map::new();
                a.insert("schemes".into(), json!([auth.scheme]));
                if let Some(c) = &auth.credentials {
                    a.insert("credentials".into(), c.clone().into());
                }
                p.insert("authentication".into(), Value::Object(a));
            }
            c.insert("pushNotificationConfig".into(), Value::Object(p));
        }
        out.insert("configuration".into(), Value::Object(c));
    }
    if let Some(meta) = &request.metadata {
        out.insert("metadata".into(), to_json(meta));
    }
    Value::Object(out)
}

/// Reads 0.3 `MessageSendParams` as a 1.0 [`SendMessageRequest`].
pub fn send_params_from_v03(value: &Value) -> Result<SendMessageRequest> {
    let path = "params";
    let p = object(value, path)?;
    let mut out = Map::new();
    let message = p
        .get("message")
        .ok_or_else(|| err("params.message", "missing"))?;
    out.insert(
        "message".into(),
        message_v03_to_v1(message, "params.message")?,
    );
    copy(p, &mut out, &["metadata"]);
    if let Some(config) = p.get("configuration").filter(|c| !c.is_null()) {
        let cpath = "params.configuration";
        let c = object(config, cpath)?;
        let mut conf = Map::new();
        copy(c, &mut conf, &["acceptedOutputModes", "historyLength"]);
        match c.get("blocking") {
            None | Some(Value::Null) => {}
            Some(Value::Bool(b)) => {
                conf.insert("returnImmediately".into(), (!b).into());
            }
            Some(other) => {
                return Err(err(
                    format!("{cpath}.blocking"),
                    format!("expected a boolean, found {}", json_kind(other)),
                ));
            }
        }
        if let Some(push) = c.get("pushNotificationConfig").filter(|v| !v.is_null()) {
            let ppath = format!("{cpath}.pushNotificationConfig");
            let push = object(push, &ppath)?;
            let mut pc = Map::new();
            copy(push, &mut pc, &["url", "id", "token"]);
            if let Some(auth) = push.get("authentication").filter(|v| !v.is_null()) {
                let apath = format!("{ppath}.authentication");
                let auth = object(auth, &apath)?;
                let scheme = auth
                    .get("schemes")
                    .and_then(Value::as_array)
                    .and_then(|s| s.first())
                    .and_then(Value::as_str)
                    .ok_or_else(|| err(format!("{apath}.schemes"), "needs at least one scheme"))?;
                let mut a = Map::new();
                a.insert("scheme".into(), scheme.into());
                copy(auth, &mut a, &["credentials"]);
                pc.insert("authentication".into(), Value::Object(a));
            }
            conf.insert("taskPushNotificationConfig".into(), Value::Object(pc));
        }
        out.insert("configuration".into(), Value::Object(conf));
    }
    from_json(Value::Object(out), path)
}

fn id_params(value: &Value, keys: &[&str]) -> Result<Value> {
    let p = object(value, "params")?;
    if !p.get("id").is_some_and(Value::is_string) {
        return Err(err("params.id", "missing or not a string"));
    }
    let mut out = Map::new();
    copy(p, &mut out, keys);
    Ok(Value::Object(out))
}

/// The 0.3 `TaskQueryParams` (`tasks/get`) for a 1.0 [`GetTaskRequest`].
pub fn get_task_params_to_v03(request: &GetTaskRequest) -> Value {
    let mut out = json!({ "id": request.id });
    if let Some(n) = request.history_length {
        out["historyLength"] = n.into();
    }
    out
}

/// Reads 0.3 `TaskQueryParams` (`tasks/get`).
pub fn get_task_params_from_v03(value: &Value) -> Result<GetTaskRequest> {
    from_json(id_params(value, &["id", "historyLength"])?, "params")
}

/// The 0.3 `TaskIdParams` (`tasks/cancel`) for a 1.0 [`CancelTaskRequest`].
pub fn cancel_params_to_v03(request: &CancelTaskRequest) -> Value {
    let mut out = json!({ "id": request.id });
    if let Some(meta) = &request.metadata {
        out["metadata"] = to_json(meta);
    }
    out
}

/// Reads 0.3 `TaskIdParams` (`tasks/cancel`).
pub fn cancel_params_from_v03(value: &Value) -> Result<CancelTaskRequest> {
    from_json(id_params(value, &["id", "metadata"])?, "params")
}

/// The 0.3 `TaskIdParams` (`tasks/resubscribe`) for a 1.0 [`SubscribeToTaskRequest`].
#[cfg(test)] // The server and the client convert whole messages; the tests check this alone.
pub fn subscribe_params_to_v03(request: &SubscribeToTaskRequest) -> Value {
    json!({ "id": request.id })
}

/// Reads 0.3 `TaskIdParams` (`tasks/resubscribe`).
pub fn subscribe_params_from_v03(value: &Value) -> Result<SubscribeToTaskRequest> {
    from_json(id_params(value, &["id"])?, "params")
}

pub(super) const METHODS: [(&str, &str); 10] = [
    ("message/send", "SendMessage"),
    ("message/stream", "SendStreamingMessage"),
    ("tasks/get", "GetTask"),
    ("tasks/cancel", "CancelTask"),
    ("tasks/resubscribe", "SubscribeToTask"),
    (
        "tasks/pushNotificationConfig/set",
        "CreateTaskPushNotificationConfig",
    ),
    (
        "tasks/pushNotificationConfig/get",
        "GetTaskPushNotificationConfig",
    ),
    (
        "tasks/pushNotificationConfig/list",
        "ListTaskPushNotificationConfigs",
    ),
    (
        "tasks/pushNotificationConfig/delete",
        "DeleteTaskPushNotificationConfig",
    ),
    ("agent/getAuthenticatedExtendedCard", "GetExtendedAgentCard"),
];

/// The 0.3 JSON-RPC method for a 1.0 one (`SendMessage` → `message/send`); `None` for methods
/// 0.3 lacks (`ListTasks`).
#[cfg(test)] // The server and the client convert whole messages; the tests check this alone.
pub fn method_to_v03(method: &str) -> Option<&'static str> {
    METHODS
        .iter()
        .find(|(_, v1)| *v1 == method)
        .map(|(m, _)| *m)
}

/// The 1.0 JSON-RPC method for a 0.3 one (`message/send` → `SendMessage`).
pub fn method_from_v03(method: &str) -> Option<&'static str> {
    METHODS
        .iter()
        .find(|(v03, _)| *v03 == method)
        .map(|(_, m)| *m)
}
