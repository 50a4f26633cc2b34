//! `https://` agents: this crate's `A2aToolServer` served over TLS with a certificate from a CA
//! made in the test, reached through `RemoteAgent` and `RemoteToolRegistry` that trust that CA
//! (`TrustedRoots`), with a bearer token and a custom header a gateway in front demands. An
//! untrusted certificate, a missing header and a wrong token are clear errors.

use agent_toolkit::a2a::client::{A2aClientError, AgentConfig, RemoteAgent, RemoteToolRegistry};
use agent_toolkit::a2a::server::{A2aToolServer, ServerOptions};
use agent_toolkit::prelude::*;
use agent_toolkit::tls::TrustedRoots;
use axum::http::StatusCode;

use crate::support::json_of;
use crate::tls;

const TOKEN: &str = "tls-secret";

/// Add two integers.
#[tool(read_only)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// A TLS tool server behind a "gateway" that wants `x-api-key: k1`; its base URL.
fn server(pki: &tls::TestPki) -> String {
    let toolkit = Toolkit::builder().register(Add).build().unwrap();
    // The port is known only once bound, and the card must name it: bind first, through a
    // placeholder router, then serve the real one on the same address.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let url = format!("https://localhost:{port}/");
    let server = A2aToolServer::new(&toolkit).options(
        ServerOptions::new()
            .name("TLS tools")
            .bearer_token(TOKEN)
            .public_url(url.clone()),
    );
    let router = server.router().layer(axum::middleware::from_fn(
        |request: axum::extract::Request, next: axum::middleware::Next| async move {
            if request
                .headers()
                .get("x-api-key")
                .and_then(|v| v.to_str().ok())
                != Some("k1")
            {
                return axum::response::IntoResponse::into_response(StatusCode::FORBIDDEN);
            }
            next.run(request).await
        },
    ));
    tls::serve_on(router, pki, port);
    url
}

/// `tls_add` with `args`, from a toolkit following `registry`'s tools.
async fn call_add(registry: &RemoteToolRegistry, args: &str) -> ToolResult {
    let toolkit = Toolkit::builder()
        .group("remote", "Remote tools")
        .dynamic("remote", &registry.dynamic_tools())
        .build()
        .unwrap();
    toolkit
        .call(ToolCall::new("c1", "tls_add", args), &ToolContext::new())
        .await
}

fn trusting(pki: &tls::TestPki) -> TrustedRoots {
    TrustedRoots::system().with_pem(&pki.ca_pem).unwrap()
}

#[tokio::test]
async fn remote_tools_over_https_with_a_private_ca() {
    let pki = tls::pki("agent-toolkit test CA (a2a)");
    let url = server(&pki);
    let config = AgentConfig::new(url.clone())
        .bearer_token(TOKEN)
        .header("x-api-key", "k1");

    // The registry's shared client trusts the CA; the agent's headers give it one of its own.
    let registry = RemoteToolRegistry::with_trusted_roots(trusting(&pki));
    registry.add_agent("tls", config.clone()).await.unwrap();
    let result = call_add(&registry, r#"{"a": 40, "b": 2}"#).await;
    assert_eq!(json_of(result.output().unwrap()), serde_json::json!(42));

    // A lone agent, the roots on its config.
    let agent = RemoteAgent::connect(config.trusted_roots(trusting(&pki)))
        .await
        .unwrap();
    assert_eq!(agent.card().name, "TLS tools");
}

#[tokio::test]
async fn untrusted_certificates_missing_headers_and_wrong_tokens_are_clear_errors() {
    let pki = tls::pki("agent-toolkit test CA (a2a errors)");
    let url = server(&pki);

    // The system's roots alone do not know the test CA.
    let err = RemoteAgent::connect(AgentConfig::new(url.clone()).header("x-api-key", "k1"))
        .await
        .unwrap_err();
    assert!(matches!(err, A2aClientError::Connection { .. }), "{err:?}");
    assert!(err.to_string().contains("certificate"), "{err}");

    // Trusted, but without the gateway's header: refused, and the error says so.
    let err = RemoteAgent::connect(AgentConfig::new(url.clone()).trusted_roots(trusting(&pki)))
        .await
        .unwrap_err();
    assert!(
        matches!(err, A2aClientError::Unauthorized { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("403"), "{err}");

    // The card is public; a call with a wrong token is refused as unauthorized.
    let registry = RemoteToolRegistry::with_trusted_roots(trusting(&pki));
    registry
        .add_agent(
            "tls",
            AgentConfig::new(url)
                .bearer_token("wrong")
                .header("x-api-key", "k1"),
        )
        .await
        .unwrap();
    let result = call_add(&registry, r#"{"a": 1, "b": 2}"#).await;
    let error = result.error().expect("refused");
    assert!(error.message().contains("unauthorized"), "{error:?}");
    assert!(
        error.message().contains("Authorization: Bearer"),
        "{error:?}"
    );

    // A header that is not valid HTTP is a configuration error, before any request.
    let err =
        RemoteAgent::connect(AgentConfig::new("https://localhost:1/").header("bad header", "x"))
            .await
            .unwrap_err();
    assert!(matches!(err, A2aClientError::Config(_)), "{err:?}");
}

/// A server whose certificate is a CA certificate (made with `openssl req -x509` the quick
/// way): trusted or not, rustls refuses it as `CaUsedAsEndEntity`, and the error says what that
/// means and how to make a certificate that works.
#[tokio::test]
async fn a_ca_certificate_used_as_the_servers_is_explained() {
    let pki = tls::ca_as_server("quick self-signed");
    let url = server(&pki);
    let err = RemoteAgent::connect(
        AgentConfig::new(url)
            .header("x-api-key", "k1")
            .trusted_roots(trusting(&pki)),
    )
    .await
    .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("CaUsedAsEndEntity"), "{text}");
    assert!(text.contains("is a CA certificate"), "{text}");
    assert!(text.contains("CA:FALSE"), "{text}");
}
