//! Programs the provider runs on its side that call our tools (`ChatRequest::hosted_code`):
//! OpenAI Responses' programmatic tool calling and Anthropic's code execution tool, each in a
//! full round trip against a local server playing the provider. The request declares the code
//! tool and lets every tool be called by programs; the program's call comes back as an
//! ordinary `ToolCall`, answered as usual; the provider's items go back unchanged (the
//! program with its fingerprint, a call with its caller); on Anthropic the container of the
//! first response is named by the next requests, even after the conversation was stored.
//!
//! The Responses shapes are checked against async-openai's types (`Response`,
//! `ResponseStreamEvent`, `CreateResponse`), which know `program`, `program_output`, `caller`
//! and `allowed_callers`. For Anthropic there are no wire types by others in our
//! dependencies: its shapes follow the reference notes
//! (`shared/reference/tool-catalogs.md` §4).

use agent_toolkit::{
    ChatModel, ToolCall,
    model::{
        AnthropicMessages, ChatEvent, ChatRequest, FinishReason, Message, ModelError,
        OpenAiResponses, ToolFeatures,
    },
};
use async_openai::types::responses::{
    CallableToolAllowedCaller, CreateResponse, InputItem, InputParam, Item,
    ProgramOutputItemStatus, Response, ResponseStreamEvent, Tool, ToolCallCaller,
};
use serde_json::{Value, json};

use crate::support::{Reply, Server, anthropic_sse, collect, tools};

// ---------------------------------------------------------------------------------------------
// OpenAI Responses

fn responses(server: &Server) -> OpenAiResponses {
    OpenAiResponses::builder()
        .base_url(format!("{}/v1", server.url))
        .api_key("sk-test")
        .model("gpt-test")
        .build()
        .expect("build")
}

/// A response body, read by async-openai's `Response` and written back by it.
fn response(output: Value) -> Value {
    let typed: Response = serde_json::from_value(json!({
        "id": "resp_1", "object": "response", "created_at": 1_741_570_283, "model": "gpt-test",
        "status": "completed", "output": output, "parallel_tool_calls": true, "store": false,
        "usage": {"input_tokens": 31, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": 7, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": 38},
    }))
    .expect("a valid response for async-openai");
    serde_json::to_value(&typed).expect("serialize")
}

/// A stream event, read by async-openai's `ResponseStreamEvent` and written back by it.
fn event(value: Value) -> Value {
    let typed: ResponseStreamEvent =
        serde_json::from_value(value).expect("a valid stream event for async-openai");
    serde_json::to_value(&typed).expect("serialize")
}

fn sse(events: &[Value]) -> String {
    events
        .iter()
        .map(|event| {
            format!(
                "event: {}\ndata: {event}\n\n",
                event["type"].as_str().unwrap()
            )
        })
        .collect()
}

/// Our request body, as async-openai's `CreateResponse` reads it.
fn read_request(body: &Value) -> CreateResponse {
    serde_json::from_value(body.clone()).expect("async-openai accepts our request body")
}

fn typed_items(request: &CreateResponse) -> Vec<InputItem> {
    match &request.input {
        InputParam::Items(items) => items.clone(),
        other => panic!("the input is not a list of items: {other:?}"),
    }
}

fn program() -> Value {
    json!({"type": "program", "id": "prog_item_1", "call_id": "prog_1",
           "code": "const w = await tools.get_weather({location: 'Paris'});\nreturn w;",
           "fingerprint": "fp_9f8e7d-opaque"})
}

fn call_from_program() -> Value {
    json!({"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
           "arguments": "{\"location\":\"Paris\"}", "status": "completed",
           "caller": {"type": "program", "caller_id": "prog_1"}})
}

fn program_output() -> Value {
    json!({"type": "program_output", "id": "po_1", "call_id": "prog_1",
           "result": "{\"temp_c\":18}", "status": "completed"})
}

fn final_message() -> Value {
    json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
           "content": [{"type": "output_text", "text": "18°C in Paris.", "annotations": []}]})
}

/// The item as it goes back: unchanged but for a call's server item id.
fn without_id(mut item: Value) -> Value {
    item.as_object_mut().expect("object").remove("id");
    item
}

