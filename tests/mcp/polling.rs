//! SSE polling (SEP-1699): our HTTP server closes the event stream of a call that is still
//! running — after a while (`McpHttpService::close_streams_after`) or because the tool says so
//! (`CallStream::close`) — and the client comes back with `Last-Event-ID` for the progress
//! and the result. Clients: ours (rmcp's streamable HTTP client) and the official Python SDK.
//! A layer in front of the service counts the resuming `GET`s, so a stream that was never
//! closed (the result sent on the first stream) fails the test. The official conformance
//! suite's `server-sse-polling` scenario checks the same from the TypeScript side.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_toolkit::mcp::{CallStream, McpClient, McpClientOptions, McpEra, McpTarget};
use agent_toolkit::prelude::*;
use serde_json::json;

use crate::peers::{self, Env};

/// Reports progress at each of `steps` steps, 60 ms apart.
#[tool(read_only)]
async fn slow(steps: u32, #[ctx] progress: ToolEmitter) -> String {
    for step in 1..=steps {
        tokio::time::sleep(Duration::from_millis(60)).await;
        progress.progress(step, f64::from(steps), format!("step {step}"));
    }
    format!("done after {steps}")
}

/// Closes its own stream, then answers.
#[tool(read_only)]
async fn closes(#[ctx] stream: CallStream) -> String {
    let closed = stream.close(Duration::from_millis(20));
    tokio::time::sleep(Duration::from_millis(150)).await;
    format!("closed: {closed}")
}

/// Serve the two tools, closing calls' streams after 100 ms; count the resuming `GET`s.
async fn serve() -> (String, Arc<AtomicUsize>) {
    use axum::serve::ListenerExt;
    let toolkit = Toolkit::builder()
        .register(Slow)
        .register(Closes)
        .build()
        .unwrap();
    let service = toolkit
        .mcp_http_service()
        .close_streams_after(Duration::from_millis(100), Duration::from_millis(20));
    let resumed = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&resumed);
    let app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(
            move |request: axum::extract::Request, next: axum::middleware::Next| {
                if request.headers().contains_key("last-event-id") {
                    counter.fetch_add(1, Ordering::SeqCst);
                }
                next.run(request)
            },
        ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://127.0.0.1:{port}/mcp"), resumed)
}

fn text(result: &agent_toolkit::mcp::types::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_gets_the_rest_of_a_closed_stream() {
    let (url, resumed) = serve().await;
    let client = McpClient::with_options(
        McpTarget::url(&url),
        McpClientOptions::new().era(McpEra::Handshake),
    );
    let mut steps = Vec::new();
    let slow = client
        .call_tool_with_progress("slow", json!({"steps": 5}), |p| steps.push(p.progress))
        .await
        .unwrap();
    assert_eq!(text(&slow), "done after 5");
    assert_eq!(steps, [1.0, 2.0, 3.0, 4.0, 5.0], "no progress lost");
    let after_slow = resumed.load(Ordering::SeqCst);
    assert!(after_slow >= 1, "the stream was closed and resumed");

    let closes = client.call_tool("closes", json!({})).await.unwrap();
    assert_eq!(text(&closes), "closed: true");
    assert!(resumed.load(Ordering::SeqCst) > after_slow);

    // The stateless era has no stream to come back to: the call just answers.
    let stateless = McpClient::with_options(
        McpTarget::url(&url),
        McpClientOptions::new().era(McpEra::Stateless),
    );
    let closes = stateless.call_tool("closes", json!({})).await.unwrap();
    assert_eq!(text(&closes), "closed: false");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_gets_the_rest_of_a_closed_stream() {
    let (url, resumed) = serve().await;
    let (ok, stdout, stderr) = peers::run_script(
        Env::Mcp,
        "mcp_polling_client.py",
        &["--url", &url],
        Duration::from_secs(60),
    )
    .await;
    let report = peers::report(ok, &stdout, &stderr);
    assert_eq!(report["errors"], json!([]), "{report:#}");
    assert_eq!(
        report["slow"],
        json!({"text": "done after 5", "is_error": false}),
        "{report:#}"
    );
    assert_eq!(report["progress"], json!([1.0, 2.0, 3.0, 4.0, 5.0]));
    assert_eq!(
        report["closes"],
        json!({"text": "closed: true", "is_error": false}),
        "{report:#}"
    );
    assert!(resumed.load(Ordering::SeqCst) >= 2, "{report:#}");
}
