//! The official Python A2A SDK's servers behind TLS (uvicorn with a certificate from a CA made
//! in the test): `RemoteAgent`, `RemoteToolRegistry` (remote tools called through a toolkit)
//! and `ClientToolsSession` reach them when the CA is trusted through `TrustedRoots`, and fail
//! with an error naming the certificate problem when it is not.

use agent_toolkit::a2a::client::{
    A2aClientError, AgentConfig, ClientToolsSession, RemoteAgent, RemoteToolRegistry,
};
use agent_toolkit::prelude::*;
use agent_toolkit::tls::TrustedRoots;
use serde_json::json;

use crate::peers::{self, Env, Peer};
use crate::tls;

/// `script` started with `--tls` and the PKI's server files; its `https://` base URL.
async fn start_tls(script: &str, pki: &tls::TestPki, dir: &std::path::Path) -> (Peer, String) {
    let (cert, key) = pki.write_server_files(dir);
    let port = peers::free_port().to_string();
    let peer = peers::spawn_ready(Env::A2a1, script, &[&port, "--tls", &cert, &key]).await;
    (peer, format!("https://127.0.0.1:{port}"))
}

fn trusting(pki: &tls::TestPki) -> TrustedRoots {
    TrustedRoots::system().with_pem(&pki.ca_pem).unwrap()
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("agent-toolkit-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test]
async fn python_tool_server_behind_tls() {
    let pki = tls::pki("agent-toolkit test CA (python a2a tools)");
    let dir = temp_dir("py-a2a-tools");
    let (_peer, url) = start_tls("a2a_tool_peer.py", &pki, &dir).await;

    let agent = RemoteAgent::connect(AgentConfig::new(&url).trusted_roots(trusting(&pki)))
        .await
        .unwrap();
    assert!(
        agent.card().supported_interfaces[0]
            .url
            .starts_with("https://"),
        "the card names the TLS endpoint"
    );

    let registry = RemoteToolRegistry::with_trusted_roots(trusting(&pki));
    registry
        .add_agent("py", AgentConfig::new(&url))
        .await
        .unwrap();
    let toolkit = Toolkit::builder()
        .group("remote", "Remote tools")
        .register(registry.tools())
        .in_group("remote")
        .build()
        .unwrap();
    let result = toolkit
        .call(
            ToolCall::json("c1", "py_add", json!({"a": 20, "b": 22})),
            &ToolContext::new(),
        )
        .await;
    let output = result.output().unwrap_or_else(|| panic!("{result:?}"));
    assert!(output.as_text().contains("42"), "{output:?}");

    // The system's roots alone do not know the test CA.
    let err = RemoteAgent::connect(AgentConfig::new(&url))
        .await
        .unwrap_err();
    assert!(matches!(err, A2aClientError::Connection { .. }), "{err:?}");
    assert!(err.to_string().contains("UnknownIssuer"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Add two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[tokio::test]
async fn python_agent_behind_tls_runs_client_side_tools() {
    let pki = tls::pki("agent-toolkit test CA (python a2a agent)");
    let dir = temp_dir("py-a2a-agent");
    let (_peer, url) = start_tls("a2a_agent_peer.py", &pki, &dir).await;

    let agent = RemoteAgent::connect(AgentConfig::new(&url).trusted_roots(trusting(&pki)))
        .await
        .unwrap();
    let toolkit = Toolkit::builder().register(Add).build().unwrap();
    let mut session = ClientToolsSession::new(agent, toolkit);
    let reply = session
        .send(r#"call add with {"a": 2, "b": 3}"#)
        .await
        .unwrap();
    assert_eq!(reply.rounds, 1);
    assert!(reply.answer.contains("add -> 5"), "{}", reply.answer);

    let err = RemoteAgent::connect(AgentConfig::new(&url))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("UnknownIssuer"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}
