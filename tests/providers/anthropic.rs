//! `AnthropicMessages` against a local server playing the Messages API.
//!
//! Anthropic publishes no official Rust SDK, and the community crates are not kept in step
//! with the API, so there are no wire types by others to check against here (as there are
//! for OpenAI with async-openai). The request and response shapes below follow the JSON
//! examples of the Messages API reference, as recorded in the project's protocol notes
//! (`shared/reference/protocols.md` §3.2 and §4.2).

use agent_toolkit::{
    ChatModel, Dialect, ToolCall, ToolChoice,
    model::{AnthropicMessages, ChatEvent, ChatRequest, FinishReason, Message, ModelError, Usage},
};
use serde_json::{Value, json};

use crate::support::{Reply, Server, anthropic_sse, collect, conversation, tools};

fn model(server: &Server) -> AnthropicMessages {
    AnthropicMessages::builder()
        .base_url(&server.url)
        .api_key("sk-ant-test")
        .model("claude-test")
        .build()
        .expect("build")
}

fn user(text: &str) -> ChatRequest {
    ChatRequest::new(vec![Message::user(text)])
}

#[tokio::test]
async fn plain_text_reply() {
    let server = Server::start([Reply::json(json!({
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [{"type": "text", "text": "Hello there."}],
        "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 12, "output_tokens": 4},
    }))])
    .await;
    let model = model(&server);
    assert_eq!(model.dialect(), Dialect::Anthropic);
    assert_eq!(model.name(), "claude-test");

    let response = model.chat(user("Hi")).await.expect("chat");
    assert_eq!(response.message.content, "Hello there.");
    assert_eq!(response.finish_reason, FinishReason::Stop);
    assert_eq!(response.usage, Usage::new(12, 4));

    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.headers["x-api-key"], "sk-ant-test");
    assert_eq!(request.headers["anthropic-version"], "2023-06-01");
    assert_eq!(
        request.body,
        json!({"model": "claude-test", "max_tokens": 1024,
               "messages": [{"role": "user", "content": "Hi"}]})
    );
}

#[tokio::test]
async fn two_parallel_tool_uses_become_calls() {
    // The response example of protocols.md §4.2, with a second tool_use block.
    let server = Server::start([Reply::json(json!({
        "id": "msg_02", "type": "message", "role": "assistant", "model": "claude-test",
        "stop_reason": "tool_use",
        "content": [
            {"type": "text", "text": "I'll check the weather."},
            {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather",
             "input": {"location": "Paris"}},
            {"type": "tool_use", "id": "toolu_02", "name": "fs_read", "input": {"path": "/a"}},
        ],
        "usage": {"input_tokens": 300, "output_tokens": 60},
    }))])
    .await;
    let request = user("Weather in Paris?")
        .with_tools(tools())
        .with_parallel_tool_calls(true);
    let response = model(&server).chat(request).await.expect("chat");
    assert_eq!(response.message.content, "I'll check the weather.");
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(
        response.message.tool_calls,
        vec![
            ToolCall::new(
                "toolu_01A09q90qw90lq917835lq9",
                "get_weather",
                r#"{"location":"Paris"}"#
            ),
            ToolCall::new("toolu_02", "fs.read", r#"{"path":"/a"}"#),
        ]
    );
    let body = server.only_body();
    assert_eq!(
        body["tool_choice"],
        json!({"type": "auto"}),
        "parallel allowed"
    );
}

#[tokio::test]
async fn request_body_is_the_messages_wire_format() {
    let server = Server::start([Reply::json(json!({
        "id": "msg_03", "type": "message", "role": "assistant",
        "content": [{"type": "text", "text": "Nothing else."}],
        "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1},
    }))])
    .await;
    let mut request = conversation();
    // A broken argument text the model once sent: the API only takes an object as input.
    if let Message::Assistant(turn) = &mut request.messages[2] {
        turn.tool_calls[1].arguments = "{\"path\": ".into();
    }
    model(&server).chat(request).await.expect("chat");
    let body = server.only_body();

    assert_eq!(body["system"], "Be brief.");
    assert_eq!(body["max_tokens"], 200);
    assert_eq!(body["temperature"], json!(0.2));
    assert_eq!(body["stop_sequences"], json!(["END"]));
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": "Weather in Paris? And read /nope."},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "call_1", "name": "get_weather",
                 "input": {"location": "Paris"}},
                {"type": "tool_use", "id": "call_2", "name": "fs_read", "input": {}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_1", "content": "18°C"},
                {"type": "tool_result", "tool_use_id": "call_2",
                 "content": "Error: no such file", "is_error": true},
                {"type": "text", "text": "Thanks. Anything else?"},
            ]},
        ])
    );
    let tools = body["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[1]["name"], "fs_read");
    assert_eq!(tools[1]["description"], "Read a file.");
    assert_eq!(tools[1]["input_schema"]["type"], "object");
    assert_eq!(
        body["tool_choice"],
        json!({"type": "tool", "name": "fs_read", "disable_parallel_tool_use": true})
    );
}

