//! [`RemoteAgent`]: a connection to one A2A agent.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use a2a::{
    AgentCard, AgentInterface, CancelTaskRequest, GetTaskRequest, SendMessageRequest,
    SendMessageResponse, StreamResponse, Task,
};
use a2a_client::auth::AuthInterceptor;
use a2a_client::jsonrpc::JsonRpcTransport;
use a2a_client::middleware::CallInterceptor;
use a2a_client::{A2AClient, Transport};
use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::Value;

use super::error::A2aClientError;
use super::v03::V03Client;

/// The well-known path of an agent card (A2A 0.3 and 1.0).
pub const AGENT_CARD_PATH: &str = "/.well-known/agent-card.json";

/// A stream of A2A events, in the 1.0 shapes whatever the wire.
pub type EventStream = BoxStream<'static, Result<StreamResponse, A2aClientError>>;

/// Which protocol version a [`RemoteAgent`] speaks on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireVersion {
    /// A2A 1.x: PascalCase methods, `A2A-Version: 1.0`, no `kind`.
    V1,
    /// A2A 0.3: `message/send` and the `kind` shapes.
    V03,
}

enum Wire {
    V1(A2AClient<Box<dyn Transport>>),
    V03(V03Client),
}

struct Inner {
    base_url: String,
    card: AgentCard,
    interface: AgentInterface,
    version: WireVersion,
    wire: Wire,
}

/// A connection to one A2A agent: its card, the interface chosen from it, and the wire it
/// speaks. Cheap to clone (shared).
///
/// The card is fetched from `/.well-known/agent-card.json` and read in any generation's shape
/// (1.0, 0.3, or the merged card of the 1.x SDKs). Among the interfaces it declares, JSON-RPC
/// with protocol 1.x is preferred and spoken through the official client (`a2a-client-lf`,
/// which sends `A2A-Version: 1.0`); when the agent offers only JSON-RPC 0.3, requests go out as
/// 0.3 (`message/send`, `kind` shapes, no version header), converted at the boundary by
/// [`compat`](crate::a2a::compat). Either way callers see the A2A 1.0 types of `a2a-lf`.
///
/// ```no_run
/// # async fn demo() -> Result<(), agent_toolkit::a2a::client::A2aClientError> {
/// use agent_toolkit::a2a::client::RemoteAgent;
///
/// let agent = RemoteAgent::builder("http://127.0.0.1:41241")
///     .bearer_token("secret")
///     .connect()
///     .await?;
/// println!("{} speaks {:?} at {}", agent.card().name, agent.version(), agent.endpoint());
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RemoteAgent {
    inner: Arc<Inner>,
}

impl fmt::Debug for RemoteAgent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteAgent")
            .field("name", &self.inner.card.name)
            .field("endpoint", &self.inner.interface.url)
            .field("version", &self.inner.version)
            .finish()
    }
}

/// Builds a [`RemoteAgent`]: where the agent is, how to authenticate, which HTTP client to use.
#[derive(Clone)]
#[must_use = "call .connect() or .with_card(..)"]
pub struct RemoteAgentBuilder {
    url: String,
    bearer: Option<String>,
    http: Option<reqwest_a2a::Client>,
    prefer: WireVersion,
}

impl fmt::Debug for RemoteAgentBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteAgentBuilder")
            .field("url", &self.url)
            .field("bearer", &self.bearer.as_ref().map(|_| "(redacted)"))
            .field("prefer", &self.prefer)
            .finish()
    }
}

impl RemoteAgentBuilder {
    /// Speak `version` when the card offers an interface for it (default: 1.x when offered,
    /// else 0.3). Useful to talk 0.3 to a server that offers both.
    pub fn prefer_version(mut self, version: WireVersion) -> Self {
        self.prefer = version;
        self
    }

