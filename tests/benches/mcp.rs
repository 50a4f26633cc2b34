//! MCP figure: one `tools/call` round trip over stdio to a real child process, for a toolkit
//! served with `Toolkit::serve_mcp_stdio` and for an rmcp `#[tool_router]` server with the
//! same tool, in the same run.
//!
//! The tool is `add(a: i64, b: i64) -> {"sum": a + b}` with an output schema on both sides
//! (`Json<Sum>` in each crate), so both answers carry `structuredContent` and a text block. The
//! servers are this bench binary itself, started again with `MCP_BENCH_SERVER=toolkit` or
//! `=rmcp`; both read and write through rmcp's stdio transport (ours adds its check for lines
//! that are not JSON). The client is the same plain rmcp client for both, on a current-thread
//! runtime; one iteration is one request written to the child's stdin and its response read
//! from its stdout. The two take turns for three rounds (see `mcp_stdio_call`).
//!
//! Run with `cargo bench -p agent-toolkit-examples --features full --bench mcp`.

use std::hint::black_box;

use agent_toolkit::prelude::*;
use criterion::{Criterion, criterion_group};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService, ServiceExt,
};
use rmcp::transport::TokioChildProcess;
use rmcp::{tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

const SERVER_VAR: &str = "MCP_BENCH_SERVER";

#[derive(Serialize, JsonSchema)]
struct Sum {
    sum: i64,
}

/// Add two integers. An `async fn`: a plain `fn` tool would run on tokio's blocking pool (the
/// toolkit's rule for synchronous code), where rmcp runs its synchronous tools inline.
#[agent_toolkit::tool(name = "add", read_only)]
async fn add_tool(a: i64, b: i64) -> Json<Sum> {
    Json(Sum { sum: a + b })
}

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

/// The same tool written with rmcp's macros.
#[derive(Clone)]
struct RmcpServer {
    tool_router: rmcp::handler::server::tool::ToolRouter<Self>,
}

#[tool_router]
impl RmcpServer {
    #[tool(description = "Add two integers.")]
    fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> rmcp::Json<Sum> {
        rmcp::Json(Sum { sum: a + b })
    }
}

// The router built once and kept, as rmcp's examples do (the default rebuilds it per call).
#[tool_handler(router = self.tool_router)]
impl rmcp::ServerHandler for RmcpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// Serve one of the two servers on stdio (the child side of the bench).
fn serve(kind: &str) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async {
        match kind {
            "toolkit" => {
                let toolkit = Toolkit::builder().register(AddTool).build().unwrap();
                toolkit.serve_mcp_stdio().await.unwrap();
            }
            "rmcp" => {
                let server = RmcpServer {
                    tool_router: RmcpServer::tool_router(),
                };
                let running = server.serve(rmcp::transport::stdio()).await.unwrap();
                running.waiting().await.unwrap();
            }
            other => panic!("unknown {SERVER_VAR}={other}"),
        }
    });
}

type Client = RunningService<RoleClient, ()>;

async fn start(kind: &str) -> Client {
    let exe = std::env::current_exe().expect("the bench binary's path");
    let mut command = tokio::process::Command::new(exe);
    command.env(SERVER_VAR, kind);
    let transport = TokioChildProcess::new(command).expect("start the server");
    ().serve(transport).await.expect("initialize")
}

fn params() -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new("add");
    params.arguments = json!({"a": 40, "b": 2}).as_object().cloned();
    params
}

fn mcp_stdio_call(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let toolkit = rt.block_on(start("toolkit"));
    let rmcp_server = rt.block_on(start("rmcp"));
    // Both answer the same: structured content and its JSON text.
    for client in [&toolkit, &rmcp_server] {
        let result = rt.block_on(client.call_tool(params())).unwrap();
        assert_eq!(result.structured_content, Some(json!({"sum": 42})));
        assert_eq!(result.is_error, Some(false));
    }

    // The two servers take turns, three rounds each: on a shared machine the load drifts, and
    // alternating keeps the drift from landing on one side only. Compare round by round.
    let mut group = c.benchmark_group("mcp_stdio_call");
    for round in 1..=3 {
        for (name, client) in [
            ("agent_toolkit", &toolkit),
            ("rmcp_tool_router", &rmcp_server),
        ] {
            group.bench_function(format!("{name}/round{round}"), |b| {
                b.to_async(&rt)
                    .iter(|| async { black_box(client.call_tool(params()).await.unwrap()) })
            });
        }
    }
    group.finish();
    drop(rt);
}

/// The same round trip with client and server in one process over an in-memory duplex pipe:
/// no process or pipe scheduling, so what differs is the servers' own work per call. In the
/// 2025-11-25 handshake era (a session).
fn mcp_in_memory_call(c: &mut Criterion) {
    in_memory(c, "mcp_in_memory_call", || ClientLifecycleMode::Initialize);
}

/// The same in the stateless 2026-07-28 era: no handshake, every request carries its revision
/// and client info in `_meta`.
fn mcp_in_memory_call_stateless(c: &mut Criterion) {
    in_memory(c, "mcp_in_memory_call_stateless", || {
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        }
    });
}

fn in_memory(c: &mut Criterion, group: &str, lifecycle: fn() -> ClientLifecycleMode) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (toolkit, rmcp_server) = rt.block_on(async {
        let toolkit = {
            let (client_io, server_io) = tokio::io::duplex(64 * 1024);
            let (read, write) = tokio::io::split(server_io);
            let served = Toolkit::builder().register(AddTool).build().unwrap();
            tokio::spawn(async move {
                agent_toolkit::mcp::McpServer::new(&served)
                    .serve_io(read, write)
                    .await
            });
            ().serve_with_lifecycle(client_io, lifecycle())
                .await
                .expect("connect")
        };
        let rmcp_server = {
            let (client_io, server_io) = tokio::io::duplex(64 * 1024);
            let server = RmcpServer {
                tool_router: RmcpServer::tool_router(),
            };
            tokio::spawn(async move { server.serve(server_io).await.unwrap().waiting().await });
            ().serve_with_lifecycle(client_io, lifecycle())
                .await
                .expect("connect")
        };
        (toolkit, rmcp_server)
    });
    for client in [&toolkit, &rmcp_server] {
        let result = rt.block_on(client.call_tool(params())).unwrap();
        assert_eq!(result.structured_content, Some(json!({"sum": 42})));
    }
    let mut group = c.benchmark_group(group);
    for round in 1..=3 {
        for (name, client) in [
            ("agent_toolkit", &toolkit),
            ("rmcp_tool_router", &rmcp_server),
        ] {
            group.bench_function(format!("{name}/round{round}"), |b| {
                b.to_async(&rt)
                    .iter(|| async { black_box(client.call_tool(params()).await.unwrap()) })
            });
        }
    }
    group.finish();
    drop((toolkit, rmcp_server));
    rt.shutdown_background();
}

criterion_group!(
    benches,
    mcp_stdio_call,
    mcp_in_memory_call,
    mcp_in_memory_call_stateless
);

fn main() {
    if let Ok(kind) = std::env::var(SERVER_VAR) {
        serve(&kind);
        return;
    }
    benches();
    criterion::Criterion::default()
        .configure_from_args()
        .final_summary();
}
