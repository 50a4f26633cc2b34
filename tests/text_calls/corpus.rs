//! The corpus of tool calls small local models wrote as text (`corpus.json`: recorded from
//! real-model runs, or written to issue 30's description; each case says which), run through
//! every reader of text calls: the public parser, [`TextToolCalls`] around a text-only model,
//! and the providers' recovery of calls a model with native tool calling wrote as text (on a
//! loopback server, both wires).
//!
//! Each case expects calls (names and arguments, and the text left), an error (the parser
//! refuses the reply, and the others pass on a call the agent refuses: one without a name, or
//! of a tool not offered, never the answer), or text (no call: the reply is the answer).

use agent_toolkit::model::{ChatRequest, Message, TextCallFormat, TextToolCalls, parse_tool_calls};
use agent_toolkit::testing::{ScriptedModel, ScriptedTurn};
use agent_toolkit::{ChatModel, ToolCall, ToolDefinition};
use serde::Deserialize;
use serde_json::Value;

const CORPUS: &str = include_str!("corpus.json");

#[derive(Deserialize)]
struct Corpus {
    tools: serde_json::Map<String, Value>,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    source: String,
    text: String,
    tools: Vec<String>,
    expect: Expect,
    #[serde(default)]
    calls: Vec<Call>,
    text_left: Option<String>,
    error_contains: Option<String>,
}

#[derive(Deserialize, PartialEq, Eq, Debug, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Expect {
    Calls,
    Error,
    Text,
}

#[derive(Deserialize, PartialEq, Debug)]
struct Call {
    name: String,
    arguments: Value,
}

fn corpus() -> Corpus {
    let corpus: Corpus = serde_json::from_str(CORPUS).expect("corpus.json");
    for case in &corpus.cases {
        assert!(
            case.source.starts_with("recorded from ")
                || case.source.starts_with("written ")
                || case.source.starts_with("quoted verbatim "),
            "{}: where did it come from? {}",
            case.name,
            case.source
        );
        assert_eq!(
            case.expect == Expect::Calls,
            !case.calls.is_empty(),
            "{}",
            case.name
        );
    }
    corpus
}

impl Corpus {
    fn tools(&self, case: &Case) -> Vec<ToolDefinition> {
        case.tools
            .iter()
            .map(|name| {
                let tool = &self.tools[name];
                ToolDefinition::new(
                    name.as_str(),
                    tool["description"].as_str().unwrap_or_default(),
                    tool["parameters"].clone(),
                )
            })
            .collect()
    }
}

fn read(calls: &[ToolCall]) -> Vec<Call> {
    calls
        .iter()
        .map(|c| Call {
            name: c.name.clone(),
            arguments: serde_json::from_str(&c.arguments).unwrap_or(Value::Null),
        })
        .collect()
}

/// What a reader that never refuses (`TextToolCalls` after its last repair, the providers'
/// recovery) made of `case`: the calls and the text.
fn check_passed_on(case: &Case, how: &str, calls: &[ToolCall], content: &str) {
    let name = &case.name;
    match case.expect {
        Expect::Calls => assert_eq!(read(calls), case.calls, "{how}: {name}"),
        Expect::Error => assert!(
            calls.iter().any(|c| !case.tools.contains(&c.name)),
            "{how}: {name}: no call the agent refuses in {calls:?}"
        ),
        Expect::Text => {
            assert!(calls.is_empty(), "{how}: {name}: {calls:?}");
            assert_eq!(content, case.text, "{how}: {name}");
        }
    }
}

#[test]
fn every_case_through_the_parser() {
    let corpus = corpus();
    for case in &corpus.cases {
        let name = &case.name;
        let parsed = parse_tool_calls(&case.text, TextCallFormat::Json, &corpus.tools(case));
        match case.expect {
            Expect::Calls => {
                let parsed = parsed.unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(read(&parsed.calls), case.calls, "{name}");
                if let Some(left) = &case.text_left {
                    assert_eq!(&parsed.text, left, "{name}");
                }
            }
            Expect::Error => {
                let error = parsed.expect_err(name).to_string();
                if let Some(needle) = &case.error_contains {
                    assert!(error.contains(needle), "{name}: {error}");
                }
            }
            Expect::Text => {
                let parsed = parsed.unwrap_or_else(|e| panic!("{name}: {e}"));
                assert!(parsed.calls.is_empty(), "{name}: {:?}", parsed.calls);
                assert_eq!(parsed.text, case.text, "{name}");
            }
        }
    }
}

#[tokio::test]
async fn every_case_through_text_tool_calls() {
    let corpus = corpus();
    for case in &corpus.cases {
        // No repairs: what the model wrote is what the agent gets.
        let inner = ScriptedModel::new([ScriptedTurn::text(case.text.clone())]);
        let model = TextToolCalls::new(inner).max_repairs(0);
        let request =
            ChatRequest::new(vec![Message::user("Go on.")]).with_tools(corpus.tools(case));
        let response = model.chat(request).await.expect(&case.name);
        let message = &response.message;
        check_passed_on(case, "TextToolCalls", &message.tool_calls, &message.content);
        if let (Expect::Calls, Some(left)) = (case.expect, &case.text_left) {
            assert_eq!(&message.content, left, "{}", case.name);
        }
    }
}

#[cfg(feature = "full")]
#[path = "../providers/support.rs"]
#[allow(dead_code)]
mod support;

/// The providers read the calls out of a reply without native calls, as llama.cpp sends it, on
/// both wires; the text stays as the model wrote it.
#[cfg(feature = "full")]
#[tokio::test]
async fn every_case_through_the_providers_recovery() {
    use std::time::Duration;

    use agent_toolkit::RetryPolicy;
    use agent_toolkit::model::{AnthropicMessages, OpenAiChat};
    use serde_json::json;
    use support::{Reply, Server};

    let corpus = corpus();
    for case in &corpus.cases {
        let openai_reply = Reply::json(json!({
            "choices": [{"finish_reason": "stop", "index": 0,
                         "message": {"role": "assistant", "content": case.text}}],
            "model": "local", "object": "chat.completion",
            "usage": {"completion_tokens": 17, "prompt_tokens": 171, "total_tokens": 188},
        }));
        let anthropic_reply = Reply::json(json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "local",
            "content": [{"type": "text", "text": case.text}],
            "stop_reason": "end_turn", "usage": {"input_tokens": 171, "output_tokens": 17},
        }));
        let server = Server::start([openai_reply, anthropic_reply]).await;
        let retry = RetryPolicy::exponential(1, Duration::from_millis(10), 2.0);
        let openai = OpenAiChat::builder()
            .base_url(format!("{}/v1", server.url))
            .model("local")
            .retry(retry.clone())
            .text_tool_calls(true)
            .build()
            .expect("build");
        let anthropic = AnthropicMessages::builder()
            .base_url(&server.url)
            .model("local")
            .retry(retry)
            .text_tool_calls(true)
            .build()
            .expect("build");
        let request =
            ChatRequest::new(vec![Message::user("Go on.")]).with_tools(corpus.tools(case));
        let responses = [
            ("OpenAI", openai.chat(request.clone()).await),
            ("Anthropic", anthropic.chat(request).await),
        ];
        for (wire, response) in responses {
            let response = response.unwrap_or_else(|e| panic!("{wire}: {}: {e}", case.name));
            let message = &response.message;
            check_passed_on(case, wire, &message.tool_calls, &message.content);
            assert_eq!(message.content, case.text, "{wire}: {}", case.name);
            assert_eq!(
                message.calls_in_text,
                case.expect != Expect::Text,
                "{wire}: {}",
                case.name
            );
        }
    }
}
