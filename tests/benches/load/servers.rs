//! The child side of the load bench: the Rust servers, each the bench binary started again with
//! `LOAD_SERVER=<name>`. Each binds 127.0.0.1 on a free port, prints `READY <port>` and serves
//! until it is killed, on a multi-thread tokio runtime sized by the CPUs the process may use
//! (one, when the parent pins it).
//!
//! All serve the same tool, `add(a, b) -> a + b`: ours written as a plain `fn` with
//! `#[agent_toolkit::tool]` (the way users write it), rmcp's with `#[tool_router]`, the bare
//! A2A executor reading the call's `{name, params}` itself.

use std::collections::HashMap;
use std::sync::Arc;

use a2a_server::{AgentExecutor, DefaultRequestHandler, ExecutorContext, InMemoryTaskStore};
use a2a_types::{
    A2AError, Artifact, Message, Part, PartContent, StreamResponse, Task, TaskState, TaskStatus,
};
use agent_toolkit::Toolkit;
use agent_toolkit::a2a::server::A2aToolServer;
use agent_toolkit::mcp::types::StreamableHttpServerConfig;
use agent_toolkit::mcp::{McpHttpService, McpServer};
use axum::serve::ListenerExt;
use futures::stream::BoxStream;
use rmcp::handler::server::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::{tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// Add two integers.
#[agent_toolkit::tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

/// The same tool written with rmcp's macros (its router built once and kept, as rmcp's examples
/// do).
#[derive(Clone)]
struct RmcpAdd {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl RmcpAdd {
    #[tool(description = "Add two integers.")]
    fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> String {
        (a + b).to_string()
    }
}

#[tool_handler(router = self.tool_router)]
impl rmcp::ServerHandler for RmcpAdd {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// rmcp's stateless JSON mode: no sessions, and a plain JSON answer when the handler sends
/// nothing before its response.
fn stateless(config: StreamableHttpServerConfig) -> StreamableHttpServerConfig {
    config
        .with_legacy_session_mode(false)
        .with_json_response(true)
}

/// The bare A2A executor: a `SendMessage` carrying `{name: "add", params: {a, b}}` (in the
/// message's `_tool_call` metadata, or as a data part) is answered with one COMPLETED task whose
/// artifact holds `{"result": a + b}`. No schema, no validation beyond reading two integers.
struct BareAdd;

fn sum_of(message: Option<&Message>) -> Result<i64, A2AError> {
    let call = message.and_then(|m| {
        m.metadata
            .as_ref()
            .and_then(|meta| meta.get("_tool_call"))
            .or_else(|| {
                m.parts.iter().find_map(|p| match &p.content {
                    PartContent::Data(d) => Some(d),
                    _ => None,
                })
            })
    });
    let params = call.and_then(|c| c.get("params"));
    // A2A 1.0 data parts travel as protobuf `Struct`s: integers come back as floats.
    let int = |key: &str| {
        let v = params.and_then(|p| p.get(key))?;
        v.as_i64().or_else(|| v.as_f64().map(|f| f as i64))
    };
    match (int("a"), int("b")) {
        (Some(a), Some(b)) => Ok(a + b),
        _ => Err(A2AError::invalid_params(
            "expected _tool_call {name, params: {a, b}}",
        )),
    }
}

impl AgentExecutor for BareAdd {
    fn execute(
        &self,
        ctx: ExecutorContext,
    ) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        let event = sum_of(ctx.message.as_ref()).map(|sum| {
            StreamResponse::Task(Task {
                id: ctx.task_id.clone(),
                context_id: ctx.context_id.clone(),
                status: TaskStatus {
                    state: TaskState::Completed,
                    message: None,
                    timestamp: None,
                },
                artifacts: Some(vec![Artifact {
                    artifact_id: a2a_types::new_task_id(),
                    name: Some("add".into()),
                    description: None,
                    parts: vec![Part::data(json!({ "result": sum }))],
                    metadata: None,
                    extensions: None,
                }]),
                history: ctx.message.map(|m| vec![m]),
                metadata: None,
            })
        });
        Box::pin(futures::stream::once(async move { event }))
    }

    fn cancel(&self, ctx: ExecutorContext) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        let task = Task {
            id: ctx.task_id,
            context_id: ctx.context_id,
            status: TaskStatus {
                state: TaskState::Canceled,
                message: None,
                timestamp: None,
            },
            artifacts: None,
            history: None,
            metadata: None::<HashMap<String, Value>>,
        };
        Box::pin(futures::stream::once(async move {
            Ok(StreamResponse::Task(task))
        }))
    }
}

/// Serve `router` on `listener` with `TCP_NODELAY` (as `A2aToolServer::serve` and the
/// `McpHttpService` docs do).
async fn serve_router(listener: tokio::net::TcpListener, router: axum::Router) {
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, router).await.expect("serve");
}

/// Run the server `name` (the child side). Returns false for an unknown name.
pub fn serve(name: &str) -> bool {
    if !matches!(
        name,
        "mcp-ours"
            | "mcp-ours-stateless"
            | "mcp-rmcp"
            | "mcp-rmcp-stateless"
            | "a2a-ours"
            | "a2a-bare"
    ) {
        return false;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        println!("READY {}", listener.local_addr().expect("addr").port());
        let toolkit = || Toolkit::builder().register(Add).build().expect("toolkit");
        let rmcp_service = |config| {
            StreamableHttpService::new(
                || {
                    Ok(RmcpAdd {
                        tool_router: RmcpAdd::tool_router(),
                    })
                },
                Arc::new(LocalSessionManager::default()),
                config,
            )
        };
        let mcp = |service| axum::Router::new().nest_service("/mcp", service);
        match name {
            "mcp-ours" => {
                let service = toolkit().mcp_http_service();
                serve_router(listener, mcp(service)).await;
            }
            "mcp-ours-stateless" => {
                let config =
                    stateless(StreamableHttpServerConfig::default().enforce_origin_validation());
                let service = McpHttpService::with_config(McpServer::new(&toolkit()), config);
                serve_router(listener, mcp(service)).await;
            }
            "mcp-rmcp" => {
                let service = rmcp_service(StreamableHttpServerConfig::default());
                serve_router(listener, axum::Router::new().nest_service("/mcp", service)).await;
            }
            "mcp-rmcp-stateless" => {
                let service = rmcp_service(stateless(StreamableHttpServerConfig::default()));
                serve_router(listener, axum::Router::new().nest_service("/mcp", service)).await;
            }
            "a2a-ours" => {
                A2aToolServer::new(&toolkit())
                    .serve(listener)
                    .await
                    .expect("serve");
            }
            "a2a-bare" => {
                let handler = DefaultRequestHandler::new(BareAdd, InMemoryTaskStore::new());
                let router = a2a_server::jsonrpc::jsonrpc_router(Arc::new(handler));
                serve_router(listener, router).await;
            }
            _ => unreachable!(),
        }
    });
    true
}
