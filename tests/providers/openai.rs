//! `OpenAiChat` against a local server playing an OpenAI-compatible endpoint, with our
//! request bodies and the responses we parse checked against async-openai's wire types.

use agent_toolkit::{
    ChatModel, Dialect, ToolCall, ToolChoice,
    model::{ChatEvent, ChatRequest, FinishReason, Message, OpenAiChat, Usage},
};
use async_openai::types::chat::{
    ChatCompletionMessageToolCalls, ChatCompletionRequestMessage, ChatCompletionToolChoiceOption,
    ChatCompletionTools, CreateChatCompletionRequest, CreateChatCompletionResponse,
    CreateChatCompletionStreamResponse,
};
use serde_json::{Value, json};

use crate::support::{Reply, Server, collect, conversation, openai_sse, tools};

fn model(server: &Server) -> OpenAiChat {
    OpenAiChat::builder()
        .base_url(format!("{}/v1", server.url))
        .api_key("sk-test")
        .model("gpt-test")
        .header("x-extra", "yes")
        .build()
        .expect("build")
}

fn completion(message: Value, finish_reason: &str) -> Value {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "gpt-test",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": null}],
        "usage": {"prompt_tokens": 31, "completion_tokens": 7, "total_tokens": 38},
    })
}

fn user(text: &str) -> ChatRequest {
    ChatRequest::new(vec![Message::user(text)])
}

#[tokio::test]
async fn plain_text_reply() {
    let server = Server::start([Reply::json(completion(
        json!({"role": "assistant", "content": "Hello there.", "refusal": null}),
        "stop",
    ))])
    .await;
    let model = model(&server);
    assert_eq!(model.name(), "gpt-test");
    assert_eq!(model.dialect(), Dialect::OpenAi);

    let response = model.chat(user("Hi")).await.expect("chat");
    assert_eq!(response.message.content, "Hello there.");
    assert!(response.message.tool_calls.is_empty());
    assert_eq!(response.finish_reason, FinishReason::Stop);
    assert_eq!(response.usage, Usage::new(31, 7));

    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.headers["authorization"], "Bearer sk-test");
    assert_eq!(request.headers["x-extra"], "yes");
    assert_eq!(
        request.body,
        json!({"model": "gpt-test", "messages": [{"role": "user", "content": "Hi"}]}),
        "no tools: no tools, tool_choice or parallel_tool_calls"
    );
}