#[tokio::test]
async fn responses_program_round_trip() {
    let first = response(json!([program(), call_from_program()]));
    let second = response(json!([program_output(), final_message()]));
    let third = response(json!([final_message()]));
    let server = Server::start([
        Reply::json(first.clone()),
        Reply::json(second),
        Reply::json(third),
    ])
    .await;
    let model = responses(&server);
    assert!(model.tool_features().hosted_code);

    // 1. The request declares the program tool and lets programs call every function tool.
    let mut messages = vec![Message::user("Weather in Paris?")];
    let ask = |messages: &[Message]| {
        ChatRequest::new(messages.to_vec())
            .with_tools(tools())
            .with_hosted_code(true)
    };
    let turn = model.chat(ask(&messages)).await.expect("first turn");
    let body = &server.requests()[0].body;
    let callers = json!(["direct", "programmatic"]);
    assert_eq!(body["tools"][0]["allowed_callers"], callers);
    assert_eq!(body["tools"][1]["allowed_callers"], callers);
    assert_eq!(
        body["tools"][2],
        json!({"type": "programmatic_tool_calling"})
    );
    let typed = read_request(body);
    let typed_tools = typed.tools.as_deref().unwrap_or_default();
    assert_eq!(typed_tools.len(), 3);
    for tool in &typed_tools[..2] {
        let Tool::Function(function) = tool else {
            panic!("not a function tool: {tool:?}");
        };
        assert_eq!(
            function.allowed_callers,
            Some(vec![
                CallableToolAllowedCaller::Direct,
                CallableToolAllowedCaller::Programmatic
            ])
        );
    }
    assert_eq!(typed_tools[2], Tool::ProgrammaticToolCalling);

    // 2. The program's call is an ordinary call; the program is kept for the replay.
    assert_eq!(turn.finish_reason, FinishReason::ToolCalls);
    let message = turn.message;
    assert_eq!(
        message.tool_calls,
        [ToolCall::new(
            "call_1",
            "get_weather",
            r#"{"location":"Paris"}"#
        )]
    );
    assert_eq!(message.program_of("call_1"), Some("prog_1"));
    let native = message.native.as_ref().expect("native items");
    assert_eq!(native.items, first["output"].as_array().unwrap().clone());
    messages.push(message.into());
    messages.push(Message::tool("call_1", "get_weather", "{\"temp_c\":18}"));

    // 3. The program goes back whole with its fingerprint, the call with its caller, and the
    //    call is answered with a function_call_output.
    let turn = model.chat(ask(&messages)).await.expect("second turn");
    let body = &server.requests()[1].body;
    assert_eq!(
        body["input"],
        json!([
            {"type": "message", "role": "user", "content": "Weather in Paris?"},
            first["output"][0],
            without_id(first["output"][1].clone()),
            {"type": "function_call_output", "call_id": "call_1", "output": "{\"temp_c\":18}"},
        ])
    );
    let items = typed_items(&read_request(body));
    let InputItem::Program(replayed) = &items[1] else {
        panic!("not a program: {:?}", items[1]);
    };
    assert_eq!(replayed.id, "prog_item_1");
    assert_eq!(replayed.call_id, "prog_1");
    assert_eq!(replayed.fingerprint, "fp_9f8e7d-opaque");
    let InputItem::Item(Item::FunctionCall(call)) = &items[2] else {
        panic!("not a function call: {:?}", items[2]);
    };
    let Some(ToolCallCaller::Program(caller)) = &call.caller else {
        panic!("the caller is lost: {call:?}");
    };
    assert_eq!(caller.caller_id, "prog_1");
    assert!(matches!(
        &items[3],
        InputItem::Item(Item::FunctionCallOutput(o)) if o.call_id.as_deref() == Some("call_1")
    ));

    // 4. The program's output and the answer; the output is kept, and goes back too.
    assert_eq!(turn.finish_reason, FinishReason::Stop);
    assert_eq!(turn.message.content, "18°C in Paris.");
    assert!(turn.message.tool_calls.is_empty());
    messages.push(turn.message.into());
    messages.push(Message::user("Thanks."));
    model.chat(ask(&messages)).await.expect("third turn");
    let body = &server.requests()[2].body;
    let input = body["input"].as_array().unwrap();
    assert_eq!(input[4], response(json!([program_output()]))["output"][0]);
    // Item by item: async-openai reads a replayed assistant message only with its server id,
    // which a stateless request leaves out (as it did before programs).
    let item: InputItem = serde_json::from_value(input[4].clone()).expect("an input item");
    let InputItem::ProgramOutput(output) = &item else {
        panic!("not a program output: {item:?}");
    };
    assert_eq!(output.call_id, "prog_1");
    assert_eq!(output.status, ProgramOutputItemStatus::Completed);
}

