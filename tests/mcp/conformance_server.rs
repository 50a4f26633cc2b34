//! `mcp-conformance-server`: the tools the official MCP conformance suite's server scenarios
//! call (`@modelcontextprotocol/conformance`, what the SDKs ship as an "everything" server),
//! written as ordinary `#[tool]`s and served over streamable HTTP on 127.0.0.1.
//!
//! `mcp-conformance-server [PORT]` prints `READY http://127.0.0.1:PORT/mcp` once it listens
//! (port 0 or none: any free port). Run by `tests/mcp/conformance.rs`; the scenarios it cannot
//! pass yet are listed, with the reason, in `tests/mcp/conformance-expected.yml`.

use std::time::Duration;

use agent_toolkit::context::LogLevel;
use agent_toolkit::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

/// Answers with one text block.
#[tool(read_only)]
fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Always fails: the client gets `isError: true` with this message.
#[tool(read_only)]
fn test_error_handling() -> Result<String, ToolError> {
    Err(ToolError::execution(
        "This tool intentionally returns an error for testing",
    ))
}

/// Reports progress 0, 50 and 100 of 100, about 50 ms apart.
#[tool(read_only)]
async fn test_tool_with_progress(#[ctx] progress: ToolEmitter) -> &'static str {
    for (step, done) in [0u32, 50, 100].into_iter().enumerate() {
        if step > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        progress.progress(done, 100.0, format!("{done} of 100"));
    }
    "Progress test completed"
}

/// Logs three messages at `info`, about 50 ms apart (MCP `notifications/message`).
#[tool(read_only)]
async fn test_tool_with_logging(#[ctx] log: ToolEmitter) -> &'static str {
    log.log(LogLevel::Info, "Tool execution started");
    tokio::time::sleep(Duration::from_millis(50)).await;
    log.log(LogLevel::Info, "Tool processing data");
    tokio::time::sleep(Duration::from_millis(50)).await;
    log.log(LogLevel::Info, "Tool execution completed");
    "Logging test completed"
}

/// A street address (the `address` definition the scenario looks for under `$defs`).
#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "address")]
#[allow(dead_code)]
struct Address {
    street: Option<String>,
    city: Option<String>,
}

/// Tool with JSON Schema 2020-12 features: `$schema`, `$defs` and a `$ref` into them, no
/// additional properties.
#[tool(name = "json_schema_2020_12_tool", read_only)]
fn json_schema_tool(name: Option<String>, address: Option<Address>) -> String {
    let city = address.and_then(|a| a.city).unwrap_or_default();
    format!("name={} city={city}", name.unwrap_or_default())
}

/// The suite's tools, in one toolkit.
fn toolkit() -> Toolkit {
    Toolkit::builder()
        .register(TestSimpleText)
        .register(TestErrorHandling)
        .register(TestToolWithProgress)
        .register(TestToolWithLogging)
        .register(JsonSchemaTool)
        .build()
        .expect("the conformance tools register")
}

#[tokio::main]
async fn main() {
    use axum::serve::ListenerExt;
    let port: u16 = match std::env::args().nth(1).map(|p| p.parse()) {
        None => 0,
        Some(Ok(port)) => port,
        Some(Err(e)) => {
            eprintln!("mcp-conformance-server: the port is not a number ({e})");
            std::process::exit(2);
        }
    };
    let app = axum::Router::new().nest_service("/mcp", toolkit().mcp_http_service());
    let listener = match tokio::net::TcpListener::bind(("127.0.0.1", port)).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("mcp-conformance-server: cannot listen on 127.0.0.1:{port}: {e}");
            std::process::exit(1);
        }
    };
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(port);
    println!("READY http://127.0.0.1:{port}/mcp");
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    if let Err(e) = axum::serve(listener, app).await {
        eprintln!("mcp-conformance-server: {e}");
        std::process::exit(1);
    }
}
