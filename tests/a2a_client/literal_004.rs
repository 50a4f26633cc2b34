//! `RemoteToolRegistry` against a tool server written literally from design document 004
//! ("remote tool execution"): an axum server on loopback that serves JSON text in 004's shapes —
//! a card whose `tool-NAME` skills carry `input_schema`/`output_schema` (and no tools
//! extension), `_tool_call` read from the request's metadata (004's "task metadata"), and
//! result artifacts `{"metadata": {"_tool_result": true, "tool_name", "execution_time_ms"},
//! "parts": [{"type": "data", "data": {…}}]}` — on A2A 1.0 and on 0.3. A `ReActAgent` sees the
//! tool's parameters and gets its result, with 004's metadata on the output.

use std::sync::{Arc, Mutex};

use agent_toolkit::a2a::client::{AgentConfig, RemoteToolRegistry, WireVersion};
use agent_toolkit::model::Role;
use agent_toolkit::prelude::*;
use agent_toolkit::{AgentEvent, ToolResult};
use agent_toolkit::{
    ReActAgent,
    testing::{ScriptedModel, ScriptedTurn},
};
use axum::extract::State;
use axum::routing::{get, post};
use futures::StreamExt;
use serde_json::{Value, json};

/// The card, as 004 shows the skills; `{URL}` and the interface part are filled in per wire.
const CARD: &str = r#"{
  "name": "Weather agent (004)",
  "description": "Exposes tools as skills, as design 004 describes",
  "version": "0.1.0",
  {INTERFACES},
  "capabilities": {"streaming": false},
  "defaultInputModes": ["application/json"],
  "defaultOutputModes": ["application/json"],
  "skills": [
    {
      "id": "tool-get_weather",
      "name": "Get Weather",
      "description": "Current weather for a city",
      "tags": ["tool", "weather"],
      "input_schema": {"type": "object",
                       "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
                       "required": ["city"]},
      "output_schema": {"type": "object",
                        "properties": {"city": {"type": "string"}, "temp_c": {"type": "number"}},
                        "required": ["city", "temp_c"]}
    },
    {
      "id": "tool-ping",
      "name": "Ping",
      "description": "Answers pong",
      "tags": ["tool"]
    },
    {
      "id": "chat",
      "name": "Chat",
      "description": "Not a tool",
      "tags": ["conversation"]
    }
  ]
}"#;

const INTERFACES_V1: &str = r#""supportedInterfaces": [{"url": "{URL}/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]"#;
const INTERFACES_V03: &str =
    r#""url": "{URL}/", "protocolVersion": "0.3.0", "preferredTransport": "JSONRPC""#;

/// 004's tool response, wrapped in each wire's task.
const ARTIFACT: &str = r#"{
  "artifactId": "a-1",
  "metadata": {
    "_tool_result": true,
    "tool_name": "{TOOL}",
    "execution_time_ms": 123
  },
  "parts": [
    {
      "type": "data",
      "data": {DATA}
    }
  ]
}"#;
const RESPONSE_V1: &str = r#"{"jsonrpc": "2.0", "id": {ID}, "result": {"task": {"id": "t-1", "contextId": "c-1",
  "status": {"state": "TASK_STATE_COMPLETED"}, "artifacts": [{ARTIFACT}]}}}"#;
const RESPONSE_V03: &str = r#"{"jsonrpc": "2.0", "id": {ID}, "result": {"kind": "task", "id": "t-1", "contextId": "c-1",
  "status": {"state": "completed"}, "artifacts": [{ARTIFACT}]}}"#;

#[derive(Clone)]
struct Peer {
    wire: WireVersion,
    url: String,
    /// The `params` of every call received.
    calls: Arc<Mutex<Vec<Value>>>,
}

async fn card(State(peer): State<Peer>) -> ([(&'static str, &'static str); 1], String) {
    let interfaces = match peer.wire {
        WireVersion::V1 => INTERFACES_V1,
        WireVersion::V03 => INTERFACES_V03,
    };
    let text = CARD
        .replace("{INTERFACES}", interfaces)
        .replace("{URL}", &peer.url);
    ([("content-type", "application/json")], text)
}

async fn rpc(
    State(peer): State<Peer>,
    body: String,
) -> ([(&'static str, &'static str); 1], String) {
    let request: Value = serde_json::from_str(&body).unwrap();
    let id = request["id"].to_string();
    let expected = match peer.wire {
        WireVersion::V1 => "SendMessage",
        WireVersion::V03 => "message/send",
    };
    let answer = |text: String| ([("content-type", "application/json")], text);
    if request["method"] != expected {
        return answer(format!(
            r#"{{"jsonrpc": "2.0", "id": {id}, "error": {{"code": -32601, "message": "method not found"}}}}"#
        ));
    }
    peer.calls.lock().unwrap().push(request["params"].clone());
    // 004: the call is in the task metadata — the request's own `metadata`.
    let call = &request["params"]["metadata"]["_tool_call"];
    let data = match call["name"].as_str() {
        Some("get_weather") => {
            json!({"city": call["params"]["city"], "temp_c": 18.5, "conditions": "sunny"})
        }
        Some("ping") => json!({"pong": true}),
        _ => {
            return answer(format!(
                r#"{{"jsonrpc": "2.0", "id": {id}, "error": {{"code": -32602, "message": "no _tool_call in the task metadata"}}}}"#
            ));
        }
    };
    let artifact = ARTIFACT
        .replace("{TOOL}", call["name"].as_str().unwrap())
        .replace("{DATA}", &data.to_string());
    let response = match peer.wire {
        WireVersion::V1 => RESPONSE_V1,
        WireVersion::V03 => RESPONSE_V03,
    };
    answer(
        response
            .replace("{ID}", &id)
            .replace("{ARTIFACT}", &artifact),
    )
}

