//! Tools, servers on loopback, and a raw JSON-RPC helper.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_toolkit::Json;
use agent_toolkit::a2a::server::{A2aAgentServer, A2aToolServer};
use agent_toolkit::model::Role;
use agent_toolkit::prelude::*;
use agent_toolkit::{
    ReActAgent,
    testing::{ScriptedModel, ScriptedTurn},
};
use reqwest::StatusCode;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};

/// Counts calls of `slow_count` that ended without finishing (cancelled: their future was
/// dropped or their token fired).
#[derive(Clone, Default)]
pub struct Probe {
    pub cancelled: Arc<AtomicUsize>,
}

impl Probe {
    #[cfg(feature = "interop")]
    pub fn cancelled(&self) -> usize {
        self.cancelled.load(Ordering::SeqCst)
    }
}

struct Unfinished(Arc<AtomicUsize>, bool);

impl Drop for Unfinished {
    fn drop(&mut self) {
        if !self.1 {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

#[derive(Serialize, JsonSchema)]
pub struct Weather {
    pub city: String,
    pub temp_c: f64,
}

/// Add two integers.
#[tool(read_only)]
pub fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Current weather of a city.
#[tool(read_only, idempotent)]
pub async fn get_weather(city: String) -> Json<Weather> {
    Json(Weather { city, temp_c: 18.5 })
}

/// Count to `n`, reporting progress at every step.
#[tool(read_only)]
pub async fn slow_count(
    n: u32,
    #[arg(default = 10)] step_ms: u64,
    #[ctx] progress: ToolEmitter,
    #[ctx] probe: Ctx<Probe>,
) -> String {
    let mut guard = Unfinished(probe.cancelled.clone(), false);
    for i in 1..=n {
        tokio::time::sleep(Duration::from_millis(step_ms)).await;
        progress.progress(i, Some(f64::from(n)), format!("counted {i}"));
    }
    guard.1 = true;
    format!("counted to {n}")
}

/// Reset a password (admin group, off by default).
#[tool(group = "admin", destructive)]
pub async fn reset_password(user: String) -> String {
    format!("password of {user} reset")
}

pub fn toolkit(probe: &Probe) -> Toolkit {
    Toolkit::builder()
        .inactive_group("admin", "Account administration")
        .register(Add)
        .register(GetWeather)
        .register(SlowCount)
        .register(ResetPassword)
        .context(probe.clone())
        .build()
        .unwrap()
}

/// Serves `router` on 127.0.0.1 (a free port) for the rest of the test; returns its base URL.
pub async fn serve(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    format!("http://{addr}")
}

pub async fn tool_server(
    toolkit: &Toolkit,
    configure: impl FnOnce(A2aToolServer) -> A2aToolServer,
) -> String {
    serve(configure(A2aToolServer::new(toolkit)).router()).await
}

/// The weather agent: asks the client's `get_weather` for Paris, then answers with the
/// temperature the client's result carried. Each turn checks what the model was sent.
pub fn weather_agent(_context: &str) -> Result<ReActAgent, agent_toolkit::error::ConfigError> {
    let model = ScriptedModel::default()
        .then_expect(
            |req| {
                req.tools
                    .iter()
                    .any(|t| t.name() == "get_weather")
                    .then_some(())
                    .ok_or_else(|| "the client's get_weather tool was not offered".to_string())
            },
            ScriptedTurn::call("get_weather", json!({"city": "Paris"})),
        )
        .then_expect(
            |req| {
                let last = req.messages.last().ok_or("no messages")?;
                (last.role() == Role::Tool && last.content().contains("18"))
                    .then_some(())
                    .ok_or_else(|| format!("no client result in {last:?}"))
            },
            ScriptedTurn::text("It is 18°C in Paris."),
        );
    ReActAgent::builder(model).build()
}

pub async fn agent_server() -> String {
    serve(A2aAgentServer::new(weather_agent).router()).await
}

/// One JSON-RPC request; returns the HTTP status and the JSON body (`Null` if not JSON).
pub async fn post(
    base: &str,
    headers: &[(&str, &str)],
    body: impl Into<reqwest::Body>,
) -> (StatusCode, Value) {
    let mut req = crate::tls::http_client()
        .post(format!("{base}/"))
        .header("content-type", "application/json");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = req.body(body).send().await.unwrap();
    let status = resp.status();
    let text = resp.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

pub const V1: (&str, &str) = ("a2a-version", "1.0");

/// A 1.0 `SendMessage` request of `message`.
pub fn send(message: Value) -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}})
        .to_string()
}

/// A 1.0 message calling `name` with `params`, the project's way.
pub fn call_message(name: &str, params: Value) -> Value {
    let call = json!({"name": name, "params": params});
    json!({"messageId": uuid(), "role": "ROLE_USER",
           "parts": [{"data": call, "mediaType": "application/json"}],
           "metadata": {"_tool_call": call}})
}

pub fn uuid() -> String {
    agent_toolkit::a2a::types::new_message_id()
}

/// The one artifact of a completed tool task, in the 1.0 shapes, checked for the remote-tool
/// result form (`_tool_result`, `tool_name`, `execution_time_ms`, a data part, a text part
/// only beside text): (is_error, error_kind, the result — the data, or its `result` member when
/// `wrapped`, or its `error` member for an error).
pub fn tool_result(task: &Value) -> (bool, Option<String>, Value) {
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task:#}");
    let artifact = &task["artifacts"][0];
    let meta = &artifact["metadata"];
    assert_eq!(meta["_tool_result"], true, "{task:#}");
    assert_eq!(meta["tool_name"], artifact["name"], "{task:#}");
    assert!(meta["execution_time_ms"].is_number(), "{task:#}");
    let parts = artifact["parts"].as_array().expect("parts");
    let data = parts
        .iter()
        .find_map(|p| p.get("data"))
        .unwrap_or_else(|| panic!("no data part: {task:#}"));
    let is_error = meta["is_error"] == true;
    let value = if is_error {
        data["error"].clone()
    } else if meta["wrapped"] == true {
        data["result"].clone()
    } else {
        assert!(
            data.is_object(),
            "unwrapped data must be an object: {task:#}"
        );
        data.clone()
    };
    if let Some(text) = parts.iter().find_map(|p| p.get("text")) {
        assert_eq!(text, &value, "the text part repeats the result: {task:#}");
    }
    (
        is_error,
        meta["error_kind"].as_str().map(str::to_string),
        value,
    )
}

/// Calls `add(2, 3)` over 1.0 and checks the answer: the server still serves.
pub async fn still_serving(base: &str, headers: &[(&str, &str)]) {
    let mut all = vec![V1];
    all.extend_from_slice(headers);
    let (status, body) = post(
        base,
        &all,
        send(call_message("add", json!({"a": 2, "b": 3}))),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (is_error, _, result) = tool_result(&body["result"]["task"]);
    assert!(!is_error, "{body:#}");
    assert_eq!(result.as_f64(), Some(5.0), "{body:#}");
}