#[tokio::test]
async fn two_parallel_tool_calls_are_assembled_with_original_names() {
    let server = Server::start([Reply::json(completion(
        json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [
                {"id": "call_abc", "type": "function",
                 "function": {"name": "get_weather", "arguments": "{\"location\":\"Paris\"}"}},
                {"id": "call_def", "type": "function",
                 "function": {"name": "fs_read", "arguments": "{\"path\":\"/etc/hosts\"}"}},
            ],
        }),
        "tool_calls",
    ))])
    .await;
    let request = user("Weather in Paris, and read the hosts file")
        .with_tools(tools())
        .with_parallel_tool_calls(true);
    let response = model(&server).chat(request).await.expect("chat");
    assert_eq!(response.message.content, "");
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(
        response.message.tool_calls,
        vec![
            ToolCall::new("call_abc", "get_weather", r#"{"location":"Paris"}"#),
            ToolCall::new("call_def", "fs.read", r#"{"path":"/etc/hosts"}"#),
        ]
    );
}

#[tokio::test]
async fn request_body_is_the_chat_completions_wire_format() {
    let server = Server::start([Reply::json(completion(
        json!({"role": "assistant", "content": "ok"}),
        "stop",
    ))])
    .await;
    model(&server).chat(conversation()).await.expect("chat");
    let body = server.only_body();

    assert_eq!(body["model"], "gpt-test");
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris? And read /nope."},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "get_weather", "arguments": "{\"location\":\"Paris\"}"}},
                {"id": "call_2", "type": "function",
                 "function": {"name": "fs_read", "arguments": "{\"path\":\"/nope\"}"}},
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "18°C"},
            {"role": "tool", "tool_call_id": "call_2", "content": "Error: no such file"},
            {"role": "user", "content": "Thanks. Anything else?"},
        ])
    );
    let names: Vec<&str> = body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| {
            assert_eq!(t["type"], "function");
            assert!(t["function"]["parameters"]["properties"].is_object());
            assert_eq!(t["function"].get("strict"), None, "not strict by default");
            t["function"]["name"].as_str().expect("name")
        })
        .collect();
    assert_eq!(names, ["get_weather", "fs_read"]);
    assert_eq!(
        body["tool_choice"],
        json!({"type": "function", "function": {"name": "fs_read"}})
    );
    assert_eq!(body["parallel_tool_calls"], false);
    assert_eq!(body["temperature"], json!(0.2));
    assert_eq!(body["max_tokens"], 200);
    assert_eq!(body["stop"], json!(["END"]));
    assert_eq!(body.get("stream"), None);

    // The same body read by async-openai's request type, written from OpenAI's OpenAPI spec
    // by others: it must accept it, see the same structure, and write it back the same.
    let typed: CreateChatCompletionRequest =
        serde_json::from_value(body.clone()).expect("async-openai accepts our request body");
    assert_eq!(typed.messages.len(), 6);
    assert!(matches!(
        typed.messages[0],
        ChatCompletionRequestMessage::System(_)
    ));
    let ChatCompletionRequestMessage::Assistant(assistant) = &typed.messages[2] else {
        panic!(
            "message 2 is not an assistant message: {:?}",
            typed.messages[2]
        );
    };
    let ids: Vec<(&str, &str)> = assistant
        .tool_calls
        .as_deref()
        .unwrap_or_default()
        .iter()
        .map(|call| match call {
            ChatCompletionMessageToolCalls::Function(f) => {
                (f.id.as_str(), f.function.name.as_str())
            }
            other => panic!("not a function call: {other:?}"),
        })
        .collect();
    assert_eq!(ids, [("call_1", "get_weather"), ("call_2", "fs_read")]);
    let ChatCompletionRequestMessage::Tool(tool) = &typed.messages[4] else {
        panic!("message 4 is not a tool message: {:?}", typed.messages[4]);
    };
    assert_eq!(tool.tool_call_id, "call_2");
    let Some(ChatCompletionToolChoiceOption::Function(choice)) = &typed.tool_choice else {
        panic!(
            "tool_choice is not a named function: {:?}",
            typed.tool_choice
        );
    };
    assert_eq!(choice.function.name, "fs_read");
    let typed_tools = typed.tools.as_deref().unwrap_or_default();
    assert_eq!(typed_tools.len(), 2);
    assert!(
        matches!(&typed_tools[1], ChatCompletionTools::Function(t) if t.function.name == "fs_read")
    );
    assert_eq!(typed.parallel_tool_calls, Some(false));

    let written = serde_json::to_value(&typed).expect("serialize");
    for field in [
        "messages",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "stop",
        // Not `temperature`: async-openai keeps it as `f32` and writes 0.2 back as
        // 0.20000000298023224, its own artifact.
        "max_tokens",
    ] {
        assert_eq!(
            without_nulls(written[field].clone()),
            without_nulls(body[field].clone()),
            "`{field}` changed in the async-openai round trip"
        );
    }
}

/// `value` without object members whose value is `null` (async-openai leaves out absent
/// options where we write `"content": null`; both mean the same on the wire).
fn without_nulls(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, without_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_nulls).collect()),
        other => other,
    }
}

#[tokio::test]
async fn strict_mode_sends_strict_tools() {
    let server = Server::start([Reply::json(completion(
        json!({"role": "assistant", "content": "ok"}),
        "stop",
    ))])
    .await;
    let model = OpenAiChat::builder()
        .base_url(&server.url)
        .model("gpt-test")
        .strict(true)
        .build()
        .expect("build");
    assert_eq!(model.dialect(), Dialect::OpenAiStrict);
    let request = user("hi")
        .with_tools(tools())
        .with_tool_choice(ToolChoice::Required)
        .with_parallel_tool_calls(true);
    model.chat(request).await.expect("chat");
    let request = &server.requests()[0];
    assert_eq!(request.path, "/chat/completions");
    assert!(
        !request.headers.contains_key("authorization"),
        "no key, no header"
    );
    assert_eq!(request.body["tool_choice"], "required");
    assert_eq!(request.body["parallel_tool_calls"], true);
    for tool in request.body["tools"].as_array().expect("tools") {
        assert_eq!(tool["function"]["strict"], true);
        assert_eq!(
            tool["function"]["parameters"]["additionalProperties"],
            false
        );
    }
}

