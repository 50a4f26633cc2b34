//! Interop with the official TypeScript MCP SDK, `@modelcontextprotocol/sdk` 1.x (pinned in
//! tests/peers/js/package.json): a peer that knows only the 2025-11-25 handshake era — no
//! `server/discover`, no stateless requests.
//!
//! - Its `McpServer` (tests/peers/js/mcp_server.cjs), imported with `McpImport` and DEFAULT
//!   options over stdio and streamable HTTP: the `server/discover` probe fails (over stdio the
//!   SDK answers "method not found"; over HTTP its session routing answers HTTP 400), the client
//!   falls back to `initialize` promptly (no waiting out the probe's timeout) and settles on
//!   2025-11-25; the tools come over with their schemas, structured output, `isError` results
//!   and progress; the tool the server registers at run time appears after the SDK's
//!   `notifications/tools/list_changed`.
//! - Its `Client` (tests/peers/js/mcp_client.cjs) against our stdio and HTTP servers (the
//!   [`fixture`](crate::fixture) toolkit): our dual-era server gives an old client the
//!   `initialize` handshake at the revision it asked for, and the SDK's own checks pass
//!   (structured content against the output schema, progress routed by its token, the refusal
//!   of an unknown tool as a JSON-RPC error, the session's tool-list change pushed to it).
//!   Every progress notification is on the wire before its response; the SDK may still drop
//!   the last one from the callback (typescript-sdk#2580, its own race), which the client
//!   records so the test accounts for each notification.

use std::time::{Duration, Instant};

use agent_toolkit::context::ProgressEvent;
use agent_toolkit::error::ToolErrorKind;
use agent_toolkit::mcp::{McpImport, McpTarget};
use agent_toolkit::prelude::*;
use serde_json::{Value, json};

use crate::imported::{call, names, wait_for_tool};
use crate::peers;

/// The revision the SDK speaks (its newest).
const HANDSHAKE: &str = "2025-11-25";

/// A generous bound on connecting and listing: rmcp gives up on an unanswered probe after 10 s,
/// so a client that waited for that instead of falling back at once fails here.
const PROMPT: Duration = Duration::from_secs(5);

/// `node tests/peers/js/mcp_server.cjs` as a stdio target (installing the JS peers first if
/// needed).
fn js_stdio() -> McpTarget {
    crate::node_target("mcp_server.cjs")
}

/// The JS server over streamable HTTP, and its URL.
async fn js_http() -> (peers::Peer, McpTarget) {
    let port = peers::free_port();
    let peer = peers::spawn_node_ready("mcp_server.cjs", &["--http", &port.to_string()]).await;
    assert_eq!(peer.ready, port.to_string());
    (peer, McpTarget::url(format!("http://127.0.0.1:{port}/mcp")))
}