#[tokio::test]
async fn responses_streamed_program_call_is_announced_and_kept() {
    let call_added = json!({"type": "function_call", "id": "fc_1", "call_id": "call_1",
        "name": "get_weather", "arguments": "", "status": "in_progress",
        "caller": {"type": "program", "caller_id": "prog_1"}});
    let events = [
        event(
            json!({"type": "response.output_item.added", "sequence_number": 1,
            "output_index": 0, "item": program()}),
        ),
        event(
            json!({"type": "response.output_item.done", "sequence_number": 2,
            "output_index": 0, "item": program()}),
        ),
        event(
            json!({"type": "response.output_item.added", "sequence_number": 3,
            "output_index": 1, "item": call_added}),
        ),
        event(
            json!({"type": "response.function_call_arguments.delta", "sequence_number": 4,
            "item_id": "fc_1", "output_index": 1, "delta": "{\"location\":"}),
        ),
        event(
            json!({"type": "response.function_call_arguments.delta", "sequence_number": 5,
            "item_id": "fc_1", "output_index": 1, "delta": "\"Paris\"}"}),
        ),
        event(
            json!({"type": "response.output_item.done", "sequence_number": 6,
            "output_index": 1, "item": call_from_program()}),
        ),
        // Nothing in the last event's `output`: the items are those of the events.
        event(json!({"type": "response.completed", "sequence_number": 7,
            "response": response(json!([]))})),
    ];
    let server = Server::start([Reply::sse(&sse(&events), 23)]).await;
    let request = ChatRequest::new(vec![Message::user("Weather in Paris?")])
        .with_tools(tools())
        .with_hosted_code(true);
    let model = responses(&server);
    let (events, error) = collect(model.chat_stream(request)).await;
    assert_eq!(error, None);
    assert_eq!(
        events[0],
        ChatEvent::ToolCallStarted {
            id: "call_1".into(),
            name: "get_weather".into()
        }
    );
    let Some(ChatEvent::Done(response)) = events.last() else {
        panic!("the last event is not Done: {events:?}");
    };
    let message = &response.message;
    assert_eq!(
        message.tool_calls,
        [ToolCall::new(
            "call_1",
            "get_weather",
            r#"{"location":"Paris"}"#
        )]
    );
    assert_eq!(message.program_of("call_1"), Some("prog_1"));
    let native = message.native.as_ref().expect("native items");
    assert_eq!(native.items[0], program());
    assert_eq!(native.items[1]["caller"], call_from_program()["caller"]);
}

#[tokio::test]
async fn responses_malformed_programs_are_typed_errors() {
    let mut no_call_id = program();
    no_call_id.as_object_mut().unwrap().remove("call_id");
    let mut unknown_caller = call_from_program();
    unknown_caller["caller"] = json!({"type": "robot", "caller_id": "prog_1"});
    for output in [json!([no_call_id]), json!([program(), unknown_caller])] {
        // Not through async-openai's `Response`: it would refuse these too.
        let body = json!({"id": "resp_1", "object": "response", "status": "completed",
                          "output": output});
        let server = Server::start([Reply::json(body.clone())]).await;
        let request = ChatRequest::new(vec![Message::user("Hi")])
            .with_tools(tools())
            .with_hosted_code(true);
        let error = responses(&server).chat(request).await.unwrap_err();
        assert!(
            matches!(error, ModelError::Malformed(_)),
            "{output}: {error:?}"
        );
        assert!(!error.is_retryable());
    }
}

// ---------------------------------------------------------------------------------------------
// Anthropic Messages

fn anthropic(server: &Server) -> AnthropicMessages {
    AnthropicMessages::builder()
        .base_url(&server.url)
        .api_key("sk-ant-test")
        .model("claude-test")
        .tool_features(ToolFeatures::all())
        .build()
        .expect("build")
}

fn message(content: Value, container: Value, stop: &str) -> Reply {
    Reply::json(json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": content, "container": container, "stop_reason": stop, "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 5}
    }))
}

