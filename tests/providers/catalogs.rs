//! Large tool catalogs through a real agent and a provider over loopback HTTP: deferred tools
//! declared with `defer_loading`, the provider's search blocks kept and sent back, the agent's
//! own search answering with `tool_reference` blocks, and tool-list changes that leave the
//! request's earlier bytes as they were (the provider's prompt cache keeps).

use agent_toolkit::agent::ToolSearch;
use agent_toolkit::model::{AnthropicMessages, AnthropicToolSearch, ToolFeatures};
use agent_toolkit::prelude::*;
use agent_toolkit::{AgentEvent, ReActAgent};
use serde_json::{Value, json};

use crate::support::{Captured, Reply, Server};

/// Current weather for a city.
#[tool(group = "weather")]
fn get_weather(
    /// The city, e.g. "Paris".
    city: String,
) -> String {
    format!("sunny in {city}")
}

/// Tide tables for a harbour.
#[tool(group = "weather")]
fn tides(harbour: String) -> String {
    format!("high tide at noon in {harbour}")
}

/// Add two numbers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn toolkit() -> Toolkit {
    Toolkit::builder()
        .deferred_group("weather", "Forecasts and tides")
        .register(GetWeather)
        .register(Tides)
        .register(Add)
        .build()
        .unwrap()
}

fn anthropic(server: &Server, search: AnthropicToolSearch) -> AnthropicMessages {
    AnthropicMessages::builder()
        .base_url(&server.url)
        .api_key("sk-ant-test")
        .model("claude-test")
        .tool_search(search)
        .tool_features(ToolFeatures::all())
        .build()
        .unwrap()
}

fn message(content: Value, stop: &str) -> Reply {
    Reply::json(json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": content, "stop_reason": stop, "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 5}
    }))
}

/// The bytes of `first` up to the end of its last message: what a later request of the same
/// conversation must start with for the provider's cached prefix to hold.
fn prefix_through_messages(first: &Captured) -> Vec<u8> {
    let text = String::from_utf8(first.raw.clone()).unwrap();
    let end = text
        .rfind("],\"tool_choice\"")
        .expect("the messages end before tool_choice");
    text.as_bytes()[..end].to_vec()
}

fn assert_prefix_kept(requests: &[Captured]) {
    for pair in requests.windows(2) {
        let prefix = prefix_through_messages(&pair[0]);
        assert!(
            pair[1].raw.starts_with(&prefix),
            "a later request rewrote earlier bytes:\n first: {}\nsecond: {}",
            String::from_utf8_lossy(&pair[0].raw),
            String::from_utf8_lossy(&pair[1].raw)
        );
    }
}

#[tokio::test]
async fn anthropic_server_side_search_blocks_are_sent_back_and_the_prefix_holds() {
    let search_blocks = json!([
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_bm25",
         "input": {"query": "weather"}},
        {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1",
         "content": {"type": "tool_search_tool_search_result",
                     "tool_references": [{"type": "tool_reference", "tool_name": "get_weather"}]}},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
    ]);
    let server = Server::start([
        message(search_blocks.clone(), "tool_use"),
        message(
            json!([{"type": "text", "text": "Sunny in Paris."}]),
            "end_turn",
        ),
    ])
    .await;
    let mut agent = ReActAgent::builder(anthropic(&server, AnthropicToolSearch::Bm25))
        .toolkit(&toolkit())
        .build()
        .unwrap();
    assert_eq!(
        agent.run("Weather in Paris?").await.unwrap(),
        "Sunny in Paris."
    );

    let requests = server.requests();
    assert_eq!(
        requests[0].headers["anthropic-beta"],
        "mid-conversation-tool-changes-2026-07-01"
    );
    let int64 = json!({"type": "integer", "format": "int64",
        "minimum": i64::MIN, "maximum": i64::MAX});
    let weather = json!({"type": "object", "properties": {"city": {"type": "string",
        "description": "The city, e.g. \"Paris\"."}}, "required": ["city"],
        "additionalProperties": false});
    assert_eq!(
        requests[0].body["tools"],
        json!([
            {"name": "add", "description": "Add two numbers.", "input_schema": {"type": "object",
              "properties": {"a": int64, "b": int64}, "required": ["a", "b"],
              "additionalProperties": false}},
            {"name": "get_weather", "description": "Current weather for a city.",
             "input_schema": weather, "defer_loading": true},
            {"name": "tides", "description": "Tide tables for a harbour.",
             "input_schema": {"type": "object", "properties": {"harbour": {"type": "string"}},
                              "required": ["harbour"], "additionalProperties": false},
             "defer_loading": true},
            {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
        ]),
        "{}",
        requests[0].body["tools"]
    );
    // The second request sends the server's blocks back unchanged, then the tool's result.
    let messages = requests[1].body["messages"].as_array().unwrap();
    assert_eq!(
        messages[1],
        json!({"role": "assistant", "content": search_blocks})
    );
    assert_eq!(
        messages[2],
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                            "content": "sunny in Paris"}]})
    );
    // The tool list did not change: the provider loaded get_weather itself.
    assert_eq!(requests[0].body["tools"], requests[1].body["tools"]);
    assert_prefix_kept(&requests);
}

