//! [`AgentConfig`]: where an A2A agent is and how to reach it, for a [`RemoteAgent`] and for
//! the agents of a [`RemoteToolRegistry`] alike.
//!
//! [`RemoteAgent`]: super::RemoteAgent
//! [`RemoteToolRegistry`]: super::RemoteToolRegistry

use std::fmt;
use std::time::Duration;

use a2a::AgentCard;

use super::error::A2aClientError;
use super::wire::WireVersion;
use crate::endpoint::EndpointSettings;
use crate::error::Cause;
use crate::tls::{TlsError, TrustedRoots};

/// Where an A2A agent is and how to reach it: the one configuration of a connection, whether
/// it is made alone ([`RemoteAgent::connect`](super::RemoteAgent::connect)) or for a registry
/// ([`RemoteToolRegistry::add_agent`](super::RemoteToolRegistry::add_agent)).
///
/// - **Where:** the agent's URL — its base URL, where `/.well-known/agent-card.json` is
///   served, or the card's own URL — or a [`card`](Self::card) already at hand.
/// - **How to reach it:** the [`bearer_token`](Self::bearer_token), other
///   [`header`](Self::header)s, the [`trusted_roots`](Self::trusted_roots) of an `https://`
///   agent with a private CA (or all of these at once as an
///   [`EndpointSettings`](Self::endpoint); the connect timeout is 10 s unless it says
///   otherwise, and there is no request timeout: streams last as long as the remote work
///   does, and the toolkit's timeouts bound calls), and the protocol version to
///   [prefer](Self::prefer_version) when the card offers more than one.
/// - **How its tools are used locally** (read by a
///   [`RemoteToolRegistry`](super::RemoteToolRegistry), which makes them; a lone
///   [`RemoteAgent`](super::RemoteAgent) has no tools): the [`prefix`](Self::prefix) of their
///   names, the [`group`](Self::group)s they join, and their [`tool_timeout`](Self::tool_timeout).
///
/// A URL converts into a config with defaults, so `RemoteAgent::connect("http://…")` works.
///
/// ```no_run
/// # async fn demo() -> Result<(), agent_toolkit::a2a::client::A2aClientError> {
/// use std::time::Duration;
/// use agent_toolkit::a2a::client::{AgentConfig, RemoteAgent, RemoteToolRegistry};
///
/// let weather = AgentConfig::new("http://127.0.0.1:41241")
///     .bearer_token("secret")
///     .tool_timeout(Duration::from_secs(10));
/// let agent = RemoteAgent::connect(weather.clone()).await?;
/// let registry = RemoteToolRegistry::new();
/// registry.add_agent("weather", weather).await?; // tools named `weather_<tool>`
/// # Ok(()) }
/// ```
#[derive(Clone)]
#[must_use = "pass it to RemoteAgent::connect or RemoteToolRegistry::add_agent"]
pub struct AgentConfig {
    pub(super) url: String,
    pub(super) card: Option<AgentCard>,
    pub(super) endpoint: EndpointSettings,
    pub(super) prefer: WireVersion,
    pub(super) prefix: Option<String>,
    pub(super) groups: Vec<String>,
    pub(super) tool_timeout: Option<Duration>,
}

impl fmt::Debug for AgentConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentConfig")
            .field("url", &self.url)
            .field("card", &self.card.as_ref().map(|c| &c.name))
            .field("endpoint", &self.endpoint)
            .field("prefer", &self.prefer)
            .field("prefix", &self.prefix)
            .field("groups", &self.groups)
            .field("tool_timeout", &self.tool_timeout)
            .finish_non_exhaustive()
    }
}

impl AgentConfig {
    /// The agent at `url`: its base URL (the card is read from
    /// `<url>/.well-known/agent-card.json`) or the card's own URL.
    pub fn new(url: impl Into<String>) -> Self {
        AgentConfig {
            url: url.into(),
            card: None,
            endpoint: EndpointSettings::new(),
            prefer: WireVersion::V1,
            prefix: None,
            groups: Vec::new(),
            tool_timeout: None,
        }
    }