fn code_execution() -> Value {
    json!({"type": "server_tool_use", "id": "srvtoolu_01", "name": "code_execution",
           "input": {"code": "w = await get_weather(location='Paris')\nprint(w)"}})
}

fn call_from_code() -> Value {
    json!({"type": "tool_use", "id": "toolu_01", "name": "get_weather",
           "input": {"location": "Paris"},
           "caller": {"type": "code_execution_20250825", "tool_id": "srvtoolu_01"}})
}

fn code_result() -> Value {
    json!({"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_01",
           "content": {"type": "code_execution_result", "stdout": "{\"temp_c\": 18}\n",
                       "stderr": "", "return_code": 0, "content": []}})
}

fn container() -> Value {
    json!({"id": "container_011CPR5CNjB747bTd36fQLFk", "expires_at": "2026-11-25T12:30:00Z"})
}

#[tokio::test]
async fn anthropic_code_execution_round_trip() {
    let first =
        json!([{"type": "text", "text": "Let me check."}, code_execution(), call_from_code()]);
    let second = json!([code_result(), {"type": "text", "text": "18°C in Paris."}]);
    let server = Server::start([
        message(first.clone(), container(), "tool_use"),
        message(second.clone(), container(), "end_turn"),
        message(
            json!([{"type": "text", "text": "You're welcome."}]),
            Value::Null,
            "end_turn",
        ),
    ])
    .await;
    let model = anthropic(&server);
    assert!(model.tool_features().hosted_code);
    let ask = |messages: &[Message]| {
        ChatRequest::new(messages.to_vec())
            .with_tools(tools())
            .with_hosted_code(true)
    };

    // 1. The code tool is declared and every tool may be called from code; no container yet.
    let mut messages = vec![Message::user("Weather in Paris?")];
    let turn = model.chat(ask(&messages)).await.expect("first turn");
    let body = &server.requests()[0].body;
    let callers = json!(["direct", "code_execution_20250825"]);
    assert_eq!(
        body["tools"],
        json!([
            {"name": "get_weather", "description": "Current weather in a city.",
             "input_schema": {"type": "object", "properties": {"location": {"type": "string"}},
                              "required": ["location"]},
             "allowed_callers": callers},
            {"name": "fs_read", "description": "Read a file.",
             "input_schema": {"type": "object", "properties": {"path": {"type": "string"}},
                              "required": ["path"]},
             "allowed_callers": callers},
            {"type": "code_execution_20250825", "name": "code_execution"},
        ])
    );
    assert!(body.get("container").is_none(), "{body}");

    // 2. The call from code is an ordinary call; its block keeps its caller.
    assert_eq!(turn.finish_reason, FinishReason::ToolCalls);
    let message = turn.message;
    assert_eq!(message.content, "Let me check.");
    assert_eq!(
        message.tool_calls,
        [ToolCall::new(
            "toolu_01",
            "get_weather",
            r#"{"location":"Paris"}"#
        )]
    );
    assert_eq!(message.program_of("toolu_01"), Some("srvtoolu_01"));
    let native = message.native.as_ref().expect("native items");
    assert_eq!(native.items, first.as_array().unwrap().clone());
    assert_eq!(native.container, Some(container()));
    messages.push(message.into());
    messages.push(Message::tool("toolu_01", "get_weather", "{\"temp_c\": 18}"));

    // 3. The blocks go back unchanged, the call is answered with a tool_result, and the
    //    container of the first response is named.
    let turn = model.chat(ask(&messages)).await.expect("second turn");
    let body = &server.requests()[1].body;
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": first},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01",
                                          "content": "{\"temp_c\": 18}"}]},
        ])
    );
    assert_eq!(body["container"], "container_011CPR5CNjB747bTd36fQLFk");

    // 4. The code's result and the answer, kept with the container.
    assert_eq!(turn.finish_reason, FinishReason::Stop);
    assert_eq!(turn.message.content, "18°C in Paris.");
    let native = turn.message.native.as_ref().expect("native items");
    assert_eq!(native.items, second.as_array().unwrap().clone());
    messages.push(turn.message.into());

    // 5. A stored conversation goes on in the same container.
    let stored = serde_json::to_string(&messages).expect("store");
    let mut messages: Vec<Message> = serde_json::from_str(&stored).expect("load");
    messages.push(Message::user("Thanks."));
    model.chat(ask(&messages)).await.expect("third turn");
    let body = &server.requests()[2].body;
    assert_eq!(body["container"], "container_011CPR5CNjB747bTd36fQLFk");
    assert_eq!(
        body["messages"][3],
        json!({"role": "assistant", "content": second})
    );
}

