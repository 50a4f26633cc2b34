//! `OpenAiResponses` against a local server playing OpenAI's Responses API: exact request
//! bodies (replayed items, deferred tools and tool search, a fixed tool list changed
//! mid-conversation, the byte prefix kept across such a change), response parsing, streaming
//! and errors. Our request bodies are read by async-openai's `CreateResponse`, and the
//! responses and stream events we parse are written by its `Response` and
//! `ResponseStreamEvent`: types written by others from OpenAI's specification.

use std::sync::Arc;
use std::time::Duration;

use agent_toolkit::{
    ChatModel, Dialect, RetryPolicy, ToolCall, ToolChoice, ToolDefinition, Toolkit,
    model::{
        AssistantMessage, ChatEvent, ChatRequest, DeferredTool, FinishReason, GenerationOptions,
        Message, ModelError, OpenAiResponses, ResponsesToolSearch, ToolChange, ToolFeatures,
        ToolMessage, Usage,
    },
};
use async_openai::types::responses::{
    CreateResponse, IncludeEnum, InputItem, InputParam, Item, NamespaceToolParamTool, Response,
    ResponseStreamEvent, Tool, ToolChoiceAllowedMode, ToolChoiceOptions, ToolChoiceParam,
    ToolSearchExecutionType, ToolSearchOutputTool,
};
use serde_json::{Value, json};

use crate::support::{Reply, Server, collect, tools};

fn model(server: &Server) -> OpenAiResponses {
    builder(server).build().expect("build")
}

fn builder(server: &Server) -> agent_toolkit::model::OpenAiResponsesBuilder {
    OpenAiResponses::builder()
        .base_url(format!("{}/v1", server.url))
        .api_key("sk-test")
        .model("gpt-test")
        .header("x-extra", "yes")
        .retry(RetryPolicy::exponential(2, Duration::from_millis(10), 2.0))
}

/// A response body, read by async-openai's `Response` and written back by it.
fn response(status: &str, output: Value) -> Value {
    let typed: Response = serde_json::from_value(json!({
        "id": "resp_1",
        "object": "response",
        "created_at": 1_741_570_283,
        "model": "gpt-test",
        "status": status,
        "output": output,
        "parallel_tool_calls": true,
        "store": false,
        "usage": {
            "input_tokens": 31,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 7,
            "output_tokens_details": {"reasoning_tokens": 4},
            "total_tokens": 38,
        },
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

/// `event: TYPE` + `data: {json}` events.
fn sse(events: &[Value]) -> String {
    events
        .iter()
        .map(|event| {
            let kind = event["type"].as_str().unwrap_or("message");
            format!("event: {kind}\ndata: {event}\n\n")
        })
        .collect()
}

/// Our request body, as async-openai's `CreateResponse` reads it.
fn read_request(body: &Value) -> CreateResponse {
    serde_json::from_value(body.clone()).expect("async-openai accepts our request body")
}

fn typed_items(request: &CreateResponse) -> &[InputItem] {
    match &request.input {
        InputParam::Items(items) => items,
        other => panic!("the input is not a list of items: {other:?}"),
    }
}

fn keys(body: &Value) -> Vec<&str> {
    body.as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect()
}

fn reasoning() -> Value {
    json!({
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "The user wants the weather."}],
        "encrypted_content": "gAAAAABo-opaque",
    })
}

fn weather_call() -> Value {
    json!({
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": "{\"location\":\"Paris\"}",
        "status": "completed",
    })
}

/// The function tool entries of `tools()` as Responses wants them.
fn wire_tools(deferred: bool) -> Vec<Value> {
    let mut weather = json!({
        "type": "function",
        "name": "get_weather",
        "description": "Current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string"}},
            "required": ["location"],
        },
        "strict": false,
    });
    let mut read = json!({
        "type": "function",
        "name": "fs_read",
        "description": "Read a file.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
        "strict": false,
    });
    if deferred {
        weather["defer_loading"] = json!(true);
        read["defer_loading"] = json!(true);
    }
    vec![weather, read]
}

fn tool(name: &str, description: &str) -> ToolDefinition {
    ToolDefinition::new(
        name,
        description,
        json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
    )
}

fn wire_tool(name: &str, description: &str, deferred: bool) -> Value {
    let mut wire = json!({
        "type": "function",
        "name": name,
        "description": description,
        "parameters": {
            "type": "object",
            "properties": {"id": {"type": "string"}},
            "required": ["id"],
        },
        "strict": false,
    });
    if deferred {
        wire["defer_loading"] = json!(true);
    }
    wire
}

/// Two groups, as a toolkit declares them.
fn groups() -> (
    Arc<agent_toolkit::tool::GroupInfo>,
    Arc<agent_toolkit::tool::GroupInfo>,
) {
    let toolkit = Toolkit::builder()
        .group("crm", "Customer records.")
        .group("billing", "Invoices and refunds.")
        .build()
        .expect("toolkit");
    let find = |name: &str| {
        let group = toolkit.groups().iter().find(|g| g.name == name);
        Arc::new(group.expect("declared").clone())
    };
    (find("crm"), find("billing"))
}

