//! How failures are told apart, against a misbehaving server on loopback: connection and
//! protocol failures are retryable, a refusal of the arguments goes back to the model as an
//! argument error, bad cards are clear errors.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_toolkit::a2a::client::{A2aClientError, AgentConfig, RemoteAgent, RemoteToolRegistry};
use agent_toolkit::a2a::types::{Message, Part, Role, SendMessageRequest};
use agent_toolkit::{RetryPolicy, ToolCall, ToolContext, Toolkit, error::ToolErrorKind};
use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

/// A server whose card offers three tools, each answered wrongly in its own way, and two bad
/// cards.
async fn misbehaving_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let skills: Vec<Value> = ["garbage", "invalid", "internal"]
        .iter()
        .map(|n| json!({"id": format!("tool-{n}"), "name": n, "description": n, "tags": ["tool"]}))
        .collect();
    let card = json!({
        "name": "bad", "description": "misbehaves", "version": "1",
        "supportedInterfaces": [{"url": format!("{base}/rpc"), "protocolBinding": "JSONRPC",
                                 "protocolVersion": "1.0"}],
        "capabilities": {"streaming": false},
        "skills": skills
    });
    let app = axum::Router::new()
        .route(
            "/.well-known/agent-card.json",
            get(move || {
                let card = card.clone();
                async move { Json(card) }
            }),
        )
        .route(
            "/notacard/.well-known/agent-card.json",
            get(|| async { Json(json!({"name": 1})) }),
        )
        .route("/rpc", post(rpc));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

/// How many times the `invalid` tool was called (only one test calls it).
static INVALID_CALLS: AtomicUsize = AtomicUsize::new(0);

async fn rpc(Json(body): Json<Value>) -> Response {
    let id = body["id"].clone();
    let error = |code: i64, message: &str| {
        Json(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
            .into_response()
    };
    match body["params"]["message"]["metadata"]["_tool_call"]["name"].as_str() {
        Some("garbage") => (StatusCode::INTERNAL_SERVER_ERROR, "oops").into_response(),
        Some("invalid") => {
            INVALID_CALLS.fetch_add(1, Ordering::SeqCst);
            error(-32602, "params.a: expected an integer")
        }
        _ => error(-32603, "database unavailable"),
    }
}

#[tokio::test]
async fn failures_are_classified_for_the_retry_policy() {
    let base = misbehaving_server().await;
    let registry = RemoteToolRegistry::new();
    registry
        .add_agent("bad", AgentConfig::new(&base))
        .await
        .unwrap();
    let toolkit = Toolkit::builder()
        .register(registry.tools())
        .retry(RetryPolicy::exponential(2, Duration::from_millis(10), 1.0))
        .build()
        .unwrap();
    let ctx = ToolContext::new();
    let call = |name: &str| ToolCall::json("c", format!("bad_{name}"), json!({"a": "x"}));

    // Not JSON-RPC at all (HTTP 500 with text): a protocol failure, retried.
    let result = toolkit.call(call("garbage"), &ctx).await;
    let error = result.error().unwrap();
    assert!(error.is_retryable(), "{error:?}");
    assert!(error.message().contains("invalid answer"), "{error}");
    assert_eq!(result.attempts, 3);

    // The agent refused the arguments: the model sees why and can correct them; no retry.
    let result = toolkit.call(call("invalid"), &ctx).await;
    let error = result.error().unwrap();
    assert_eq!(error.kind(), ToolErrorKind::InvalidArguments);
    assert!(
        error.message().contains("params.a: expected an integer"),
        "{error}"
    );
    assert_eq!(INVALID_CALLS.load(Ordering::SeqCst), 1);

    // The agent's internal error: transient by convention, retried.
    let result = toolkit.call(call("internal"), &ctx).await;
    assert!(result.error().unwrap().is_retryable());
    assert_eq!(result.attempts, 3);
}

#[tokio::test]
async fn client_errors_are_classified() {
    // `a2a-client-lf` reports its transport failures as internal errors (-32603); they must
    // come out as connection failures, not as the agent's errors.
    let base = misbehaving_server().await;
    let agent = RemoteAgent::connect(&base).await.unwrap();
    let request = SendMessageRequest {
        message: Message::new(Role::User, vec![Part::text("hi")]),
        configuration: None,
        metadata: None,
        tenant: None,
    };
    let card = agent.card().clone();
    let port = crate::peers::free_port();
    let mut moved = card.clone();
    moved.supported_interfaces[0].url = format!("http://127.0.0.1:{port}/rpc");
    let gone = RemoteAgent::connect(AgentConfig::new(&base).card(moved))
        .await
        .unwrap();
    let err = gone.send_message(&request).await.unwrap_err();
    assert!(matches!(err, A2aClientError::Connection { .. }), "{err:?}");
    let err = gone.cancel_task("t").await.unwrap_err();
    assert!(matches!(err, A2aClientError::Connection { .. }), "{err:?}");

    let err = agent.send_message(&request).await.unwrap_err();
    assert!(
        matches!(err, A2aClientError::Rpc { code: -32603, .. }),
        "{err:?}"
    );

    // Bad cards: not found, and not a card.
    let err = RemoteAgent::connect(format!("{base}/nothing"))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, A2aClientError::Card { message, .. } if message.contains("404")),
        "{err:?}"
    );
    let err = RemoteAgent::connect(format!("{base}/notacard"))
        .await
        .unwrap_err();
    assert!(matches!(err, A2aClientError::Card { .. }), "{err:?}");
}

#[tokio::test]
async fn unreachable_agents_and_bad_cards_are_clear_errors() {
    let registry = RemoteToolRegistry::new();
    let port = crate::peers::free_port();
    let err = registry
        .add_agent("none", AgentConfig::new(format!("http://127.0.0.1:{port}")))
        .await
        .unwrap_err();
    assert!(matches!(err, A2aClientError::Connection { .. }), "{err}");
    assert!(err.is_retryable());
    assert!(registry.agents().is_empty());
}