#[tokio::test]
async fn anthropic_streamed_call_from_code_keeps_caller_and_container() {
    let events = [
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
               "role": "assistant", "content": [], "model": "claude-test", "container": null,
               "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {
               "type": "server_tool_use", "id": "srvtoolu_01", "name": "code_execution",
               "input": {}}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta",
               "partial_json": "{\"code\": \"w = await get_weather(location='Paris')"}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta",
               "partial_json": "\\nprint(w)\"}"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {
               "type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {},
               "caller": {"type": "code_execution_20250825", "tool_id": "srvtoolu_01"}}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta",
               "partial_json": "{\"location\": \"Paris\"}"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use",
               "container": container()}, "usage": {"output_tokens": 20}}),
        json!({"type": "message_stop"}),
    ];
    let server = Server::start([
        Reply::sse(&anthropic_sse(&events), 29),
        message(json!([code_result()]), container(), "end_turn"),
    ])
    .await;
    let model = anthropic(&server);
    let ask = |messages: &[Message]| {
        ChatRequest::new(messages.to_vec())
            .with_tools(tools())
            .with_hosted_code(true)
    };
    let mut messages = vec![Message::user("Weather in Paris?")];
    let (events, error) = collect(model.chat_stream(ask(&messages))).await;
    assert_eq!(error, None);
    assert_eq!(
        events[0],
        ChatEvent::ToolCallStarted {
            id: "toolu_01".into(),
            name: "get_weather".into()
        }
    );
    let Some(ChatEvent::Done(response)) = events.last() else {
        panic!("the last event is not Done: {events:?}");
    };
    let message = response.message.clone();
    assert_eq!(message.program_of("toolu_01"), Some("srvtoolu_01"));
    let native = message.native.as_ref().expect("native items");
    assert_eq!(native.items, [code_execution(), call_from_code()]);
    assert_eq!(native.container, Some(container()));
    messages.push(message.into());
    messages.push(Message::tool("toolu_01", "get_weather", "18"));
    model.chat(ask(&messages)).await.expect("second turn");
    let body = &server.requests()[1].body;
    assert_eq!(
        body["messages"][1],
        json!({"role": "assistant", "content": [code_execution(), call_from_code()]})
    );
    assert_eq!(body["container"], "container_011CPR5CNjB747bTd36fQLFk");
}

#[tokio::test]
async fn anthropic_malformed_callers_and_containers_are_typed_errors() {
    let mut unknown = call_from_code();
    unknown["caller"] = json!({"type": "robot", "tool_id": "srvtoolu_01"});
    let mut no_tool_id = call_from_code();
    no_tool_id["caller"] = json!({"type": "code_execution_20250825"});
    let replies = [
        message(json!([code_execution(), unknown]), container(), "tool_use"),
        message(
            json!([code_execution(), no_tool_id]),
            container(),
            "tool_use",
        ),
        message(
            json!([{"type": "text", "text": "Hi."}]),
            json!({"expires_at": "x"}),
            "end_turn",
        ),
    ];
    let server = Server::start(replies).await;
    let model = anthropic(&server);
    for _ in 0..3 {
        let request = ChatRequest::new(vec![Message::user("Hi")])
            .with_tools(tools())
            .with_hosted_code(true);
        let error = model.chat(request).await.unwrap_err();
        assert!(matches!(error, ModelError::Malformed(_)), "{error:?}");
    }

    // In a stream too.
    let events = [
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
               "role": "assistant", "content": [], "model": "claude-test", "usage": {}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {
               "type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {},
               "caller": {"type": "robot"}}}),
    ];
    let server = Server::start([Reply::sse(&anthropic_sse(&events), 64)]).await;
    let request = ChatRequest::new(vec![Message::user("Hi")])
        .with_tools(tools())
        .with_hosted_code(true);
    let (_, error) = collect(anthropic(&server).chat_stream(request)).await;
    assert!(matches!(error, Some(ModelError::Malformed(_))), "{error:?}");
}
