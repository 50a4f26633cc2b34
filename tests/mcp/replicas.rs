//! Two replicas of one MCP server behind a round-robin load balancer without sticky sessions:
//! a stateless (2026-07-28) client works through it — every request may land on the other
//! replica — and hears tool-list changes on its listen stream.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_toolkit::mcp::{McpClient, McpTarget};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use serde_json::json;

/// The balancer's state: the replicas and how many requests each got.
struct Balancer {
    replicas: Vec<String>,
    next: AtomicUsize,
    served: Vec<AtomicUsize>,
    http: reqwest::Client,
}

/// Forward the request to the next replica, streaming the answer back (SSE included).
async fn forward(State(balancer): State<Arc<Balancer>>, request: Request) -> Response {
    let index = balancer.next.fetch_add(1, Ordering::SeqCst) % balancer.replicas.len();
    balancer.served[index].fetch_add(1, Ordering::SeqCst);
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    let mut outgoing = balancer
        .http
        .request(parts.method.clone(), &balancer.replicas[index])
        .body(body);
    for (name, value) in &parts.headers {
        if name != "host" {
            outgoing = outgoing.header(name, value);
        }
    }
    let answer = outgoing.send().await.unwrap();
    let mut response = Response::builder().status(answer.status());
    for (name, value) in answer.headers() {
        response = response.header(name, value);
    }
    response
        .body(Body::from_stream(answer.bytes_stream()))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_client_works_across_replicas_without_sticky_sessions() {
    // One toolkit configuration, two server processes' worth of state: each replica serves a
    // toolkit of its own, as two machines would.
    let first = crate::fixture::toolkit();
    let second = crate::fixture::toolkit();
    let replicas = vec![
        crate::serve_http(&first).await,
        crate::serve_http(&second).await,
    ];
    let balancer = Arc::new(Balancer {
        served: replicas.iter().map(|_| AtomicUsize::new(0)).collect(),
        replicas,
        next: AtomicUsize::new(0),
        http: crate::tls::http_client(),
    });
    let app = axum::Router::new()
        .route("/mcp", axum::routing::any(forward))
        .with_state(balancer.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });

    let client = McpClient::new(McpTarget::url(format!("http://127.0.0.1:{port}/mcp")));
    assert_eq!(client.protocol_version().await.unwrap(), "2026-07-28");
    for n in 0..6_i64 {
        let tools = crate::sessions::tool_names(&client).await;
        assert_eq!(tools, ["add", "cancelled_count", "fail", "slow", "unlock"]);
        let sum = client
            .call_tool("add", json!({"a": n, "b": 1}))
            .await
            .unwrap();
        assert_eq!(sum.structured_content, Some(json!({"sum": n + 1})));
    }
    for served in &balancer.served {
        assert!(served.load(Ordering::SeqCst) >= 6, "both replicas answered");
    }

    // A change on the replica holding the listen stream reaches the client. (Which replica
    // that is depends on the order of requests; switch both, as a deploy would.)
    let mut changes = client.tool_list_changes();
    first.set_group_active("admin", true).unwrap();
    second.set_group_active("admin", true).unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(5), changes.changed())
        .await
        .expect("a tool-list change arrives")
        .unwrap();
    let tools = crate::sessions::tool_names(&client).await;
    assert!(tools.contains(&"secret".to_owned()), "{tools:?}");
}
