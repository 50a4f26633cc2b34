//! [`EndpointSettings`]: how the library reaches one remote HTTP endpoint — the credentials,
//! headers, trusted roots and timeouts that an A2A agent's [`AgentConfig`], the MCP client's
//! [`McpClientOptions`] and the model providers' builders all take the same way, and print
//! the same way (secrets never).
//!
//! [`AgentConfig`]: crate::a2a::client::AgentConfig
//! [`McpClientOptions`]: crate::mcp::McpClientOptions

use std::fmt;
use std::time::Duration;

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};

use crate::tls::{TlsError, TrustedRoots};

/// How to reach one remote HTTP endpoint: a bearer token, other headers, the roots its
/// certificate is checked against, and how long to wait. Each setting left unset takes the
/// default of whatever uses it (a model provider waits longer for an answer than an MCP
/// server's `tools/list`); each user's docs say which.
///
/// `Debug` names the headers and says whether there is a token, never their values.
///
/// ```
/// # #[cfg(all(feature = "a2a", feature = "mcp", feature = "openai"))]
/// # fn demo() {
/// use std::time::Duration;
/// use agent_toolkit::a2a::client::AgentConfig;
/// use agent_toolkit::endpoint::EndpointSettings;
/// use agent_toolkit::mcp::McpClientOptions;
/// use agent_toolkit::model::OpenAiChat;
///
/// let gateway = EndpointSettings::new()
///     .bearer_token("s3cret")
///     .header("X-Tenant", "t1")
///     .connect_timeout(Duration::from_secs(5));
/// let agent = AgentConfig::new("https://agents.internal").endpoint(gateway.clone());
/// let mcp = McpClientOptions::new().endpoint(gateway.clone());
/// let model = OpenAiChat::builder().endpoint(gateway);
/// assert!(!format!("{agent:?}{mcp:?}{model:?}").contains("s3cret"));
/// # }
/// ```
#[derive(Clone, Debug, Default)]
#[must_use]
pub struct EndpointSettings {
    pub(crate) bearer_token: Option<Secret>,
    pub(crate) headers: Vec<(String, Secret)>,
    pub(crate) trusted_roots: Option<TrustedRoots>,
    pub(crate) connect_timeout: Option<Duration>,
    pub(crate) request_timeout: Option<Duration>,
}

impl EndpointSettings {
    /// No token, no headers, every other setting the user's default.
    pub fn new() -> Self {
        EndpointSettings::default()
    }

    /// Send `Authorization: Bearer <token>` with every request.
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(Secret(token.into()));
        self
    }

    /// Send this header with every request (an API key a gateway wants, say). Repeatable; a
    /// name given twice is sent twice. Names that are not valid HTTP are refused when the
    /// client is made, with an error naming them.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), Secret(value.into())));
        self
    }

    crate::util::setters! {
        /// Check an `https://` endpoint's certificate against these roots (default: the system's,
        /// see [`TrustedRoots`]), e.g. to trust a private CA.
        pub fn trusted_roots(roots: TrustedRoots) => trusted_roots = Some(roots);

        /// Longest wait for a connection.
        pub fn connect_timeout(timeout: Duration) => connect_timeout = Some(timeout);

        /// Longest wait for an answer (for a stream: the longest silence).
        pub fn request_timeout(timeout: Duration) => request_timeout = Some(timeout);
    }

    /// Whether a bearer token is set.
    pub fn has_bearer_token(&self) -> bool {
        self.bearer_token.is_some()
    }

    /// The names of the headers set, in order.
    pub fn header_names(&self) -> impl Iterator<Item = &str> {
        self.headers.iter().map(|(name, _)| name.as_str())
    }

    /// The token, for transports that take it apart from the headers.
    #[cfg(any(feature = "a2a", feature = "mcp"))]
    pub(crate) fn token(&self) -> Option<&str> {
        self.bearer_token.as_ref().map(|s| s.0.as_str())
    }

    /// Whether a client shared with other endpoints will do: nothing is set that a client is
    /// built with (the token aside, for transports that send it themselves).
    #[cfg(feature = "a2a")]
    pub(crate) fn is_plain(&self) -> bool {
        self.headers.is_empty()
            && self.trusted_roots.is_none()
            && self.connect_timeout.is_none()
            && self.request_timeout.is_none()
    }

    /// The headers (the token's `Authorization` included when `with_token`), checked and
    /// marked sensitive so that no `Debug` of a client or request prints them.
    pub(crate) fn header_map(&self, with_token: bool) -> Result<HeaderMap, TlsError> {
        let mut map = HeaderMap::new();
        if with_token && let Some(token) = &self.bearer_token {
            let (_, value) = header("Authorization", &format!("Bearer {}", token.0))?;
            map.insert(AUTHORIZATION, value);
        }
        for (name, value) in &self.headers {
            let (name, value) = header(name, &value.0)?;
            map.append(name, value);
        }
        Ok(map)
    }

    /// A client builder trusting these roots (else `default_roots`) and connecting within
    /// this connect timeout (else `default_connect`); the caller adds headers and the rest.
    pub(crate) fn client_builder(
        &self,
        default_roots: &TrustedRoots,
        default_connect: Duration,
    ) -> Result<reqwest::ClientBuilder, TlsError> {
        let roots = self.trusted_roots.as_ref().unwrap_or(default_roots);
        Ok(reqwest::Client::builder()
            .tls_backend_preconfigured(roots.client_config()?)
            .connect_timeout(self.connect_timeout.unwrap_or(default_connect)))
    }
}

