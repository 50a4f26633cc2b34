//! What local model servers send that hosted APIs do not, on both wires, with the bodies
//! llama.cpp's server sends (captured from it): tool calls written as text in the reply, the
//! server's refusal of the model's own output, and its error events mid-stream.

use std::time::Duration;

use agent_toolkit::{
    ChatModel, RetryPolicy, ToolChoice,
    model::{
        AnthropicMessages, AssistantMessage, ChatEvent, ChatRequest, FinishReason, Message,
        ModelError, OpenAiChat,
    },
};
use serde_json::{Value, json};

use crate::support::{Reply, Server, anthropic_sse, collect, openai_sse, tools};

fn openai(url: &str, text_calls: bool) -> OpenAiChat {
    OpenAiChat::builder()
        .base_url(url)
        .model("local")
        .retry(RetryPolicy::exponential(2, Duration::from_millis(10), 2.0))
        .text_tool_calls(text_calls)
        .build()
        .expect("build")
}

fn anthropic(url: &str, text_calls: bool) -> AnthropicMessages {
    AnthropicMessages::builder()
        .base_url(url)
        .model("local")
        .retry(RetryPolicy::exponential(2, Duration::from_millis(10), 2.0))
        .text_tool_calls(text_calls)
        .build()
        .expect("build")
}

fn ask() -> ChatRequest {
    ChatRequest::new(vec![Message::user("Weather in Paris?")]).with_tools(tools())
}

/// A Chat Completions reply with this text and no calls, as llama.cpp sends it.
fn openai_text(text: &str) -> Reply {
    Reply::json(json!({
        "choices": [{"finish_reason": "stop", "index": 0,
                     "message": {"role": "assistant", "content": text}}],
        "model": "local", "object": "chat.completion",
        "usage": {"completion_tokens": 17, "prompt_tokens": 171, "total_tokens": 188},
    }))
}

/// A Messages reply with this text and no calls.
fn anthropic_text(text: &str) -> Reply {
    Reply::json(json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "local",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn", "usage": {"input_tokens": 171, "output_tokens": 17},
    }))
}

/// `OpenAiChat` with constrained tool calls, on `server`.
fn constrained(server: &Server) -> OpenAiChat {
    OpenAiChat::builder()
        .base_url(format!("{}/v1", server.url))
        .model("local")
        .constrained_tool_calls(true)
        .build()
        .unwrap()
}

/// llama.cpp's answer when it cannot parse the model's output as tool calls.
fn rejected() -> Reply {
    Reply::status(
        500,
        r#"{"error":{"code":500,"message":"The model produced output that does not match the expected peg-native format","type":"server_error"}}"#,
    )
}

const TEXT_CALL: &str = r#"{"name": "get_weather", "arguments": {"location": "Paris"}}"#;

