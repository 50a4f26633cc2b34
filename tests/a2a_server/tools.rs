//! The tool server's card and calls over raw HTTP.

use std::time::Duration;

use agent_toolkit::a2a::server::ServerOptions;
use serde_json::{Value, json};

use crate::fixtures::{Probe, V1, call_message, post, send, tool_result, tool_server, toolkit};

async fn card(base: &str) -> Value {
    reqwest::get(format!("{base}/.well-known/agent-card.json"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

fn skill_ids(card: &Value) -> Vec<String> {
    card["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn group_toggles_change_the_card_and_what_is_callable() {
    let kit = toolkit(&Probe::default());
    let base = tool_server(&kit, |s| s).await;
    let before = card(&base).await;
    assert_eq!(
        skill_ids(&before),
        ["tool-add", "tool-get_weather", "tool-slow_count"]
    );
    let tools = &before["capabilities"]["extensions"][0]["params"]["tools"];
    assert!(tools.get("reset_password").is_none());

    kit.set_group_active("admin", true).unwrap();
    let after = card(&base).await;
    assert!(skill_ids(&after).contains(&"tool-reset_password".to_string()));
    let entry = &after["capabilities"]["extensions"][0]["params"]["tools"]["reset_password"];
    assert_eq!(entry["skillId"], "tool-reset_password");
    assert_eq!(entry["annotations"]["destructiveHint"], true);
    let (_, body) = post(
        &base,
        &[V1],
        send(call_message("reset_password", json!({"user": "bob"}))),
    )
    .await;
    let (is_error, _, result) = tool_result(&body["result"]["task"]);
    assert!(!is_error, "{body:#}");
    assert_eq!(result, "password of bob reset");

    kit.set_group_active("admin", false).unwrap();
    assert_eq!(skill_ids(&card(&base).await), skill_ids(&before));
    let (_, body) = post(
        &base,
        &[V1],
        send(call_message("reset_password", json!({"user": "bob"}))),
    )
    .await;
    let (is_error, kind, _) = tool_result(&body["result"]["task"]);
    assert!(is_error);
    assert_eq!(kind.as_deref(), Some("unavailable"));
}

#[tokio::test]
async fn the_card_is_the_merged_1_0_and_0_3_card() {
    let kit = toolkit(&Probe::default());
    let base = tool_server(&kit, |s| {
        s.options(
            ServerOptions::new()
                .name("Merged")
                .public_url("https://tools.example.com/a2a"),
        )
    })
    .await;
    let card = card(&base).await;
    assert_eq!(card["name"], "Merged");
    assert_eq!(
        card["supportedInterfaces"],
        json!([
            {"url": "https://tools.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": "https://tools.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}
        ])
    );
    assert_eq!(card["url"], "https://tools.example.com/a2a");
    assert_eq!(card["protocolVersion"], "0.3");
    assert_eq!(card["preferredTransport"], "JSONRPC");
    assert_eq!(card["capabilities"]["streaming"], true);
    let ext = &card["capabilities"]["extensions"][0];
    assert_eq!(ext["uri"], agent_toolkit::a2a::TOOLS_EXTENSION_URI);
    let weather = &ext["params"]["tools"]["get_weather"];
    assert_eq!(
        weather["inputSchema"]["properties"]["city"]["type"],
        "string"
    );
    assert_eq!(
        weather["outputSchema"]["properties"]["temp_c"]["type"],
        "number"
    );
    assert_eq!(
        weather["annotations"],
        json!({"readOnlyHint": true, "idempotentHint": true, "destructiveHint": false})
    );
    // The skill carries the same schemas as `input_schema`/`output_schema` (design 004's form).
    let skill = &card["skills"][1];
    assert_eq!(
        skill,
        &json!({"id": "tool-get_weather", "name": "get_weather", "description": "Current weather of a city.",
                "tags": ["tool"], "inputModes": ["application/json"], "outputModes": ["application/json"],
                "input_schema": weather["inputSchema"], "output_schema": weather["outputSchema"]})
    );
    // A tool without an output schema has none on its skill either.
    assert_eq!(
        card["skills"][0]["input_schema"],
        ext["params"]["tools"]["add"]["inputSchema"]
    );
    assert!(card["skills"][0].get("output_schema").is_none(), "{card:#}");
    // Both generations of readers accept it.
    agent_toolkit::a2a::client::parse_card(card.clone()).unwrap();
    serde_json::from_value::<agent_toolkit::a2a::types::AgentCard>(card).unwrap();
    // The 0.2-era path serves the same card.
    let old: Value = reqwest::get(format!("{base}/.well-known/agent.json"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(old["name"], "Merged");
}

#[tokio::test]
async fn json_output_is_a_data_part_and_the_task_keeps_the_call() {
    let kit = toolkit(&Probe::default());
    let base = tool_server(&kit, |s| s).await;
    let (_, body) = post(
        &base,
        &[V1],
        send(call_message("get_weather", json!({"city": "Paris"}))),
    )
    .await;
    let task = &body["result"]["task"];
    let (is_error, _, result) = tool_result(task);
    assert!(!is_error);
    assert_eq!(result, json!({"city": "Paris", "temp_c": 18.5}));
    assert_eq!(
        task["artifacts"][0]["parts"],
        json!([{"data": {"city": "Paris", "temp_c": 18.5}, "mediaType": "application/json"}])
    );
    assert_eq!(
        task["metadata"]["_tool_call"],
        json!({"name": "get_weather", "params": {"city": "Paris"}})
    );
    // GetTask gives the same task back.
    let get = json!({"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": task["id"]}});
    let (_, again) = post(&base, &[V1], get.to_string()).await;
    assert_eq!(again["result"]["artifacts"], task["artifacts"]);
    // A call in a data part only (no metadata) works too.
    let message = json!({"messageId": crate::fixtures::uuid(), "role": "ROLE_USER",
                         "parts": [{"data": {"name": "add", "params": {"a": 1, "b": 1}}}]});
    let (_, body) = post(&base, &[V1], send(message)).await;
    assert_eq!(tool_result(&body["result"]["task"]).2.as_f64(), Some(2.0));
}

#[derive(Default)]
struct Gauge {
    now: std::sync::atomic::AtomicUsize,
    max: std::sync::atomic::AtomicUsize,
}

/// Hold a slot for a while, recording how many run at once.
#[agent_toolkit::tool]
async fn busy(#[ctx] gauge: agent_toolkit::Ctx<Gauge>) -> String {
    use std::sync::atomic::Ordering::SeqCst;
    let now = gauge.now.fetch_add(1, SeqCst) + 1;
    gauge.max.fetch_max(now, SeqCst);
    tokio::time::sleep(std::time::Duration::from_millis(40)).await;
    gauge.now.fetch_sub(1, SeqCst);
    "done".into()
}

/// Calls from many clients are separate calls: `max_concurrent_calls` bounds them.
#[tokio::test]
async fn concurrent_calls_are_capped() {
    let gauge = std::sync::Arc::new(Gauge::default());
    let kit = agent_toolkit::Toolkit::builder()
        .register(Busy)
        .context_shared(gauge.clone())
        .build()
        .unwrap();
    let base = tool_server(&kit, |s| s.max_concurrent_calls(2)).await;
    let calls = (0..6).map(|_| post(&base, &[V1], send(call_message("busy", json!({})))));
    for (_, body) in futures::future::join_all(calls).await {
        let (is_error, _, result) = tool_result(&body["result"]["task"]);
        assert!(!is_error, "{body:#}");
        assert_eq!(result, "done");
    }
    assert_eq!(gauge.max.load(std::sync::atomic::Ordering::SeqCst), 2);
}

fn get_task(id: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": id}}).to_string()
}

#[tokio::test]
async fn finished_tasks_are_forgotten_beyond_the_servers_limit_and_calls_still_answer() {
    let kit = toolkit(&Probe::default());
    let base = tool_server(&kit, |s| {
        s.options(ServerOptions::default().keep_finished_tasks(5))
    })
    .await;
    let mut ids = Vec::new();
    for n in 0..20 {
        let (_, body) = post(
            &base,
            &[V1],
            send(call_message("add", json!({"a": n, "b": 1}))),
        )
        .await;
        let task = &body["result"]["task"];
        let (is_error, _, result) = tool_result(task);
        assert!(!is_error, "{body:#}");
        // (A2A 1.0 data parts are protobuf `Struct`s: numbers arrive as doubles.)
        assert_eq!(
            result.as_f64(),
            Some(f64::from(n + 1)),
            "every call answers, whatever is forgotten"
        );
        ids.push(task["id"].clone());
    }
    // A second after finishing (the grace in which the request that finished a task may still
    // read it), the oldest finished tasks are gone (unknown, not something else); the newest
    // five stay.
    tokio::time::sleep(agent_toolkit::a2a::server::FINISHED_GRACE + Duration::from_millis(100))
        .await;
    let (_, body) = post(&base, &[V1], get_task(&ids[0])).await;
    assert_eq!(body["error"]["code"], -32001, "{body:#}");
    for id in &ids[15..] {
        let (_, body) = post(&base, &[V1], get_task(id)).await;
        assert_eq!(body["result"]["id"], *id, "{body:#}");
    }
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "ListTasks", "params": {}});
    let (_, body) = post(&base, &[V1], list.to_string()).await;
    assert_eq!(body["result"]["totalSize"], 5, "{body:#}");

    // Keeping none: a call still gets its whole answer.
    let base = tool_server(&kit, |s| {
        s.options(ServerOptions::default().keep_finished_tasks(0))
    })
    .await;
    let (_, body) = post(
        &base,
        &[V1],
        send(call_message("add", json!({"a": 2, "b": 2}))),
    )
    .await;
    let task = &body["result"]["task"];
    assert_eq!(tool_result(task).2.as_f64(), Some(4.0), "{body:#}");
    tokio::time::sleep(agent_toolkit::a2a::server::FINISHED_GRACE + Duration::from_millis(100))
        .await;
    let (_, body) = post(&base, &[V1], get_task(&task["id"])).await;
    assert_eq!(body["error"]["code"], -32001, "{body:#}");
}
