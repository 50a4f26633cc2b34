//! The OTLP exporter's HTTP client: reqwest's blocking client, which the exporter's batch
//! processors call from threads of their own (no async runtime there). Handed to the exporter
//! with `with_http_client` so the workspace keeps one reqwest; an application can instead
//! enable `opentelemetry-otlp`'s own `reqwest-blocking-client` feature.

use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};

/// reqwest's blocking client as an [`HttpClient`]. Made on first use, on the exporter's
/// thread: a blocking client made (or dropped) on an async runtime's thread panics.
#[derive(Debug, Default)]
pub struct BlockingReqwest(std::sync::OnceLock<reqwest::blocking::Client>);

#[async_trait::async_trait]
impl HttpClient for BlockingReqwest {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (parts, body) = request.into_parts();
        let answer = self
            .0
            .get_or_init(client)
            .request(parts.method, parts.uri.to_string())
            .headers(parts.headers)
            .body(body.to_vec())
            .send()?;
        let mut response = Response::builder().status(answer.status().as_u16());
        if let Some(headers) = response.headers_mut() {
            headers.extend(answer.headers().clone());
        }
        Ok(response.body(answer.bytes()?)?)
    }
}

/// The client, with rustls on the ring provider (the workspace's reqwest has no default one)
/// and the platform's roots: collectors are often reached over HTTPS.
fn client() -> reqwest::blocking::Client {
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map(|b| b.with_root_certificates(roots).with_no_client_auth());
    let builder = reqwest::blocking::Client::builder();
    match tls {
        Ok(tls) => builder.tls_backend_preconfigured(tls).build(),
        Err(e) => panic!("rustls with the ring provider: {e}"),
    }
    .expect("the OTLP exporter's HTTP client")
}
