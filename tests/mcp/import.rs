//! A server written with the official Python SDK, imported by our client: its tools in a
//! toolkit group, used by a `ReActAgent`, with progress, cancellation, the tool list changing
//! at run time, and the server dying in the middle of a call.

use std::time::{Duration, Instant};

use agent_toolkit::mcp::{McpClient, McpClientOptions, McpEra, McpImport, McpTarget};
use agent_toolkit::prelude::*;
use agent_toolkit::{
    ReActAgent,
    testing::{ScriptedModel, ScriptedTurn},
};
use agent_toolkit::{context::ProgressEvent, error::ToolErrorKind};
use serde_json::json;

use crate::imported::{call, names, wait_for_tool};
use crate::peers::{self, Env};

fn python_stdio() -> McpTarget {
    let script = peers::workspace_root().join("tests/peers/mcp_server_peer.py");
    McpTarget::command(
        peers::python(Env::Mcp).to_string_lossy(),
        [script.to_string_lossy().into_owned()],
    )
}

fn toolkit_with(import: &McpImport) -> Toolkit {
    Toolkit::builder()
        .group("py", "Tools of the Python server")
        .dynamic("py", import.tools())
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

/// What both transports must do: list, call, progress, agent use, a changing tool list.
async fn exercise(import: &McpImport) {
    let toolkit = toolkit_with(import);
    assert_eq!(
        names(&toolkit),
        [
            "py__add",
            "py__countdown",
            "py__cancellations",
            "py__enable_extra",
            "py__crash"
        ]
    );
    assert_eq!(import.original_name("py__add").as_deref(), Some("add"));
    let add = toolkit.snapshot().get("py__add").unwrap().clone();
    assert_eq!(add.description(), "Add two integers.");
    assert_eq!(add.parameters()["required"], json!(["a", "b"]));
    assert!(
        add.output_schema().is_some(),
        "the server's output schema comes along"
    );

    // structuredContent becomes JSON output.
    let sum = call(&toolkit, "py__add", json!({"a": 2, "b": 3})).await;
    assert_eq!(sum.model_text(), r#"{"result":5}"#);

    // The server's argument validation reaches the model as a tool error.
    let bad = call(&toolkit, "py__add", json!({"a": "two"})).await;
    assert!(bad.is_error(), "{bad}");

    // Progress from the server reaches the caller's emitter channel.
    let (ctx, mut progress) = ToolContext::new().progress_channel(64);
    let done = toolkit
        .call(ToolCall::json("p", "py__countdown", json!({"n": 3})), &ctx)
        .await;
    assert_eq!(done.model_text(), r#"{"result":"liftoff"}"#);
    let mut seen = Vec::new();
    while let Ok(event) = progress.try_recv() {
        if let ProgressEvent::Progress { done, total, .. } = event.event {
            seen.push((done, total));
        }
    }
    assert!(!seen.is_empty(), "no progress arrived");
    assert!(
        seen.iter().all(|(_, total)| *total == Some(3.0)),
        "{seen:?}"
    );

    // A ReActAgent uses the imported tools like any others.
    let model = ScriptedModel::new([
        ScriptedTurn::call("py__add", json!({"a": 20, "b": 22})),
        ScriptedTurn::text("The sum is 42."),
    ]);
    let mut agent = ReActAgent::builder(model)
        .toolkit(&toolkit)
        .build()
        .unwrap();
    assert_eq!(
        agent.run("What is 20 + 22?").await.unwrap(),
        "The sum is 42."
    );
    let tool_message = agent
        .memory()
        .iter()
        .find(|m| m.as_tool().is_some_and(|m| m.name == "py__add"))
        .expect("the tool result is in the conversation");
    assert_eq!(tool_message.content(), r#"{"result":42}"#);

    // The server adds a tool and says so: the group follows.
    let enabled = call(&toolkit, "py__enable_extra", json!({})).await;
    assert_eq!(enabled.model_text(), r#"{"result":"extra enabled"}"#);
    wait_for_tool(&toolkit, "py__extra").await;
    let shout = call(&toolkit, "py__extra", json!({"word": "hi"})).await;
    assert_eq!(shout.model_text(), r#"{"result":"HI!"}"#);

    // A call the toolkit gives up on is cancelled on the server too.
    let cancelling = Toolkit::builder()
        .group("py", "")
        .dynamic("py", import.tools())
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let slow = call(&cancelling, "py__countdown", json!({"n": 500})).await;
    assert_eq!(
        slow.error().unwrap().kind(),
        ToolErrorKind::Timeout,
        "{slow}"
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let count = call(&toolkit, "py__cancellations", json!({})).await;
        if count.model_text() != r#"{"result":0}"# {
            assert_eq!(count.model_text(), r#"{"result":1}"#);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the server never saw the cancellation"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Import over a client speaking `era`, check the revision it settled on, and exercise it.
async fn import_and_exercise(target: McpTarget, era: McpEra, revision: &str) {
    let options = McpClientOptions::new().era(era);
    let client = McpClient::with_options(target, options);
    assert_eq!(client.protocol_version().await.unwrap(), revision);
    let import = McpImport::from_client(client, "py").await.unwrap();
    exercise(&import).await;
}

/// The Python server speaks both eras: by default our client picks the stateless one (tool-list
/// changes then come on a `subscriptions/listen` stream).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_server_over_stdio() {
    import_and_exercise(python_stdio(), McpEra::Newest, "2026-07-28").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_server_over_stdio_handshake() {
    import_and_exercise(python_stdio(), McpEra::Handshake, "2025-11-25").await;
}

async fn python_http_server() -> (peers::Peer, McpTarget) {
    let port = peers::free_port();
    let peer = peers::spawn_ready(
        Env::Mcp,
        "mcp_server_peer.py",
        &["--http", &port.to_string()],
    )
    .await;
    crate::wait_for_port(port).await;
    (peer, McpTarget::url(format!("http://127.0.0.1:{port}/mcp")))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_server_over_streamable_http() {
    let (_peer, target) = python_http_server().await;
    import_and_exercise(target, McpEra::Newest, "2026-07-28").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_server_over_streamable_http_handshake() {
    let (_peer, target) = python_http_server().await;
    import_and_exercise(target, McpEra::Handshake, "2025-11-25").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_dying_mid_call_fails_the_call_and_the_next_call_reconnects() {
    let import = McpImport::connect(python_stdio(), "py").await.unwrap();
    let toolkit = toolkit_with(&import);
    let started = Instant::now();
    let crashed = call(&toolkit, "py__crash", json!({})).await;
    assert!(started.elapsed() < Duration::from_secs(10), "no hang");
    let error = crashed.error().expect("the call fails");
    assert_eq!(error.kind(), ToolErrorKind::Execution);
    assert!(error.is_retryable());
    assert!(
        error
            .message()
            .contains("connection to the tool server was lost"),
        "{}",
        error.message()
    );
    // The next call starts the server again.
    let sum = call(&toolkit, "py__add", json!({"a": 1, "b": 1})).await;
    assert_eq!(sum.model_text(), r#"{"result":2}"#);
}
