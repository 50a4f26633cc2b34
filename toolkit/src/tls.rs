//! Which HTTPS servers the library's clients trust: [`TrustedRoots`].
//!
//! Every HTTP client of the library — the model providers, the A2A client and registry, remote
//! tools, client-side tool sessions, the MCP client and import, the CLI — is built from an
//! [`EndpointSettings`](crate::endpoint::EndpointSettings) and these roots, on one
//! `reqwest` over rustls with the `ring` crypto provider. By default they trust the system's
//! root certificates (the system store; `SSL_CERT_FILE` and `SSL_CERT_DIR` are honoured), or
//! the Mozilla roots bundled with the library where the system has none. A private CA (a
//! company proxy, a test server with a generated certificate) is added with
//! [`TrustedRoots::with_pem`] and given to the client's configuration.
//!
//! ```no_run
//! # #[cfg(all(feature = "a2a", feature = "mcp", feature = "openai"))]
//! # fn demo(token: &str) -> Result<(), Box<dyn std::error::Error>> {
//! use agent_toolkit::a2a::client::AgentConfig;
//! use agent_toolkit::mcp::McpClientOptions;
//! use agent_toolkit::model::OpenAiChat;
//! use agent_toolkit::tls::TrustedRoots;
//!
//! let roots = TrustedRoots::system().with_pem_file("company-ca.pem")?;
//! let agent = AgentConfig::new("https://agents.internal:8443")
//!     .bearer_token(token)
//!     .header("X-Tenant", "t1")
//!     .trusted_roots(roots.clone());
//! let options = McpClientOptions::new() // MCP over HTTP: the same three
//!     .trusted_roots(roots.clone())
//!     .bearer_token(token);
//! let openai = OpenAiChat::builder().trusted_roots(roots);
//! # let _ = (agent, options, openai); Ok(()) }
//! ```
//!
//! Nothing here installs a process-wide rustls provider: each client carries its own
//! configuration, so an application is free to choose another provider for its own clients.

use std::fmt;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use rustls::RootCertStore;

use crate::error::Cause;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

/// The root certificates an HTTPS client trusts: the system's (default) and any added.
///
/// ```
/// # fn demo(pem: &[u8]) -> Result<(), agent_toolkit::tls::TlsError> {
/// use agent_toolkit::tls::TrustedRoots;
///
/// let roots = TrustedRoots::system().with_pem(pem)?; // also trust the company CA
/// # let _ = roots; Ok(()) }
/// ```
#[derive(Clone, Default)]
pub struct TrustedRoots {
    extra: Vec<CertificateDer<'static>>,
}

impl fmt::Debug for TrustedRoots {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TrustedRoots")
            .field("system", &true)
            .field("added", &self.extra.len())
            .finish()
    }
}

impl TrustedRoots {
    /// The system's root certificates (`SSL_CERT_FILE` and `SSL_CERT_DIR` honoured), or the
    /// bundled Mozilla roots where the system has none. The default.
    pub fn system() -> Self {
        TrustedRoots::default()
    }

    /// Also trust every certificate in `pem` (one or more `-----BEGIN CERTIFICATE-----`
    /// blocks), e.g. a private CA.
    pub fn with_pem(mut self, pem: impl AsRef<[u8]>) -> Result<Self, TlsError> {
        let mut found = 0;
        for cert in CertificateDer::pem_slice_iter(pem.as_ref()) {
            let cert = cert.map_err(|e| TlsError::Pem {
                origin: "the PEM text".into(),
                source: Cause::new(e),
            })?;
            self.extra.push(cert);
            found += 1;
        }
        if found == 0 {
            return Err(TlsError::NoCertificate {
                origin: "the PEM text".into(),
            });
        }
        Ok(self)
    }

    /// [`with_pem`](Self::with_pem) with the contents of the file at `path`.
    pub fn with_pem_file(self, path: impl AsRef<Path>) -> Result<Self, TlsError> {
        let path = path.as_ref();
        let pem = std::fs::read(path).map_err(|e| TlsError::Read {
            path: path.display().to_string(),
            source: Cause::new(e),
        })?;
        self.with_pem(pem).map_err(|e| e.in_file(path))
    }

    /// How many certificates were added to the system's.
    pub fn added(&self) -> usize {
        self.extra.len()
    }

    /// The rustls configuration of a client trusting these roots.
    pub(crate) fn client_config(&self) -> Result<rustls::ClientConfig, TlsError> {
        let mut store = RootCertStore::empty();
        store.roots.extend(system_roots().roots.iter().cloned());
        for cert in &self.extra {
            store.add(cert.clone()).map_err(|e| TlsError::Pem {
                origin: "an added certificate".into(),
                source: Cause::new(e),
            })?;
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsError::Setup(Cause::new(e)))?
            .with_root_certificates(store)
            .with_no_client_auth();
        Ok(config)
    }
}

/// The system's roots, read once per process; the bundled Mozilla roots if none are found.
fn system_roots() -> &'static RootCertStore {
    static ROOTS: OnceLock<RootCertStore> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let mut store = RootCertStore::empty();
        // Certificates the system store holds but rustls cannot use are skipped, as are
        // unreadable files: one bad entry must not take every HTTPS connection down.
        let found = rustls_native_certs::load_native_certs();
        let (_added, _ignored) = store.add_parsable_certificates(found.certs);
        if store.is_empty() {
            store.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        }
        store
    })
}

/// Why roots could not be added or a client could not be set up.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// A PEM block could not be read.
    #[error("{origin} is not valid PEM: {source}")]
    Pem {
        /// What was read (`the PEM text`, or a file).
        origin: String,
        /// What was wrong.
        source: Cause,
    },
    /// The PEM text holds no `-----BEGIN CERTIFICATE-----` block.
    #[error("{origin} holds no certificate (expected `-----BEGIN CERTIFICATE-----` blocks)")]
    NoCertificate {
        /// What was read.
        origin: String,
    },
    /// A certificate file could not be read.
    #[error("cannot read the certificate file `{path}`: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why (an [`std::io::Error`]).
        source: Cause,
    },
    /// The TLS configuration or the HTTP client could not be built.
    #[error("the HTTPS client cannot be set up: {0}")]
    Setup(#[source] Cause),
    /// A header given for the client's requests is not valid HTTP.
    #[error("the header `{name}` {what}")]
    InvalidHeader {
        /// The header's name, as given.
        name: String,
        /// What is wrong with it.
        what: &'static str,
    },
}

impl TlsError {
    fn in_file(self, path: &Path) -> Self {
        let origin = format!("the file `{}`", path.display());
        match self {
            TlsError::Pem { source, .. } => TlsError::Pem { origin, source },
            TlsError::NoCertificate { .. } => TlsError::NoCertificate { origin },
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pem_errors_say_what_was_read() {
        let err = TrustedRoots::system()
            .with_pem("not a certificate")
            .unwrap_err();
        assert!(matches!(err, TlsError::NoCertificate { .. }), "{err}");
        let err = TrustedRoots::system()
            .with_pem_file("/nonexistent/ca.pem")
            .unwrap_err();
        assert!(err.to_string().contains("/nonexistent/ca.pem"), "{err}");
        // The cause is kept whole: a caller can reach the io::Error.
        let source = std::error::Error::source(&err).expect("a source");
        let cause = source.downcast_ref::<Cause>().expect("a Cause");
        assert!(
            cause.downcast_ref::<std::io::Error>().is_some(),
            "{cause:?}"
        );
        let garbled = "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n";
        let err = TrustedRoots::system().with_pem(garbled).unwrap_err();
        assert!(matches!(err, TlsError::Pem { .. }), "{err}");
    }
}