/// Import with default options (newest era first), and use everything the JS server offers.
async fn import_and_exercise(target: McpTarget) {
    let started = Instant::now();
    let import = McpImport::connect(target, "js").await.unwrap();
    let connected = started.elapsed();
    eprintln!("connected and listed the tools in {connected:?}");
    assert!(
        connected < PROMPT,
        "connecting and listing took {connected:?}: the fallback to `initialize` waited"
    );
    let client = import.client();
    assert_eq!(client.protocol_version().await.unwrap(), HANDSHAKE);
    let server = client.server_info().await.unwrap().expect("server info");
    assert_eq!(server.name, "js-peer");

    let toolkit = Toolkit::builder()
        .group("js", "Tools of the TypeScript server")
        .dynamic("js", import.tools())
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    assert_eq!(
        names(&toolkit),
        ["js__add", "js__countdown", "js__fail", "js__enable_extra"]
    );
    assert_eq!(import.original_name("js__add").as_deref(), Some("add"));
    let add = toolkit.snapshot().get("js__add").unwrap().clone();
    assert_eq!(add.description(), "Add two integers.");
    assert_eq!(add.parameters()["required"], json!(["a", "b"]));
    assert_eq!(add.parameters()["properties"]["a"]["type"], "integer");
    let output = add.output_schema().expect("the server's output schema");
    assert_eq!(output["required"], json!(["sum"]));

    // structuredContent becomes JSON output.
    let sum = call(&toolkit, "js__add", json!({"a": 2, "b": 3})).await;
    assert!(!sum.is_error(), "{sum}");
    assert_eq!(sum.model_text(), r#"{"sum":5}"#);

    // The SDK's input schema (zod's, JSON Schema draft-07) is the one the toolkit checks
    // arguments against before anything is sent.
    let bad = call(&toolkit, "js__add", json!({"a": "two", "b": 3})).await;
    let error = bad.error().expect("invalid arguments are an error");
    assert_eq!(error.kind(), ToolErrorKind::InvalidArguments, "{bad}");
    assert!(
        error
            .message()
            .contains(r#"argument `a`: "two" is not of type "integer""#),
        "{}",
        error.message()
    );

    // A tool that throws: the SDK answers `isError`, a model-visible execution error.
    let failed = call(&toolkit, "js__fail", json!({})).await;
    let error = failed.error().expect("an isError result is an error");
    assert_eq!(error.kind(), ToolErrorKind::Execution, "{failed}");
    assert!(
        error.message().contains("the tool failed on purpose"),
        "{}",
        error.message()
    );

    // Progress the SDK sends for our progress token reaches the caller's emitter, in order.
    let (ctx, mut progress) = ToolContext::new().progress_channel(64);
    let done = toolkit
        .call(ToolCall::json("p", "js__countdown", json!({"n": 3})), &ctx)
        .await;
    assert_eq!(done.model_text(), "liftoff", "{done}");
    let mut seen = Vec::new();
    while let Ok(event) = progress.try_recv() {
        if let ProgressEvent::Progress {
            done,
            total,
            message,
        } = event.event
        {
            seen.push((done, total, message));
        }
    }
    assert_eq!(
        seen,
        [
            (1.0, Some(3.0), "2 left".to_string()),
            (2.0, Some(3.0), "1 left".to_string()),
            (3.0, Some(3.0), "0 left".to_string()),
        ]
    );

    // The server registers a tool while running; the SDK announces it and the group follows.
    let enabled = call(&toolkit, "js__enable_extra", json!({})).await;
    assert_eq!(enabled.model_text(), "extra enabled", "{enabled}");
    wait_for_tool(&toolkit, "js__extra").await;
    let shout = call(&toolkit, "js__extra", json!({"word": "hi"})).await;
    assert_eq!(shout.model_text(), "HI!", "{shout}");

    // Still the same revision at the end (the change was followed on the same footing).
    assert_eq!(client.protocol_version().await.unwrap(), HANDSHAKE);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn js_server_over_stdio_with_default_options() {
    import_and_exercise(js_stdio()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn js_server_over_streamable_http_with_default_options() {
    let (_peer, target) = js_http().await;
    import_and_exercise(target).await;
}

/// Run the JS client against `args` (`--stdio EXE` or `--url URL`) and return its report.
async fn run_client(args: &[&str]) -> Value {
    let (ok, stdout, stderr) =
        peers::run_node("mcp_client.cjs", args, Duration::from_secs(60)).await;
    peers::report(ok, &stdout, &stderr)
}

/// What the JS client must have seen from our server, over either transport.
fn check(report: &Value) {
    assert_eq!(report["errors"], json!([]), "{report:#}");
    // The SDK asked for its newest revision with `initialize` and our server agreed to it.
    assert_eq!(
        report["initialize"],
        json!({"requested": HANDSHAKE, "answered": HANDSHAKE}),
        "{report:#}"
    );
    let wire = report["wire"].as_array().unwrap();
    assert_eq!(
        wire[..3],
        [
            json!("> initialize"),
            json!("< result"),
            json!("> notifications/initialized")
        ],
        "{report:#}"
    );
    assert_eq!(report["server_name"], "agent-toolkit");
    assert_eq!(report["list_changed_capability"], true);
    crate::check_listed_fixture(report);
    // Our server sends every progress notification before the call's response...
    let slow = &report["slow"];
    assert_eq!(slow["text"], "counted to 3");
    assert_eq!(
        slow["wire"],
        json!([
            "> tools/call",
            "< notifications/progress",
            "< notifications/progress",
            "< notifications/progress",
            "< result"
        ]),
        "{report:#}"
    );
    // ... with the SDK's token and the right values: the SDK hands them to the callback in
    // order, except those it read in the same chunk as the response, which its race
    // (typescript-sdk#2580) drops as "unknown token" (recorded under `late`). Together they are
    // all three, each exactly once.
    let progress = slow["progress"].as_array().unwrap();
    assert!(
        !progress.is_empty(),
        "no progress reached the SDK's callback: {report:#}"
    );
    let delivered: Vec<&Value> = progress
        .iter()
        .chain(slow["late"].as_array().unwrap())
        .collect();
    assert_eq!(
        json!(delivered),
        json!([[1, 3, "step 1"], [2, 3, "step 2"], [3, 3, "step 3"]]),
        "{report:#}"
    );
    assert_eq!(slow["late_tokens_match"], true, "{report:#}");
    assert_eq!(report["client_errors"], json!([]), "{report:#}");
    assert_eq!(
        report["fail"],
        json!({"is_error": true, "text": "the tool failed on purpose"})
    );
    assert_eq!(report["call_nope"]["refused"], true, "{report:#}");
    assert_eq!(report["call_nope"]["code"], -32602);
    let nope = report["call_nope"]["message"].as_str().unwrap();
    assert!(nope.contains("there is no tool named `nope`"), "{nope}");
    // `unlock` switched the admin group on for this session, and the server said so.
    assert_eq!(report["unlock"], "unlocked");
    assert_eq!(report["list_changed_received"], 1, "{report:#}");
    assert!(
        wire.contains(&json!("< notifications/tools/list_changed")),
        "{report:#}"
    );
    assert_eq!(
        report["tools_after_unlock"],
        json!(["add", "slow", "cancelled_count", "fail", "unlock", "secret"])
    );
    assert_eq!(report["secret"], "swordfish");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn js_client_over_stdio() {
    let report = run_client(&["--stdio", crate::server_exe()]).await;
    check(&report);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn js_client_over_streamable_http() {
    let toolkit = crate::fixture::toolkit();
    let url = crate::serve_http(&toolkit).await;
    let report = run_client(&["--url", &url]).await;
    check(&report);
    // The session's unlock stayed in the session: the served toolkit's group is still off.
    assert!(!toolkit.is_group_active("admin").unwrap());
}
