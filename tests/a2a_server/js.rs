//! Design document 000's client, written with the official JS SDK (`tests/peers/js/doc_client.cjs`:
//! `@a2a-js/sdk` 1.x on A2A 1.0, 0.3.14 on A2A 0.3), against `A2aAgentServer`: its tools reach
//! the model, the model's calls come back LangChain-shaped in a Message, and the results it
//! sends as a new message reach the model as tool results, every one of them, with no "returned
//! no result" error beside them.

use std::sync::Arc;
use std::time::Duration;

use agent_toolkit::a2a::server::A2aAgentServer;
use agent_toolkit::model::{ChatRequest, Role};
use agent_toolkit::{
    ReActAgent,
    testing::{ScriptedModel, ScriptedTurn},
};
use serde_json::{Value, json};

use crate::fixtures::serve;
use crate::peers::run_node;

const ANSWER: &str = "It is 18 degrees in San Francisco, and the file says hello.";

/// A file for the client's `read_file` tool, with `text` in it.
fn config_file(text: &str) -> String {
    let path = std::env::temp_dir().join(format!(
        "doc000-{}.txt",
        agent_toolkit::a2a::types::new_message_id()
    ));
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

/// The model behind the server: checks it was offered the client's two tools and calls both,
/// then checks both results came back as tool results (right ids, right contents, no errors)
/// before it answers.
fn weather_and_file_model(path: &str, read_file_fails: bool) -> Arc<ScriptedModel> {
    let call_file = json!({"file_path": path});
    Arc::new(
        ScriptedModel::default()
            .then_expect(
                |req| {
                    let names: Vec<&str> = req.tools.iter().map(|t| t.name()).collect();
                    (names == ["get_weather", "read_file"])
                        .then_some(())
                        .ok_or(format!("the client's tools were not offered: {names:?}"))
                },
                ScriptedTurn::calls([
                    ("get_weather", json!({"location": "San Francisco, CA"})),
                    ("read_file", call_file),
                ]),
            )
            .then_expect(
                move |req| results_reached_the_model(req, read_file_fails),
                ScriptedTurn::text(ANSWER),
            ),
    )
}

/// The request after the calls ends with the assistant's two calls and one tool result for
/// each, in order, holding what the client's tools returned; the question is the only user
/// message (no results pasted in as text, no "no result" error).
fn results_reached_the_model(req: &ChatRequest, read_file_fails: bool) -> Result<(), String> {
    let m = &req.messages;
    let users: Vec<&str> = m
        .iter()
        .filter(|m| m.role() == Role::User)
        .map(|m| m.content())
        .collect();
    if users.len() != 1 {
        return Err(format!(
            "expected the question as the only user message: {users:?}"
        ));
    }
    let [.., call, weather, file] = m.as_slice() else {
        return Err(format!("too few messages: {m:?}"));
    };
    let ids: Vec<&str> = call.tool_calls().iter().map(|c| &*c.id).collect();
    let (Some(weather), Some(file)) = (weather.as_tool(), file.as_tool()) else {
        return Err(format!("not two tool results after the call: {m:?}"));
    };
    let ok = call.role() == Role::Assistant
        && ids == [&*weather.call_id, &*file.call_id]
        && weather.content.contains(r#""temperature":18"#)
        && !weather.is_error
        && file.is_error == read_file_fails
        && (read_file_fails || file.content.contains("hello config"))
        && !m.iter().any(|m| m.content().contains("no result"));
    ok.then_some(()).ok_or(format!(
        "the results did not reach the model as tool results: {m:#?}"
    ))
}

async fn doc_client(base: &str, sdk: &str, flags: &[&str], question: &str) -> Value {
    let card = format!("{base}/.well-known/agent-card.json");
    let mut args = vec![card.as_str(), sdk];
    args.extend_from_slice(flags);
    args.push(question);
    let (ok, stdout, stderr) = run_node("doc_client.cjs", &args, Duration::from_secs(60)).await;
    assert!(ok, "doc_client.cjs failed:\n{stderr}\n{stdout}");
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last)
        .unwrap_or_else(|e| panic!("doc_client.cjs printed no report ({e}):\n{stdout}\n{stderr}"))
}

fn server_for(model: &Arc<ScriptedModel>) -> A2aAgentServer {
    let model = model.clone();
    A2aAgentServer::new(move |_context: &str| ReActAgent::builder(model.clone()).build())
}

/// The document's `A2AClientAgent` (step 4): one `Tool results: [...]` message for both calls.
async fn document_client_round_trip(sdk: &str) {
    let path = config_file("hello config");
    let model = weather_and_file_model(&path, false);
    let base = serve(server_for(&model).router()).await;
    let r = doc_client(
        &base,
        sdk,
        &[],
        "What's the weather in SF, and what is in my config file?",
    )
    .await;
    assert_eq!(r["answer"], ANSWER, "{r:#}");
    // The calls came in a Message, LangChain-shaped, with the arguments as objects.
    let asked = &r["replies"][0];
    assert_eq!(asked["kind"], "message", "{r:#}");
    let calls = &asked["parts"][0]["data"]["tool_calls"];
    assert_eq!(calls[0]["name"], "get_weather", "{r:#}");
    assert_eq!(calls[0]["args"], json!({"location": "San Francisco, CA"}));
    assert_eq!(calls[0]["type"], "tool_call");
    assert_eq!(calls[1]["args"], json!({"file_path": path}));
    assert_eq!(asked["parts"][0]["metadata"]["format"], "langchain");
    // The client ran both tools and the answer is the first text part of the last message.
    assert_eq!(r["executed"].as_array().unwrap().len(), 2, "{r:#}");
    assert_eq!(r["replies"][1]["parts"][0]["text"], ANSWER);
    assert_eq!(
        model.remaining(),
        0,
        "the model was not asked again after the results"
    );
}

#[tokio::test]
async fn the_documents_js_client_over_a2a_1_0() {
    document_client_round_trip("v1").await;
}

#[tokio::test]
async fn the_documents_js_client_over_a2a_0_3() {
    document_client_round_trip("v03").await;
}

/// The document's step 2: one message per call (`Tool "X" returned: ...`, and `Tool X failed:
/// ...` without the tools part for a failure). The first result is kept until the second
/// arrives; the model then gets both, the failure as an error result.
#[tokio::test]
async fn the_documents_per_call_results_and_failures_reach_the_model() {
    let missing = std::env::temp_dir().join("doc000-no-such-file.txt");
    let path = missing.to_string_lossy().into_owned();
    let model = weather_and_file_model(&path, true);
    let base = serve(server_for(&model).router()).await;
    let r = doc_client(
        &base,
        "v03",
        &["--per-call"],
        "Weather in SF, and my config file?",
    )
    .await;
    assert_eq!(r["answer"], ANSWER, "{r:#}");
    // After the first result, the reply says what is still missing (and asks for it again).
    let waiting = &r["replies"][1];
    let note = waiting["parts"][0]["text"].as_str().unwrap();
    assert!(
        note.contains("1 of 2 tool results received; still waiting for: read_file"),
        "{r:#}"
    );
    assert_eq!(
        waiting["parts"][1]["data"]["tool_calls"][0]["name"],
        "read_file"
    );
    assert_eq!(
        r["results"][1]["error"]
            .as_str()
            .map(|e| e.contains("ENOENT")),
        Some(true),
        "{r:#}"
    );
    assert_eq!(model.remaining(), 0);
}

/// Printed literally, the document's client sends its results without a `contextId`. No
/// conversation waits for them, so they start a new one, as on the document's own server: the
/// model reads every result in the message's text (no tool message, no "no result" error) and
/// its answer reaches the client.
async fn results_without_a_conversation(sdk: &str) {
    let path = config_file("hello config");
    let call_file = json!({"file_path": path});
    let model = Arc::new(
        ScriptedModel::default()
            .then(ScriptedTurn::calls([
                ("get_weather", json!({"location": "San Francisco, CA"})),
                ("read_file", call_file),
            ]))
            .then_expect(
                |req| {
                    let [question] = req.messages.as_slice() else {
                        return Err(format!("expected a new conversation: {:#?}", req.messages));
                    };
                    let text = &question.content();
                    let ok = question.role() == Role::User
                        && text.starts_with("Tool results:")
                        && text.contains("temperature")
                        && text.contains("hello config")
                        && req.tools.len() == 2;
                    ok.then_some(())
                        .ok_or(format!("the results text did not reach the model: {text}"))
                },
                ScriptedTurn::text(ANSWER),
            ),
    );
    let base = serve(server_for(&model).router()).await;
    let r = doc_client(
        &base,
        sdk,
        &["--no-context"],
        "Weather in SF, and my config file?",
    )
    .await;
    assert!(r["error"].is_null(), "{r:#}");
    assert_eq!(r["answer"], ANSWER, "{r:#}");
    assert_eq!(r["executed"].as_array().map(Vec::len), Some(2), "{r:#}");
    assert_eq!(model.remaining(), 0);
}

#[tokio::test]
async fn results_without_a_conversation_start_one_whose_question_they_are_1_0() {
    results_without_a_conversation("v1").await;
}

#[tokio::test]
async fn results_without_a_conversation_start_one_whose_question_they_are_0_3() {
    results_without_a_conversation("v03").await;
}