#[tokio::test]
async fn a_plain_turn_with_tools_is_the_responses_wire_format() {
    let server = Server::start([Reply::json(response(
        "completed",
        json!([reasoning(), {
            "type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "fs_read",
            "arguments": "{\"path\":\"/etc/hosts\"}", "status": "completed",
        }]),
    ))])
    .await;
    let model = model(&server);
    assert_eq!(model.name(), "gpt-test");
    assert_eq!(model.dialect(), Dialect::OpenAi);
    assert_eq!(model.tool_features(), ToolFeatures::all());

    let request = ChatRequest::new(vec![
        Message::system("Be brief."),
        Message::user("Read the hosts file."),
    ])
    .with_tools(tools())
    .with_options(
        GenerationOptions::new()
            .with_temperature(0.2)
            .with_max_tokens(200)
            .with_stop(["END"]),
    );
    let response = model.chat(request).await.expect("chat");
    assert_eq!(
        response.message.tool_calls,
        [ToolCall::new(
            "call_2",
            "fs.read",
            r#"{"path":"/etc/hosts"}"#
        )]
    );
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.usage, Usage::new(31, 7));
    let native = response.message.native.expect("native items");
    assert_eq!(native.provider, "openai-responses");
    assert_eq!(native.items.len(), 2, "the reasoning item and the call");

    let captured = &server.requests()[0];
    assert_eq!(captured.path, "/v1/responses");
    assert_eq!(captured.headers["authorization"], "Bearer sk-test");
    assert_eq!(captured.headers["x-extra"], "yes");
    let body = &captured.body;
    assert_eq!(
        *body,
        json!({
            "model": "gpt-test",
            "tools": wire_tools(false),
            "store": false,
            "include": ["reasoning.encrypted_content"],
            "input": [
                {"type": "message", "role": "system", "content": "Be brief."},
                {"type": "message", "role": "user", "content": "Read the hosts file."},
            ],
            "tool_choice": "auto",
            "parallel_tool_calls": false,
            "max_output_tokens": 200,
            "temperature": 0.2,
        }),
        "no `stop`: Responses has no stop sequences"
    );
    assert_eq!(
        keys(body),
        [
            "model",
            "tools",
            "store",
            "include",
            "input",
            "tool_choice",
            "parallel_tool_calls",
            "max_output_tokens",
            "temperature"
        ],
        "what varies between turns comes after `input`"
    );

    let typed = read_request(body);
    assert_eq!(typed.model.as_deref(), Some("gpt-test"));
    assert_eq!(typed.store, Some(false));
    assert_eq!(
        typed.include,
        Some(vec![IncludeEnum::ReasoningEncryptedContent])
    );
    assert_eq!(typed.max_output_tokens, Some(200));
    assert_eq!(typed.parallel_tool_calls, Some(false));
    assert_eq!(
        typed.tool_choice,
        Some(ToolChoiceParam::Option(ToolChoiceOptions::Auto))
    );
    let typed_tools = typed.tools.as_deref().unwrap_or_default();
    assert!(matches!(
        &typed_tools[1],
        Tool::Function(f) if f.name == "fs_read" && f.strict == Some(false)
    ));
    assert_eq!(typed_items(&typed).len(), 2);
}

#[tokio::test]
async fn a_replayed_turn_sends_its_items_back_without_server_ids() {
    let first = response("completed", json!([reasoning(), weather_call()]));
    let server = Server::start([
        Reply::json(first),
        Reply::json(response(
            "completed",
            json!([{
                "type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": "18°C in Paris.", "annotations": []}],
            }]),
        )),
    ])
    .await;
    let model = model(&server);
    let mut messages = vec![Message::user("Weather in Paris?")];
    let request = ChatRequest::new(messages.clone()).with_tools(tools());
    let turn = model.chat(request).await.expect("first turn").message;
    assert_eq!(
        turn.tool_calls,
        [ToolCall::new(
            "call_1",
            "get_weather",
            r#"{"location":"Paris"}"#
        )]
    );
    messages.push(turn.into());
    messages.push(Message::tool("call_1", "get_weather", "18°C"));
    // A turn written by another provider goes as a message and calls.
    let mut other = AssistantMessage::new(
        "And Lyon.",
        vec![ToolCall::new(
            "toolu_9",
            "get_weather",
            r#"{"location":"Lyon"}"#,
        )],
    );
    other.native = Some(Box::new(agent_toolkit::model::NativeItems::new(
        "anthropic",
        vec![json!({"type": "thinking", "thinking": "..."})],
    )));
    messages.push(other.into());
    messages.push(Message::tool("toolu_9", "get_weather", "16°C"));
    let request = ChatRequest::new(messages).with_tools(tools());
    let answer = model.chat(request).await.expect("second turn");
    assert_eq!(answer.message.content, "18°C in Paris.");
    assert_eq!(answer.finish_reason, FinishReason::Stop);

    let body = &server.requests()[1].body;
    assert_eq!(
        body["input"],
        json!([
            {"type": "message", "role": "user", "content": "Weather in Paris?"},
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": "The user wants the weather."}],
                "encrypted_content": "gAAAAABo-opaque",
            },
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "get_weather",
                "arguments": "{\"location\":\"Paris\"}",
                "status": "completed",
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "18°C"},
            {"type": "message", "role": "assistant", "content": "And Lyon."},
            {
                "type": "function_call",
                "call_id": "toolu_9",
                "name": "get_weather",
                "arguments": "{\"location\":\"Lyon\"}",
            },
            {"type": "function_call_output", "call_id": "toolu_9", "output": "16°C"},
        ])
    );
    assert_eq!(body["store"], false);
    let typed = read_request(body);
    let items = typed_items(&typed);
    assert!(matches!(&items[1], InputItem::Item(Item::Reasoning(r)) if r.id.is_none()));
    assert!(matches!(
        &items[2],
        InputItem::Item(Item::FunctionCall(c)) if c.id.is_none() && c.call_id == "call_1"
    ));
    assert!(matches!(
        &items[3],
        InputItem::Item(Item::FunctionCallOutput(o)) if o.call_id.as_deref() == Some("call_1")
    ));
    assert!(matches!(&items[4], InputItem::EasyMessage(_)));
}