    /// Use this card instead of fetching it: no request is made until the first call, and a
    /// registry keeps the card on [`refresh`](super::RemoteToolRegistry::refresh) instead of
    /// re-reading it. Read a card given as JSON with [`parse_card`](super::parse_card), so the
    /// schemas on its skills are kept.
    pub fn card(mut self, card: AgentCard) -> Self {
        self.card = Some(card);
        self
    }

    crate::endpoint::endpoint_methods!(endpoint);

    crate::util::setters! {
        /// Speak `version` when the card offers an interface for it (default: 1.x when offered,
        /// else 0.3). Useful to talk 0.3 to a server that offers both.
        pub fn prefer_version(version: WireVersion) => prefer = version;

        /// Prefix of the local names of the agent's tools (default: `<alias>_`, after the alias
        /// the registry knows the agent by). An empty prefix keeps the remote names as they are;
        /// the toolkit then refuses two tools of the same name.
        pub fn prefix(prefix: impl Into<String>) => prefix = Some(prefix.into());
    }

    /// Put every tool of the agent into `group` (declare it on the toolkit builder).
    /// Repeatable.
    pub fn group(mut self, group: impl Into<String>) -> Self {
        self.groups.push(group.into());
        self
    }

    /// Per-attempt timeout of the agent's tools (the toolkit's timeout applies otherwise).
    pub fn tool_timeout(mut self, timeout: Duration) -> Self {
        self.tool_timeout = Some(timeout);
        self
    }

    /// The agent's URL, as given.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The HTTP client of this agent: `shared` (a registry's client, and the roots it trusts)
    /// when the config asks for nothing of its own, else one built for it, trusting its own
    /// roots, or the registry's, or the system's.
    pub(super) fn http_client(
        &self,
        shared: Option<(&reqwest::Client, &TrustedRoots)>,
    ) -> Result<reqwest::Client, A2aClientError> {
        if let Some((client, _)) = shared
            && self.endpoint.is_plain()
        {
            return Ok(client.clone());
        }
        let system = TrustedRoots::system();
        let roots = shared.map_or(&system, |(_, roots)| roots);
        build_client(&self.endpoint, roots)
    }
}

impl From<&str> for AgentConfig {
    fn from(url: &str) -> Self {
        AgentConfig::new(url)
    }
}

impl From<String> for AgentConfig {
    fn from(url: String) -> Self {
        AgentConfig::new(url)
    }
}

impl From<&String> for AgentConfig {
    fn from(url: &String) -> Self {
        AgentConfig::new(url)
    }
}

/// The connect timeout of the A2A clients. There is no overall timeout: streams last as long
/// as the remote work does, and the toolkit's timeouts bound calls.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The HTTP client shared by the agents of a registry that ask for nothing of their own.
pub(super) fn shared_http_client(roots: &TrustedRoots) -> Result<reqwest::Client, A2aClientError> {
    build_client(&EndpointSettings::new(), roots)
}

/// An A2A client for `endpoint` (its roots, else `roots`), sending its headers with every
/// request and, when it sets a request timeout, giving up on an answer silent for that long;
/// the bearer token is sent by the A2A clients themselves.
fn build_client(
    endpoint: &EndpointSettings,
    roots: &TrustedRoots,
) -> Result<reqwest::Client, A2aClientError> {
    let mut builder = endpoint.client_builder(roots, CONNECT_TIMEOUT)?;
    if let Some(silence) = endpoint.request_timeout {
        // Bounds each silence, not the whole exchange: a long stream is not cut.
        builder = builder.read_timeout(silence);
    }
    Ok(builder
        .default_headers(
            endpoint
                .header_map(false)
                .map_err(|e| A2aClientError::Config(e.to_string()))?,
        )
        .build()
        .map_err(|e| TlsError::Setup(Cause::new(e)))?)
}
