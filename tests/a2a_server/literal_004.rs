//! Our tool server against a client written literally from design document 004 ("remote tool
//! execution"), as raw JSON over HTTP: it finds tools by the `input_schema` on `tool-NAME`
//! skills, calls with `_tool_call` in the request's metadata (004's "task metadata") and a
//! plain text part, and reads results from artifacts marked `_tool_result` with `tool_name`,
//! `execution_time_ms` and a data part — on A2A 1.0 and on 0.3.

use serde_json::{Value, json};

use crate::fixtures::{Probe, V1, post, tool_server, toolkit, uuid};

/// What a 004 client knows of a tool from the card.
struct Tool {
    name: String,
    input_schema: Value,
    output_schema: Option<Value>,
}

async fn discover(base: &str) -> Vec<Tool> {
    let card: Value = reqwest::get(format!("{base}/.well-known/agent-card.json"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    card["skills"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["tags"].as_array().unwrap().contains(&json!("tool")))
        .map(|s| Tool {
            name: s["id"]
                .as_str()
                .unwrap()
                .strip_prefix("tool-")
                .unwrap()
                .into(),
            input_schema: s["input_schema"].clone(),
            output_schema: s.get("output_schema").cloned(),
        })
        .collect()
}

#[derive(Clone, Copy, Debug)]
enum Wire {
    V1,
    V03,
}

/// 004's `RemoteToolResult`: the result data, the time, the artifact metadata.
#[derive(Debug)]
struct RemoteToolResult {
    result: Value,
    execution_time_ms: u64,
    metadata: Value,
}

async fn execute_remote_tool(
    base: &str,
    wire: Wire,
    name: &str,
    params: Value,
) -> RemoteToolResult {
    let call = json!({"_tool_call": {"name": name, "params": params}});
    let (headers, request) = match wire {
        Wire::V1 => (
            vec![V1],
            json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
                "message": {"messageId": uuid(), "role": "ROLE_USER",
                            "parts": [{"text": format!("run {name}")}]},
                "metadata": call}}),
        ),
        Wire::V03 => (
            vec![],
            json!({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {
                "message": {"kind": "message", "messageId": uuid(), "role": "user",
                            "parts": [{"kind": "text", "text": format!("run {name}")}]},
                "metadata": call}}),
        ),
    };
    let (_, body) = post(base, &headers, request.to_string()).await;
    let task = match wire {
        Wire::V1 => &body["result"]["task"],
        Wire::V03 => &body["result"],
    };
    let artifact = task["artifacts"]
        .as_array()
        .unwrap_or_else(|| panic!("no artifacts: {body:#}"))
        .iter()
        .find(|a| a["metadata"]["_tool_result"] == true)
        .unwrap_or_else(|| panic!("no `_tool_result` artifact: {body:#}"));
    let metadata = artifact["metadata"].clone();
    assert_eq!(metadata["tool_name"], name, "{body:#}");
    let data = artifact["parts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| match wire {
            Wire::V1 => p.get("data").is_some(),
            Wire::V03 => p["kind"] == "data",
        })
        .unwrap_or_else(|| panic!("no data part: {body:#}"));
    // On the 1.0 wire every number in data and metadata is a protobuf double (`5.0`), as
    // ProtoJSON writes them; a 1.0 client reads integral doubles as integers.
    let ms = metadata["execution_time_ms"]
        .as_f64()
        .filter(|ms| ms.fract() == 0.0 && *ms >= 0.0)
        .unwrap_or_else(|| panic!("no execution_time_ms in whole milliseconds: {body:#}"));
    let mut result = data["data"].clone();
    agent_toolkit::a2a::parts::integral_floats_to_ints(&mut result);
    RemoteToolResult {
        result,
        execution_time_ms: ms as u64,
        metadata,
    }
}

async fn literal_client(wire: Wire) {
    let kit = toolkit(&Probe::default());
    let base = tool_server(&kit, |s| s).await;

    let tools = discover(&base).await;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["add", "get_weather", "slow_count"]);
    let weather = &tools[1];
    assert_eq!(weather.input_schema["properties"]["city"]["type"], "string");
    assert_eq!(weather.input_schema["required"], json!(["city"]));
    assert_eq!(
        weather.output_schema.as_ref().unwrap()["properties"]["temp_c"]["type"],
        "number"
    );
    assert_eq!(tools[0].output_schema, None);

    // A JSON object: the data part is the object.
    let r = execute_remote_tool(&base, wire, "get_weather", json!({"city": "Paris"})).await;
    assert_eq!(r.result, json!({"city": "Paris", "temp_c": 18.5}));
    assert_eq!(r.metadata["is_error"], false);
    // A number: wrapped, on both wires alike.
    let r = execute_remote_tool(&base, wire, "add", json!({"a": 2, "b": 3})).await;
    assert_eq!(r.result, json!({"result": 5}));
    assert_eq!(r.metadata["wrapped"], true);
    // Text: in the data part too.
    let r = execute_remote_tool(&base, wire, "slow_count", json!({"n": 2, "step_ms": 30})).await;
    assert_eq!(r.result, json!({"result": "counted to 2"}));
    assert!(r.execution_time_ms >= 60, "{r:?}");
    // An error: a data part with the message.
    let r = execute_remote_tool(&base, wire, "no_such_tool", json!({})).await;
    assert_eq!(r.metadata["is_error"], true);
    assert!(
        r.result["error"]
            .as_str()
            .unwrap()
            .contains("no tool named `no_such_tool`"),
        "{r:?}"
    );
}

#[tokio::test]
async fn a_004_client_uses_our_tool_server_over_1_0() {
    literal_client(Wire::V1).await;
}

#[tokio::test]
async fn a_004_client_uses_our_tool_server_over_0_3() {
    literal_client(Wire::V03).await;
}
