//! An imported server's questions forwarded to whoever its call can ask
//! (`McpClientOptions::forward_questions`), with the official Python SDK as the server that
//! asks (`tests/peers/mcp_asking_peer.py`):
//! - in an agent run that pauses at questions, two calls of one turn that both ask the user and
//!   one that asks for a completion pause the run with three pending questions, each on its own
//!   call (over HTTP the question says which call it belongs to); the answers, given in the
//!   stored run, reach the server when the calls are made again, and each call gets exactly one
//!   result;
//! - served by our MCP server, the imported tool's question goes on to the client of that
//!   session (a proxy of two hops);
//! - without forwarding, a client with no handler refuses the question and says so.

use std::sync::Arc;

use agent_toolkit::ReActAgent;
use agent_toolkit::agent::{AgentError, PausedRun, RunOutcome};
use agent_toolkit::context::{
    Answer, AskError, Caller, Elicitation, Elicited, Question, Sampled, Sampling,
};
use agent_toolkit::mcp::{McpClient, McpClientOptions, McpEra, McpImport, McpTarget};
use agent_toolkit::model::{ChatRequest, Message};
use agent_toolkit::prelude::*;
use agent_toolkit::testing::{ScriptedModel, ScriptedTurn};
use futures::future::BoxFuture;
use serde_json::{Value, json};

use crate::peers::{self, Env};

async fn asking_server() -> (peers::Peer, McpTarget) {
    let port = peers::free_port();
    let peer = peers::spawn_ready(
        Env::Mcp,
        "mcp_asking_peer.py",
        &["--http", &port.to_string()],
    )
    .await;
    crate::wait_for_port(port).await;
    (peer, McpTarget::url(format!("http://127.0.0.1:{port}/mcp")))
}

/// The asking server's tools in a toolkit, under the group and prefix `srv`.
async fn imported(target: McpTarget, options: McpClientOptions) -> Toolkit {
    let client = McpClient::with_options(target, options.era(McpEra::Handshake));
    let import = McpImport::from_client(client, "srv").await.unwrap();
    Toolkit::builder()
        .group("srv", "the asking server's tools")
        .dynamic("srv", import.tools())
        .build()
        .unwrap()
}

fn agent(model: ScriptedModel, toolkit: &Toolkit) -> ReActAgent {
    ReActAgent::builder(model)
        .toolkit(toolkit)
        .pause_at_approvals()
        .build()
        .unwrap()
}

fn tool_results(request: &ChatRequest) -> Vec<(String, String, bool)> {
    let mut results: Vec<_> = request
        .messages
        .iter()
        .filter_map(Message::as_tool)
        .map(|m| (m.call_id.to_string(), m.content.clone(), m.is_error))
        .collect();
    results.sort();
    results
}

