//! Wire shapes of the Responses provider: hosted programs (programmatic tool calling), and the
//! requests that do not ask for them, which must stay byte for byte what they were before.

use std::sync::Arc;

use serde_json::{Value, json};

use super::*;
use crate::model::{
    AssistantMessage, DeferredTool, FinishReason, GenerationOptions, NativeItems, ToolChange,
    ToolChoice, ToolMessage,
};
use crate::tool::GroupInfo;
use crate::tool::ToolDefinition;

fn model(search: ResponsesToolSearch) -> OpenAiResponses {
    OpenAiResponses::builder()
        .base_url("http://127.0.0.1:9")
        .model("gpt-test")
        .tool_search(search)
        .build()
        .expect("build")
}

fn body(model: &OpenAiResponses, request: &ChatRequest) -> Value {
    let (bytes, _) = model.body(request, false).expect("body");
    serde_json::from_slice(&bytes).expect("JSON")
}

fn tool(name: &str) -> ToolDefinition {
    ToolDefinition::new(
        name,
        format!("The {name} tool."),
        json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
    )
}

fn group(name: &str) -> Option<Arc<GroupInfo>> {
    Some(Arc::new(GroupInfo {
        name: name.into(),
        description: format!("The {name} tools."),
        deferred: true,
    }))
}