#[tokio::test]
async fn tool_choice_forms() {
    let cases = [
        (ToolChoice::Auto, true, json!({"type": "auto"})),
        (
            ToolChoice::Auto,
            false,
            json!({"type": "auto", "disable_parallel_tool_use": true}),
        ),
        (ToolChoice::Required, true, json!({"type": "any"})),
        (ToolChoice::None, false, json!({"type": "none"})),
    ];
    let reply = || {
        Reply::json(json!({"content": [], "stop_reason": "end_turn",
                           "usage": {"input_tokens": 1, "output_tokens": 0}}))
    };
    let server = Server::start(cases.iter().map(|_| reply())).await;
    let model = model(&server);
    for (choice, parallel, _) in &cases {
        let request = user("hi")
            .with_tools(tools())
            .with_tool_choice(choice.clone())
            .with_parallel_tool_calls(*parallel);
        model.chat(request).await.expect("chat");
    }
    let sent: Vec<Value> = server
        .requests()
        .into_iter()
        .map(|r| r.body["tool_choice"].clone())
        .collect();
    let expected: Vec<Value> = cases.into_iter().map(|(_, _, wire)| wire).collect();
    assert_eq!(sent, expected);
}

fn streamed_events(first: &str, second: &str) -> Vec<Value> {
    let mut events = vec![
        json!({"type": "message_start", "message": {"id": "msg_04", "type": "message",
            "role": "assistant", "content": [], "model": "claude-test", "stop_reason": null,
            "usage": {"input_tokens": 472, "output_tokens": 2}}}),
        json!({"type": "content_block_start", "index": 0,
               "content_block": {"type": "text", "text": ""}}),
        json!({"type": "ping"}),
        json!({"type": "content_block_delta", "index": 0,
               "delta": {"type": "text_delta", "text": "Okay, "}}),
        json!({"type": "content_block_delta", "index": 0,
               "delta": {"type": "text_delta", "text": "checking Bogotá…"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block":
               {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {}}}),
    ];
    for piece in first.as_bytes().chunks(3) {
        events.push(json!({"type": "content_block_delta", "index": 1, "delta":
            {"type": "input_json_delta", "partial_json": std::str::from_utf8(piece).expect("ascii")}}));
    }
    events.push(json!({"type": "content_block_stop", "index": 1}));
    events.push(
        json!({"type": "content_block_start", "index": 2, "content_block":
        {"type": "tool_use", "id": "toolu_02", "name": "fs_read", "input": {}}}),
    );
    events.push(json!({"type": "content_block_delta", "index": 2, "delta":
        {"type": "input_json_delta", "partial_json": ""}}));
    for piece in second.as_bytes().chunks(5) {
        events.push(json!({"type": "content_block_delta", "index": 2, "delta":
            {"type": "input_json_delta", "partial_json": std::str::from_utf8(piece).expect("ascii")}}));
    }
    events.push(json!({"type": "content_block_stop", "index": 2}));
    events.push(json!({"type": "message_delta",
        "delta": {"stop_reason": "tool_use", "stop_sequence": null},
        "usage": {"output_tokens": 89}}));
    events.push(json!({"type": "message_stop"}));
    events
}

#[tokio::test]
async fn streamed_tool_uses_are_assembled_from_partial_json() {
    let first = r#"{"location": "Bogotá"}"#;
    let second = r#"{"path":"/tmp/a b.txt"}"#;
    // 5-byte pieces: event names, data lines and the two-byte characters are cut across reads.
    let server = Server::start([Reply::sse(
        &anthropic_sse(&streamed_events(first, second)),
        5,
    )])
    .await;
    let request = user("Weather in Bogotá, and read a file")
        .with_tools(tools())
        .with_parallel_tool_calls(true);
    let model = model(&server);
    let (events, error) = collect(model.chat_stream(request)).await;
    assert_eq!(error, None);
    assert_eq!(
        events[..4],
        [
            ChatEvent::TextDelta("Okay, ".into()),
            ChatEvent::TextDelta("checking Bogotá…".into()),
            ChatEvent::ToolCallStarted {
                id: "toolu_01".into(),
                name: "get_weather".into()
            },
            ChatEvent::ToolCallStarted {
                id: "toolu_02".into(),
                name: "fs.read".into()
            },
        ]
    );
    let [.., ChatEvent::Done(response)] = &events[..] else {
        panic!("the last event is not Done: {events:?}");
    };
    assert_eq!(events.len(), 5);
    assert_eq!(response.message.content, "Okay, checking Bogotá…");
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.usage, Usage::new(472, 89));
    assert_eq!(
        response.message.tool_calls,
        vec![
            ToolCall::new("toolu_01", "get_weather", first),
            ToolCall::new("toolu_02", "fs.read", second),
        ]
    );
    assert_eq!(server.only_body()["stream"], true);
}

#[tokio::test]
async fn a_tool_use_without_input_deltas_has_its_start_input() {
    let events = [
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 5, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block":
               {"type": "tool_use", "id": "toolu_9", "name": "get_weather", "input": {}}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 3}}),
        json!({"type": "message_stop"}),
    ];
    let server = Server::start([Reply::sse(&anthropic_sse(&events), 64)]).await;
    let (events, error) = collect(model(&server).chat_stream(user("hi"))).await;
    assert_eq!(error, None);
    let Some(ChatEvent::Done(response)) = events.last() else {
        panic!("no Done: {events:?}");
    };
    assert_eq!(
        response.message.tool_calls,
        [ToolCall::new("toolu_9", "get_weather", "{}")]
    );
}

#[tokio::test]
async fn an_error_event_mid_stream_is_an_http_error() {
    let events = [
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 5, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hel"}}),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ];
    let server = Server::start([Reply::sse(&anthropic_sse(&events), 64)]).await;
    let (events, error) = collect(model(&server).chat_stream(user("hi"))).await;
    assert_eq!(events, [ChatEvent::TextDelta("Hel".into())]);
    let Some(ModelError::Http { status: 529, body }) = &error else {
        panic!("not an overloaded error: {error:?}");
    };
    assert!(body.contains("Overloaded"), "{body}");
    assert!(error.is_some_and(|e| e.is_retryable()));
}