#[tokio::test]
async fn anthropic_client_side_search_answers_with_tool_references() {
    let server = Server::start([
        message(
            json!([{"type": "tool_use", "id": "toolu_1", "name": "search_tools",
                    "input": {"query": "tide tables", "limit": 1}}]),
            "tool_use",
        ),
        message(
            json!([{"type": "tool_use", "id": "toolu_2", "name": "tides",
                    "input": {"harbour": "Brest"}}]),
            "tool_use",
        ),
        message(json!([{"type": "text", "text": "Noon."}]), "end_turn"),
    ])
    .await;
    let mut agent = ReActAgent::builder(anthropic(&server, AnthropicToolSearch::Client))
        .toolkit(&toolkit())
        .build()
        .unwrap();
    assert_eq!(agent.run("Tides in Brest?").await.unwrap(), "Noon.");
    let requests = server.requests();
    let names: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["add", "get_weather", "tides", "search_tools"]);
    let result = &requests[1].body["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(
        result["content"][1],
        json!({"type": "tool_reference", "tool_name": "tides"})
    );
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("- tides(harbour): Tide tables for a harbour.")
    );
    // No tool change is announced for a tool the reference loaded; the list stays as it was.
    assert_eq!(requests[1].body["tools"], requests[0].body["tools"]);
    assert_eq!(requests[2].body["tools"], requests[0].body["tools"]);
    assert_eq!(
        requests[2].body["messages"][4]["content"][0]["content"],
        "high tide at noon in Brest"
    );
    assert_prefix_kept(&requests);
}

#[tokio::test]
async fn anthropic_group_switches_are_tool_changes_after_the_cached_prefix() {
    let server = Server::start([
        message(
            json!([{"type": "tool_use", "id": "toolu_1", "name": "reset_equipped_tools",
                    "input": {"groups": []}}]),
            "tool_use",
        ),
        message(
            json!([{"type": "tool_use", "id": "toolu_2", "name": "reset_equipped_tools",
                    "input": {"groups": ["weather"]}}]),
            "tool_use",
        ),
        message(json!([{"type": "text", "text": "Done."}]), "end_turn"),
    ])
    .await;
    let toolkit = Toolkit::builder()
        .group("weather", "Forecasts")
        .register(GetWeather)
        .register(Add)
        .build()
        .unwrap();
    let mut agent = ReActAgent::builder(anthropic(&server, AnthropicToolSearch::Bm25))
        .toolkit(&toolkit)
        .agent_managed_groups(["weather"])
        .tool_search(ToolSearch::Auto)
        .build()
        .unwrap();
    assert_eq!(
        agent.run("Switch weather off and on.").await.unwrap(),
        "Done."
    );
    let requests = server.requests();
    let removal = &requests[1].body["messages"][3];
    assert_eq!(
        *removal,
        json!({"role": "system", "content": [{"type": "tool_removal",
               "tool": {"type": "tool_reference", "name": "get_weather"}}]})
    );
    let addition = &requests[2].body["messages"][6];
    assert_eq!(
        *addition,
        json!({"role": "system", "content": [{"type": "tool_addition",
               "tool": {"type": "tool_reference", "name": "get_weather"}}]})
    );
    // The declared list is the same in every request; the change is in the messages only.
    assert_eq!(requests[1].body["tools"], requests[0].body["tools"]);
    assert_eq!(requests[2].body["tools"], requests[0].body["tools"]);
    assert_prefix_kept(&requests);
}