async fn asked(toolkit: &Toolkit) -> String {
    toolkit
        .call(
            ToolCall::json("n", "srv__asked", json!({})),
            &ToolContext::new(),
        )
        .await
        .model_text()
        .into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_imported_servers_questions_pause_the_run_and_the_answers_reach_it() {
    let (_peer, target) = asking_server().await;
    let toolkit = imported(target, McpClientOptions::new().forward_questions()).await;

    // One turn, three calls in parallel: two ask the user, one asks for a completion.
    let turn = ScriptedTurn::calls([
        ("srv__book", json!({"table": "A"})),
        ("srv__book", json!({"table": "B"})),
        ("srv__title", json!({"text": "a long report"})),
    ]);
    let mut first = agent(ScriptedModel::new([turn]), &toolkit);
    let run = match first.run("Book the tables and title the report").await {
        Err(AgentError::Paused(run)) => run,
        other => panic!("expected a pause, got {other:?}"),
    };
    // As another process would read it.
    let mut run = PausedRun::from_json(&run.to_json()).unwrap();
    let mut pending: Vec<_> = run
        .pending_questions()
        .iter()
        .map(|p| {
            (
                p.call().id.to_string(),
                p.tool().to_owned(),
                p.question().clone(),
            )
        })
        .collect();
    pending.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(pending.len(), 3, "{pending:?}");
    assert!(run.pending_approvals().is_empty());
    // Each question on its own call: table A's on A's call, B's on B's.
    let forms: Vec<(&str, &str)> = pending
        .iter()
        .filter_map(|(id, _, q)| match q {
            Question::Elicit(form) => Some((id.as_str(), form.message.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        forms,
        [("call_1_0", "Book table A?"), ("call_1_1", "Book table B?")]
    );
    let Question::Elicit(form) = &pending[0].2 else {
        unreachable!()
    };
    assert_eq!(form.schema["properties"]["guests"]["default"], json!(2));
    let (id, tool, Question::Sample(sampling)) = &pending[2] else {
        panic!("the third call asks for a completion: {pending:?}")
    };
    assert_eq!((id.as_str(), tool.as_str()), ("call_1_2", "srv__title"));
    assert_eq!(
        sampling.messages,
        [("user".to_owned(), "A title for: a long report".to_owned())]
    );
    assert_eq!(
        sampling.system_prompt.as_deref(),
        Some("Answer with a title only.")
    );
    assert_eq!(asked(&toolkit).await, r#"{"result":3}"#);

    run.answer("call_1_0", Answer::accept(json!({"confirm": true})))
        .unwrap();
    run.answer("call_1_1", Answer::decline()).unwrap();
    run.answer("call_1_2", Answer::sampled("Q3 in brief", "app-model"))
        .unwrap();
    let model = Arc::new(ScriptedModel::new([]).then_expect(
        |request: &ChatRequest| {
            let want = vec![
                (
                    "call_1_0".into(),
                    r#"{"result":"A: booked for 2"}"#.into(),
                    false,
                ),
                (
                    "call_1_1".into(),
                    r#"{"result":"B: decline"}"#.into(),
                    false,
                ),
                (
                    "call_1_2".into(),
                    r#"{"result":"title: Q3 in brief (by app-model)"}"#.into(),
                    false,
                ),
            ];
            let got = tool_results(request);
            (got == want)
                .then_some(())
                .ok_or(format!("tool results {got:?}, want {want:?}"))
        },
        ScriptedTurn::text("Booked A, not B; titled."),
    ));
    let mut second = ReActAgent::builder(model.clone())
        .toolkit(&toolkit)
        .pause_at_approvals()
        .build()
        .unwrap();
    assert_eq!(
        second.resume(run).await.unwrap(),
        RunOutcome::Final("Booked A, not B; titled.".into())
    );
    // The calls were made again and asked again, answered from the stored answers.
    assert_eq!(asked(&toolkit).await, r#"{"result":6}"#);
    assert_eq!(tool_results(&model.requests()[0]).len(), 3);
}

/// The user of the outermost client: books for 4.
struct User;

impl Caller for User {
    fn elicit(&self, request: Elicitation) -> BoxFuture<'_, Result<Elicited<Value>, AskError>> {
        Box::pin(async move {
            assert_eq!(request.message, "Book table P?");
            Ok(Elicited::Accepted(json!({"confirm": true, "guests": 4})))
        })
    }

    fn sample(&self, request: Sampling) -> BoxFuture<'_, Result<Sampled, AskError>> {
        Box::pin(async move {
            let (_, text) = request.messages.last().cloned().unwrap_or_default();
            Ok(Sampled::new(text.to_uppercase(), "outer-model"))
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn served_by_our_server_an_imported_question_goes_on_to_its_client() {
    let (_peer, target) = asking_server().await;
    let proxy = imported(target, McpClientOptions::new().forward_questions()).await;
    let url = crate::serve_http(&proxy).await;
    let outer = imported(
        McpTarget::url(url),
        McpClientOptions::new().elicitation(User).sampling(User),
    )
    .await;
    let booked = outer
        .call(
            ToolCall::json("p", "srv__srv__book", json!({"table": "P"})),
            &ToolContext::new(),
        )
        .await;
    assert_eq!(
        booked.model_text(),
        r#"{"result":"P: booked for 4"}"#,
        "{booked}"
    );
    let titled = outer
        .call(
            ToolCall::json("t", "srv__srv__title", json!({"text": "x"})),
            &ToolContext::new(),
        )
        .await;
    assert_eq!(
        titled.model_text(),
        r#"{"result":"title: A TITLE FOR: X (by outer-model)"}"#,
        "{titled}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_can_ask_nobody_gets_an_error_naming_why() {
    let (_peer, target) = asking_server().await;
    // Forwarding, but the call runs with nobody to ask and the client has no handler.
    let toolkit = imported(target.clone(), McpClientOptions::new().forward_questions()).await;
    let refused = toolkit
        .call(
            ToolCall::json("x", "srv__book", json!({"table": "X"})),
            &ToolContext::new(),
        )
        .await;
    let text = refused.model_text();
    assert!(text.contains("can ask nobody"), "{text}");
    // Not forwarding and no handler: the capability was not declared.
    let silent = imported(target, McpClientOptions::new()).await;
    let refused = silent
        .call(
            ToolCall::json("y", "srv__book", json!({"table": "Y"})),
            &ToolContext::new(),
        )
        .await;
    let text = refused.model_text();
    assert!(text.contains("elicitation"), "{text}");
}