#[tokio::test]
async fn deferred_tools_go_in_namespaces_with_the_hosted_tool_search() {
    let (crm, billing) = groups();
    let loaded = json!({
        "type": "namespace", "name": "crm", "description": "Customer records.",
        "tools": [wire_tool("crm_lookup", "Find a customer.", true)],
    });
    let server = Server::start([Reply::json(response(
        "completed",
        json!([
            {
                "type": "tool_search_call", "id": "tsc_1", "call_id": null, "execution": "server",
                "arguments": {"paths": ["crm"], "query": "customer"}, "status": "completed",
            },
            {
                "type": "tool_search_output", "id": "tso_1", "call_id": null,
                "execution": "server", "tools": [loaded], "status": "completed",
            },
            {
                "type": "function_call", "id": "fc_3", "call_id": "call_3", "namespace": "crm",
                "name": "crm_lookup", "arguments": "{\"id\":\"42\"}", "status": "completed",
            },
        ]),
    ))])
    .await;
    let deferred = vec![
        DeferredTool::new(tool("crm_lookup", "Find a customer."), Some(crm.clone())),
        DeferredTool::new(tools()[1].clone(), None),
        DeferredTool::new(tool("refund", "Refund an invoice."), Some(billing)),
        DeferredTool::new(tool("crm_update", "Change a customer."), Some(crm)),
    ];
    let request = ChatRequest::new(vec![Message::user("Who is customer 42?")])
        .with_tools(vec![tools()[0].clone()])
        .with_deferred_tools(deferred);
    let response = model(&server).chat(request).await.expect("chat");
    assert_eq!(
        response.message.tool_calls,
        [ToolCall::new("call_3", "crm_lookup", r#"{"id":"42"}"#)],
        "a call's namespace is left aside: names are global"
    );
    let native = response.message.native.expect("native");
    let kinds: Vec<&str> = native
        .items
        .iter()
        .map(|i| i["type"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        kinds,
        ["tool_search_call", "tool_search_output", "function_call"]
    );

    let body = server.only_body();
    let [weather, read] = <[Value; 2]>::try_from(wire_tools(false)).expect("two");
    let mut read_deferred = read;
    read_deferred["defer_loading"] = json!(true);
    assert_eq!(
        body["tools"],
        json!([
            weather,
            {"type": "tool_search"},
            {
                "type": "namespace", "name": "crm", "description": "Customer records.",
                "tools": [
                    wire_tool("crm_lookup", "Find a customer.", true),
                    wire_tool("crm_update", "Change a customer.", true),
                ],
            },
            read_deferred,
            {
                "type": "namespace", "name": "billing", "description": "Invoices and refunds.",
                "tools": [wire_tool("refund", "Refund an invoice.", true)],
            },
        ])
    );
    assert_eq!(body["tool_choice"], "auto");
    let typed = read_request(&body);
    let typed_tools = typed.tools.as_deref().unwrap_or_default();
    assert!(matches!(&typed_tools[1], Tool::ToolSearch(s) if s.execution.is_none()));
    let Tool::Namespace(namespace) = &typed_tools[2] else {
        panic!("not a namespace: {:?}", typed_tools[2]);
    };
    assert_eq!(namespace.name, "crm");
    assert!(namespace.tools.iter().all(|t| matches!(
        t,
        NamespaceToolParamTool::Function(f) if f.defer_loading == Some(true)
    )));
    assert!(matches!(
        &typed_tools[3],
        Tool::Function(f) if f.name == "fs_read" && f.defer_loading == Some(true)
    ));
}

#[tokio::test]
async fn a_client_tool_search_is_a_call_answered_with_tool_definitions() {
    let (_, billing) = groups();
    let server = Server::start([
        Reply::json(response(
            "completed",
            json!([reasoning(), {
                "type": "tool_search_call", "id": "tsc_1", "call_id": "call_s1",
                "execution": "client", "arguments": {"query": "refund invoice", "limit": 3},
                "status": "completed",
            }]),
        )),
        Reply::json(response(
            "completed",
            json!([{
                "type": "function_call", "id": "fc_4", "call_id": "call_4", "name": "refund",
                "arguments": "{\"id\":\"inv_42\"}", "status": "completed",
            }]),
        )),
    ])
    .await;
    let model = builder(&server)
        .tool_search(ResponsesToolSearch::Client)
        .build()
        .expect("build");
    let deferred = vec![
        DeferredTool::new(tool("refund", "Refund an invoice."), Some(billing)),
        DeferredTool::new(tool("lookup", "Find a customer."), None),
    ];
    let ask = |messages: Vec<Message>| {
        ChatRequest::new(messages)
            .with_tools(vec![tools()[0].clone()])
            .with_deferred_tools(deferred.clone())
    };
    let answer = Reply::json(response("completed", json!([])));
    let mut messages = vec![Message::user("Refund invoice 42.")];
    let turn = model.chat(ask(messages.clone())).await.expect("search");
    assert_eq!(turn.finish_reason, FinishReason::ToolCalls);
    assert_eq!(
        turn.message.tool_calls,
        [ToolCall::new(
            "call_s1",
            "search_tools",
            r#"{"query":"refund invoice","limit":3}"#
        )]
    );
    messages.push(turn.message.into());
    let mut found = ToolMessage::new("call_s1", "search_tools", "Found: refund.");
    found.tool_references = vec!["refund".into()];
    messages.push(found.into());
    let turn = model.chat(ask(messages)).await.expect("call");
    assert_eq!(
        turn.message.tool_calls,
        [ToolCall::new("call_4", "refund", r#"{"id":"inv_42"}"#)]
    );

    let body = &server.requests()[1].body;
    let search_tool = json!({
        "type": "tool_search",
        "execution": "client",
        "description": "Search the tools that are not loaded yet by what they do. The tools found become callable.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What the tool should do, in a few words."},
                "limit": {
                    "type": "integer", "minimum": 1, "maximum": 20,
                    "description": "The most tools to return.",
                },
            },
            "required": ["query"],
            "additionalProperties": false,
        },
    });
    assert_eq!(
        *body,
        json!({
            "model": "gpt-test",
            "tools": [
                wire_tools(false)[0],
                search_tool,
                {
                    "type": "namespace", "name": "billing", "description": "Invoices and refunds.",
                    "tools": [wire_tool("refund", "Refund an invoice.", true)],
                },
                wire_tool("lookup", "Find a customer.", true),
            ],
            "store": false,
            "include": ["reasoning.encrypted_content"],
            "input": [
                {"type": "message", "role": "user", "content": "Refund invoice 42."},
                {
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": "The user wants the weather."}],
                    "encrypted_content": "gAAAAABo-opaque",
                },
                {
                    "type": "tool_search_call", "call_id": "call_s1", "execution": "client",
                    "arguments": {"query": "refund invoice", "limit": 3}, "status": "completed",
                },
                {
                    "type": "tool_search_output", "call_id": "call_s1", "execution": "client",
                    "status": "completed",
                    "tools": [wire_tool("refund", "Refund an invoice.", true)],
                },
            ],
            "tool_choice": "auto",
            "parallel_tool_calls": false,
        })
    );
    let typed = read_request(body);
    let typed_tools = typed.tools.as_deref().unwrap_or_default();
    assert!(matches!(
        &typed_tools[1],
        Tool::ToolSearch(s) if s.execution == Some(ToolSearchExecutionType::Client)
    ));
    let items = typed_items(&typed);
    assert!(matches!(
        &items[2],
        InputItem::Item(Item::ToolSearchCall(c)) if c.id.is_none()
            && c.call_id.as_deref() == Some("call_s1")
    ));
    let InputItem::Item(Item::ToolSearchOutput(output)) = &items[3] else {
        panic!("not a tool search output: {:?}", items[3]);
    };
    assert_eq!(output.call_id.as_deref(), Some("call_s1"));
    assert!(matches!(
        &output.tools[..],
        [ToolSearchOutputTool::Function(f)] if f.name == "refund" && f.defer_loading == Some(true)
    ));

    // A search turn without its items (a conversation written by hand, or stored without
    // them) is sent as the tool search it stands for.
    let server = Server::start([answer]).await;
    let model = builder(&server)
        .tool_search(ResponsesToolSearch::Client)
        .build()
        .expect("build");
    let search = ToolCall::new("call_s2", "search_tools", r#"{"query":"refund"}"#);
    let mut found = ToolMessage::new("call_s2", "search_tools", "Found: refund.");
    found.tool_references = vec!["refund".into(), "unknown".into()];
    let messages = vec![
        Message::user("Refund invoice 42."),
        Message::assistant("", vec![search]),
        found.into(),
    ];
    model.chat(ask(messages)).await.expect("chat");
    let body = server.only_body();
    assert_eq!(
        body["input"],
        json!([
            {"type": "message", "role": "user", "content": "Refund invoice 42."},
            {
                "type": "tool_search_call", "call_id": "call_s2", "execution": "client",
                "arguments": {"query": "refund"}, "status": "completed",
            },
            {
                "type": "tool_search_output", "call_id": "call_s2", "execution": "client",
                "status": "completed",
                "tools": [wire_tool("refund", "Refund an invoice.", true)],
            },
        ]),
        "a reference to a tool that is not deferred is left out"
    );
    read_request(&body);
}

/// The conversation of the tool-change tests: a call of `get_weather`, its result, then a
/// change of the tools (`calc` added, `fs.read` switched off) and a new question.
fn changed_conversation(first_turn: AssistantMessage) -> Vec<Message> {
    let calc = tool("calc", "Compute.");
    vec![
        Message::system("Be brief."),
        Message::user("Weather in Paris?"),
        first_turn.into(),
        Message::tool("call_1", "get_weather", "18°C"),
        Message::tool_change(ToolChange::new(
            vec![calc, tools()[0].clone()],
            vec!["fs.read".into()],
        )),
        Message::user("Now 2 + 2?"),
    ]
}

#[tokio::test]
async fn a_fixed_tool_list_changes_through_allowed_tools_and_additional_tools() {
    let server = Server::start([Reply::json(response(
        "completed",
        json!([{
            "type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "4", "annotations": []}],
        }]),
    ))])
    .await;
    let first_turn = AssistantMessage::new(
        "",
        vec![ToolCall::new(
            "call_1",
            "get_weather",
            r#"{"location":"Paris"}"#,
        )],
    );
    let request = ChatRequest::new(changed_conversation(first_turn))
        .with_declared_tools(tools())
        .with_tools(vec![tools()[0].clone(), tool("calc", "Compute.")])
        .with_tool_choice(ToolChoice::Required);
    let answer = model(&server).chat(request).await.expect("chat");
    assert_eq!(answer.message.content, "4");

    let body = server.only_body();
    assert_eq!(
        body,
        json!({
            "model": "gpt-test",
            "tools": wire_tools(false),
            "store": false,
            "include": ["reasoning.encrypted_content"],
            "input": [
                {"type": "message", "role": "system", "content": "Be brief."},
                {"type": "message", "role": "user", "content": "Weather in Paris?"},
                {
                    "type": "function_call", "call_id": "call_1", "name": "get_weather",
                    "arguments": "{\"location\":\"Paris\"}",
                },
                {"type": "function_call_output", "call_id": "call_1", "output": "18°C"},
                {
                    "type": "additional_tools",
                    "role": "developer",
                    "tools": [wire_tool("calc", "Compute.", false)],
                },
                {"type": "message", "role": "user", "content": "Now 2 + 2?"},
            ],
            "tool_choice": {
                "type": "allowed_tools",
                "mode": "required",
                "tools": [
                    {"type": "function", "name": "get_weather"},
                    {"type": "function", "name": "calc"},
                ],
            },
            "parallel_tool_calls": false,
        }),
        "the declared tools stay the `tools`; `get_weather`, declared, is not added again"
    );
    let typed = read_request(&body);
    let Some(ToolChoiceParam::AllowedTools(allowed)) = &typed.tool_choice else {
        panic!("not allowed_tools: {:?}", typed.tool_choice);
    };
    assert_eq!(allowed.mode, ToolChoiceAllowedMode::Required);
    assert_eq!(allowed.tools.len(), 2);
    let items = typed_items(&typed);
    let InputItem::Item(Item::AdditionalTools(added)) = &items[4] else {
        panic!("not additional_tools: {:?}", items[4]);
    };
    assert!(matches!(&added.tools[..], [Tool::Function(f)] if f.name == "calc"));

    // Without a declared list, a change is not sent at all and `tools` is what is callable.
    let server = Server::start([Reply::json(response("completed", json!([])))]).await;
    let first_turn = AssistantMessage::new(
        "",
        vec![ToolCall::new(
            "call_1",
            "get_weather",
            r#"{"location":"Paris"}"#,
        )],
    );
    let request =
        ChatRequest::new(changed_conversation(first_turn)).with_tools(vec![tools()[0].clone()]);
    model(&server).chat(request).await.expect("chat");
    let body = server.only_body();
    let kinds: Vec<&str> = body["input"]
        .as_array()
        .expect("input")
        .iter()
        .map(|i| i["type"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        kinds,
        [
            "message",
            "message",
            "function_call",
            "function_call_output",
            "message"
        ]
    );
    assert_eq!(body["tools"], json!([wire_tools(false)[0]]));
    assert_eq!(body["tool_choice"], "auto");

    // With the provider's search, the search and the deferred tools stay allowed; a deferred
    // tool found earlier and callable now is named once.
    let (crm, _) = groups();
    let server = Server::start([Reply::json(response("completed", json!([])))]).await;
    let lookup = tool("crm_lookup", "Find a customer.");
    let request = ChatRequest::new(vec![Message::user("Customer 42?")])
        .with_declared_tools(tools())
        .with_tools(vec![tools()[0].clone(), lookup.clone()])
        .with_deferred_tools(vec![
            DeferredTool::new(lookup, Some(crm)),
            DeferredTool::new(tool("refund", "Refund an invoice."), None),
        ]);
    model(&server).chat(request).await.expect("chat");
    let body = server.only_body();
    assert_eq!(
        body["tool_choice"],
        json!({
            "type": "allowed_tools",
            "mode": "auto",
            "tools": [
                {"type": "function", "name": "get_weather"},
                {"type": "function", "name": "crm_lookup"},
                {"type": "function", "name": "refund"},
                {"type": "tool_search"},
            ],
        })
    );
    assert_eq!(body["tools"].as_array().map(Vec::len), Some(5), "{body}");
    read_request(&body);
}

#[tokio::test]
async fn a_tool_change_keeps_the_bytes_before_the_new_input_items() {
    let server = Server::start([
        Reply::json(response("completed", json!([reasoning(), weather_call()]))),
        Reply::json(response("completed", json!([]))),
    ])
    .await;
    let model = model(&server);
    let opening = vec![
        Message::system("Be brief."),
        Message::user("Weather in Paris?"),
    ];
    let first = ChatRequest::new(opening)
        .with_declared_tools(tools())
        .with_tools(tools());
    let turn = model.chat(first).await.expect("first").message;
    let second = ChatRequest::new(changed_conversation(turn))
        .with_declared_tools(tools())
        .with_tools(vec![tools()[0].clone(), tool("calc", "Compute.")])
        .with_tool_choice(ToolChoice::Required);
    model.chat(second).await.expect("second");

    let requests = server.requests();
    let (a, b) = (&requests[0], &requests[1]);
    assert_eq!(
        keys(&a.body),
        [
            "model",
            "tools",
            "store",
            "include",
            "input",
            "tool_choice",
            "parallel_tool_calls"
        ]
    );
    assert_eq!(keys(&a.body), keys(&b.body));
    assert_ne!(a.body["tool_choice"], b.body["tool_choice"]);
    // The first body up to the end of its `input` array, without the `]`.
    let raw = String::from_utf8(a.raw.clone()).expect("UTF-8");
    let end = raw
        .rfind("],\"tool_choice\":")
        .expect("`tool_choice` right after `input`");
    assert!(
        b.raw.starts_with(&a.raw[..end]),
        "the second body does not start with the first's bytes up to its input's end:\n{}\n{}",
        raw,
        String::from_utf8_lossy(&b.raw)
    );
    assert_eq!(b.raw[end], b',', "the new input items follow");
}

#[tokio::test]
async fn a_response_missing_optional_fields_is_read() {
    // No id, status, usage, call id or content part types, as compatible servers send.
    let server = Server::start([Reply::json(json!({
        "output": [
            {"type": "message", "role": "assistant", "content": [{"text": "Reading it."}]},
            {"type": "function_call", "name": "fs_read", "arguments": {"path": "/a"}},
        ],
    }))])
    .await;
    let request = ChatRequest::new(vec![Message::user("Read /a")]).with_tools(tools());
    let response = model(&server).chat(request).await.expect("chat");
    assert_eq!(response.message.content, "Reading it.");
    assert_eq!(response.usage, Usage::default());
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    let [call] = &response.message.tool_calls[..] else {
        panic!("not one call: {:?}", response.message.tool_calls);
    };
    assert_eq!(call.name, "fs.read");
    assert_eq!(call.arguments, r#"{"path":"/a"}"#);
    assert!(call.id.starts_with("call_"), "{}", call.id);
    // The id given to the call is in the item sent back, so that its result pairs with it.
    let native = response.message.native.expect("native");
    assert_eq!(native.items[1]["call_id"].as_str(), Some(&*call.id));
}

#[tokio::test]
async fn a_response_written_by_async_openai_is_understood() {
    let server = Server::start([Reply::json(response(
        "completed",
        json!([
            reasoning(),
            {
                "type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                "content": [
                    {"type": "output_text", "text": "Checking ", "annotations": []},
                    {"type": "output_text", "text": "both.", "annotations": []},
                ],
            },
            weather_call(),
            {
                "type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "fs_read",
                "arguments": "{\"path\":\"/b\"}", "status": "completed",
            },
        ]),
    ))])
    .await;
    let request = ChatRequest::new(vec![Message::user("hi")]).with_tools(tools());
    let response = model(&server).chat(request).await.expect("chat");
    assert_eq!(response.message.content, "Checking both.");
    assert_eq!(
        response.message.tool_calls,
        [
            ToolCall::new("call_1", "get_weather", r#"{"location":"Paris"}"#),
            ToolCall::new("call_2", "fs.read", r#"{"path":"/b"}"#),
        ]
    );
    assert_eq!(response.usage, Usage::new(31, 7));
    assert_eq!(response.message.native.expect("native").items.len(), 4);
}

#[tokio::test]
async fn incomplete_responses_say_why_and_refusals_are_text() {
    let incomplete = |reason: &str| {
        let mut body = response(
            "incomplete",
            json!([{
                "type": "message", "id": "msg_1", "role": "assistant", "status": "incomplete",
                "content": [{"type": "refusal", "refusal": "I can't help with that."}],
            }]),
        );
        body["incomplete_details"] = json!({"reason": reason});
        Reply::json(body)
    };
    let server = Server::start([
        incomplete("max_output_tokens"),
        incomplete("content_filter"),
    ])
    .await;
    let model = model(&server);
    let ask = || ChatRequest::new(vec![Message::user("hi")]);
    let response = model.chat(ask()).await.expect("chat");
    assert_eq!(response.finish_reason, FinishReason::Length);
    assert_eq!(response.message.content, "I can't help with that.");
    let response = model.chat(ask()).await.expect("chat");
    assert_eq!(response.finish_reason, FinishReason::ContentFilter);
}

/// The events of a streamed answer: text, then a call whose arguments arrive in pieces and
/// whose `arguments.done` event has no `name`, then `response.completed` with `output`.
fn streamed(output_in_completed: bool) -> Vec<Value> {
    let call_added = json!({
        "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "fs_read",
        "arguments": "", "status": "in_progress",
    });
    let message = json!({
        "type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": "Reading Bogotá…", "annotations": []}],
    });
    let call_done = json!({
        "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "fs_read",
        "arguments": "{\"path\":\"/tmp/a b\"}", "status": "completed",
    });
    let mut events = vec![
        event(
            json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
            "item": {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress", "content": []}}),
        ),
        event(
            json!({"type": "response.output_text.delta", "sequence_number": 2, "item_id": "msg_1",
            "output_index": 0, "content_index": 0, "delta": "Reading "}),
        ),
        event(
            json!({"type": "response.output_text.delta", "sequence_number": 3, "item_id": "msg_1",
            "output_index": 0, "content_index": 0, "delta": "Bogotá…"}),
        ),
        event(
            json!({"type": "response.output_item.added", "sequence_number": 4, "output_index": 1,
            "item": call_added}),
        ),
    ];
    for (n, piece) in ["{\"path\"", ":\"/tmp/a", " b\"}"].iter().enumerate() {
        events.push(event(json!({
            "type": "response.function_call_arguments.delta", "sequence_number": 5 + n,
            "item_id": "fc_1", "output_index": 1, "delta": piece,
        })));
    }
    let mut done = event(json!({
        "type": "response.function_call_arguments.done", "sequence_number": 8,
        "item_id": "fc_1", "output_index": 1, "arguments": "{\"path\":\"/tmp/a b\"}",
    }));
    // As seen live: no `name` at all (async-openai writes `null`).
    done.as_object_mut().expect("object").remove("name");
    events.push(done);
    let output = if output_in_completed {
        events.push(event(
            json!({"type": "response.output_item.done", "sequence_number": 9,
            "output_index": 0, "item": message}),
        ));
        events.push(event(
            json!({"type": "response.output_item.done", "sequence_number": 10,
            "output_index": 1, "item": call_done}),
        ));
        json!([message, call_done])
    } else {
        // Neither `output_item.done` nor an `output` in the last event: the events alone.
        json!([])
    };
    events.push(event(json!({
        "type": "response.completed", "sequence_number": 11,
        "response": response("completed", output),
    })));
    events
}

#[tokio::test]
async fn a_stream_is_assembled_by_item_id_when_done_has_no_name() {
    for output_in_completed in [true, false] {
        // 9-byte pieces: lines, JSON and the two-byte `á` are cut across reads.
        let server = Server::start([Reply::sse(&sse(&streamed(output_in_completed)), 9)]).await;
        let request = ChatRequest::new(vec![Message::user("Read a file")]).with_tools(tools());
        let model = model(&server);
        let (events, error) = collect(model.chat_stream(request)).await;
        assert_eq!(error, None, "output in completed: {output_in_completed}");
        assert_eq!(
            events[..3],
            [
                ChatEvent::TextDelta("Reading ".into()),
                ChatEvent::TextDelta("Bogotá…".into()),
                ChatEvent::ToolCallStarted {
                    id: "call_1".into(),
                    name: "fs.read".into()
                },
            ]
        );
        assert_eq!(events.len(), 4, "{events:?}");
        let Some(ChatEvent::Done(response)) = events.last() else {
            panic!("the last event is not Done: {events:?}");
        };
        assert_eq!(response.message.content, "Reading Bogotá…");
        assert_eq!(
            response.message.tool_calls,
            [ToolCall::new("call_1", "fs.read", r#"{"path":"/tmp/a b"}"#)]
        );
        assert_eq!(response.finish_reason, FinishReason::ToolCalls);
        assert_eq!(response.usage, Usage::new(31, 7));
        let native = response.message.native.as_ref().expect("native");
        assert_eq!(native.items.len(), 2);
        assert_eq!(native.items[1]["name"], "fs_read");
        assert_eq!(native.items[1]["arguments"], "{\"path\":\"/tmp/a b\"}");

        let body = server.only_body();
        assert_eq!(body["stream"], true);
        assert_eq!(read_request(&body).stream, Some(true));
    }
}

#[tokio::test]
async fn a_streamed_client_tool_search_is_announced_as_search_tools() {
    let search = json!({
        "type": "tool_search_call", "id": "tsc_1", "call_id": "call_s1", "execution": "client",
        "arguments": {"query": "refund"}, "status": "completed",
    });
    let events = [
        event(
            json!({"type": "response.output_item.added", "sequence_number": 1,
            "output_index": 0, "item": search}),
        ),
        event(
            json!({"type": "response.output_item.done", "sequence_number": 2,
            "output_index": 0, "item": search}),
        ),
        event(json!({"type": "response.completed", "sequence_number": 3,
            "response": response("completed", json!([search]))})),
    ];
    let server = Server::start([Reply::sse(&sse(&events), 64)]).await;
    let model = builder(&server)
        .tool_search(ResponsesToolSearch::Client)
        .build()
        .expect("build");
    let request = ChatRequest::new(vec![Message::user("Refund")])
        .with_deferred_tools(vec![DeferredTool::new(tool("refund", "Refund."), None)]);
    let (events, error) = collect(model.chat_stream(request)).await;
    assert_eq!(error, None);
    assert_eq!(
        events[0],
        ChatEvent::ToolCallStarted {
            id: "call_s1".into(),
            name: "search_tools".into()
        }
    );
    let Some(ChatEvent::Done(response)) = events.last() else {
        panic!("the last event is not Done: {events:?}");
    };
    assert_eq!(
        response.message.tool_calls,
        [ToolCall::new(
            "call_s1",
            "search_tools",
            r#"{"query":"refund"}"#
        )]
    );
}

#[tokio::test]
async fn a_rate_limit_is_retried_then_answered() {
    let server = Server::start([
        Reply::Body {
            status: 429,
            headers: vec![("retry-after-ms", "20".into())],
            body: json!({"error": {"message": "Rate limit reached", "type": "requests"}})
                .to_string(),
        },
        Reply::json(response(
            "completed",
            json!([{
                "type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": "fine", "annotations": []}],
            }]),
        )),
    ])
    .await;
    let response = model(&server)
        .chat(ChatRequest::new(vec![Message::user("hi")]))
        .await
        .expect("retried");
    assert_eq!(response.message.content, "fine");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn failures_are_typed() {
    let bad_request = json!({"error": {
        "message": "Unknown parameter: 'input[1].foo'.", "type": "invalid_request_error",
        "param": "input[1].foo", "code": "unknown_parameter",
    }});
    let failed = |code: &str| {
        let mut body = response("failed", json!([]));
        body["error"] = json!({"code": code, "message": "The server had an error."});
        body
    };
    let server = Server::start([
        Reply::status(400, &bad_request.to_string()),
        Reply::json(failed("server_error")),
    ])
    .await;
    let model = builder(&server)
        .retry(RetryPolicy::none())
        .build()
        .expect("build");
    let ask = || ChatRequest::new(vec![Message::user("hi")]);
    let error = model.chat(ask()).await.expect_err("400");
    assert!(
        matches!(&error, ModelError::Http { status: 400, body } if body.contains("unknown_parameter")),
        "{error:?}"
    );
    let error = model.chat(ask()).await.expect_err("failed");
    assert!(
        matches!(&error, ModelError::Http { status: 500, body } if body.contains("server had an error")),
        "{error:?}"
    );
    assert!(error.is_retryable());

    // Mid-stream: a `response.failed` event, an `error` event, and a stream cut short.
    let failed_event = event(json!({"type": "response.failed", "sequence_number": 2,
        "response": failed("invalid_prompt")}));
    let error_event = event(json!({"type": "error", "sequence_number": 2,
        "code": "rate_limit_exceeded", "message": "Slow down.", "param": null}));
    let text = event(
        json!({"type": "response.output_text.delta", "sequence_number": 1,
        "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "Half"}),
    );
    let server = Server::start([
        Reply::sse(&sse(&[text.clone(), failed_event]), 64),
        Reply::sse(&sse(&[text.clone(), error_event]), 64),
        Reply::sse(&sse(&[text]), 64),
    ])
    .await;
    let model = builder(&server)
        .retry(RetryPolicy::none())
        .build()
        .expect("build");
    let (events, error) = collect(model.chat_stream(ask())).await;
    assert_eq!(events, [ChatEvent::TextDelta("Half".into())]);
    assert!(
        matches!(&error, Some(ModelError::Http { status: 400, body }) if body.contains("invalid_prompt")),
        "{error:?}"
    );
    let (_, error) = collect(model.chat_stream(ask())).await;
    assert_eq!(error, Some(ModelError::RateLimited { retry_after: None }));
    let (_, error) = collect(model.chat_stream(ask())).await;
    assert!(
        matches!(error, Some(ModelError::Transport(_))),
        "a stream cut before `response.completed`: {error:?}"
    );

    // A body that is not a Responses response says so.
    let server = Server::start([Reply::json(json!({"choices": []}))]).await;
    let error = builder(&server)
        .build()
        .expect("build")
        .chat(ask())
        .await
        .expect_err("malformed");
    assert!(
        matches!(&error, ModelError::Malformed(m) if m.contains("no `output`")),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_call_written_as_text_is_read_as_a_call() {
    let server = Server::start([Reply::json(response(
        "completed",
        json!([{
            "type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{
                "type": "output_text", "annotations": [],
                "text": "{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}",
            }],
        }]),
    ))])
    .await;
    let request = ChatRequest::new(vec![Message::user("Weather in Paris?")]).with_tools(tools());
    let response = model(&server).chat(request).await.expect("chat");
    assert!(response.message.calls_in_text);
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    let [call] = &response.message.tool_calls[..] else {
        panic!("not one call: {:?}", response.message.tool_calls);
    };
    assert_eq!(call.name, "get_weather");
    assert_eq!(call.arguments, r#"{"location":"Paris"}"#);
}

#[tokio::test]
async fn settings_change_the_body_and_the_features() {
    let server = Server::start([Reply::json(response("completed", json!([])))]).await;
    let model = builder(&server)
        .strict(true)
        .reasoning_items(false)
        .tool_features(ToolFeatures::default())
        .build()
        .expect("build");
    assert_eq!(model.dialect(), Dialect::OpenAiStrict);
    assert_eq!(model.tool_features(), ToolFeatures::default());
    let request = ChatRequest::new(vec![Message::user("hi")])
        .with_tools(tools())
        .with_tool_choice(ToolChoice::Specific("fs.read".into()))
        .with_parallel_tool_calls(true);
    model.chat(request).await.expect("chat");
    let body = server.only_body();
    assert_eq!(body.get("include"), None);
    assert_eq!(
        body["tool_choice"],
        json!({"type": "function", "name": "fs_read"})
    );
    assert_eq!(body["parallel_tool_calls"], true);
    for tool in body["tools"].as_array().expect("tools") {
        assert_eq!(tool["strict"], true);
        assert_eq!(tool["parameters"]["additionalProperties"], false);
    }
    let typed = read_request(&body);
    assert!(matches!(
        &typed.tool_choice,
        Some(ToolChoiceParam::Function(f)) if f.name == "fs_read"
    ));

    let no_model = OpenAiResponses::builder().build();
    assert!(
        matches!(no_model, Err(ModelError::Config(_))),
        "{no_model:?}"
    );
}
