//! The MCP HTTP server's own bearer check (`McpHttpService::bearer_token`), reached by our
//! client with the right token, none and a wrong one, in both eras: the right token works, the
//! others get HTTP 401 before MCP sees the request, and the client's error says so.

use agent_toolkit::mcp::{McpClient, McpClientOptions, McpEra, McpError, McpTarget};
use serde_json::json;

async fn serve_with_token(token: &str) -> String {
    let service = crate::fixture::toolkit()
        .mcp_http_service()
        .bearer_token(token);
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://127.0.0.1:{port}/mcp")
}

fn client(url: &str, era: McpEra, token: Option<&str>) -> McpClient {
    let mut options = McpClientOptions::new().era(era);
    if let Some(token) = token {
        options = options.bearer_token(token);
    }
    McpClient::with_options(McpTarget::url(url), options)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_token_is_required_in_both_eras() {
    let url = serve_with_token("tok-123").await;
    for (era, revision) in [
        (McpEra::Newest, "2026-07-28"),
        (McpEra::Handshake, "2025-11-25"),
    ] {
        let good = client(&url, era, Some("tok-123"));
        assert_eq!(good.protocol_version().await.unwrap(), revision);
        let sum = good
            .call_tool("add", json!({"a": 1, "b": 2}))
            .await
            .unwrap();
        assert_eq!(sum.structured_content, Some(json!({"sum": 3})));
        good.close().await;

        for token in [None, Some("tok-12"), Some("tok-1234")] {
            let refused = client(&url, era, token);
            let err = refused.list_tools().await.unwrap_err();
            assert!(matches!(err, McpError::Connect { .. }), "{err:?}");
            let text = err.to_string();
            assert!(
                text.contains("HTTP 401 Unauthorized"),
                "{era:?} {token:?}: {text}"
            );
            let remedy = match token {
                None => "the server wants credentials; set a bearer token",
                Some(_) => "the server refused the bearer token sent",
            };
            assert!(text.contains(remedy), "{era:?} {token:?}: {text}");
            assert!(text.contains("--token"), "{text}");
        }
    }
}

#[tokio::test]
async fn refusals_are_http_401_with_a_bearer_challenge_for_every_method() {
    let url = serve_with_token("tok-123").await;
    let http = crate::tls::http_client();
    for method in [
        reqwest::Method::POST,
        reqwest::Method::GET,
        reqwest::Method::DELETE,
    ] {
        let response = http
            .request(method.clone(), &url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("authorization", "Bearer wrong")
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 401, "{method}");
        assert_eq!(response.headers()["www-authenticate"], "Bearer");
        let body: serde_json::Value = response.json().await.unwrap();
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains("Authorization: Bearer"), "{message}");
    }
}

/// A token that stops being accepted in an open session (revoked, expired): the server's 401
/// is reported as a refusal naming the request, not as a lost connection, and not retried.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_refused_mid_session_is_a_refusal_not_a_lost_connection() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use axum::response::IntoResponse;

    let revoked = Arc::new(AtomicBool::new(false));
    let gate = revoked.clone();
    let app = axum::Router::new()
        .nest_service("/mcp", crate::fixture::toolkit().mcp_http_service())
        .layer(axum::middleware::from_fn(
            move |request: axum::extract::Request, next: axum::middleware::Next| {
                let revoked = gate.load(Ordering::SeqCst);
                async move {
                    if revoked {
                        let challenge = [("www-authenticate", r#"Bearer error="invalid_token""#)];
                        return (axum::http::StatusCode::UNAUTHORIZED, challenge).into_response();
                    }
                    next.run(request).await
                }
            },
        ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let url = format!("http://127.0.0.1:{port}/mcp");

    let client = client(&url, McpEra::Handshake, Some("tok"));
    assert_eq!(client.list_tools().await.unwrap().len(), 5);
    revoked.store(true, Ordering::SeqCst);
    let error = client.list_tools().await.unwrap_err();
    assert!(
        matches!(&error, McpError::Unauthorized { method, .. } if method == "tools/list"),
        "{error:?}"
    );
    assert!(!error.is_retryable());
    let text = error.to_string();
    assert!(
        text.contains("HTTP 401") && text.contains("refused the bearer token"),
        "{text}"
    );
}
