//! The official Python MCP SDK's streamable-HTTP server behind TLS (uvicorn with a certificate
//! from a CA made in the test): `McpImport` imports and calls its tools when the CA is trusted
//! through `TrustedRoots`, in both eras, and fails with an error naming the certificate problem
//! when it is not.

use agent_toolkit::mcp::{McpClient, McpClientOptions, McpEra, McpError, McpImport, McpTarget};
use agent_toolkit::prelude::*;
use agent_toolkit::tls::TrustedRoots;
use serde_json::json;

use crate::peers::{self, Env};
use crate::tls;

/// The Python server behind TLS, reached at `https://127.0.0.1:PORT/mcp` with the test CA in
/// `McpClientOptions::trusted_roots`: the default era's `server/discover` probe succeeds over TLS
/// (2026-07-28, not the fallback), `McpEra::Handshake` gets 2025-11-25, and in each era
/// `McpImport` imports the tools and a toolkit calls `add` over TLS. A client with the system's
/// roots only fails to connect, naming `UnknownIssuer`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_server_behind_tls() {
    let pki = tls::pki("agent-toolkit test CA (python mcp)");
    let files = pki.files("py-mcp");
    let port = peers::free_port();
    let _peer = peers::spawn_ready(
        Env::Mcp,
        "mcp_server_peer.py",
        &[
            "--http",
            &port.to_string(),
            "--tls",
            &files.cert,
            &files.key,
        ],
    )
    .await;
    let url = format!("https://127.0.0.1:{port}/mcp");

    for (era, revision) in [
        (McpEra::Newest, "2026-07-28"),
        (McpEra::Handshake, "2025-11-25"),
    ] {
        let options = McpClientOptions::new()
            .era(era)
            .trusted_roots(TrustedRoots::system().with_pem(&pki.ca_pem).unwrap());
        let client = McpClient::with_options(McpTarget::url(&url), options);
        assert_eq!(client.protocol_version().await.unwrap(), revision);
        let import = McpImport::from_client(client, "py").await.unwrap();
        let toolkit = Toolkit::builder()
            .group("py", "Tools of the Python server")
            .dynamic("py", import.tools())
            .build()
            .unwrap();
        let sum = toolkit
            .call(
                ToolCall::json("c", "py__add", json!({"a": 2, "b": 3})),
                &ToolContext::new(),
            )
            .await;
        assert_eq!(sum.model_text(), r#"{"result":5}"#, "{era:?}");
    }

    // The system's roots alone do not know the test CA.
    let untrusted = McpClient::new(McpTarget::url(&url));
    let err = untrusted.list_tools().await.unwrap_err();
    assert!(matches!(err, McpError::Connect { .. }), "{err:?}");
    assert!(err.to_string().contains("UnknownIssuer"), "{err}");
}