async fn literal_peer(wire: WireVersion) -> Peer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let peer = Peer {
        wire,
        url: format!("http://{}", listener.local_addr().unwrap()),
        calls: Arc::default(),
    };
    let app = axum::Router::new()
        .route("/.well-known/agent-card.json", get(card))
        .route("/", post(rpc))
        .with_state(peer.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    peer
}

fn weather_tool_schema(req: &agent_toolkit::model::ChatRequest) -> Result<(), String> {
    let tool = req
        .tools
        .iter()
        .find(|t| t.name() == "w_get_weather")
        .ok_or("w_get_weather was not offered")?;
    let params = tool.parameters();
    if params["properties"]["city"] != json!({"type": "string"})
        || params["required"] != json!(["city"])
    {
        return Err(format!(
            "the model did not see the card's parameters: {params}"
        ));
    }
    Ok(())
}

async fn agent_calls_a_004_peer(wire: WireVersion) {
    let peer = literal_peer(wire).await;
    let registry = RemoteToolRegistry::new();
    let names = registry
        .add_agent("w", AgentConfig::new(&peer.url))
        .await
        .unwrap();
    assert_eq!(names, ["w_get_weather", "w_ping"]);
    assert_eq!(registry.agent("w").unwrap().version(), wire);
    let weather = registry.tool("w_get_weather").unwrap();
    assert!(weather.info().schema_declared);
    assert_eq!(
        weather.info().output_schema.as_ref().unwrap()["required"],
        json!(["city", "temp_c"])
    );
    // No schema on the skill: the permissive object schema.
    assert_eq!(
        registry.tool("w_ping").unwrap().info().input_schema,
        json!({"type": "object"})
    );

    let toolkit = Toolkit::builder()
        .register(registry.tools())
        .build()
        .unwrap();
    let model = Arc::new(
        ScriptedModel::default()
            .then_expect(
                weather_tool_schema,
                ScriptedTurn::call("w_get_weather", json!({"city": "Paris"})),
            )
            .then_expect(
                |req| {
                    let last = req.messages.last().ok_or("no messages")?;
                    (last.role() == Role::Tool
                        && last.content().contains("18.5")
                        && last.content().contains("sunny"))
                    .then_some(())
                    .ok_or_else(|| format!("the result did not reach the model: {last:?}"))
                },
                ScriptedTurn::text("18.5°C and sunny in Paris."),
            ),
    );
    let mut agent = ReActAgent::builder(model.clone())
        .toolkit(&toolkit)
        .build()
        .unwrap();
    let mut results: Vec<ToolResult> = Vec::new();
    let mut answer = None;
    {
        let mut events = std::pin::pin!(agent.run_stream("Weather in Paris?"));
        while let Some(event) = events.next().await {
            match event {
                AgentEvent::ToolResult(result) => results.push(result),
                AgentEvent::Final(text) => answer = Some(text),
                AgentEvent::Failed(error) => panic!("the run failed: {error}"),
                _ => {}
            }
        }
    }
    assert_eq!(answer.as_deref(), Some("18.5°C and sunny in Paris."));
    assert_eq!(model.remaining(), 0);

    // The result, with 004's metadata for the application.
    let [result] = &results[..] else {
        panic!("one tool result expected: {results:?}")
    };
    let output = result.output().unwrap_or_else(|| panic!("{result:?}"));
    assert_eq!(
        serde_json::from_str::<Value>(output.as_text()).unwrap(),
        json!({"city": "Paris", "temp_c": 18.5, "conditions": "sunny"})
    );
    assert_eq!(output.metadata["execution_time_ms"], json!(123));
    assert_eq!(
        output.metadata["a2a_artifact_metadata"],
        json!({"_tool_result": true, "tool_name": "get_weather", "execution_time_ms": 123})
    );
    assert_eq!(output.metadata["a2a_agent"], "w");

    // The call went out the way 004 reads it.
    let calls = peer.calls.lock().unwrap().clone();
    assert_eq!(
        calls[0]["metadata"]["_tool_call"],
        json!({"name": "get_weather", "params": {"city": "Paris"}})
    );

    // A tool without a schema is still callable with an object.
    let ping = toolkit
        .call(
            ToolCall::json("p", "w_ping", json!({})),
            &ToolContext::new(),
        )
        .await;
    assert_eq!(ping.output().unwrap().as_text(), r#"{"pong":true}"#);
}

#[tokio::test]
async fn a_react_agent_calls_a_004_tool_server_over_1_0() {
    agent_calls_a_004_peer(WireVersion::V1).await;
}

#[tokio::test]
async fn a_react_agent_calls_a_004_tool_server_over_0_3() {
    agent_calls_a_004_peer(WireVersion::V03).await;
}