#[tokio::test]
async fn a_call_written_as_text_is_a_call_on_both_wires() {
    let server = Server::start([openai_text(TEXT_CALL), anthropic_text(TEXT_CALL)]).await;
    let from_openai = openai(&format!("{}/v1", server.url), true)
        .chat(ask())
        .await
        .unwrap();
    let from_anthropic = anthropic(&server.url, true).chat(ask()).await.unwrap();
    for response in [from_openai, from_anthropic] {
        let message = &response.message;
        assert!(message.calls_in_text);
        assert_eq!(message.content, TEXT_CALL);
        assert_eq!(message.tool_calls.len(), 1);
        assert_eq!(message.tool_calls[0].name, "get_weather");
        assert_eq!(message.tool_calls[0].arguments, r#"{"location":"Paris"}"#);
        assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    }

    // Off, the text is the answer.
    let server = Server::start([openai_text(TEXT_CALL)]).await;
    let response = openai(&format!("{}/v1", server.url), false)
        .chat(ask())
        .await
        .unwrap();
    assert!(response.message.tool_calls.is_empty());
    assert_eq!(response.message.content, TEXT_CALL);
}

#[tokio::test]
async fn a_streamed_text_call_is_announced_before_done() {
    let chunks = [
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": null}}]}),
        json!({"choices": [{"index": 0, "delta": {"content": "```json\n{\"name\": \"get_weather\", "}}]}),
        json!({"choices": [{"index": 0, "delta": {"content": "\"arguments\": {\"location\": \"Oslo\"}}\n```"}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    ];
    let server = Server::start([Reply::sse(&openai_sse(&chunks), 7)]).await;
    let model = openai(&format!("{}/v1", server.url), true);
    let (events, error) = collect(model.chat_stream(ask())).await;
    assert!(error.is_none(), "{error:?}");
    let started = events.iter().position(
        |e| matches!(e, ChatEvent::ToolCallStarted { name, .. } if name == "get_weather"),
    );
    let done = events.iter().position(|e| matches!(e, ChatEvent::Done(_)));
    assert!(started.is_some() && started < done, "{events:?}");
    let Some(ChatEvent::Done(response)) = events.last() else {
        panic!("{events:?}")
    };
    assert!(response.message.calls_in_text);
    assert_eq!(
        response.message.tool_calls[0].arguments,
        r#"{"location":"Oslo"}"#
    );
}

/// The call goes back as the text it was, its result as a user message in words: exact bodies.
#[tokio::test]
async fn a_text_call_goes_back_as_text_on_both_wires() {
    let mut call = AssistantMessage::new(
        TEXT_CALL,
        vec![agent_toolkit::ToolCall::new(
            "c1",
            "get_weather",
            r#"{"location":"Paris"}"#,
        )],
    );
    call.calls_in_text = true;
    let request = ChatRequest::new(vec![
        Message::user("Weather in Paris?"),
        call.into(),
        Message::tool("c1", "get_weather", "18°C"),
    ])
    .with_tools(tools());
    let server = Server::start([openai_text("18°C."), anthropic_text("18°C.")]).await;
    openai(&format!("{}/v1", server.url), true)
        .chat(request.clone())
        .await
        .unwrap();
    anthropic(&server.url, true).chat(request).await.unwrap();
    let requests = server.requests();
    let result = "The function returned: 18°C\nUse this result to answer my previous question in plain text.";
    assert_eq!(
        requests[0].body["messages"],
        json!([
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": TEXT_CALL},
            {"role": "user", "content": result},
        ])
    );
    assert_eq!(
        requests[1].body["messages"],
        json!([
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": [{"type": "text", "text": TEXT_CALL}]},
            {"role": "user", "content": result},
        ])
    );
}

/// A refusal of the model's own output is not sent again unchanged: one more request, without
/// native tools and with the tools in the prompt, and the calls read from its text.
#[tokio::test]
async fn the_servers_refusal_is_asked_again_for_text_on_both_wires() {
    let two = "{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Berlin\"}}";
    let server = Server::start([
        rejected(),
        openai_text(two),
        rejected(),
        anthropic_text(two),
    ])
    .await;
    let from_openai = openai(&format!("{}/v1", server.url), true)
        .chat(ask())
        .await
        .unwrap();
    let from_anthropic = anthropic(&server.url, true).chat(ask()).await.unwrap();
    for response in [from_openai, from_anthropic] {
        let cities: Vec<&str> = response
            .message
            .tool_calls
            .iter()
            .map(|c| c.arguments.as_str())
            .collect();
        assert_eq!(
            cities,
            [r#"{"location":"Paris"}"#, r#"{"location":"Berlin"}"#]
        );
        assert!(response.message.calls_in_text);
    }
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        4,
        "one more request each, no retry of the refused one"
    );
    for again in [&requests[1].body, &requests[3].body] {
        assert!(again.get("tools").is_none(), "{again}");
        let system = match again.get("system") {
            Some(Value::String(s)) => s.clone(),
            _ => again["messages"][0]["content"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        };
        assert!(
            system.contains("get_weather") && system.contains("How to call tools"),
            "{again}"
        );
    }

    // With text calls off, the refusal is the error, at once.
    let server = Server::start([rejected(), rejected(), rejected()]).await;
    let error = openai(&format!("{}/v1", server.url), false)
        .chat(ask())
        .await
        .unwrap_err();
    match &error {
        ModelError::OutputRejected {
            status: 500,
            message,
        } => {
            assert_eq!(
                message,
                "The model produced output that does not match the expected peg-native format"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(!error.is_retryable());
    assert_eq!(
        server.requests().len(),
        1,
        "not retried: it would fail the same way"
    );
}

/// llama.cpp's `/v1/messages` stream reports the refusal as an `error` event after a success
/// status; the provider asks again for text, without streaming.
#[tokio::test]
async fn a_refusal_mid_stream_is_asked_again_for_text() {
    let events = anthropic_sse(&[
        json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": [], "model": "local", "usage": {"input_tokens": 9, "output_tokens": 0}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t1", "name": "get_weather"}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"location\""}}),
    ]) + "event: error\ndata: {\"code\":500,\"message\":\"The model produced output that does not match the expected peg-native format\",\"type\":\"server_error\"}\n\n";
    let server = Server::start([Reply::sse(&events, 11), anthropic_text(TEXT_CALL)]).await;
    let model = anthropic(&server.url, true);
    let (events, error) = collect(model.chat_stream(ask())).await;
    assert!(error.is_none(), "{error:?}");
    let Some(ChatEvent::Done(response)) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(
        response.message.tool_calls[0].arguments,
        r#"{"location":"Paris"}"#
    );
    assert_eq!(server.requests().len(), 2);
    assert_eq!(
        server.requests()[1].body.get("stream"),
        None,
        "asked again without streaming"
    );
}

/// L3: an `error` event in a Messages stream is the server's error (status and message), not
/// a transport failure — in Anthropic's shape and in llama.cpp's.
#[tokio::test]
async fn an_error_event_mid_stream_is_the_servers_error() {
    let start = anthropic_sse(&[
        json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": [], "model": "local", "usage": {"input_tokens": 9, "output_tokens": 0}}}),
    ]);
    let llama = start.clone()
        + "event: error\ndata: {\"code\":503,\"message\":\"Loading model\",\"type\":\"unavailable_error\"}\n\n";
    let claude = start
        + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    let server = Server::start([Reply::sse(&llama, 13), Reply::sse(&claude, 13)]).await;
    let model = anthropic(&server.url, true);
    let (_, error) = collect(model.chat_stream(ChatRequest::new(vec![Message::user("hi")]))).await;
    match error {
        Some(ModelError::Http { status: 503, body }) => {
            assert!(body.contains("Loading model"), "{body}")
        }
        other => panic!("{other:?}"),
    }
    let (_, error) = collect(model.chat_stream(ChatRequest::new(vec![Message::user("hi")]))).await;
    match error {
        Some(ModelError::Http { status: 529, body }) => {
            assert!(body.contains("Overloaded"), "{body}")
        }
        other => panic!("{other:?}"),
    }
}

/// Tool choice `none`: the model was told not to call, so JSON in its text is its answer.
#[tokio::test]
async fn with_tool_choice_none_text_is_the_answer() {
    let server = Server::start([openai_text(TEXT_CALL)]).await;
    let request = ask().with_tool_choice(ToolChoice::None);
    let response = openai(&format!("{}/v1", server.url), true)
        .chat(request)
        .await
        .unwrap();
    assert!(response.message.tool_calls.is_empty());
}

/// A Chat Completions reply with one structured call, as llama.cpp sends it.
fn openai_call() -> Reply {
    Reply::json(json!({
        "choices": [{"finish_reason": "tool_calls", "index": 0, "message": {
            "role": "assistant", "content": "",
            "tool_calls": [{"id": "abc", "type": "function", "function": {
                "name": "get_weather", "arguments": "{\"location\":\"Paris\"}"}}]}}],
        "model": "local", "object": "chat.completion",
        "usage": {"completion_tokens": 17, "prompt_tokens": 171, "total_tokens": 188},
    }))
}

/// A Messages reply with one `tool_use` block.
fn anthropic_call() -> Reply {
    Reply::json(json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "local",
        "content": [{"type": "tool_use", "id": "t1", "name": "get_weather",
                     "input": {"location": "Paris"}}],
        "stop_reason": "tool_use", "usage": {"input_tokens": 171, "output_tokens": 17},
    }))
}

/// Whether a captured request body asked for parallel calls (on either wire; a request
/// without native tools asks for none).
fn asked_parallel(body: &Value) -> bool {
    if body.get("tools").is_none() {
        return false;
    }
    match body.get("parallel_tool_calls") {
        Some(parallel) => parallel == &json!(true),
        None => body["tool_choice"].get("disable_parallel_tool_use") != Some(&json!(true)),
    }
}

/// A refusal of a request that allowed parallel calls is first asked again with them off —
/// before the tools go into the prompt — and the provider keeps them off afterwards; a request
/// that is refused that way too is then asked for text, and once that is taken the provider
/// puts the tools in the prompt from the start.
#[tokio::test]
async fn a_refusal_is_asked_again_with_parallel_calls_off_first_and_remembered() {
    let parallel = || ask().with_parallel_tool_calls(true);
    for wire in ["openai", "anthropic"] {
        let (call, text) = match wire {
            "openai" => (openai_call(), openai_text(TEXT_CALL)),
            _ => (anthropic_call(), anthropic_text(TEXT_CALL)),
        };
        let again = match wire {
            "openai" => openai_call(),
            _ => anthropic_call(),
        };
        let (text_again, text_streamed) = match wire {
            "openai" => (openai_text(TEXT_CALL), openai_text(TEXT_CALL)),
            _ => (anthropic_text(TEXT_CALL), anthropic_text(TEXT_CALL)),
        };
        let server = Server::start([
            rejected(),
            call,
            again,
            rejected(),
            text,
            text_again,
            text_streamed,
        ])
        .await;
        let model: Box<dyn ChatModel> = match wire {
            "openai" => Box::new(openai(&format!("{}/v1", server.url), true)),
            _ => Box::new(anthropic(&server.url, true)),
        };
        // Refused with parallel calls on; taken with them off: a structured call.
        let first = model.chat(parallel()).await.unwrap();
        assert_eq!(first.message.tool_calls.len(), 1, "{wire}");
        assert!(!first.message.calls_in_text, "{wire}");
        // The next request goes with parallel calls off from the start.
        let second = model.chat(parallel()).await.unwrap();
        assert_eq!(second.message.tool_calls.len(), 1, "{wire}");
        // Refused with parallel calls off already: asked for text at once.
        let third = model.chat(parallel()).await.unwrap();
        assert!(third.message.calls_in_text, "{wire}");
        // Taken with the tools in the prompt: later requests go that way from the start, one
        // request each (streamed ones asked whole), instead of two refusals first.
        let fourth = model.chat(parallel()).await.unwrap();
        assert!(fourth.message.calls_in_text, "{wire}");
        assert_eq!(fourth.message.tool_calls[0].name, "get_weather", "{wire}");
        let (events, error) = collect(model.chat_stream(parallel())).await;
        assert!(error.is_none(), "{wire}: {error:?}");
        assert!(
            events
                .iter()
                .any(|e| matches!(e, ChatEvent::Done(r) if r.message.calls_in_text)),
            "{wire}: {events:?}"
        );

        let requests = server.requests();
        let asked: Vec<bool> = requests.iter().map(|r| asked_parallel(&r.body)).collect();
        let with_tools: Vec<bool> = requests
            .iter()
            .map(|r| r.body.get("tools").is_some())
            .collect();
        assert_eq!(asked.len(), 7, "{wire}: one request for each later ask");
        assert_eq!(asked[..5], [true, false, false, false, false], "{wire}");
        assert_eq!(
            with_tools,
            [true, true, true, true, false, false, false],
            "{wire}"
        );
    }
}

/// Streamed, the refusal is asked again the same way (without streaming).
#[tokio::test]
async fn a_streamed_refusal_is_asked_again_with_parallel_calls_off() {
    let server = Server::start([rejected(), openai_call()]).await;
    let model = openai(&format!("{}/v1", server.url), false);
    let (events, error) = collect(model.chat_stream(ask().with_parallel_tool_calls(true))).await;
    assert!(error.is_none(), "{error:?}");
    let done = events
        .iter()
        .find_map(|e| match e {
            ChatEvent::Done(response) => Some(response.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{events:?}"));
    assert_eq!(done.message.tool_calls[0].name, "get_weather");
    let asked: Vec<bool> = server
        .requests()
        .iter()
        .map(|r| asked_parallel(&r.body))
        .collect();
    assert_eq!(asked, [true, false]);
}

/// Constrained tool calls: the request carries the tools in the prompt and a schema of the
/// offered calls or an answer, no native tools; a reply of calls is a reply with those calls,
/// an answer is the reply's text, and a request without tools goes as ever.
#[tokio::test]
async fn constrained_calls_send_a_reply_schema_and_read_calls_or_an_answer() {
    let server = Server::start([
        openai_text(
            r#"{"tool_calls": [{"name": "get_weather", "arguments": {"location": "Paris"}}]}"#,
        ),
        openai_text(r#"{"answer": "It is sunny in Paris."}"#),
        openai_text("Hello."),
        openai_text(
            r#"{"tool_calls": [{"name": "get_weather", "arguments": {"location": "Oslo"}}]}"#,
        ),
    ])
    .await;
    let model = constrained(&server);
    let calls = model.chat(ask()).await.unwrap();
    assert_eq!(calls.message.tool_calls[0].name, "get_weather");
    assert_eq!(
        calls.message.tool_calls[0].arguments,
        r#"{"location":"Paris"}"#
    );
    let answer = model.chat(ask()).await.unwrap();
    assert!(answer.message.tool_calls.is_empty());
    assert_eq!(answer.message.content, "It is sunny in Paris.");
    let plain = model
        .chat(ChatRequest::new(vec![Message::user("Hi")]))
        .await
        .unwrap();
    assert_eq!(plain.message.content, "Hello.");
    // Streamed: asked whole, its calls sent as events.
    let (events, error) = collect(model.chat_stream(ask())).await;
    assert!(error.is_none(), "{error:?}");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, ChatEvent::ToolCallStarted { name, .. } if name == "get_weather")),
        "{events:?}"
    );

    let requests = server.requests();
    let first = &requests[0].body;
    assert!(first.get("tools").is_none(), "{first}");
    let format = &first["response_format"];
    assert_eq!(format["type"], "json_schema", "{first}");
    let schema = format["json_schema"]["schema"].to_string();
    assert!(
        schema.contains("get_weather") && schema.contains("answer"),
        "{schema}"
    );
    let system = first["messages"][0]["content"].as_str().unwrap_or_default();
    assert!(system.contains("get_weather"), "{first}");
    assert!(requests[2].body.get("response_format").is_none());
    assert_ne!(requests[3].body["stream"], json!(true), "asked whole");
    assert!(requests[3].body.get("response_format").is_some());
}

/// Constrained, `tool_choice: none` (what an agent sends a model that loops) holds the reply to
/// an answer: the schema has no calls and the prompt describes no tools, so a model that writes
/// calls whatever it is told gives its answer.
#[tokio::test]
async fn constrained_with_tool_choice_none_holds_the_reply_to_an_answer() {
    let server = Server::start([openai_text(r#"{"answer": "It is sunny in Paris."}"#)]).await;
    let model = constrained(&server);
    let answer = model
        .chat(ask().with_tool_choice(ToolChoice::None))
        .await
        .unwrap();
    assert!(answer.message.tool_calls.is_empty());
    assert_eq!(answer.message.content, "It is sunny in Paris.");

    let body = &server.requests()[0].body;
    assert!(body.get("tools").is_none(), "{body}");
    let schema = &body["response_format"]["json_schema"]["schema"];
    assert_eq!(
        schema["anyOf"],
        json!([{"type": "object", "properties": {"answer": {"type": "string"}},
                "required": ["answer"], "additionalProperties": false}]),
        "{body}"
    );
    let system = body["messages"][0]["content"].as_str().unwrap_or_default();
    assert!(!system.contains("get_weather"), "{body}");
}

/// Constrained, a reply cut at the token limit in the middle of its list of calls (a small
/// model writing the same tool for one city after another) keeps the calls it finished: they
/// come back as calls with ids, and the cut one is dropped.
#[tokio::test]
async fn constrained_reply_cut_at_the_limit_keeps_its_finished_calls() {
    let cut = "{\"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}, \
               {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}, {\"name\": \"get_wea";
    let server = Server::start([Reply::json(json!({
        "choices": [{"finish_reason": "length", "index": 0,
                     "message": {"role": "assistant", "content": cut}}],
        "model": "local", "object": "chat.completion",
        "usage": {"completion_tokens": 200, "prompt_tokens": 171, "total_tokens": 371},
    }))])
    .await;
    let model = constrained(&server);
    let reply = model
        .chat(ask().with_parallel_tool_calls(true))
        .await
        .unwrap();
    let calls: Vec<(String, serde_json::Value)> = reply
        .message
        .tool_calls
        .iter()
        .map(|c| (c.name.clone(), serde_json::from_str(&c.arguments).unwrap()))
        .collect();
    assert_eq!(
        calls,
        [
            ("get_weather".to_string(), json!({"city": "Paris"})),
            ("get_weather".to_string(), json!({"city": "Rome"})),
        ]
    );
    let ids: std::collections::HashSet<_> =
        reply.message.tool_calls.iter().map(|c| &c.id).collect();
    assert_eq!(ids.len(), 2, "each call has its own id");
}