#[tokio::test]
async fn a_response_written_by_async_openai_is_understood() {
    // A realistic response read into async-openai's type and written back by it, so that
    // what we parse is what an implementation of OpenAI's spec by others produces.
    let typed: CreateChatCompletionResponse = serde_json::from_value(json!({
        "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
        "object": "chat.completion",
        "created": 1_741_570_283,
        "model": "gpt-4o-2024-08-06",
        "choices": [{
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "Checking both cities.",
                "refusal": null,
                "annotations": [],
                "tool_calls": [
                    {"id": "call_abc", "type": "function",
                     "function": {"name": "get_weather", "arguments": "{\"location\":\"Paris\"}"}},
                    {"id": "call_def", "type": "function",
                     "function": {"name": "get_weather", "arguments": "{\"location\":\"Bogotá\"}"}},
                ],
            },
            "logprobs": null,
            "finish_reason": "tool_calls",
        }],
        "usage": {
            "prompt_tokens": 82, "completion_tokens": 45, "total_tokens": 127,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
        },
        "service_tier": "default",
        "system_fingerprint": "fp_fc9f1d7035",
    }))
    .expect("a valid response for async-openai");
    let server = Server::start([Reply::json(
        serde_json::to_value(&typed).expect("serialize"),
    )])
    .await;
    let request = user("Weather in Paris and Bogotá?").with_tools(tools());
    let response = model(&server).chat(request).await.expect("chat");
    assert_eq!(response.message.content, "Checking both cities.");
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.usage, Usage::new(82, 45));
    assert_eq!(
        response.message.tool_calls,
        vec![
            ToolCall::new("call_abc", "get_weather", r#"{"location":"Paris"}"#),
            ToolCall::new("call_def", "get_weather", r#"{"location":"Bogotá"}"#),
        ]
    );
}

/// One stream chunk, checked against async-openai's chunk type and written by it.
fn chunk(choices: Value, usage: Value) -> Value {
    let typed: CreateChatCompletionStreamResponse = serde_json::from_value(json!({
        "id": "chatcmpl-2",
        "object": "chat.completion.chunk",
        "created": 1_741_570_283,
        "model": "gpt-test",
        "system_fingerprint": null,
        "service_tier": null,
        "choices": choices,
        "usage": usage,
    }))
    .expect("a valid chunk for async-openai");
    serde_json::to_value(&typed).expect("serialize")
}

fn delta(delta: Value) -> Value {
    chunk(
        json!([{"index": 0, "delta": delta, "finish_reason": null}]),
        Value::Null,
    )
}

fn call_fragment(index: u32, arguments: &str) -> Value {
    delta(json!({"tool_calls": [{"index": index, "function": {"arguments": arguments}}]}))
}

#[tokio::test]
async fn streamed_tool_calls_are_assembled_from_fragments() {
    let mut chunks = vec![
        delta(json!({"role": "assistant", "content": ""})),
        delta(json!({"content": "Checking "})),
        delta(json!({"content": "Bogotá…"})),
        delta(
            json!({"tool_calls": [{"index": 0, "id": "call_abc", "type": "function",
            "function": {"name": "get_weather", "arguments": ""}}]}),
        ),
    ];
    // Arguments arrive a few characters at a time, the two calls interleaved.
    let first = r#"{"location":"Paris"}"#;
    let second = r#"{"path":"/tmp/a b.txt"}"#;
    for piece in first.as_bytes().chunks(3).take(2) {
        chunks.push(call_fragment(0, std::str::from_utf8(piece).expect("ascii")));
    }
    chunks.push(delta(
        json!({"tool_calls": [{"index": 1, "id": "call_def", "type": "function",
        "function": {"name": "fs_read", "arguments": ""}}]}),
    ));
    for piece in first.as_bytes().chunks(3).skip(2) {
        chunks.push(call_fragment(0, std::str::from_utf8(piece).expect("ascii")));
    }
    for piece in second.as_bytes().chunks(4) {
        chunks.push(call_fragment(1, std::str::from_utf8(piece).expect("ascii")));
    }
    chunks.push(chunk(
        json!([{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]),
        Value::Null,
    ));
    chunks.push(chunk(
        json!([]),
        json!({"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70}),
    ));
    // 7-byte pieces: lines, JSON and the two-byte `á` are cut across reads.
    let server = Server::start([Reply::sse(&openai_sse(&chunks), 7)]).await;
    let request = user("Weather in Paris, and read a file")
        .with_tools(tools())
        .with_parallel_tool_calls(true);
    let model = model(&server);
    let (events, error) = collect(model.chat_stream(request)).await;
    assert_eq!(error, None);

    let text: String = events
        .iter()
        .filter_map(|e| match e {
            ChatEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "Checking Bogotá…");
    let started: Vec<(&str, &str)> = events
        .iter()
        .filter_map(|e| match e {
            ChatEvent::ToolCallStarted { id, name } => Some((&**id, name.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        started,
        [("call_abc", "get_weather"), ("call_def", "fs.read")]
    );
    let Some(ChatEvent::Done(response)) = events.last() else {
        panic!("the last event is not Done: {events:?}");
    };
    assert_eq!(response.message.content, "Checking Bogotá…");
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.usage, Usage::new(50, 20));
    assert_eq!(
        response.message.tool_calls,
        vec![
            ToolCall::new("call_abc", "get_weather", first),
            ToolCall::new("call_def", "fs.read", second),
        ]
    );

    let body = server.only_body();
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    let typed: CreateChatCompletionRequest =
        serde_json::from_value(body).expect("async-openai accepts our streaming request");
    assert_eq!(typed.stream, Some(true));
}

#[tokio::test]
async fn a_stream_cut_before_the_end_is_a_transport_error() {
    let chunks = [delta(json!({"content": "Half an ans"}))];
    let text: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    let server = Server::start([Reply::sse(&text, 64)]).await;
    let (events, error) = collect(model(&server).chat_stream(user("hi"))).await;
    assert_eq!(events, [ChatEvent::TextDelta("Half an ans".into())]);
    assert!(
        matches!(error, Some(agent_toolkit::model::ModelError::Transport(_))),
        "{error:?}"
    );
}

#[tokio::test]
async fn strict_mode_nulls_for_omitted_nested_fields_are_removed() {
    // Strict mode makes `limit` (optional, with a serde default) required-and-nullable on the
    // wire; a model that leaves it out sends `null`, which a `u32` with a default refuses.
    let search = agent_toolkit::ToolDefinition::new(
        "search",
        "Search",
        json!({
            "type": "object",
            "properties": {"filter": {
                "type": "object",
                "properties": {"tag": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["tag"]
            }},
            "required": ["filter"]
        }),
    );
    let call = json!({"id": "c1", "type": "function", "function": {
        "name": "search", "arguments": r#"{"filter": {"tag": "rust", "limit": null}}"#}});
    for strict in [true, false] {
        let server = Server::start([Reply::json(completion(
            json!({"role": "assistant", "content": null, "tool_calls": [call]}),
            "tool_calls",
        ))])
        .await;
        let model = OpenAiChat::builder()
            .base_url(&server.url)
            .model("gpt-test")
            .strict(strict)
            .build()
            .expect("build");
        let request = user("find rust").with_tools(vec![search.clone()]);
        let response = model.chat(request).await.expect("chat");
        let arguments = &response.message.tool_calls[0].arguments;
        if strict {
            assert_eq!(arguments, r#"{"filter":{"tag":"rust"}}"#);
        } else {
            assert!(
                arguments.contains("null"),
                "non-strict arguments are left as sent"
            );
        }
    }
}
