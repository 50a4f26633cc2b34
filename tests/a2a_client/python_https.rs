//! The official Python A2A SDKs' servers behind TLS (uvicorn with a certificate from a CA made
//! in the test): `RemoteAgent`, `RemoteToolRegistry` (remote tools called through a toolkit)
//! and `ClientToolsSession` reach them when the CA is trusted through `TrustedRoots`, on the 1.0
//! wire and on 0.3 (a2a-sdk 0.3.26, and the 1.x SDK's compatibility layer), and fail with an
//! error naming the certificate problem when it is not.

use agent_toolkit::a2a::client::{
    A2aClientError, AgentConfig, ClientToolsSession, RemoteAgent, RemoteToolRegistry, WireVersion,
};
use agent_toolkit::prelude::*;
use agent_toolkit::tls::TrustedRoots;
use serde_json::json;

use crate::peers::{self, Env, Peer};
use crate::support::json_of;
use crate::tls;

/// `script` under `env`, started with `extra` and `--tls` with the PKI's server files; the
/// peer and its `https://` base URL.
async fn start_tls(
    env: Env,
    script: &str,
    extra: &[&str],
    files: &tls::PkiFiles,
) -> (Peer, String) {
    let (cert, key) = (files.cert.as_str(), files.key.as_str());
    let port = peers::free_port().to_string();
    let mut args = vec![port.as_str()];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--tls", cert, key]);
    let peer = peers::spawn_ready(env, script, &args).await;
    (peer, format!("https://127.0.0.1:{port}"))
}

/// The system's roots plus the test CA.
fn trusting(pki: &tls::TestPki) -> TrustedRoots {
    TrustedRoots::system().with_pem(&pki.ca_pem).unwrap()
}

/// A toolkit holding the registry's tools in the group `remote`.
fn toolkit_of(registry: &RemoteToolRegistry) -> Toolkit {
    Toolkit::builder()
        .group("remote", "Remote tools")
        .register(registry.tools())
        .in_group("remote")
        .build()
        .unwrap()
}

/// `RemoteToolRegistry::new()` (the system's roots only) refuses the agent at `url`, and says
/// why: the certificate's issuer is unknown.
async fn untrusted_registry_refuses(url: &str) {
    let err = RemoteToolRegistry::new()
        .add_agent("py", AgentConfig::new(url))
        .await
        .unwrap_err();
    assert!(matches!(err, A2aClientError::Connection { .. }), "{err:?}");
    assert!(err.to_string().contains("UnknownIssuer"), "{err}");
}

/// The a2a-sdk 1.x tool server behind TLS: `RemoteAgent` reads its card (which names the
/// `https://` endpoint) with the test CA trusted per agent; a `RemoteToolRegistry` trusting the
/// CA for all its agents discovers its tools on the 1.0 wire and a toolkit calls one over TLS.
/// Without the CA, both `RemoteAgent::connect` and `add_agent` fail with a connection error
/// naming `UnknownIssuer`.
#[tokio::test]
async fn python_tool_server_behind_tls() {
    let pki = tls::pki("agent-toolkit test CA (python a2a tools)");
    let files = pki.files("py-a2a-tools");
    let (_peer, url) = start_tls(Env::A2a1, "a2a_tool_peer.py", &[], &files).await;

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
    let names = registry
        .add_agent("py", AgentConfig::new(&url))
        .await
        .unwrap();
    assert!(names.iter().any(|n| n == "py_add"), "{names:?}");
    assert_eq!(registry.agent("py").unwrap().version(), WireVersion::V1);
    let result = toolkit_of(&registry)
        .call(
            ToolCall::json("c1", "py_add", json!({"a": 20, "b": 22})),
            &ToolContext::new(),
        )
        .await;
    let output = result.output().unwrap_or_else(|| panic!("{result:?}"));
    assert_eq!(json_of(output), json!({"sum": 42}));

    // The system's roots alone do not know the test CA.
    let err = RemoteAgent::connect(AgentConfig::new(&url))
        .await
        .unwrap_err();
    assert!(matches!(err, A2aClientError::Connection { .. }), "{err:?}");
    assert!(err.to_string().contains("UnknownIssuer"), "{err}");
    untrusted_registry_refuses(&url).await;
}

/// The A2A 0.3 wire behind TLS: the pure 0.3 server of a2a-sdk 0.3.26 (its card's `url` is the
/// `https://` endpoint) and the 1.x SDK's 0.3 compatibility layer (`--only-v03`, a card listing
/// only the 0.3 interface). A registry trusting the test CA discovers each on 0.3 and a toolkit
/// calls `add` over TLS; without the CA, `add_agent` fails naming `UnknownIssuer`.
#[tokio::test]
async fn python_03_tool_servers_behind_tls() {
    let pki = tls::pki("agent-toolkit test CA (python a2a 0.3 tools)");
    let files = pki.files("py-a2a03-tools");
    for (env, script, extra) in [
        (Env::A2a03, "a2a03_tool_peer.py", &[][..]),
        (Env::A2a1, "a2a_tool_peer.py", &["--only-v03"][..]),
    ] {
        let (_peer, url) = start_tls(env, script, extra, &files).await;

        let registry = RemoteToolRegistry::with_trusted_roots(trusting(&pki));
        registry
            .add_agent("py", AgentConfig::new(&url))
            .await
            .unwrap_or_else(|e| panic!("{script}: {e}"));
        assert_eq!(
            registry.agent("py").unwrap().version(),
            WireVersion::V03,
            "{script}"
        );
        let result = toolkit_of(&registry)
            .call(
                ToolCall::json("c1", "py_add", json!({"a": 20, "b": 22})),
                &ToolContext::new(),
            )
            .await;
        let output = result
            .output()
            .unwrap_or_else(|| panic!("{script}: {result:?}"));
        assert_eq!(json_of(output), json!({"sum": 42}), "{script}");

        untrusted_registry_refuses(&url).await;
    }
}

/// Add two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// The a2a-sdk 1.x agent that asks its client to run the client's own tools, behind TLS: a
/// `ClientToolsSession` over a `RemoteAgent` trusting the test CA runs the requested `add`
/// locally, sends the result back over TLS and gets the agent's answer in one round. Without
/// the CA, connecting fails naming `UnknownIssuer`.
#[tokio::test]
async fn python_agent_behind_tls_runs_client_side_tools() {
    let pki = tls::pki("agent-toolkit test CA (python a2a agent)");
    let files = pki.files("py-a2a-agent");
    let (_peer, url) = start_tls(Env::A2a1, "a2a_agent_peer.py", &[], &files).await;

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
    assert!(matches!(err, A2aClientError::Connection { .. }), "{err:?}");
    assert!(err.to_string().contains("UnknownIssuer"), "{err}");
}
