//! TLS for the tests: a private CA and a server certificate for `localhost` and `127.0.0.1`,
//! made fresh by each test (`rcgen`), and an axum router served over TLS on loopback with them
//! (`axum-server`, rustls with the `ring` provider).
//!
//! Include it from a test binary with `#[path = "../tls/mod.rs"] mod tls;`.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// A CA made for one test, and a server certificate it signed.
pub struct TestPki {
    /// The CA's certificate, PEM: what a client must trust.
    pub ca_pem: String,
    /// The server's rustls configuration (its certificate chain and key).
    pub server: Arc<rustls::ServerConfig>,
    /// The server's certificate chain (its certificate, then the CA's), PEM: for servers not
    /// written in Rust (uvicorn's `ssl_certfile`).
    pub chain_pem: String,
    /// The server's private key, PEM (uvicorn's `ssl_keyfile`).
    pub key_pem: String,
}

impl TestPki {
    /// The chain, the key and the CA certificate written as PEM files (`server.pem`,
    /// `server.key`, `ca.pem`) in a directory of their own, for servers not written in Rust and
    /// for the CLI's `--ca-cert`; the directory is removed when the value is dropped.
    pub fn files(&self, name: &str) -> PkiFiles {
        let dir = std::env::temp_dir().join(format!(
            "agent-toolkit-{name}-{}-{:x}",
            std::process::id(),
            next_suffix()
        ));
        std::fs::create_dir_all(&dir).expect("create the directory");
        let write = |file: &str, text: &str| {
            let path = dir.join(file);
            std::fs::write(&path, text).expect("write a PEM file");
            path.to_string_lossy().into_owned()
        };
        PkiFiles {
            cert: write("server.pem", &self.chain_pem),
            key: write("server.key", &self.key_pem),
            ca: write("ca.pem", &self.ca_pem),
            dir,
        }
    }
}

/// A per-call suffix, so two tests of one process never share a directory.
fn next_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// PEM files of a [`TestPki`] in a temporary directory, removed on drop.
pub struct PkiFiles {
    /// The server's certificate chain (uvicorn's `ssl_certfile`).
    pub cert: String,
    /// The server's private key (uvicorn's `ssl_keyfile`).
    pub key: String,
    /// The CA's certificate (the CLI's `--ca-cert`).
    pub ca: String,
    dir: std::path::PathBuf,
}

impl Drop for PkiFiles {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A new CA named `name` and a server certificate for `localhost` and `127.0.0.1`.
pub fn pki(name: &str) -> TestPki {
    let ca_key = KeyPair::generate().expect("CA key");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(DnType::CommonName, name);
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca = CertifiedIssuer::self_signed(ca_params, ca_key).expect("CA certificate");

    let key = KeyPair::generate().expect("server key");
    let mut params = CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
        .expect("server params");
    params
        .distinguished_name
        .push(DnType::CommonName, "localhost");
    let cert = params.signed_by(&key, &ca).expect("server certificate");

    let chain_pem = format!("{}{}", cert.pem(), ca.pem());
    let key_pem = key.serialize_pem();
    let chain: Vec<CertificateDer<'static>> = vec![cert.der().clone(), ca.der().clone()];
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let mut server = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("protocol versions")
    .with_no_client_auth()
    .with_single_cert(chain, key)
    .expect("server config");
    server.alpn_protocols = vec![b"http/1.1".to_vec()];
    TestPki {
        ca_pem: ca.pem(),
        server: Arc::new(server),
        chain_pem,
        key_pem,
    }
}

/// A certificate made the quick way (`openssl req -x509 …`): one self-signed certificate for
/// `localhost` and `127.0.0.1` that is a CA certificate (`CA:TRUE`), used as the server's own.
/// Clients that trust it still refuse it (`CaUsedAsEndEntity`). `ca_pem` is that certificate.
pub fn ca_as_server(name: &str) -> TestPki {
    let key = KeyPair::generate().expect("key");
    let mut params = CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
        .expect("params");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    let cert = params.self_signed(&key).expect("certificate");
    let key_pem = key.serialize_pem();
    let chain = vec![cert.der().clone()];
    let der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let mut server = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("protocol versions")
    .with_no_client_auth()
    .with_single_cert(chain, der)
    .expect("server config");
    server.alpn_protocols = vec![b"http/1.1".to_vec()];
    TestPki {
        ca_pem: cert.pem(),
        server: Arc::new(server),
        chain_pem: cert.pem(),
        key_pem,
    }
}

/// Serve `router` over TLS on a free loopback port; its address. The server stops when the
/// test's runtime ends.
pub fn serve(router: axum::Router, pki: &TestPki) -> SocketAddr {
    serve_on(router, pki, 0)
}

/// [`serve`] on `port` of 127.0.0.1 (0: a free one).
pub fn serve_on(router: axum::Router, pki: &TestPki, port: u16) -> SocketAddr {
    let listener = std::net::TcpListener::bind(("127.0.0.1", port)).expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let addr = listener.local_addr().expect("address");
    let config = axum_server::tls_rustls::RustlsConfig::from_config(pki.server.clone());
    let server = axum_server::from_tcp_rustls(listener, config).expect("TLS server");
    tokio::spawn(async move { server.serve(router.into_make_service()).await });
    addr
}

/// A plain reqwest client, for raw HTTP to our servers. The library builds reqwest with
/// `rustls-no-provider` (each of its clients brings its own rustls provider), so a client
/// made with `reqwest::Client::new()` in the same binary needs a process-wide provider: the
/// same `ring` one, installed once.
pub fn http_client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}
