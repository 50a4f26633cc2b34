//! Serving a toolkit over HTTPS, A2A and MCP on one port, and calling it back over TLS.
//!
//! Shows how the library's servers are mounted behind TLS: `A2aToolServer::router()` and
//! `Toolkit::mcp_http_service()` are ordinary axum routes, so any rustls acceptor serves them;
//! here `axum-server` with a certificate and key in PEM. Then the two clients reach them over
//! `https://` with a bearer token, trusting the CA through `TrustedRoots`.
//!
//! Run it with `cargo run --example https_servers --features a2a,mcp`: without arguments it
//! makes a throwaway CA and a certificate for `localhost` (rcgen) and exits after the calls.
//! With `-- CERT.pem KEY.pem [PORT]` it serves your certificate (chain first) and key until
//! stopped; clients then trust your CA with `TrustedRoots::system().with_pem_file(..)`, or
//! the CLI with `agent-toolkit card https://HOST:PORT/ --ca-cert CA.pem`.
//!
//! Behind a TLS-terminating load balancer, serve the same router on plain HTTP instead and
//! give the A2A server its public `https://` URL (`ServerOptions::public_url`), so the card
//! points clients at the balancer.

use std::net::SocketAddr;
use std::sync::Arc;

use agent_toolkit::a2a::client::{AgentConfig, RemoteAgent};
use agent_toolkit::a2a::server::{A2aToolServer, ServerOptions};
use agent_toolkit::mcp::{McpClient, McpClientOptions, McpTarget};
use agent_toolkit::prelude::*;
use agent_toolkit::tls::TrustedRoots;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::json;

const TOKEN: &str = "example-token";

/// Add two integers.
#[tool(read_only, idempotent)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (chain_pem, key_pem, ca_pem, port) = match args.as_slice() {
        [cert, key, rest @ ..] => {
            let port = rest.first().map(|p| p.parse()).transpose()?.unwrap_or(8443);
            (std::fs::read(cert)?, std::fs::read(key)?, None, port)
        }
        _ => {
            let (chain, key, ca) = throwaway_certificate()?;
            (chain, key, Some(ca), 0)
        }
    };

    // The server side: one toolkit, A2A at `/`, MCP at `/mcp`, one TLS listener.
    let toolkit = Toolkit::builder().register(Add).build()?;
    let listener = std::net::TcpListener::bind(("127.0.0.1", port))?;
    listener.set_nonblocking(true)?;
    let addr: SocketAddr = listener.local_addr()?;
    let base = format!("https://localhost:{}/", addr.port());
    let a2a = A2aToolServer::new(&toolkit).options(
        ServerOptions::new()
            .name("HTTPS tools")
            .bearer_token(TOKEN)
            .public_url(base.clone()),
    );
    let app = a2a
        .router()
        .nest_service("/mcp", toolkit.mcp_http_service());
    let tls =
        axum_server::tls_rustls::RustlsConfig::from_config(server_config(&chain_pem, &key_pem)?);
    let server = axum_server::from_tcp_rustls(listener, tls)?;
    let serving = tokio::spawn(async move { server.serve(app.into_make_service()).await });
    println!("serving A2A at {base} and MCP at {base}mcp");

    let Some(ca_pem) = ca_pem else {
        // Your own certificate: serve until stopped.
        serving.await??;
        return Ok(());
    };

    // The client side: trust the CA, send the token.
    let roots = TrustedRoots::system().with_pem(&ca_pem)?;
    let agent = RemoteAgent::connect(
        AgentConfig::new(base.clone())
            .bearer_token(TOKEN)
            .trusted_roots(roots.clone()),
    )
    .await?;
    println!("A2A card over TLS: {}", agent.card().name);

    let options = McpClientOptions::new().trusted_roots(roots);
    let mcp = McpClient::with_options(McpTarget::url(format!("{base}mcp")), options);
    let result = mcp.call_tool("add", json!({"a": 40, "b": 2})).await?;
    let text: Vec<&str> = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect();
    println!("MCP tools/call over TLS: add(40, 2) = {}", text.join(""));
    mcp.close().await;

    // Without the CA the certificate is refused, with a message that says why.
    let refused = RemoteAgent::connect(AgentConfig::new(base)).await;
    if let Err(e) = refused {
        println!("without the CA: {e}");
    }
    Ok(())
}

/// A rustls server configuration (ring provider) from a PEM certificate chain and key.
fn server_config(
    chain_pem: &[u8],
    key_pem: &[u8],
) -> Result<Arc<rustls::ServerConfig>, Box<dyn std::error::Error>> {
    let chain = CertificateDer::pem_slice_iter(chain_pem).collect::<Result<Vec<_>, _>>()?;
    let key = PrivateKeyDer::from_pem_slice(key_pem)?;
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_no_client_auth()
    .with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// PEM texts: the certificate chain to serve, its key, and the CA to trust.
type Pems = (Vec<u8>, Vec<u8>, Vec<u8>);

/// A CA made now and a certificate it signed for `localhost` and 127.0.0.1.
fn throwaway_certificate() -> Result<Pems, rcgen::Error> {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate()?)?;
    let key = KeyPair::generate()?;
    let cert = CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])?
        .signed_by(&key, &ca)?;
    let chain = format!("{}{}", cert.pem(), ca.pem());
    Ok((
        chain.into_bytes(),
        key.serialize_pem().into_bytes(),
        ca.pem().into_bytes(),
    ))
}