#[tokio::test]
async fn anthropic_streamed_search_blocks_are_assembled_and_sent_back() {
    use futures::StreamExt;

    use crate::support::anthropic_sse;

    let events = [
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
               "role": "assistant", "content": [], "model": "claude-test",
               "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "server_tool_use",
               "id": "srvtoolu_1", "name": "tool_search_tool_bm25", "input": {}}}),
        json!({"type": "content_block_delta", "index": 0,
               "delta": {"type": "input_json_delta", "partial_json": "{\"query\": \"wea"}}),
        json!({"type": "content_block_delta", "index": 0,
               "delta": {"type": "input_json_delta", "partial_json": "ther\"}"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {
               "type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1",
               "content": {"type": "tool_search_tool_search_result",
                           "tool_references": [{"type": "tool_reference", "tool_name": "get_weather"}]}}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use",
               "id": "toolu_1", "name": "get_weather", "input": {}}}),
        json!({"type": "content_block_delta", "index": 2,
               "delta": {"type": "input_json_delta", "partial_json": "{\"city\": \"Paris\"}"}}),
        json!({"type": "content_block_stop", "index": 2}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"},
               "usage": {"output_tokens": 20}}),
        json!({"type": "message_stop"}),
    ];
    let second = [
        json!({"type": "message_start", "message": {"id": "msg_2", "type": "message",
               "role": "assistant", "content": [], "model": "claude-test", "usage": {}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Sunny."}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}}),
        json!({"type": "message_stop"}),
    ];
    let server = Server::start([
        Reply::sse(&anthropic_sse(&events), 37),
        Reply::sse(&anthropic_sse(&second), 41),
    ])
    .await;
    let mut agent = ReActAgent::builder(anthropic(&server, AnthropicToolSearch::Bm25))
        .toolkit(&toolkit())
        .build()
        .unwrap();
    let stream = agent.run_stream("Weather in Paris?");
    let events: Vec<AgentEvent> = stream.collect().await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::Final(answer) if answer == "Sunny.")),
        "{events:?}"
    );
    let requests = server.requests();
    assert_eq!(
        requests[1].body["messages"][1],
        json!({"role": "assistant", "content": [
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_bm25",
             "input": {"query": "weather"}},
            {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1",
             "content": {"type": "tool_search_tool_search_result",
                         "tool_references": [{"type": "tool_reference", "tool_name": "get_weather"}]}},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
        ]})
    );
    assert_prefix_kept(&requests);
}

fn responses_reply(output: Value) -> Reply {
    Reply::json(json!({
        "id": "resp_1", "object": "response", "created_at": 1_741_570_283, "model": "gpt-test",
        "status": "completed", "output": output, "parallel_tool_calls": true, "store": false,
        "usage": {"input_tokens": 30, "output_tokens": 7, "total_tokens": 37}
    }))
}

#[tokio::test]
async fn responses_hosted_search_items_are_sent_back_and_the_prefix_holds() {
    use agent_toolkit::model::OpenAiResponses;

    let tides = json!({"type": "function", "name": "tides", "description": "Tide tables for a harbour.",
        "parameters": {"type": "object", "properties": {"harbour": {"type": "string"}},
                       "required": ["harbour"], "additionalProperties": false},
        "strict": false, "defer_loading": true});
    let first = json!([
        {"type": "tool_search_call", "id": "ts_1", "execution": "server",
         "arguments": {"query": "tides"}, "status": "completed"},
        {"type": "tool_search_output", "id": "tso_1", "execution": "server",
         "tools": [tides], "status": "completed"},
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "tides",
         "arguments": "{\"harbour\":\"Brest\"}", "status": "completed"}
    ]);
    let server = Server::start([
        responses_reply(first.clone()),
        responses_reply(
            json!([{"type": "message", "id": "msg_1", "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Noon.", "annotations": []}]}]),
        ),
    ])
    .await;
    let model = OpenAiResponses::builder()
        .base_url(&server.url)
        .api_key("sk-test")
        .model("gpt-test")
        .tool_features(ToolFeatures::all())
        .build()
        .unwrap();
    let mut agent = ReActAgent::builder(model)
        .toolkit(&toolkit())
        .build()
        .unwrap();
    assert_eq!(agent.run("Tides in Brest?").await.unwrap(), "Noon.");

    let requests = server.requests();
    let tools = requests[0].body["tools"].as_array().unwrap();
    let kinds: Vec<&str> = tools.iter().map(|t| t["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["function", "tool_search", "namespace"], "{tools:?}");
    assert_eq!(tools[2]["name"], "weather");
    assert_eq!(tools[2]["description"], "Forecasts and tides");
    let deferred: Vec<&str> = tools[2]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(deferred, ["get_weather", "tides"]);
    assert!(
        tools[2]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["defer_loading"] == true)
    );
    // The hosted search's items and the call go back as they came, without server ids.
    let input = requests[1].body["input"].as_array().unwrap();
    let without_ids: Vec<Value> = first
        .as_array()
        .unwrap()
        .iter()
        .map(|item| {
            let mut item = item.clone();
            item.as_object_mut().unwrap().remove("id");
            item
        })
        .collect();
    assert_eq!(input[1..4], without_ids[..]);
    assert_eq!(
        input[4],
        json!({"type": "function_call_output", "call_id": "call_1",
               "output": "high tide at noon in Brest"})
    );
    assert_eq!(requests[1].body["tools"], requests[0].body["tools"]);
    assert_prefix_kept(&requests);
}