    /// Send `Authorization: Bearer <token>` with every request (the card fetch included).
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer = Some(token.into());
        self
    }

    /// Use this HTTP client (`reqwest` 0.13) instead of a default one.
    pub fn http_client(mut self, client: reqwest_a2a::Client) -> Self {
        self.http = Some(client);
        self
    }

    /// Fetch the agent card and connect through the best interface it declares.
    pub async fn connect(self) -> Result<RemoteAgent, A2aClientError> {
        let http = self.http.clone().unwrap_or_else(default_http_client);
        let card = fetch_card(&http, &self.url, self.bearer.as_deref()).await?;
        self.build(http, card)
    }

    /// Connect with a card already at hand (no network access until the first request).
    pub fn with_card(self, card: AgentCard) -> Result<RemoteAgent, A2aClientError> {
        let http = self.http.clone().unwrap_or_else(default_http_client);
        self.build(http, card)
    }

    fn build(
        self,
        http: reqwest_a2a::Client,
        card: AgentCard,
    ) -> Result<RemoteAgent, A2aClientError> {
        let base_url = base_url(&self.url);
        let Some((interface, version)) = choose_interface(&card, self.prefer) else {
            let offered = card
                .supported_interfaces
                .iter()
                .map(|i| format!("{} {} {}", i.protocol_binding, i.protocol_version, i.url))
                .collect::<Vec<_>>();
            return Err(A2aClientError::NoInterface {
                url: base_url,
                offered: if offered.is_empty() {
                    "nothing".into()
                } else {
                    offered.join(", ")
                },
            });
        };
        let wire = match version {
            WireVersion::V1 => {
                let transport: Box<dyn Transport> =
                    Box::new(JsonRpcTransport::new(http, interface.url.clone()));
                let mut interceptors: Vec<Arc<dyn CallInterceptor>> = Vec::new();
                if let Some(token) = &self.bearer {
                    interceptors.push(Arc::new(AuthInterceptor::bearer(token.clone())));
                }
                let mut client = A2AClient::new(transport).with_interceptors(interceptors);
                if let Some(tenant) = interface.tenant.as_deref().filter(|t| !t.is_empty()) {
                    client = client.with_tenant(tenant);
                }
                Wire::V1(client)
            }
            WireVersion::V03 => Wire::V03(V03Client::new(
                http,
                interface.url.clone(),
                self.bearer.clone(),
            )),
        };
        Ok(RemoteAgent {
            inner: Arc::new(Inner {
                base_url,
                card,
                interface,
                version,
                wire,
            }),
        })
    }
}

impl RemoteAgent {
    /// Start building a connection to the agent at `url`: its base URL (the card is read from
    /// `<url>/.well-known/agent-card.json`) or the card's own URL.
    pub fn builder(url: impl Into<String>) -> RemoteAgentBuilder {
        RemoteAgentBuilder {
            url: url.into(),
            bearer: None,
            http: None,
            prefer: WireVersion::V1,
        }
    }

    /// Fetch the card at `url` and connect, without authentication.
    pub async fn connect(url: impl Into<String>) -> Result<RemoteAgent, A2aClientError> {
        Self::builder(url).connect().await
    }

    /// The agent card this connection was made from.
    pub fn card(&self) -> &AgentCard {
        &self.inner.card
    }

    /// The agent's base URL (where its card is served).
    pub fn url(&self) -> &str {
        &self.inner.base_url
    }

    /// The JSON-RPC endpoint requests go to.
    pub fn endpoint(&self) -> &str {
        &self.inner.interface.url
    }

    /// The protocol version spoken on the wire.
    pub fn version(&self) -> WireVersion {
        self.inner.version
    }

    /// Whether the agent declares streaming (`SendStreamingMessage` / `message/stream`).
    pub fn supports_streaming(&self) -> bool {
        self.inner.card.capabilities.streaming == Some(true)
    }

    /// `SendMessage`: send a message and wait for the task (or message) it produces.
    pub async fn send_message(
        &self,
        request: &SendMessageRequest,
    ) -> Result<SendMessageResponse, A2aClientError> {
        match &self.inner.wire {
            Wire::V1(client) => client
                .send_message(request)
                .await
                .map_err(|e| self.sdk_error(e)),
            Wire::V03(client) => client.send_message(request).await,
        }
    }

    /// `SendStreamingMessage`: send a message and receive the task's events as they happen.
    pub async fn send_streaming_message(
        &self,
        request: &SendMessageRequest,
    ) -> Result<EventStream, A2aClientError> {
        match &self.inner.wire {
            Wire::V1(client) => {
                let stream = client
                    .send_streaming_message(request)
                    .await
                    .map_err(|e| self.sdk_error(e))?;
                let url = self.inner.interface.url.clone();
                Ok(stream
                    .map(move |event| event.map_err(|e| A2aClientError::from_sdk(&url, e)))
                    .boxed())
            }
            Wire::V03(client) => client.send_streaming_message(request).await,
        }
    }

    /// `CancelTask`: ask the agent to cancel a task.
    pub async fn cancel_task(&self, task_id: &str) -> Result<Task, A2aClientError> {
        match &self.inner.wire {
            Wire::V1(client) => client
                .cancel_task(&CancelTaskRequest {
                    id: task_id.to_string(),
                    metadata: None,
                    tenant: None,
                })
                .await
                .map_err(|e| self.sdk_error(e)),
            Wire::V03(client) => client.cancel_task(task_id).await,
        }
    }

    /// `GetTask`: the task's current state.
    pub async fn get_task(&self, task_id: &str) -> Result<Task, A2aClientError> {
        match &self.inner.wire {
            Wire::V1(client) => client
                .get_task(&GetTaskRequest {
                    id: task_id.to_string(),
                    history_length: None,
                    tenant: None,
                })
                .await
                .map_err(|e| self.sdk_error(e)),
            Wire::V03(client) => client.get_task(task_id).await,
        }
    }