/// Requests with every kind of message, tool and item the provider writes: the bytes of their
/// bodies without hosted code are compared with those written before hosted code existed.
fn unchanged_requests() -> Vec<(ResponsesToolSearch, ChatRequest, bool)> {
    let mut replayed = AssistantMessage::new(
        "",
        vec![ToolCall::new("call_1", "get.weather", r#"{"id":"Paris"}"#)],
    );
    replayed.native = Some(Box::new(NativeItems::new(
        PROVIDER,
        vec![
            json!({"type": "reasoning", "id": "rs_1", "summary": [],
                   "encrypted_content": "gAAA"}),
            json!({"type": "function_call", "id": "fc_1", "call_id": "call_1",
                   "name": "get_weather", "arguments": "{\"id\":\"Paris\"}",
                   "status": "completed"}),
        ],
    )));
    let plain = ChatRequest::new(vec![
        Message::system("Be brief."),
        Message::user("Weather in Paris? And read /nope."),
        Message::assistant(
            "Looking.",
            vec![
                ToolCall::new("call_1", "get.weather", r#"{"id":"Paris"}"#),
                ToolCall::new("call_2", "read", r#"{"id":"/nope"}"#),
            ],
        ),
        Message::tool("call_1", "get.weather", "18°C"),
        Message::tool_error("call_2", "read", "no such file"),
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
    let catalog = ChatRequest::new(vec![
        Message::user("Weather in Paris?"),
        replayed.into(),
        Message::tool("call_1", "get.weather", "18°C"),
        Message::tool_change(ToolChange::new(vec![tool("crm_find")], vec!["read".into()])),
        Message::user("And the customer?"),
    ])
    .with_tools(vec![tool("get.weather"), tool("crm_find")])
    .with_declared_tools(vec![tool("get.weather"), tool("read")])
    .with_deferred_tools(vec![
        DeferredTool::new(tool("crm_find"), group("crm")),
        DeferredTool::new(tool("crm_list"), group("crm")),
        DeferredTool::new(tool("billing"), None),
    ])
    .with_parallel_tool_calls(true);
    let search = ChatRequest::new(vec![
        Message::user("Find a customer."),
        Message::assistant(
            "",
            vec![ToolCall::new(
                "call_9",
                SEARCH_TOOL_NAME,
                r#"{"query":"customer"}"#,
            )],
        ),
        Message::Tool(ToolMessage {
            tool_references: vec!["crm_find".into()],
            ..ToolMessage::new("call_9", SEARCH_TOOL_NAME, "crm_find: The crm_find tool.")
        }),
    ])
    .with_tools(vec![tool("read")])
    .with_deferred_tools(vec![DeferredTool::new(tool("crm_find"), group("crm"))])
    .with_tool_choice(ToolChoice::Required);
    let no_tools = ChatRequest::new(vec![Message::user("Hello.")]);
    vec![
        (ResponsesToolSearch::Hosted, plain, false),
        (ResponsesToolSearch::Hosted, catalog.clone(), false),
        (ResponsesToolSearch::Client, catalog, true),
        (ResponsesToolSearch::Client, search, false),
        (ResponsesToolSearch::Hosted, no_tools, true),
    ]
}

/// The bodies of [`unchanged_requests`] as the provider wrote them before `hosted_code`
/// existed (one per line), read back by [`requests_without_hosted_code_are_unchanged`].
/// `GOLDEN_WRITE=<file>` writes them instead.
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

#[test]
fn hosted_code_declares_the_program_tool_and_lets_programs_call_every_function() {
    let callers = json!(["direct", "programmatic"]);
    let requests = unchanged_requests();
    let (_, catalog, _) = &requests[1];
    let request = catalog.clone().with_hosted_code(true);
    assert!(request.hosted_code);
    let body = body(&model(ResponsesToolSearch::Hosted), &request);
    let tools = body["tools"].as_array().expect("tools");
    let kinds: Vec<&str> = tools.iter().filter_map(|t| t["type"].as_str()).collect();
    assert_eq!(
        kinds,
        [
            "function",
            "function",
            "programmatic_tool_calling",
            "tool_search",
            "namespace",
            "function"
        ]
    );
    assert_eq!(tools[2], json!({"type": "programmatic_tool_calling"}));
    for function in tools.iter().filter(|t| t["type"] == "function") {
        assert_eq!(function["allowed_callers"], callers, "{function}");
    }
    for function in tools[4]["tools"].as_array().expect("namespace tools") {
        assert_eq!(function["allowed_callers"], callers, "{function}");
        assert_eq!(function["defer_loading"], true);
    }
    // The key comes last, after what was there before.
    let keys: Vec<&str> = tools[0]
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "type",
            "name",
            "description",
            "parameters",
            "strict",
            "allowed_callers"
        ]
    );
    // A tool added mid-conversation may be called by programs too, and programs stay allowed
    // when the callable tools are restricted.
    let input = body["input"].as_array().expect("input");
    let added = input
        .iter()
        .find(|i| i["type"] == "additional_tools")
        .expect("additional_tools");
    assert_eq!(added["tools"][0]["allowed_callers"], callers);
    let allowed = body["tool_choice"]["tools"].as_array().expect("allowed");
    assert_eq!(
        allowed.last(),
        Some(&json!({"type": "programmatic_tool_calling"}))
    );

    // The tools a client search loads are callable by programs as well.
    let (_, search, _) = &requests[3];
    let body = body_of(
        ResponsesToolSearch::Client,
        search.clone().with_hosted_code(true),
    );
    let output = body["input"]
        .as_array()
        .expect("input")
        .iter()
        .find(|i| i["type"] == "tool_search_output")
        .expect("tool_search_output")
        .clone();
    assert_eq!(output["tools"][0]["allowed_callers"], callers);

    // Hosted code without client tools still declares the program tool.
    let body = body_of(
        ResponsesToolSearch::Hosted,
        ChatRequest::new(vec![Message::user("2 ** 10?")]).with_hosted_code(true),
    );
    assert_eq!(
        body["tools"],
        json!([{"type": "programmatic_tool_calling"}])
    );
    assert_eq!(body["tool_choice"], "auto");
}

fn body_of(search: ResponsesToolSearch, request: ChatRequest) -> Value {
    body(&model(search), &request)
}

fn program() -> Value {
    json!({"type": "program", "id": "prog_item_1", "call_id": "prog_1",
           "code": "const w = await tools.get_weather({id: 'Paris'}); return w;",
           "fingerprint": "fp_opaque_1"})
}

fn call_from_program() -> Value {
    json!({"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
           "arguments": "{\"id\":\"Paris\"}", "status": "completed",
           "caller": {"type": "program", "caller_id": "prog_1"}})
}

fn names() -> NameMap {
    NameMap::new(Dialect::OpenAi, ["get.weather"])
}

fn parse(output: Value) -> Result<ChatResponse, ModelError> {
    let body = json!({"status": "completed", "output": output});
    parse_response(body.to_string().as_bytes(), &names())
}

#[test]
fn a_program_is_kept_and_its_calls_are_ordinary_calls() {
    let response = parse(json!([program(), call_from_program(),
        {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "get_weather",
         "arguments": "{\"id\":\"Lyon\"}", "caller": {"type": "direct"}}]))
    .expect("parse");
    let message = &response.message;
    assert_eq!(
        message.tool_calls,
        [
            ToolCall::new("call_1", "get.weather", r#"{"id":"Paris"}"#),
            ToolCall::new("call_2", "get.weather", r#"{"id":"Lyon"}"#),
        ]
    );
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    let native = message.native.as_ref().expect("native");
    assert_eq!(native.items[0], program());
    assert_eq!(native.items[1], call_from_program());
    assert_eq!(message.program_of("call_1"), Some("prog_1"));
    assert_eq!(message.program_of("call_2"), None, "a direct call");
    assert_eq!(message.program_of("prog_1"), None, "not a call");

    // The program's output ends it; it is kept for the replay like the program.
    let output = json!({"type": "program_output", "id": "po_1", "call_id": "prog_1",
                        "result": "18°C", "status": "completed"});
    let done = parse(json!([output, {"type": "message", "role": "assistant",
        "content": [{"type": "output_text", "text": "18°C in Paris."}]}]))
    .expect("parse");
    assert_eq!(done.message.content, "18°C in Paris.");
    assert!(done.message.tool_calls.is_empty());
    assert_eq!(done.finish_reason, FinishReason::Stop);
    assert_eq!(done.message.native.expect("native").items[0], output);
}

#[test]
fn a_program_goes_back_whole_and_its_calls_keep_their_caller() {
    let turn = parse(json!([program(), call_from_program()]))
        .expect("parse")
        .message;
    let request = ChatRequest::new(vec![
        Message::user("Weather in Paris?"),
        turn.into(),
        Message::tool("call_1", "get.weather", "18°C"),
    ])
    .with_tools(vec![tool("get.weather")])
    .with_hosted_code(true);
    let body = body(&model(ResponsesToolSearch::Hosted), &request);
    let mut call = call_from_program();
    call.as_object_mut().expect("object").remove("id");
    assert_eq!(
        body["input"],
        json!([
            {"type": "message", "role": "user", "content": "Weather in Paris?"},
            program(),
            call,
            {"type": "function_call_output", "call_id": "call_1", "output": "18°C"},
        ])
    );
}

#[test]
fn malformed_programs_and_callers_are_typed_errors() {
    let cases = [
        json!([{"type": "program", "code": "return 1", "fingerprint": "f"}]),
        json!([{"type": "program", "call_id": "", "code": "return 1"}]),
        json!([{"type": "program", "call_id": 7, "code": "return 1"}]),
        json!([{"type": "function_call", "call_id": "c", "name": "get_weather",
                "arguments": "{}", "caller": {"type": "robot"}}]),
        json!([{"type": "function_call", "call_id": "c", "name": "get_weather",
                "arguments": "{}", "caller": {"type": "program"}}]),
        json!([{"type": "function_call", "call_id": "c", "name": "get_weather",
                "arguments": "{}", "caller": "program"}]),
        json!([{"type": "function_call", "call_id": "c", "name": "get_weather",
                "arguments": "{}", "caller": {"caller_id": "prog_1"}}]),
    ];
    for output in cases {
        match parse(output.clone()) {
            Err(ModelError::Malformed(why)) => assert!(why.contains("output item #0"), "{why}"),
            other => panic!("{output}: {other:?}"),
        }
    }
    // A `null` caller is no caller.
    let response = parse(json!([{"type": "function_call", "call_id": "c",
        "name": "get_weather", "arguments": "{}", "caller": null}]))
    .expect("parse");
    assert_eq!(response.message.program_of("c"), None);
}
