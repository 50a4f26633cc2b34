//! A `tools/call` is bounded by its silence, not its length: each progress notification starts
//! the client's wait again, and a call that goes quiet (a hung server, a lost response) ends with
//! a timeout and a `notifications/cancelled` to the server, never a hung run.

use std::time::{Duration, Instant};

use agent_toolkit::error::ToolErrorKind;
use agent_toolkit::mcp::{McpClient, McpClientOptions, McpImport, McpTarget};
use agent_toolkit::prelude::*;
use serde_json::{Value, json};

async fn call(toolkit: &Toolkit, name: &str, args: Value) -> ToolResult {
    toolkit
        .call(ToolCall::json("c", name, args), &ToolContext::new())
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_restarts_the_call_timeout_and_silence_ends_it() {
    let url = crate::serve_http(&crate::fixture::toolkit()).await;
    let options = McpClientOptions::new().call_timeout(Duration::from_millis(400));
    let client = McpClient::with_options(McpTarget::url(&url), options);
    let import = McpImport::from_client(client, "fx").await.unwrap();
    let toolkit = Toolkit::builder()
        .group("fx", "The fixture server's tools")
        .dynamic("fx", import.tools())
        .build()
        .unwrap();

    // 8 steps of 150 ms: 1.2 s in all, three times the timeout, but never 400 ms of silence.
    let result = call(&toolkit, "fx__slow", json!({"steps": 8, "delay_ms": 150})).await;
    assert!(!result.is_error(), "{result}");
    assert_eq!(result.model_text(), "counted to 8");

    // One step of 5 s: silence from the start.
    let started = Instant::now();
    let result = call(&toolkit, "fx__slow", json!({"steps": 1, "delay_ms": 5000})).await;
    let error = result.error().expect("timed out");
    assert!(
        error.message().contains("did not answer in time"),
        "{result}"
    );
    let detail = format!("{error:?}");
    assert!(
        detail.contains("within 400ms"),
        "the operator sees the limit: {detail}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_ne!(error.kind(), ToolErrorKind::InvalidArguments);

    // The server was told to stop: its tool's future was dropped.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let count = call(&toolkit, "fx__cancelled_count", json!({})).await;
        if count.model_text() != "0" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the server never cancelled the call"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
