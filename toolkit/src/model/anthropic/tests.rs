//! Wire shapes of the Messages provider: hosted code (the code execution tool, calls with a
//! `caller`, the container), and the requests that do not ask for it, which must stay byte for
//! byte what they were before.

use std::sync::Arc;

use serde_json::{Value, json};

use super::*;
use crate::model::{DeferredTool, GenerationOptions, ToolChange, ToolMessage};
use crate::tool::GroupInfo;

fn model(search: AnthropicToolSearch) -> AnthropicMessages {
    AnthropicMessages::builder()
        .base_url("http://127.0.0.1:9")
        .model("claude-test")
        .tool_search(search)
        .tool_features(ToolFeatures::all())
        .build()
        .expect("build")
}

fn body(request: &ChatRequest) -> Value {
    let (bytes, _) = model(AnthropicToolSearch::Bm25)
        .body(request, false)
        .expect("body");
    serde_json::from_slice(&bytes).expect("JSON")
}

fn tool(name: &str) -> ToolDefinition {
    ToolDefinition::new(
        name,
        format!("The {name} tool."),
        json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
    )
}

/// Requests with every kind of message, tool and block the provider writes: the bytes of
/// their bodies without hosted code are compared with those written before hosted code
/// existed.
fn unchanged_requests() -> Vec<(AnthropicToolSearch, ChatRequest, bool)> {
    let mut replayed = AssistantMessage::new(
        "",
        vec![ToolCall::new("toolu_1", "get.weather", r#"{"id":"Paris"}"#)],
    );
    replayed.native = Some(Box::new(NativeItems::new(
        PROVIDER,
        vec![
            json!({"type": "thinking", "thinking": "Weather.", "signature": "sig"}),
            json!({"type": "server_tool_use", "id": "srvtoolu_1",
                   "name": "tool_search_tool_bm25", "input": {"query": "weather"}}),
            json!({"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1",
                   "content": {"type": "tool_search_tool_search_result",
                               "tool_references": [{"type": "tool_reference",
                                                    "tool_name": "get_weather"}]}}),
            json!({"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                   "input": {"id": "Paris"}}),
        ],
    )));
    let plain = ChatRequest::new(vec![
        Message::system("Be brief."),
        Message::user("Weather in Paris? And read /nope."),
        Message::assistant(
            "Looking.",
            vec![
                ToolCall::new("toolu_1", "get.weather", r#"{"id":"Paris"}"#),
                ToolCall::new("toolu_2", "read", r#"{"id":"/nope"}"#),
            ],
        ),
        Message::tool("toolu_1", "get.weather", "18°C"),
        Message::tool_error("toolu_2", "read", "no such file"),
        Message::user("Thanks."),
    ])
    .with_tools(vec![tool("get.weather"), tool("read")])
    .with_tool_choice(ToolChoice::Specific("read".into()))
    .with_options(
        GenerationOptions::new()
            .with_temperature(0.2)
            .with_max_tokens(200)
            .with_stop(["END"]),
    );
    let group = Some(Arc::new(GroupInfo {
        name: "crm".into(),
        description: "Customer records.".into(),
        deferred: true,
    }));
    let catalog = ChatRequest::new(vec![
        Message::user("Weather in Paris?"),
        replayed.into(),
        Message::tool("toolu_1", "get.weather", "18°C"),
        Message::tool_change(ToolChange::new(vec![tool("crm_find")], vec!["read".into()])),
        Message::user("And the customer?"),
    ])
    .with_tools(vec![tool("get.weather"), tool("crm_find")])
    .with_declared_tools(vec![tool("get.weather"), tool("read")])
    .with_deferred_tools(vec![
        DeferredTool::new(tool("crm_find"), group.clone()),
        DeferredTool::new(tool("billing"), None),
    ])
    .with_parallel_tool_calls(true);
    let search = ChatRequest::new(vec![
        Message::user("Find a customer."),
        Message::assistant(
            "",
            vec![ToolCall::new(
                "toolu_9",
                "search_tools",
                r#"{"query":"customer"}"#,
            )],
        ),
        Message::Tool(ToolMessage {
            tool_references: vec!["crm_find".into()],
            ..ToolMessage::new("toolu_9", "search_tools", "crm_find: The crm_find tool.")
        }),
    ])
    .with_tools(vec![tool("read")])
    .with_deferred_tools(vec![DeferredTool::new(tool("crm_find"), group)])
    .with_tool_choice(ToolChoice::Required);
    let no_tools = ChatRequest::new(vec![Message::user("Hello.")]);
    vec![
        (AnthropicToolSearch::Bm25, plain, false),
        (AnthropicToolSearch::Bm25, catalog.clone(), false),
        (AnthropicToolSearch::Regex, catalog, true),
        (AnthropicToolSearch::Client, search, false),
        (AnthropicToolSearch::Bm25, no_tools, true),
    ]
}

/// The bodies of [`unchanged_requests`] as the provider wrote them before `hosted_code`
/// existed (one per line). `GOLDEN_WRITE=<file>` writes them instead.
const GOLDEN: &str = include_str!("golden_bodies.txt");

#[test]
fn requests_without_hosted_code_are_unchanged() {
    let bodies: Vec<String> = unchanged_requests()
        .into_iter()
        .map(|(search, request, stream)| {
            let (bytes, _) = model(search).body(&request, stream).expect("body");
            String::from_utf8(bytes).expect("UTF-8")
        })
        .collect();
    if let Ok(path) = std::env::var("GOLDEN_WRITE") {
        std::fs::write(path, bodies.join("\n") + "\n").expect("write");
        return;
    }
    let golden: Vec<&str> = GOLDEN.lines().collect();
    assert_eq!(golden.len(), bodies.len());
    for (now, before) in bodies.iter().zip(golden) {
        assert_eq!(now, before);
    }
}

fn code_execution() -> Value {
    json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "code_execution",
           "input": {"code": "r = await get_weather({'id': 'Paris'})\nprint(r)"}})
}

fn call_from_code() -> Value {
    json!({"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"id": "Paris"},
           "caller": {"type": "code_execution_20250825", "tool_id": "srvtoolu_1"}})
}

fn container() -> Value {
    json!({"id": "container_1", "expires_at": "2026-12-01T12:00:00Z"})
}

fn parse(content: Value, container: Value) -> Result<ChatResponse, ModelError> {
    let body = json!({"id": "msg_1", "type": "message", "role": "assistant",
                      "content": content, "container": container, "stop_reason": "tool_use"});
    let names = NameMap::new(Dialect::Anthropic, ["get.weather"]);
    parse_response(body.to_string().as_bytes(), &names)
}

#[test]
fn hosted_code_declares_the_code_tool_and_lets_code_call_every_tool() {
    let callers = json!(["direct", "code_execution_20250825"]);
    let requests = unchanged_requests();
    let (_, catalog, _) = &requests[1];
    let body = body(&catalog.clone().with_hosted_code(true));
    let tools = body["tools"].as_array().expect("tools");
    assert_eq!(
        tools.last(),
        Some(&json!({"type": "code_execution_20250825", "name": "code_execution"}))
    );
    let client: Vec<&Value> = tools.iter().filter(|t| t.get("type").is_none()).collect();
    assert_eq!(client.len(), 4, "{tools:?}");
    for tool in client {
        assert_eq!(tool["allowed_callers"], callers, "{tool}");
    }
    // No container was named in the conversation: none is sent.
    assert!(body.get("container").is_none());

    // Hosted code without client tools still declares the code tool.
    let body =
        self::body(&ChatRequest::new(vec![Message::user("2 ** 10?")]).with_hosted_code(true));
    assert_eq!(
        body["tools"],
        json!([{"type": "code_execution_20250825", "name": "code_execution"}])
    );
    assert_eq!(
        body["tool_choice"],
        json!({"type": "auto", "disable_parallel_tool_use": true})
    );
}

#[test]
fn calls_from_code_are_ordinary_calls_kept_with_their_caller_and_container() {
    let response = parse(
        json!([{"type": "text", "text": "Running code."}, code_execution(), call_from_code()]),
        container(),
    )
    .expect("parse");
    let message = &response.message;
    assert_eq!(
        message.tool_calls,
        [ToolCall::new("toolu_1", "get.weather", r#"{"id":"Paris"}"#)]
    );
    assert_eq!(message.program_of("toolu_1"), Some("srvtoolu_1"));
    let native = message.native.as_ref().expect("native");
    assert_eq!(native.items[1], code_execution());
    assert_eq!(native.items[2], call_from_code());
    assert_eq!(native.container, Some(container()));

    // A later turn of the same code: only a call with a caller. Kept, for its caller.
    let next = parse(
        json!([{"type": "tool_use", "id": "toolu_2", "name": "get_weather",
                "input": {"id": "Lyon"},
                "caller": {"type": "code_execution_20250825", "tool_id": "srvtoolu_1"}}]),
        container(),
    )
    .expect("parse")
    .message;
    assert_eq!(next.program_of("toolu_2"), Some("srvtoolu_1"));
    assert!(next.native.is_some());

    // A direct call and no container: nothing to keep, as before.
    let direct = parse(
        json!([{"type": "tool_use", "id": "toolu_3", "name": "get_weather",
                "input": {"id": "Nice"}, "caller": {"type": "direct"}}]),
        Value::Null,
    )
    .expect("parse")
    .message;
    assert_eq!(direct.program_of("toolu_3"), None);
    assert!(direct.native.is_none());
}

#[test]
fn blocks_go_back_unchanged_and_the_container_is_reused() {
    let first = parse(json!([code_execution(), call_from_code()]), container())
        .expect("parse")
        .message;
    let later = parse(
        json!([{"type": "text", "text": "Done."}]),
        json!({"id": "container_2", "expires_at": "2026-12-01T12:00:00Z"}),
    )
    .expect("parse")
    .message;
    let messages = vec![
        Message::user("Weather in Paris?"),
        first.into(),
        Message::tool("toolu_1", "get.weather", "18°C"),
    ];
    let request = ChatRequest::new(messages.clone())
        .with_tools(vec![tool("get.weather")])
        .with_hosted_code(true);
    let wire = body(&request);
    assert_eq!(
        wire["messages"][1],
        json!({"role": "assistant", "content": [code_execution(), call_from_code()]})
    );
    assert_eq!(
        wire["messages"][2],
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                            "content": "18°C"}]})
    );
    assert_eq!(wire["container"], "container_1");
    let keys: Vec<&str> = wire
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "model",
            "max_tokens",
            "tools",
            "messages",
            "tool_choice",
            "container"
        ]
    );

    // The last container named wins; a turn of another provider is skipped.
    let mut other = AssistantMessage::new("", Vec::new());
    let mut native = NativeItems::new("openai-responses", Vec::new());
    native.container = Some(json!({"id": "container_other"}));
    other.native = Some(Box::new(native));
    let mut messages = messages;
    messages.push(later.into());
    messages.push(Message::user("Again."));
    messages.push(other.into());
    let request = ChatRequest::new(messages.clone())
        .with_tools(vec![tool("get.weather")])
        .with_hosted_code(true);
    assert_eq!(body(&request)["container"], "container_2");

    // Without hosted code the container is not sent.
    let request = ChatRequest::new(messages).with_tools(vec![tool("get.weather")]);
    assert!(body(&request).get("container").is_none());
}

#[test]
fn malformed_callers_and_containers_are_typed_errors() {
    let bad_callers = [
        json!({"type": "robot"}),
        json!({"type": "code_execution_20250825"}),
        json!({"type": "code_execution_20250825", "tool_id": ""}),
        json!({"tool_id": "srvtoolu_1"}),
        json!("code_execution_20250825"),
    ];
    for caller in bad_callers {
        let block = json!([{"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                            "input": {}, "caller": caller}]);
        match parse(block, Value::Null) {
            Err(ModelError::Malformed(why)) => assert!(why.contains("block #0"), "{why}"),
            other => panic!("{caller}: {other:?}"),
        }
    }
    for container in [
        json!("container_1"),
        json!({}),
        json!({"id": 1}),
        json!({"id": ""}),
    ] {
        match parse(json!([{"type": "text", "text": "Hi."}]), container.clone()) {
            Err(ModelError::Malformed(why)) => assert!(why.contains("container"), "{why}"),
            other => panic!("{container}: {other:?}"),
        }
    }
}
