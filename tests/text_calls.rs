//! `TextToolCalls` around a scripted text-only model: what the inner model is sent, and what
//! the agent gets back.

use std::sync::Arc;

use agent_toolkit::{
    ChatModel, ReActAgent, ToolCall, ToolChoice, ToolDefinition,
    model::{
        ChatEvent, ChatRequest, FinishReason, Message, ModelError, Role, TextCallFormat,
        TextToolCalls,
    },
    testing::{ScriptedModel, ScriptedTurn},
};
use futures::StreamExt;
use serde_json::json;

/// Replies small models really wrote (and the issue's forms), through every reader.
#[path = "text_calls/corpus.rs"]
mod corpus;

fn tools() -> Vec<ToolDefinition> {
    vec![
        ToolDefinition::new(
            "get_weather",
            "Current weather of a city.",
            json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        ),
        ToolDefinition::new("search", "Search the web.", json!({"type": "object"})),
    ]
}

fn request(messages: Vec<Message>) -> ChatRequest {
    ChatRequest::new(messages)
        .with_tools(tools())
        .with_parallel_tool_calls(true)
}

fn ask(question: &str) -> ChatRequest {
    request(vec![
        Message::system("You are terse."),
        Message::user(question),
    ])
}

fn tool_message(id: &str, name: &str, content: &str, is_error: bool) -> Message {
    if is_error {
        Message::tool_error(id, name, content)
    } else {
        Message::tool(id, name, content)
    }
}

fn ensure(ok: bool, why: impl Into<String>) -> Result<(), String> {
    if ok { Ok(()) } else { Err(why.into()) }
}

#[tokio::test]
async fn system_prompt_lists_the_tools_and_no_native_tools_are_sent() {
    let inner = ScriptedModel::new([]).then_expect(
        |r| {
            ensure(r.tools.is_empty(), "native tools were sent")?;
            ensure(r.messages.len() == 2, "a second system message was added")?;
            let system = &r.messages[0];
            ensure(
                system.role() == Role::System,
                "first message is not the system prompt",
            )?;
            for needle in [
                "You are terse.",
                "## get_weather",
                "Current weather of a city.",
                r#""required":["city"]"#,
                "## search",
                r#"{"tool_calls": [{"name": "TOOL_NAME""#,
                "Call a tool only when you need one",
            ] {
                ensure(
                    system.content().contains(needle),
                    format!("no `{needle}` in {}", system.content()),
                )?;
            }
            Ok(())
        },
        ScriptedTurn::text("Sunny."),
    );
    let model = TextToolCalls::new(inner);
    let response = model.chat(ask("Weather?")).await.unwrap();
    assert_eq!(response.message.content, "Sunny.");
    assert!(response.message.tool_calls.is_empty());
    assert_eq!(response.finish_reason, FinishReason::Stop);
}