    fn sdk_error(&self, error: a2a::A2AError) -> A2aClientError {
        A2aClientError::from_sdk(&self.inner.interface.url, error)
    }
}

/// The HTTP client used when none is given: plain HTTP/1.1 with a connect timeout, no overall
/// timeout (streams last as long as the remote work does; the toolkit's timeouts bound calls).
pub(crate) fn default_http_client() -> reqwest_a2a::Client {
    reqwest_a2a::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .build()
        .unwrap_or_default()
}

/// `url` without a trailing `/` or card path.
fn base_url(url: &str) -> String {
    let url = url.trim_end_matches('/');
    url.strip_suffix(AGENT_CARD_PATH)
        .or_else(|| url.strip_suffix("/.well-known/agent.json"))
        .unwrap_or(url)
        .to_string()
}

/// Where the card of the agent at `url` is served.
fn card_url(url: &str) -> String {
    if url.ends_with(".json") {
        url.to_string()
    } else {
        format!("{}{AGENT_CARD_PATH}", url.trim_end_matches('/'))
    }
}

/// Fetch and read an agent card, in the 1.0 shape or the 0.3 one.
pub(crate) async fn fetch_card(
    http: &reqwest_a2a::Client,
    url: &str,
    bearer: Option<&str>,
) -> Result<AgentCard, A2aClientError> {
    let url = card_url(url);
    let mut request = http.get(&url).header("Accept", "application/json");
    if let Some(token) = bearer {
        request = request.bearer_auth(token);
    }
    let response = request
        .send()
        .await
        .map_err(|e| A2aClientError::from_http(&url, e))?;
    let status = response.status();
    let body = response
        .text()
        .await
        .map_err(|e| A2aClientError::from_http(&url, e))?;
    if !status.is_success() {
        let message = format!("HTTP {status}: {}", truncate(&body, 200));
        if status == reqwest_a2a::StatusCode::UNAUTHORIZED
            || status == reqwest_a2a::StatusCode::FORBIDDEN
        {
            return Err(A2aClientError::Unauthorized { url, message });
        }
        return Err(A2aClientError::Card { url, message });
    }
    let value: Value = serde_json::from_str(&body).map_err(|e| A2aClientError::Card {
        url: url.clone(),
        message: format!("not JSON: {e}"),
    })?;
    parse_card(value).map_err(|message| A2aClientError::Card { url, message })
}

/// Read a card given as JSON, in the 1.0 shape (`supportedInterfaces`), the 0.3 one (`url`,
/// `protocolVersion`, `preferredTransport`, `additionalInterfaces`) or the merged one.
///
/// Schemas a card puts on its skills (`input_schema`/`output_schema`, remote tools as design
/// 004 writes them) have no field in [`AgentSkill`](a2a::AgentSkill); they are kept in the
/// card's extensions so that [`tools_from_card`](super::tools_from_card) finds them (see there).
pub fn parse_card(value: Value) -> Result<AgentCard, String> {
    let mut card = crate::a2a::compat::card_from_v03(&value).map_err(|e| e.to_string())?;
    super::card::keep_skill_schemas(&value, &mut card);
    Ok(card)
}

/// The interface to use: JSON-RPC in the preferred version, else JSON-RPC in the other one.
fn choose_interface(
    card: &AgentCard,
    prefer: WireVersion,
) -> Option<(AgentInterface, WireVersion)> {
    let version_of = |i: &AgentInterface| {
        if i.protocol_version.split('.').next() == Some("1") {
            Some(WireVersion::V1)
        } else if i.protocol_version.starts_with("0.3") {
            Some(WireVersion::V03)
        } else {
            None
        }
    };
    let candidates: Vec<(&AgentInterface, WireVersion)> = card
        .supported_interfaces
        .iter()
        .filter(|i| i.protocol_binding.eq_ignore_ascii_case("JSONRPC"))
        .filter_map(|i| version_of(i).map(|v| (i, v)))
        .collect();
    candidates
        .iter()
        .find(|(_, v)| *v == prefer)
        .or_else(|| candidates.first())
        .map(|(i, v)| ((*i).clone(), *v))
}

pub(crate) fn truncate(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((i, _)) => &text[..i],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn card_urls() {
        assert_eq!(
            card_url("http://h:1"),
            "http://h:1/.well-known/agent-card.json"
        );
        assert_eq!(
            card_url("http://h:1/"),
            "http://h:1/.well-known/agent-card.json"
        );
        assert_eq!(card_url("http://h:1/x/card.json"), "http://h:1/x/card.json");
        assert_eq!(
            base_url("http://h:1/.well-known/agent-card.json"),
            "http://h:1"
        );
        assert_eq!(base_url("http://h:1/"), "http://h:1");
    }
}
