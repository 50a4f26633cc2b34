//! An `https://` MCP server: the fixture toolkit's streamable-HTTP service served over TLS with
//! a certificate from a CA made in the test, behind a check of `Authorization: Bearer` and of a
//! custom header, reached by `McpClient` (directly and through a same-origin redirect) and
//! `McpImport` trusting that CA. An untrusted certificate and missing credentials are clear
//! errors.

use agent_toolkit::mcp::{McpClient, McpClientOptions, McpError, McpImport, McpTarget};
use agent_toolkit::prelude::*;
use agent_toolkit::tls::TrustedRoots;
use axum::http::StatusCode;
use serde_json::json;

use crate::fixture;
use crate::tls;

/// The fixture toolkit at `https://localhost:<port>/mcp`, wanting the token and the header.
fn server(pki: &tls::TestPki) -> String {
    let app = axum::Router::new()
        .nest_service("/mcp", fixture::toolkit().mcp_http_service())
        // A moved endpoint: followed, since it stays on the same origin.
        .route(
            "/old",
            axum::routing::any(|| async { axum::response::Redirect::temporary("/mcp") }),
        )
        .layer(axum::middleware::from_fn(
            |request: axum::extract::Request, next: axum::middleware::Next| async move {
                let allowed = {
                    let header =
                        |name: &str| request.headers().get(name).and_then(|v| v.to_str().ok());
                    header("authorization") == Some("Bearer mcp-secret")
                        && header("x-tenant") == Some("t1")
                };
                if !allowed {
                    return axum::response::IntoResponse::into_response(StatusCode::UNAUTHORIZED);
                }
                next.run(request).await
            },
        ));
    let addr = tls::serve(app, pki);
    format!("https://localhost:{}/mcp", addr.port())
}

fn options(pki: Option<&tls::TestPki>, token: Option<&str>) -> McpClientOptions {
    let mut options = McpClientOptions::new().header("x-tenant", "t1");
    if let Some(pki) = pki {
        options = options.trusted_roots(TrustedRoots::system().with_pem(&pki.ca_pem).unwrap());
    }
    if let Some(token) = token {
        options = options.bearer_token(token);
    }
    options
}

#[tokio::test]
async fn tools_over_https_with_a_private_ca_and_credentials() {
    let pki = tls::pki("agent-toolkit test CA (mcp)");
    let url = server(&pki);
    let client = McpClient::with_options(
        McpTarget::url(url.clone()),
        options(Some(&pki), Some("mcp-secret")),
    );
    let names = crate::sessions::tool_names(&client).await;
    assert!(names.contains(&"add".to_owned()), "{names:?}");
    let result = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(result.structured_content, Some(json!({"sum": 5})));
    client.close().await;

    // Through a same-origin redirect (307 keeps the method and the body).
    let moved = McpClient::with_options(
        McpTarget::url(url.replace("/mcp", "/old")),
        options(Some(&pki), Some("mcp-secret")),
    );
    assert!(!moved.list_tools().await.unwrap().is_empty());
    moved.close().await;

    // Imported into a toolkit, as an agent would use it.
    let import = McpImport::from_client(
        McpClient::with_options(McpTarget::url(url), options(Some(&pki), Some("mcp-secret"))),
        "remote",
    )
    .await
    .unwrap();
    let toolkit = Toolkit::builder()
        .group("mcp", "Remote tools")
        .dynamic("mcp", import.tools())
        .build()
        .unwrap();
    let result = toolkit
        .call(
            ToolCall::new("c1", "remote__add", r#"{"a": 20, "b": 22}"#),
            &ToolContext::new(),
        )
        .await;
    let output = result.output().unwrap_or_else(|| panic!("{result:?}"));
    assert!(output.as_text().contains("42"), "{output:?}");
}

#[tokio::test]
async fn untrusted_certificates_and_missing_credentials_are_clear_errors() {
    let pki = tls::pki("agent-toolkit test CA (mcp errors)");
    let url = server(&pki);

    let untrusted = McpClient::with_options(
        McpTarget::url(url.clone()),
        options(None, Some("mcp-secret")),
    );
    let err = untrusted.list_tools().await.unwrap_err();
    assert!(matches!(err, McpError::Connect { .. }), "{err:?}");
    assert!(err.to_string().contains("certificate"), "{err}");

    let no_token = McpClient::with_options(McpTarget::url(url), options(Some(&pki), None));
    let err = no_token.list_tools().await.unwrap_err();
    assert!(matches!(err, McpError::Connect { .. }), "{err:?}");
    assert!(err.to_string().contains("401"), "{err}");
}
