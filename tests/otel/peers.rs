//! One trace with the official Python MCP SDK (mcp 2.x, with the OpenTelemetry SDK installed:
//! it then propagates W3C trace context in `_meta` itself), both ways: its client's span is the
//! parent of our server's `tools/call`; our client's trace goes on in its server, whose tool
//! answers the trace id it was served in. The Python SDK sets Trace Context Level 2's `random`
//! flag (`…-03`), which the Rust propagator alone would refuse (the trace would start over).

use std::time::Duration;

use agent_toolkit::mcp::{McpImport, McpTarget};
use agent_toolkit::prelude::*;
use serde_json::Value;
use tracing::Instrument;

use super::peers::{self, Env};
use super::{Multiply, flushed, global, one};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdks_client_trace_goes_on_in_our_server() {
    let received = global();
    let served = Toolkit::builder().register(Multiply).build().unwrap();
    let app = axum::Router::new().nest_service("/mcp", served.mcp_http_service());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });

    let (ok, stdout, stderr) = peers::run_script(
        Env::Mcp,
        "mcp_trace_peer.py",
        &["client", &url],
        Duration::from_secs(60),
    )
    .await;
    let report = peers::report(ok, &stdout, &stderr);
    assert_eq!(report["result"], "42", "{report}");
    let trace = &report["trace_id"];
    let spans = flushed(received).await;
    let server = one(&spans, trace, "tools/call multiply");
    let tool = one(&spans, trace, "execute_tool multiply");
    assert_eq!(tool["parentSpanId"], server["spanId"]);
    // Its parent is the SDK's span of the request, inside the client's own span: not ours.
    assert!(
        !spans.iter().any(|s| s["spanId"] == server["parentSpanId"]),
        "the parent is the Python client's span: {server:#}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_trace_goes_on_in_the_python_sdks_server() {
    let received = global();
    let script = peers::workspace_root().join("tests/peers/mcp_trace_peer.py");
    let target = McpTarget::command(
        peers::python(Env::Mcp).to_string_lossy(),
        [script.to_string_lossy().into_owned(), "server".into()],
    );
    let import = McpImport::connect(target, "py").await.unwrap();
    let toolkit = Toolkit::builder()
        .group("py", "the Python server's tools")
        .dynamic("py", import.tools())
        .build()
        .unwrap();
    let call = ToolCall::new("c1", "py__trace_id", "{}");
    let result = toolkit
        .call(call, &ToolContext::new())
        .instrument(tracing::info_span!("ask python"))
        .await;
    assert!(!result.is_error(), "{result}");
    let spans = flushed(received).await;
    let root = one(&spans, &Value::Null, "ask python");
    let answer: Value = serde_json::from_str(&result.model_text()).unwrap();
    assert_eq!(
        answer["result"], root["traceId"],
        "the Python server served the call in our trace"
    );
}
