//! MCP interop: our server driven by the official Python client (stdio and streamable HTTP),
//! Python servers imported by our client and used by an agent, the bad input of both sides,
//! per-session group state, and the official conformance suite (`conformance`).
//!
//! The stdio server is the `mcp-test-server` binary (the [`fixture`] toolkit); HTTP servers run
//! in this process on 127.0.0.1. The modules that start Python peers need the `interop` feature.

#[path = "../peers/mod.rs"]
mod peers;
#[path = "../tls/mod.rs"]
mod tls;

mod ask;
mod attachments;
mod auth;
mod bad_input;
mod call_timeout;
#[cfg(feature = "interop")]
mod conformance;
mod fixture;
#[cfg(feature = "interop")]
mod forwarded;
mod https;
#[cfg(feature = "interop")]
mod import;
#[cfg(feature = "interop")]
mod imported;
#[cfg(feature = "interop")]
mod js;
mod logging;
#[cfg(feature = "interop")]
mod polling;
#[cfg(feature = "interop")]
mod python_client;
#[cfg(feature = "interop")]
mod python_https;
mod replicas;
mod sessions;
#[cfg(all(feature = "interop", feature = "sqlite"))]
mod tasks;
mod unreachable;

use std::process::Stdio;
use std::time::Duration;

use agent_toolkit::prelude::*;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// `node tests/peers/js/<script>` as a stdio target (installing the JS peers first if needed).
#[cfg(feature = "interop")]
pub fn node_target(script: &str) -> agent_toolkit::mcp::McpTarget {
    let node = peers::node(script);
    let node = node.as_std();
    let mut target = agent_toolkit::mcp::McpTarget::command(
        node.get_program().to_string_lossy(),
        node.get_args()
            .map(|arg| arg.to_string_lossy().into_owned()),
    );
    for (key, value) in node.get_envs() {
        if let Some(value) = value {
            target = target.env(key.to_string_lossy(), value.to_string_lossy());
        }
    }
    target
}

/// The stdio server binary.
pub fn server_exe() -> &'static str {
    env!("CARGO_BIN_EXE_mcp-test-server")
}

/// Serve `toolkit` over streamable HTTP at `http://127.0.0.1:<port>/mcp` until the test ends.
pub async fn serve_http(toolkit: &Toolkit) -> String {
    use axum::serve::ListenerExt;
    let app = axum::Router::new().nest_service("/mcp", toolkit.mcp_http_service());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://127.0.0.1:{port}/mcp")
}

/// What another SDK's client reports of the fixture server (`tests/peers/*client*`): the active
/// tools in registration order, `add`'s output schema and annotations, and a call of `add`
/// whose structured content the SDK validated against that schema.
#[cfg(feature = "interop")]
pub fn check_listed_fixture(report: &Value) {
    use serde_json::json;
    assert_eq!(
        report["tools"],
        json!(["add", "slow", "cancelled_count", "fail", "unlock"]),
        "active tools in registration order; `secret` is in a group that is off"
    );
    assert_eq!(report["add_output_schema"]["type"], "object");
    assert_eq!(report["add_output_schema"]["required"], json!(["sum"]));
    assert_eq!(
        report["add_annotations"],
        json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true})
    );
    // The SDK validated this structured content against the output schema (a mismatch would be
    // under the report's "errors").
    assert_eq!(
        report["add"],
        json!({"is_error": false, "structured": {"sum": 5}, "text": "{\"sum\":5}"})
    );
}

/// Wait until something listens on `port` (a Python server that printed READY early).
pub async fn wait_for_port(port: u16) {
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("nothing listens on port {port}");
}

/// The stdio server spoken to line by line, for checks below the level of any SDK.
pub struct RawStdio {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
}

impl RawStdio {
    pub fn start() -> Self {
        let mut child = Command::new(server_exe())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("start mcp-test-server");
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        RawStdio {
            child,
            stdin,
            lines,
        }
    }

    /// Write one line as is.
    pub async fn send_line(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// The next message the server writes (within 5 s).
    pub async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(5), self.lines.next_line())
            .await
            .expect("the server answers within 5 s")
            .expect("read the server's stdout")
            .expect("the server is still running");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Send a request and return the response with its id, skipping notifications.
    pub async fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        let message =
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_line(&message.to_string()).await;
        loop {
            let reply = self.recv().await;
            if reply.get("id") == Some(&Value::from(id)) {
                return reply;
            }
        }
    }

    /// The `initialize` handshake of revision 2025-11-25.
    pub async fn initialize(&mut self) -> Value {
        let reply = self
            .request(
                1,
                "initialize",
                serde_json::json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "raw-test", "version": "0"}
                }),
            )
            .await;
        self.send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        reply
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}
