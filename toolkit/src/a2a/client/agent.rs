//! [`RemoteAgent`]: a connection to one A2A agent.

use std::fmt;
use std::sync::Arc;

use a2a::{
    AgentCard, AgentInterface, CancelTaskRequest, GetTaskRequest, SendMessageRequest,
    SendMessageResponse, Task,
};
use a2a_client::auth::AuthInterceptor;
use a2a_client::jsonrpc::JsonRpcTransport;
use a2a_client::middleware::CallInterceptor;
use a2a_client::{A2AClient, Transport};
use futures::StreamExt;

use super::card::{base_url, fetch_card};
use super::config::AgentConfig;
use super::error::A2aClientError;
use super::v03::V03Client;
use super::wire::{EventStream, WireVersion};

/// Sends the current span's W3C trace context (`traceparent`, `tracestate` headers) with
/// every request, so that the agent serving it goes on with the caller's trace (with the
/// `otel` feature; otherwise nothing is added).
struct SendTrace;

#[async_trait::async_trait]
impl CallInterceptor for SendTrace {
    async fn before(
        &self,
        _method: &str,
        params: &mut a2a_client::transport::ServiceParams,
    ) -> Result<(), a2a::A2AError> {
        if let Some(trace) = crate::trace_context::current() {
            params.insert("traceparent".into(), vec![trace.traceparent]);
            if let Some(state) = trace.tracestate {
                params.insert("tracestate".into(), vec![state]);
            }
        }
        Ok(())
    }
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
/// a conversion layer. Either way callers see the A2A 1.0 types of `a2a-lf`.
///
/// ```no_run
/// # async fn demo() -> Result<(), agent_toolkit::a2a::client::A2aClientError> {
/// use agent_toolkit::a2a::client::{AgentConfig, RemoteAgent};
///
/// let agent = RemoteAgent::connect(AgentConfig::new("http://127.0.0.1:41241").bearer_token("secret"))
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

impl RemoteAgent {
    /// Connect to the agent `config` names: fetch its card (unless the config holds one) and
    /// choose the best interface it declares. A URL alone is a config with defaults:
    /// `RemoteAgent::connect("http://127.0.0.1:41241")`.
    pub async fn connect(config: impl Into<AgentConfig>) -> Result<RemoteAgent, A2aClientError> {
        let config = config.into();
        let http = config.http_client(None)?;
        Self::connect_with(&config, http).await
    }

    /// [`connect`](Self::connect) over `http` (the config's own client, or a registry's).
    pub(super) async fn connect_with(
        config: &AgentConfig,
        http: reqwest::Client,
    ) -> Result<RemoteAgent, A2aClientError> {
        let card = match &config.card {
            Some(card) => card.clone(),
            None => fetch_card(&http, &config.url, config.endpoint.token()).await?,
        };
        Self::from_card(config, http, card)
    }

    fn from_card(
        config: &AgentConfig,
        http: reqwest::Client,
        card: AgentCard,
    ) -> Result<RemoteAgent, A2aClientError> {
        let base_url = base_url(&config.url);
        let Some((interface, version)) = choose_interface(&card, config.prefer) else {
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
                let mut interceptors: Vec<Arc<dyn CallInterceptor>> = vec![Arc::new(SendTrace)];
                if let Some(token) = config.endpoint.token() {
                    interceptors.push(Arc::new(AuthInterceptor::bearer(token.to_owned())));
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
                config.endpoint.token().map(str::to_owned),
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
        let request = CancelTaskRequest {
            id: task_id.to_string(),
            metadata: None,
            tenant: None,
        };
        match &self.inner.wire {
            Wire::V1(client) => client
                .cancel_task(&request)
                .await
                .map_err(|e| self.sdk_error(e)),
            Wire::V03(client) => client.cancel_task(&request).await,
        }
    }

    /// `GetTask`: the task's current state.
    pub async fn get_task(&self, task_id: &str) -> Result<Task, A2aClientError> {
        let request = GetTaskRequest {
            id: task_id.to_string(),
            history_length: None,
            tenant: None,
        };
        match &self.inner.wire {
            Wire::V1(client) => client
                .get_task(&request)
                .await
                .map_err(|e| self.sdk_error(e)),
            Wire::V03(client) => client.get_task(&request).await,
        }
    }

    fn sdk_error(&self, error: a2a::A2AError) -> A2aClientError {
        A2aClientError::from_sdk(&self.inner.interface.url, error)
    }
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