/// The methods every user of an [`EndpointSettings`] has — `bearer_token`, `header`,
/// `trusted_roots` and `endpoint` — written once: `endpoint_methods!(field)` adds them to a
/// builder that keeps its settings in `self.field` (or `self.a.b`).
macro_rules! endpoint_methods {
    ($($field:ident).+) => {
        /// Send `Authorization: Bearer <token>` with every request (see
        /// [`EndpointSettings::bearer_token`](crate::endpoint::EndpointSettings::bearer_token)).
        pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
            self.$($field).+ = std::mem::take(&mut self.$($field).+).bearer_token(token);
            self
        }

        /// Send this header with every request, e.g. an API key a gateway wants; it replaces a
        /// header of the same name the library would send. Repeatable; a name given twice is
        /// sent twice. Values are never printed by `Debug`.
        pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
            self.$($field).+ = std::mem::take(&mut self.$($field).+).header(name, value);
            self
        }

        /// Check an `https://` endpoint's certificate against these roots (default: the
        /// system's, see [`TrustedRoots`](crate::tls::TrustedRoots)), e.g. to trust a private
        /// CA.
        pub fn trusted_roots(mut self, roots: crate::tls::TrustedRoots) -> Self {
            self.$($field).+ = std::mem::take(&mut self.$($field).+).trusted_roots(roots);
            self
        }

        /// Reach the endpoint with these settings (token, headers, roots, timeouts), replacing
        /// all of them as set before; each one left unset takes this builder's default.
        pub fn endpoint(mut self, endpoint: crate::endpoint::EndpointSettings) -> Self {
            self.$($field).+ = endpoint;
            self
        }
    };
}
pub(crate) use endpoint_methods;

/// A header for a client from user input, refused with an error naming it; the value is
/// marked sensitive.
pub(crate) fn header(name: &str, value: &str) -> Result<(HeaderName, HeaderValue), TlsError> {
    let header_name =
        HeaderName::from_bytes(name.as_bytes()).map_err(|_| TlsError::InvalidHeader {
            name: name.to_owned(),
            what: "is not a valid HTTP header name",
        })?;
    let mut header_value = HeaderValue::from_str(value).map_err(|_| TlsError::InvalidHeader {
        name: name.to_owned(),
        what: "has a value with characters not allowed in a header",
    })?;
    header_value.set_sensitive(true);
    Ok((header_name, header_value))
}

/// A value that is never printed: `Debug` says `<redacted>`. The one redaction of the
/// library's settings types.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Secret(pub(crate) String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl Secret {
    /// Whether `headers` carry `Authorization: Bearer <this secret>`, compared in constant
    /// time: the one bearer check of the library's servers (A2A and MCP).
    #[cfg(any(feature = "a2a", feature = "mcp"))]
    pub(crate) fn is_bearer_in(&self, headers: &HeaderMap) -> bool {
        headers
            .get_all(AUTHORIZATION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .filter_map(|v| v.split_once(' '))
            .any(|(scheme, given)| {
                scheme.eq_ignore_ascii_case("bearer") && constant_time_eq(given.trim(), &self.0)
            })
    }
}

/// Compares without returning early at the first difference, so timing does not reveal how
/// much of a guessed token was right.
#[cfg(any(feature = "a2a", feature = "mcp"))]
fn constant_time_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut diff = a.len() ^ b.len();
    for i in 0..a.len().max(b.len()) {
        diff |= usize::from(a.get(i).copied().unwrap_or(0) ^ b.get(i).copied().unwrap_or(0));
    }
    diff == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_prints_secrets() {
        let settings = EndpointSettings::new()
            .bearer_token("tok-123")
            .header("X-Api-Key", "key-456");
        let shown = format!("{settings:?}");
        assert!(
            !shown.contains("tok-123") && !shown.contains("key-456"),
            "{shown}"
        );
        assert!(
            shown.contains("X-Api-Key") && shown.contains("<redacted>"),
            "{shown}"
        );
    }

    #[test]
    fn bad_headers_are_named() {
        let settings = EndpointSettings::new().header("bad name", "v");
        let error = settings.header_map(true).unwrap_err().to_string();
        assert!(error.contains("`bad name`"), "{error}");
        let settings = EndpointSettings::new().bearer_token("a\nb");
        assert!(settings.header_map(true).is_err());
        assert!(settings.header_map(false).is_ok());
    }

    #[test]
    fn clients_build_without_a_process_wide_provider() {
        // reqwest's `rustls-no-provider` panics when neither a default provider nor a
        // preconfigured TLS backend is given: every client here brings its own.
        let client = EndpointSettings::new()
            .client_builder(&TrustedRoots::system(), Duration::from_secs(1))
            .unwrap()
            .build();
        assert!(client.is_ok());
        assert!(rustls::crypto::CryptoProvider::get_default().is_none());
    }
}