#[tokio::test]
async fn json_reply_becomes_tool_calls() {
    let inner = ScriptedModel::new([ScriptedTurn::text(
        "Checking both.\n```json\n{\"tool_calls\": [{\"id\": \"w\", \"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}, {\"name\": \"search\", \"parameters\": {\"q\": \"Paris events\"}}]}\n```",
    )]);
    let model = TextToolCalls::new(inner);
    let response = model.chat(ask("Paris?")).await.unwrap();
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.message.content, "Checking both.");
    let calls = &response.message.tool_calls;
    assert_eq!(
        calls[0],
        ToolCall::new("w", "get_weather", r#"{"city":"Paris"}"#)
    );
    assert_eq!(calls[1].name, "search");
    assert_eq!(calls[1].arguments, r#"{"q":"Paris events"}"#);
    assert_ne!(&*calls[1].id, "w");
}

#[tokio::test]
async fn xml_reply_becomes_tool_calls() {
    let inner = ScriptedModel::new([]).then_expect(
        |r| {
            ensure(
                r.messages[0].content().contains(r#"<tool_call name="TOOL_NAME"><parameters>"#),
                "the XML form is not taught",
            )
        },
        ScriptedTurn::text(
            r#"<tool_call name="get_weather"><parameters>{"city": "Rome"}</parameters></tool_call>"#,
        ),
    );
    let model = TextToolCalls::new(inner).format(TextCallFormat::Xml);
    let response = model.chat(ask("Rome?")).await.unwrap();
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.message.content, "");
    assert_eq!(response.message.tool_calls.len(), 1);
    assert_eq!(response.message.tool_calls[0].name, "get_weather");
    assert_eq!(
        response.message.tool_calls[0].arguments,
        r#"{"city":"Rome"}"#
    );
}

#[tokio::test]
async fn malformed_reply_is_repaired_after_one_re_ask() {
    let bad = r#"{"tool_calls": [{"name": "get_weather", "parameters": {"city": "Oslo"]}]}"#;
    let inner = Arc::new(ScriptedModel::new([ScriptedTurn::text(bad)]).then_expect(
        move |r| {
            let n = r.messages.len();
            ensure(n == 4, format!("expected 4 messages, got {n}"))?;
            let (reply, ask) = (&r.messages[n - 2], &r.messages[n - 1]);
            ensure(
                reply.role() == Role::Assistant && reply.content() == bad,
                "bad reply not echoed",
            )?;
            ensure(ask.role() == Role::User, "re-ask is not a user message")?;
            for needle in [
                "not valid JSON",
                r#""city": "Oslo"]"#,
                "TOOL_NAME",
                "get_weather, search",
            ] {
                ensure(
                    ask.content().contains(needle),
                    format!("no `{needle}` in {}", ask.content()),
                )?;
            }
            Ok(())
        },
        ScriptedTurn::text(
            r#"{"tool_calls": [{"name": "get_weather", "parameters": {"city": "Oslo"}}]}"#,
        ),
    ));
    let model = TextToolCalls::new(inner.clone());
    let response = model.chat(ask("Oslo?")).await.unwrap();
    assert_eq!(response.message.tool_calls.len(), 1);
    assert_eq!(
        response.message.tool_calls[0].arguments,
        r#"{"city":"Oslo"}"#
    );
    assert_eq!(inner.remaining(), 0);
    let requests = inner.requests();
    assert!(
        response.usage.input_tokens
            > requests[0]
                .messages
                .iter()
                .map(|m| m.content().len() as u64 / 4)
                .sum::<u64>()
    );
}

/// After the repairs, an unusable call goes on as written: the agent answers it with an error the
/// model reads. A reply that still calls nothing where a call is required is an error.
#[tokio::test]
async fn exhausted_repairs_pass_the_call_on() {
    let unknown = r#"{"tool_calls": [{"name": "delete_everything", "parameters": {}}]}"#;
    let inner = Arc::new(ScriptedModel::new([
        ScriptedTurn::text(unknown),
        ScriptedTurn::text(unknown),
        ScriptedTurn::text("never asked"),
    ]));
    let model = TextToolCalls::new(inner.clone()).max_repairs(1);
    let response = model.chat(ask("Clean up.")).await.unwrap();
    assert_eq!(response.message.tool_calls.len(), 1);
    assert_eq!(response.message.tool_calls[0].name, "delete_everything");
    assert_eq!(inner.remaining(), 1);

    // Through an agent, the model reads why it cannot call that tool.
    let inner = Arc::new(ScriptedModel::new([
        ScriptedTurn::text(unknown),
        ScriptedTurn::text(unknown),
        ScriptedTurn::text("I cannot delete everything."),
    ]));
    let kit = agent_toolkit::Toolkit::builder()
        .register(calculator::Calculator)
        .build()
        .unwrap();
    let mut agent = ReActAgent::builder(TextToolCalls::new(inner.clone()).max_repairs(1))
        .toolkit(&kit)
        .build()
        .unwrap();
    assert_eq!(
        agent.run("Clean up.").await.unwrap(),
        "I cannot delete everything."
    );
    let refusal = agent
        .memory()
        .iter()
        .find(|m| m.role() == Role::Tool)
        .unwrap();
    assert!(
        refusal
            .content()
            .contains("`delete_everything` is not available"),
        "{}",
        refusal.content()
    );

    let inner = Arc::new(ScriptedModel::new([
        ScriptedTurn::text("No."),
        ScriptedTurn::text("Still no."),
    ]));
    let model = TextToolCalls::new(inner).max_repairs(1);
    let required = ask("Clean up.").with_tool_choice(ToolChoice::Required);
    match model.chat(required).await.unwrap_err() {
        ModelError::Malformed(message) => {
            assert!(message.contains("after 1 repair"), "{message}");
            assert!(message.contains("must call at least one tool"), "{message}");
        }
        other => panic!("expected Malformed, got {other:?}"),
    }
}

#[tokio::test]
async fn history_is_rendered_as_text() {
    let history = vec![
        Message::user("Weather in Paris and news?"),
        Message::assistant(
            "Looking.",
            vec![
                ToolCall::new("call_1", "get_weather", r#"{"city":"Paris"}"#),
                ToolCall::new("call_2", "search", r#"{"q":"news"}"#),
            ],
        ),
        tool_message("call_1", "get_weather", "21°C", false),
        tool_message("call_2", "search", "Error: offline", true),
    ];
    let inner = ScriptedModel::new([]).then_expect(
        |r| {
            let roles: Vec<Role> = r.messages.iter().map(|m| m.role()).collect();
            ensure(
                roles == [Role::System, Role::User, Role::Assistant, Role::User],
                format!("roles {roles:?}"),
            )?;
            let assistant = &r.messages[2];
            ensure(assistant.tool_calls().is_empty(), "native calls left in history")?;
            ensure(
                assistant.content()
                    == "Looking.\n\n{\"tool_calls\":[{\"id\":\"call_1\",\"name\":\"get_weather\",\"parameters\":{\"city\":\"Paris\"}},{\"id\":\"call_2\",\"name\":\"search\",\"parameters\":{\"q\":\"news\"}}]}",
                format!("assistant: {}", assistant.content()),
            )?;
            let results = &r.messages[3];
            ensure(
                results.content()
                    == "The functions returned:\n1. get_weather: 21°C\n\
                        2. search (failed): Error: offline\n\
                        Correct the call and try again, or answer my previous question in plain text.",
                format!("results: {}", results.content()),
            )?;
            ensure(results.role() == Role::User, "the results are a user message")
        },
        ScriptedTurn::text(r#"{"tool_calls": [{"name": "search", "parameters": {"q": "news again"}}]}"#),
    );
    let model = TextToolCalls::new(inner);
    let response = model.chat(request(history)).await.unwrap();
    // Ids already in the history are not handed out again.
    let id = &*response.message.tool_calls[0].id;
    assert!(id != "call_1" && id != "call_2", "{id}");
}

#[tokio::test]
async fn xml_history_and_required_choice() {
    let history = vec![
        Message::user("Search rust."),
        Message::assistant("", vec![ToolCall::new("s1", "search", r#"{"q":"rust"}"#)]),
        tool_message("s1", "search", "Rust is a language.", false),
    ];
    let inner = Arc::new(
        ScriptedModel::new([])
            .then_expect(
                |r| {
                    ensure(r.messages[0].content().contains("This reply must call at least one tool."), "rule missing")?;
                    ensure(
                        r.messages[2].content()
                            == r#"<tool_call id="s1" name="search"><parameters>{"q":"rust"}</parameters></tool_call>"#,
                        format!("assistant: {}", r.messages[2].content()),
                    )
                },
                ScriptedTurn::text("Rust is a language."),
            )
            .then_expect(
                |r| {
                    let ask = &r.messages[r.messages.len() - 1].content();
                    ensure(ask.contains("must call at least one tool"), format!("re-ask: {ask}"))
                },
                ScriptedTurn::text(r#"<tool_call name="search"><parameters>{"q": "rust book"}</parameters></tool_call>"#),
            ),
    );
    let model = TextToolCalls::new(inner.clone()).format(TextCallFormat::Xml);
    let response = model
        .chat(request(history).with_tool_choice(ToolChoice::Required))
        .await
        .unwrap();
    assert_eq!(
        response.message.tool_calls[0].arguments,
        r#"{"q":"rust book"}"#
    );
    assert_eq!(inner.remaining(), 0);
}

#[tokio::test]
async fn tool_choice_none_lists_no_tools_and_refuses_calls() {
    let inner = ScriptedModel::new([])
        .then_expect(
            |r| {
                let system = &r.messages[0].content();
                ensure(!system.contains("## get_weather"), "tools listed")?;
                ensure(
                    system.contains("No tool may be called"),
                    format!("system: {system}"),
                )
            },
            ScriptedTurn::text(r#"{"tool_calls": [{"name": "search"}]}"#),
        )
        .then_expect(
            |r| {
                let ask = &r.messages[r.messages.len() - 1].content();
                ensure(ask.contains("plain text"), format!("re-ask: {ask}"))
            },
            ScriptedTurn::text("I cannot search now."),
        );
    let model = TextToolCalls::new(inner);
    let response = model
        .chat(ask("Search?").with_tool_choice(ToolChoice::None))
        .await
        .unwrap();
    assert_eq!(response.message.content, "I cannot search now.");
    assert!(response.message.tool_calls.is_empty());
}

#[tokio::test]
async fn without_tools_the_reply_is_not_parsed() {
    let text = r#"An OpenAI reply looks like {"tool_calls": [{"name": "x"}]}."#;
    let inner = ScriptedModel::new([]).then_expect(
        |r| {
            ensure(
                r.messages.len() == 1 && r.messages[0].role() == Role::User,
                "prompt changed",
            )
        },
        ScriptedTurn::text(text),
    );
    let model = TextToolCalls::new(inner);
    let response = model
        .chat(ChatRequest::new(vec![Message::user("Show me.")]))
        .await
        .unwrap();
    assert_eq!(response.message.content, text);
    assert!(response.message.tool_calls.is_empty());
}

#[tokio::test]
async fn streams_and_forwards_name() {
    let inner = ScriptedModel::new([ScriptedTurn::text(
        r#"On it. {"tool_calls": [{"name": "search", "parameters": {"q": "x"}}]}"#,
    )]);
    let model = TextToolCalls::new(inner);
    assert_eq!(model.name(), "scripted");
    let events: Vec<ChatEvent> = model
        .chat_stream(ask("x?"))
        .map(|e| e.unwrap())
        .collect()
        .await;
    assert_eq!(events[0], ChatEvent::TextDelta("On it.".into()));
    assert!(matches!(&events[1], ChatEvent::ToolCallStarted { name, .. } if name == "search"));
    assert!(matches!(events.last(), Some(ChatEvent::Done(r)) if r.message.tool_calls.len() == 1));
}

/// The calculator of `seeds/002`, as a real tool: its `a` and `b` are numbers, `operation` a
/// string enum.
mod calculator {
    use agent_toolkit::prelude::*;
    use schemars::JsonSchema;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    pub enum Operation {
        Add,
        Sub,
        Mul,
        Div,
    }

    /// Perform arithmetic operations.
    #[tool]
    pub fn calculator(a: f64, b: f64, operation: Operation) -> Result<String, ToolError> {
        let result = match operation {
            Operation::Add => a + b,
            Operation::Sub => a - b,
            Operation::Mul => a * b,
            Operation::Div if b == 0.0 => {
                return Err(ToolError::execution("Division by zero"));
            }
            Operation::Div => a / b,
        };
        Ok(result.to_string())
    }

    /// Counts `times` repetitions of a code, to show that element text stays a string where
    /// the schema says string.
    #[tool]
    pub fn repeat(code: String, times: u8, tags: Vec<String>) -> String {
        format!("{} x{times} {tags:?}", code.repeat(usize::from(times)))
    }
}

/// The XML form of `seeds/002`, verbatim, runs the tool through `TextToolCalls` and an agent.
#[tokio::test]
async fn the_002_xml_form_runs_a_tool() {
    use agent_toolkit::prelude::*;

    let call_002 = "<tool_call id=\"call_1\" name=\"calculator\">\n  <parameters>\n    \
                    <a>10</a>\n    <b>5</b>\n    <operation>add</operation>\n  </parameters>\n\
                    </tool_call>";
    let inner = Arc::new(
        ScriptedModel::new([ScriptedTurn::text(call_002)]).then_expect(
            |r| {
                let last = &r.messages[r.messages.len() - 1];
                ensure(
                    last.content()
                        == "The function returned: 15\nUse this result to answer my previous question in plain text.",
                    format!("the tool result is not 15: {}", last.content()),
                )
            },
            ScriptedTurn::text("10 + 5 = 15."),
        ),
    );
    let model = TextToolCalls::new(inner.clone()).format(TextCallFormat::Xml);
    let kit = Toolkit::builder()
        .register(calculator::Calculator)
        .register(calculator::Repeat)
        .build()
        .unwrap();
    let mut agent = ReActAgent::builder(model).toolkit(&kit).build().unwrap();
    let answer = agent.run("What is 10 + 5?").await.unwrap();
    assert_eq!(answer, "10 + 5 = 15.");
    assert_eq!(inner.remaining(), 0);
}

#[tokio::test]
async fn xml_elements_are_typed_by_the_tool_schema() {
    use agent_toolkit::prelude::*;

    let kit = Toolkit::builder()
        .register(calculator::Repeat)
        .build()
        .unwrap();
    let inner = ScriptedModel::new([ScriptedTurn::text(
        "<tool_call name=\"repeat\"><parameters><code>007</code><times>2</times>\
         <tags>a</tags><tags>10</tags></parameters></tool_call>",
    )]);
    let model = TextToolCalls::new(inner).format(TextCallFormat::Xml);
    let request =
        ChatRequest::new(vec![Message::user("Repeat 007 twice.")]).with_tools(kit.definitions());
    let response = model.chat(request).await.unwrap();
    let call = response.message.tool_calls[0].clone();
    assert_eq!(
        call.arguments,
        r#"{"code":"007","times":2,"tags":["a","10"]}"#
    );
    let result = kit.call(call, &ToolContext::new()).await;
    assert_eq!(
        result.output().map(|o| o.as_text()),
        Some(r#"007007 x2 ["a", "10"]"#),
        "{result:?}"
    );
}

#[tokio::test]
async fn malformed_xml_elements_are_sent_back_for_repair() {
    let inner = Arc::new(
        ScriptedModel::new([ScriptedTurn::text(
            "<tool_call name=\"get_weather\"><parameters><city>Oslo</town></parameters></tool_call>",
        )])
        .then_expect(
            |r| {
                let ask = &r.messages[r.messages.len() - 1].content();
                for needle in [
                    "tool call #1",
                    "not well-formed XML",
                    "expected `</city>`, but `</town>` was found",
                    "TOOL_NAME",
                ] {
                    ensure(ask.contains(needle), format!("no `{needle}` in {ask}"))?;
                }
                Ok(())
            },
            ScriptedTurn::text(
                "<tool_call name=\"get_weather\"><parameters><city>Oslo</city></parameters></tool_call>",
            ),
        ),
    );
    let model = TextToolCalls::new(inner.clone()).format(TextCallFormat::Xml);
    let response = model.chat(ask("Oslo?")).await.unwrap();
    assert_eq!(
        response.message.tool_calls[0].arguments,
        r#"{"city":"Oslo"}"#
    );
    assert_eq!(inner.remaining(), 0);
}

/// `parse_tool_calls`, the public parser for text that does not come from a `ChatModel`:
/// design document 002's XML form with element parameters, typed by the tool's schema, and a
/// call of a tool not offered refused with an error the model can read.
#[test]
fn parse_tool_calls_reads_text_from_anywhere() {
    use agent_toolkit::model::{TextCallError, parse_tool_calls};
    let tools = vec![ToolDefinition::new(
        "calculator",
        "Arithmetic on two numbers.",
        json!({"type": "object", "properties": {
            "a": {"type": "integer"}, "b": {"type": "number"}, "operation": {"type": "string"}
        }, "required": ["a", "b", "operation"]}),
    )];
    let text = "Let me add them.\n<tool_call id=\"call_1\" name=\"calculator\"><parameters>\
                <a>10</a><b>5</b><operation>add</operation></parameters></tool_call>";
    let parsed = parse_tool_calls(text, TextCallFormat::Xml, &tools).unwrap();
    assert_eq!(parsed.text, "Let me add them.");
    assert_eq!(parsed.calls.len(), 1);
    assert_eq!(&*parsed.calls[0].id, "call_1");
    assert_eq!(&*parsed.calls[0].name, "calculator");
    let args: serde_json::Value = serde_json::from_str(&parsed.calls[0].arguments).unwrap();
    assert_eq!(args, json!({"a": 10, "b": 5, "operation": "add"}));

    let unknown = "<tool_call name=\"shell\"><parameters>{}</parameters></tool_call>";
    match parse_tool_calls(unknown, TextCallFormat::Xml, &tools) {
        Err(TextCallError::UnknownTool {
            tool, available, ..
        }) => {
            assert_eq!(tool, "shell");
            assert_eq!(available, vec!["calculator".to_owned()]);
        }
        other => panic!("expected UnknownTool, got {other:?}"),
    }
}
