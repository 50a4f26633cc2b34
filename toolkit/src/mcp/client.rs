//! [`McpClient`]: one MCP server, reached over stdio (a child process) or streamable HTTP,
//! with tool listing, tool calls with progress and cancellation, and reconnection.

use std::fmt;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientCapabilities,
    ClientConfig, ClientRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ErrorData,
    Implementation, ProgressNotificationParam, ProtocolVersion, Role, ServerNotification,
    ServerResult, SubscriptionFilter, Tool,
};
#[allow(deprecated)] // sampling: the 2025-11-25 era (SEP-2577 drops it later)
use rmcp::model::{CreateMessageRequestParams, CreateMessageResult, SamplingMessage};
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, ClientServiceExt, NotificationContext, Peer,
    PeerRequestOptions, RequestContext, RunningService, ServiceError, Subscription,
};
use std::collections::HashMap;

use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient};
use serde_json::Value;
use tokio::sync::watch;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::error::McpError;
use super::forwarding::{Asking, CallAskers, Route};
use super::progress::{McpProgress, ProgressRouter};
use super::target::{Answerer, McpClientOptions, McpEra, McpTarget};
use super::types::CallToolResult;
use crate::context::{AskError, Caller, Elicitation, Elicited, Sampled, Sampling};
use crate::error::Cause;
use crate::tls::TrustedRoots;
use crate::util::{OnDrop, json_kind};
use rmcp::transport::auth::AuthorizationManager;

/// Why `url` cannot be reached at all — a refused connection, an untrusted certificate, a
/// name that does not resolve — which rmcp's transport error does not carry: found by trying
/// to reach `url` once more with the same client. `None` when the server is reachable.
async fn unreachable_cause(http: &reqwest::Client, url: &str) -> Option<String> {
    match http.head(url).send().await {
        Err(e) if e.is_connect() || e.is_timeout() => Some(crate::util::error_chain(&e)),
        _ => None,
    }
}

/// A failed connection attempt, and whether it is final: another lifecycle cannot do better
/// when the server cannot be reached or started at all, or the client is misconfigured.
struct Failed {
    error: McpError,
    fatal: bool,
    /// The server's OAuth challenge, when it refused the connection for want of authorization
    /// and the options can authorize.
    challenge: Option<String>,
}

impl From<McpError> for Failed {
    fn from(error: McpError) -> Self {
        Failed {
            error,
            fatal: false,
            challenge: None,
        }
    }
}

/// The HTTP error of rmcp's streamable-HTTP transport inside `error`, if that is what failed
/// (rmcp's transport error does not name its cause as `source()`: the walk starts from its
/// field).
fn http_error(
    error: &rmcp::transport::DynamicTransportError,
) -> Option<&rmcp::transport::streamable_http_client::StreamableHttpError<reqwest::Error>> {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&*error.error);
    while let Some(current) = cause {
        if let Some(http) = current.downcast_ref() {
            return Some(http);
        }
        cause = current.source();
    }
    None
}

/// The `WWW-Authenticate` challenge of an HTTP 401 or 403 the transport reported, if that is
/// what `error` is.
fn auth_challenge(error: &rmcp::transport::DynamicTransportError) -> Option<String> {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    match http_error(error)? {
        StreamableHttpError::AuthRequired(e) => Some(e.www_authenticate_header.clone()),
        StreamableHttpError::InsufficientScope(e) => Some(e.www_authenticate_header.clone()),
        _ => None,
    }
}

/// When `error` says the server refused the client's credentials (HTTP 401 with a challenge,
/// or 403 for a token without the scope it wants), what to tell the user: the status, and
/// what to set.
fn credentials_refused(error: &ClientInitializeError, sent_token: bool) -> Option<String> {
    let ClientInitializeError::TransportError { error, .. } = error else {
        return None;
    };
    refused_by_transport(error, sent_token)
}

/// [`credentials_refused`] for the transport's error of a request in an open session.
fn refused_by_transport(
    error: &rmcp::transport::DynamicTransportError,
    sent_token: bool,
) -> Option<String> {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let reason = match http_error(error)? {
        StreamableHttpError::AuthRequired(_) if sent_token => {
            "HTTP 401 Unauthorized: the server refused the bearer token sent; check the token \
             (`McpClientOptions::bearer_token`, CLI `--token` or AGENT_TOOLKIT_TOKEN)"
        }
        StreamableHttpError::AuthRequired(_) => {
            "HTTP 401 Unauthorized: the server wants credentials; set a bearer token \
             (`McpClientOptions::bearer_token`, CLI `--token` or AGENT_TOOLKIT_TOKEN) or the \
             headers it expects (`McpClientOptions::headers`, CLI `-H`)"
        }
        StreamableHttpError::InsufficientScope(_) => {
            "HTTP 403 Forbidden: the token sent lacks a scope the server requires"
        }
        _ => return None,
    };
    Some(reason.to_owned())
}

/// Most same-origin redirects an HTTP connection follows.
const MAX_REDIRECTS: usize = 10;

/// How long a lost `subscriptions/listen` stream waits before it is opened again.
const RELISTEN_DELAY: Duration = Duration::from_secs(1);

/// How long reopening a `subscriptions/listen` stream waits for the acknowledgment.
const RELISTEN_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a call that reported progress waits, after its response, for notifications still
/// on their way (see `call_tool_with_progress`).
const LATE_PROGRESS_QUIET: Duration = Duration::from_millis(25);

/// A connection to one MCP server, made on first use and remade after it is lost.
///
/// It speaks both eras of MCP: by default it probes `server/discover` and uses the stateless
/// 2026-07-28 revision when the server offers it, and the 2025-11-25 `initialize` handshake
/// otherwise (or as [`McpClientOptions::era`] says). Tool-list changes reach
/// [`tool_list_changes`](Self::tool_list_changes) in either era: pushed in a handshake session,
/// on a `subscriptions/listen` stream (opened again if it drops) in the stateless one. Every operation
/// reconnects first if the connection is gone (for a child process: starts the program again).
/// A call that was waiting when the connection broke fails with
/// [`McpError::ConnectionLost`]; it is not sent again, since the server may have acted on it.
/// Cloning is cheap and clones share the connection.
///
/// ```no_run
/// use agent_toolkit::mcp::{McpClient, McpTarget};
///
/// # async fn run() -> Result<(), agent_toolkit::mcp::McpError> {
/// let client = McpClient::new(McpTarget::command("python", ["weather_server.py"]));
/// for tool in client.list_tools().await? {
///     println!("{}: {}", tool.name, tool.description.as_deref().unwrap_or(""));
/// }
/// let result = client
///     .call_tool_with_progress("forecast", serde_json::json!({"city": "Oslo"}), |p| {
///         eprintln!("{} / {:?} {}", p.progress, p.total, p.message.unwrap_or_default());
///     })
///     .await?;
/// println!("{}", serde_json::to_string_pretty(&result).unwrap());
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct McpClient {
    pub(super) inner: Arc<ClientInner>,
}

pub(super) struct ClientInner {
    target: McpTarget,
    options: McpClientOptions,
    connection: tokio::sync::Mutex<Option<Connection>>,
    progress: Arc<ProgressRouter>,
    /// With [`McpClientOptions::forward_questions`]: the calls in flight whose questions go
    /// to their own asker.
    askers: Arc<CallAskers>,
    /// Bumped by every `notifications/tools/list_changed` and every reconnection.
    pub(super) tools_changed: watch::Sender<u64>,
    /// Bumped by every `notifications/tasks/status`: a task may have ended, so the calls
    /// waiting for tasks look now instead of at their next poll.
    task_statuses: watch::Sender<u64>,
    /// With [`McpClientOptions::oauth`]: the authorization that supplies the bearer token of
    /// every connection, once the flow ran.
    oauth: tokio::sync::Mutex<Option<AuthorizationManager>>,
    /// With OAuth: the challenge of a token the server refused in an open session, for the
    /// next connection to authorize again with (a new scope, a revoked token).
    oauth_challenge: std::sync::Mutex<Option<String>>,
}

struct Connection {
    service: RunningService<RoleClient, ClientSide>,
    /// Which connection this is (counting from 1), to tell a stale one from its successor.
    generation: u64,
    /// Stops the connection's `subscriptions/listen` follower (2026-07-28) when dropped.
    _listening: Option<DropGuard>,
}

impl McpClient {
    /// A client for `target` with default options. Nothing happens until the first operation
    /// (use [`connect`](Self::connect) to fail early).
    pub fn new(target: McpTarget) -> Self {
        Self::with_options(target, McpClientOptions::default())
    }

    /// A client for `target` with these options.
    pub fn with_options(target: McpTarget, options: McpClientOptions) -> Self {
        McpClient {
            inner: Arc::new(ClientInner {
                target,
                options,
                connection: tokio::sync::Mutex::new(None),
                progress: Arc::default(),
                askers: Arc::default(),
                tools_changed: watch::Sender::new(0),
                task_statuses: watch::Sender::new(0),
                oauth: tokio::sync::Mutex::new(None),
                oauth_challenge: std::sync::Mutex::new(None),
            }),
        }
    }

    /// Connect now (start the program, or reach the URL, and finish the handshake).
    pub async fn connect(&self) -> Result<(), McpError> {
        self.peer().await.map(drop)
    }

    /// Where the server is.
    pub fn target(&self) -> &McpTarget {
        &self.inner.target
    }

    /// What the server said about itself in `initialize` or `server/discover` (connecting
    /// first if needed).
    pub async fn server_info(&self) -> Result<Option<Implementation>, McpError> {
        let (peer, _) = self.peer().await?;
        Ok(peer.peer_info().and_then(|info| info.server_info.clone()))
    }

    /// The MCP revision the connection speaks, e.g. `"2026-07-28"` or `"2025-11-25"`
    /// (connecting first if needed).
    pub async fn protocol_version(&self) -> Result<String, McpError> {
        let (peer, _) = self.peer().await?;
        Ok(peer
            .peer_info()
            .map(|info| info.protocol_version.to_string())
            .unwrap_or_default())
    }

    /// Every tool the server lists now (all pages).
    pub async fn list_tools(&self) -> Result<Vec<Tool>, McpError> {
        match self.list_tools_once().await {
            Err(McpError::Unauthorized { .. }) if self.reauthorizes() => {
                self.list_tools_once().await
            }
            other => other,
        }
    }

    /// Whether a request the server just refused for want of authorization is made once more:
    /// with OAuth, the next connection authorizes again with the server's challenge (a new
    /// scope, a fresh token). A refused request was not acted on, so sending it again is safe;
    /// a second refusal is the answer.
    fn reauthorizes(&self) -> bool {
        self.inner.options.oauth.is_some()
            && crate::util::lock(&self.inner.oauth_challenge).is_some()
    }

    async fn list_tools_once(&self) -> Result<Vec<Tool>, McpError> {
        let (peer, generation) = self.peer().await?;
        let timeout = self.inner.options.request_wait();
        match tokio::time::timeout(timeout, peer.list_all_tools()).await {
            Ok(Ok(tools)) => Ok(tools),
            Ok(Err(e)) => Err(self.failure("tools/list", generation, e).await),
            Err(_) => Err(McpError::Timeout {
                target: self.inner.target.to_string(),
                method: "tools/list".into(),
                timeout,
            }),
        }
    }

    /// Call a tool with arguments given as a JSON object (or `null` for none).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<CallToolResult, McpError> {
        self.call_tool_with_progress(name, arguments, |_| {}).await
    }

    /// Call a tool and hand every progress notification to `on_progress` as it arrives.
    ///
    /// A tool's own failure is an `Ok` result with `is_error: Some(true)`; `Err` means the
    /// call got no result (refused by the server, connection lost). Dropping the returned
    /// future before it finishes cancels the call on the server (`notifications/cancelled`).
    pub async fn call_tool_with_progress(
        &self,
        name: &str,
        arguments: Value,
        on_progress: impl FnMut(McpProgress) + Send,
    ) -> Result<CallToolResult, McpError> {
        self.call_tool_asking(name, arguments, on_progress, None)
            .await
    }

    /// [`call_tool_with_progress`](Self::call_tool_with_progress), the server's questions
    /// during the call going to `asking` when the options forward them.
    pub(super) async fn call_tool_asking(
        &self,
        name: &str,
        arguments: Value,
        mut on_progress: impl FnMut(McpProgress) + Send,
        asking: Option<Asking>,
    ) -> Result<CallToolResult, McpError> {
        // Only with OAuth may a refused call be sent again, so only then is a copy kept.
        if self.inner.options.oauth.is_none() {
            return self
                .call_tool_once(name, arguments, on_progress, asking)
                .await;
        }
        match self
            .call_tool_once(name, arguments.clone(), &mut on_progress, asking.clone())
            .await
        {
            Err(McpError::Unauthorized { .. }) if self.reauthorizes() => {
                self.call_tool_once(name, arguments, &mut on_progress, asking)
                    .await
            }
            other => other,
        }
    }

    async fn call_tool_once(
        &self,
        name: &str,
        arguments: Value,
        mut on_progress: impl FnMut(McpProgress) + Send,
        asking: Option<Asking>,
    ) -> Result<CallToolResult, McpError> {
        let arguments = match arguments {
            Value::Object(map) => Some(map),
            Value::Null => None,
            other => {
                return Err(McpError::InvalidArguments(json_kind(&other).into()));
            }
        };
        let (peer, generation) = self.peer().await?;
        let mut params = CallToolRequestParams::new(name.to_string());
        params.arguments = arguments;
        // The caller's trace goes on with the server (SEP-414), when there is one.
        if let Some(trace) = crate::trace_context::current() {
            let meta = params.meta.get_or_insert_with(Default::default);
            meta.set_traceparent(trace.traceparent);
            if let Some(state) = trace.tracestate {
                meta.set_tracestate(state);
            }
        }
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = match peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(handle) => handle,
            Err(e) => return Err(self.failure("tools/call", generation, e).await),
        };
        let mut progress = self.inner.progress.subscribe(handle.progress_token.clone());
        // Every call is registered when questions are forwarded, so that a question of a call
        // that names no asker goes to the handlers, not to another call.
        let _asking = self.inner.options.forward_questions.then(|| {
            let asking = asking.unwrap_or_else(|| Asking {
                caller: None,
                paused: Arc::default(),
            });
            self.inner.askers.register(handle.id.clone(), asking)
        });
        let cancel = cancel_on_drop(peer.clone(), handle.id.clone());
        let mut reported = false;
        let timeout = self.inner.options.call_timeout;
        let response = {
            let mut response = std::pin::pin!(handle.await_response());
            // Silence, not the whole call, is bounded: each progress notification restarts it.
            let idle = tokio::time::sleep(timeout);
            tokio::pin!(idle);
            loop {
                tokio::select! {
                    response = &mut response => break response,
                    Some(event) = progress.rx.recv() => {
                        reported = true;
                        on_progress(event);
                        idle.as_mut().reset(tokio::time::Instant::now() + timeout);
                    }
                    () = &mut idle => {
                        // `cancel` is not defused: dropping it tells the server to stop.
                        return Err(McpError::Timeout {
                            target: self.inner.target.to_string(),
                            method: "tools/call".into(),
                            timeout,
                        });
                    }
                }
            }
        };
        cancel.defuse();
        // rmcp hands each notification to a task of its own, spawned when the notification is
        // read, so the last ones (sent before the response) may still be queued when the
        // response arrives. Take what has arrived; a call that reported progress also waits
        // until its notifications have been quiet for a moment, so none is cut off.
        tokio::task::yield_now().await;
        while let Ok(event) = progress.rx.try_recv() {
            reported = true;
            on_progress(event);
        }
        if reported {
            while let Ok(Some(event)) =
                tokio::time::timeout(LATE_PROGRESS_QUIET, progress.rx.recv()).await
            {
                on_progress(event);
            }
        }
        match response {
            Ok(ServerResult::CallToolResult(result)) => Ok(result),
            Ok(other) => Err(McpError::Protocol(
                format!(
                    "the MCP server {} answered `tools/call` with something else than a tool result: {other:?}",
                    self.inner.target
                )
                .into(),
            )),
            Err(e) => Err(self.failure("tools/call", generation, e).await),
        }
    }

    /// The options the client was made with.
    pub(super) fn options(&self) -> &McpClientOptions {
        &self.inner.options
    }

    /// Call a tool as an MCP task (revision 2025-11-25): the server answers at once with a
    /// task, polled with `tasks/get` (as often as its `pollInterval` asks, within 50 ms–5 s)
    /// until it ends; then `tasks/result` is its result. Dropping the future before then
    /// cancels the task (`tasks/cancel`, best effort). A server that answers the call with a
    /// result instead of a task (it does not run this tool as a task) is answered as usual.
    /// See [`McpClientOptions::run_as_tasks`].
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<CallToolResult, McpError> {
        let arguments = match arguments {
            Value::Object(map) => Value::Object(map),
            Value::Null => Value::Object(Default::default()),
            other => {
                return Err(McpError::InvalidArguments(json_kind(&other).into()));
            }
        };
        let (peer, generation) = self.peer().await?;
        let params = serde_json::json!({"name": name, "arguments": arguments, "task": {}});
        let created = self.custom(&peer, generation, "tools/call", params).await?;
        let Some(task_id) = created
            .get("task")
            .and_then(|t| t.get("taskId"))
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            return self.tool_result("tools/call", created);
        };
        let id = serde_json::json!({"taskId": task_id});
        let cancel = {
            let (peer, id) = (peer.clone(), id.clone());
            OnDrop::new(move || {
                let Ok(runtime) = tokio::runtime::Handle::try_current() else {
                    return;
                };
                runtime.spawn(async move {
                    let request = rmcp::model::CustomRequest::new("tasks/cancel", Some(id));
                    let _ = peer
                        .send_request(ClientRequest::CustomRequest(request))
                        .await;
                });
            })
        };
        let mut task = created.get("task").cloned().unwrap_or_default();
        let mut statuses = self.inner.task_statuses.subscribe();
        loop {
            let status = task
                .get("status")
                .and_then(Value::as_str)
                .unwrap_or("working");
            if !matches!(status, "working" | "input_required") {
                break;
            }
            let poll = task
                .get("pollInterval")
                .and_then(Value::as_u64)
                .unwrap_or(500)
                .clamp(50, 5_000);
            // Polled as the server asks; a status notification (of any task) looks at once.
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(poll)) => {}
                _ = statuses.changed() => {}
            }
            task = self
                .custom(&peer, generation, "tasks/get", id.clone())
                .await?;
        }
        let result = self.custom(&peer, generation, "tasks/result", id).await;
        cancel.defuse();
        self.tool_result("tasks/result", result?)
    }

    /// A request rmcp does not model, its answer as JSON.
    async fn custom(
        &self,
        peer: &Peer<RoleClient>,
        generation: u64,
        method: &str,
        params: Value,
    ) -> Result<Value, McpError> {
        let request = rmcp::model::CustomRequest::new(method, Some(params));
        let request = peer.send_request(ClientRequest::CustomRequest(request));
        let answer = match tokio::time::timeout(self.inner.options.call_timeout, request).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(e)) => return Err(self.failure(method, generation, e).await),
            Err(_) => {
                return Err(McpError::Timeout {
                    target: self.inner.target.to_string(),
                    method: method.into(),
                    timeout: self.inner.options.call_timeout,
                });
            }
        };
        serde_json::to_value(&answer).map_err(|e| {
            McpError::Protocol(format!("the answer to `{method}` could not be read: {e}").into())
        })
    }

    /// `answer` (to `method`) read as a tool's result.
    fn tool_result(&self, method: &str, answer: Value) -> Result<CallToolResult, McpError> {
        serde_json::from_value::<CallToolResult>(answer.clone()).map_err(|_| {
            McpError::Protocol(
                format!(
                    "the MCP server {} answered `{method}` with something else than a tool result: {answer}",
                    self.inner.target
                )
                .into(),
            )
        })
    }

    /// A receiver that sees a new value whenever the server's tool list may have changed:
    /// the server sent `notifications/tools/list_changed`, or the client reconnected.
    pub fn tool_list_changes(&self) -> watch::Receiver<u64> {
        self.inner.tools_changed.subscribe()
    }

    /// Close the connection (a child process is asked to exit, then killed). The next
    /// operation connects again.
    pub async fn close(&self) {
        let connection = self.inner.connection.lock().await.take();
        if let Some(mut connection) = connection {
            let _ = connection
                .service
                .close_with_timeout(Duration::from_secs(5))
                .await;
        }
    }

    /// The live connection's peer, connecting (again) if there is none.
    async fn peer(&self) -> Result<(Peer<RoleClient>, u64), McpError> {
        let mut slot = self.inner.connection.lock().await;
        if let Some(connection) = slot.as_ref() {
            if !connection.service.peer().is_transport_closed() {
                return Ok((connection.service.peer().clone(), connection.generation));
            }
            tracing::info!(server = %self.inner.target, "the MCP connection is gone; reconnecting");
        }
        let generation = slot.as_ref().map_or(1, |c| c.generation + 1);
        // Dropping the old connection stops its task (and kills its child process).
        *slot = None;
        let service = self.inner.open().await?;
        let peer = service.peer().clone();
        let listening = self.inner.listen(&peer).await;
        *slot = Some(Connection {
            service,
            generation,
            _listening: listening,
        });
        drop(slot);
        if generation > 1 {
            // The new connection may list other tools than the old one did.
            self.inner.tools_changed.send_modify(|v| *v += 1);
        }
        Ok((peer, generation))
    }

    /// The error for a failed request; a broken connection is dropped so the next operation
    /// reconnects.
    async fn failure(&self, method: &str, generation: u64, error: ServiceError) -> McpError {
        let target = self.inner.target.to_string();
        match error {
            ServiceError::McpError(e) => McpError::Rejected {
                target,
                method: method.into(),
                code: e.code.0,
                message: e.message.into_owned(),
            },
            ServiceError::Timeout { timeout } => McpError::Timeout {
                target,
                method: method.into(),
                timeout,
            },
            // A session whose token stopped being accepted (expired, revoked, or a scope the
            // server now wants): the server answered, so this is not a lost connection.
            ServiceError::TransportSend(ref e)
                if let Some(reason) =
                    refused_by_transport(e, self.inner.options.endpoint.has_bearer_token()) =>
            {
                // With OAuth the next request authorizes again, with this challenge.
                if self.inner.options.oauth.is_some()
                    && let Some(challenge) = auth_challenge(e)
                {
                    *crate::util::lock(&self.inner.oauth_challenge) = Some(challenge);
                    let mut slot = self.inner.connection.lock().await;
                    if slot.as_ref().is_some_and(|c| c.generation == generation) {
                        *slot = None;
                    }
                }
                McpError::Unauthorized {
                    target,
                    method: method.into(),
                    reason,
                }
            }
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                let mut slot = self.inner.connection.lock().await;
                if slot.as_ref().is_some_and(|c| c.generation == generation) {
                    *slot = None;
                }
                McpError::ConnectionLost {
                    target,
                    method: method.into(),
                }
            }
            other => McpError::Protocol(Cause::explained(
                format!("`{method}` to the MCP server {target}: {other}"),
                other,
            )),
        }
    }
}

impl ClientInner {
    /// The streamable-HTTP transport to `url`, over a client trusting the options' roots and
    /// sending their token and headers.
    fn http_transport(
        &self,
        url: &str,
        oauth_token: Option<String>,
    ) -> Result<
        (
            StreamableHttpClientTransport<reqwest::Client>,
            reqwest::Client,
        ),
        McpError,
    > {
        let options = &self.options;
        let tls_error = |e: crate::tls::TlsError| McpError::Connect {
            target: url.to_owned(),
            reason: Cause::new(e),
        };
        // No idle connection reuse, as rmcp's own client: a connection whose last response
        // body was not read to the end stalls on delayed ACKs when reused. Redirects are
        // followed within the same origin only (`/mcp` → `/mcp/` is common), at most 10, so
        // the token and headers never go to another host.
        let http = options
            .endpoint
            .client_builder(&TrustedRoots::system(), options.connect_wait())
            .map_err(tls_error)?
            .pool_max_idle_per_host(0)
            .redirect(reqwest::redirect::Policy::custom(|attempt| {
                let same_origin = attempt
                    .previous()
                    .first()
                    .is_some_and(|first| first.origin() == attempt.url().origin());
                if same_origin && attempt.previous().len() <= MAX_REDIRECTS {
                    attempt.follow()
                } else {
                    attempt.stop()
                }
            }))
            .build()
            .map_err(|e| tls_error(crate::tls::TlsError::Setup(Cause::new(e))))?;
        let mut config = StreamableHttpClientTransportConfig::with_uri(url);
        if let Some(token) = oauth_token.as_deref().or(options.endpoint.token()) {
            config = config.auth_header(token.to_owned());
        }
        config.custom_headers = HashMap::from_iter(
            options
                .endpoint
                .header_map(false)
                .map_err(tls_error)?
                .into_iter()
                .filter_map(|(name, value)| Some((name?, value))),
        );
        Ok((
            StreamableHttpClientTransport::with_client(http.clone(), config),
            http,
        ))
    }

    /// Start the transport and settle the revision: with [`McpEra::Newest`], a
    /// `server/discover` probe and 2026-07-28 when offered, else the `initialize` handshake.
    /// A probe that fails in a way rmcp does not take for "legacy server" (some handshake-era
    /// servers answer it with an HTTP error) is followed by a fresh connection that goes
    /// straight to `initialize`: the spec's fallback is not keyed to one error.
    async fn open(&self) -> Result<RunningService<RoleClient, ClientSide>, McpError> {
        // A token the server refused in the last session: authorize again first.
        let pending = crate::util::lock(&self.oauth_challenge).take();
        if let Some(challenge) = pending {
            self.authorize(&challenge).await?;
        }
        match self.open_once().await {
            Err(Failed {
                challenge: Some(challenge),
                ..
            }) => {
                // The browser step is the user's, so it is not bounded by the connect timeout.
                self.authorize(&challenge).await?;
                self.open_once().await.map_err(|failed| failed.error)
            }
            other => other.map_err(|failed| failed.error),
        }
    }

    /// Run the OAuth flow of the options after the server's `challenge`, keeping the
    /// authorization for the connections to come.
    async fn authorize(&self, challenge: &str) -> Result<(), McpError> {
        let (Some(oauth), McpTarget::Url(url)) = (&self.options.oauth, &self.target) else {
            return Ok(());
        };
        let target = self.target.to_string();
        let failed = |reason: String| McpError::Authorization {
            target: target.clone(),
            reason,
        };
        // The OAuth requests go to the authorization server, not the MCP server: with the
        // options' trusted roots, without the MCP server's token and headers.
        let client = |policy: reqwest::redirect::Policy| {
            self.options
                .endpoint
                .client_builder(&TrustedRoots::system(), self.options.connect_wait())
                .and_then(|builder| {
                    builder
                        .redirect(policy)
                        .build()
                        .map_err(|e| crate::tls::TlsError::Setup(Cause::new(e)))
                })
                .map_err(|e| failed(e.to_string()))
        };
        let http = super::oauth::OAuthClients {
            follow: client(reqwest::redirect::Policy::limited(MAX_REDIRECTS))?,
            stop: client(reqwest::redirect::Policy::none())?,
        };
        let manager = oauth
            .authorize(url, http, challenge)
            .await
            .map_err(failed)?;
        *self.oauth.lock().await = Some(manager);
        Ok(())
    }

    /// The bearer token of the OAuth authorization, refreshed when it expired; `None` before
    /// the flow ran, or when the token can no longer be refreshed (the server's challenge then
    /// starts the flow again).
    async fn oauth_token(&self) -> Option<String> {
        let mut slot = self.oauth.lock().await;
        let manager = slot.as_ref()?;
        match manager.get_access_token().await {
            Ok(token) => Some(token),
            Err(e) => {
                tracing::debug!(server = %self.target, error = %e, "the OAuth token could not be refreshed");
                *slot = None;
                None
            }
        }
    }

    /// One connection in the era the options ask for, within the connect timeout.
    async fn open_once(&self) -> Result<RunningService<RoleClient, ClientSide>, Failed> {
        let target = self.target.to_string();
        let timeout = self.options.connect_wait();
        let connecting = async {
            match self.options.era {
                McpEra::Handshake => self.open_with(ClientLifecycleMode::Initialize).await,
                McpEra::Stateless => {
                    let newest = vec![ProtocolVersion::V_2026_07_28];
                    self.open_with(ClientLifecycleMode::Discover {
                        preferred_versions: newest,
                    })
                    .await
                }
                McpEra::Newest => {
                    let auto = ClientLifecycleMode::Auto {
                        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                        legacy_version: Some(ProtocolVersion::V_2025_11_25),
                    };
                    match self.open_with(auto).await {
                        Err(probe) if !probe.fatal => {
                            tracing::debug!(
                                server = %self.target,
                                error = %probe.error,
                                "the `server/discover` probe failed; trying `initialize`"
                            );
                            self.open_with(ClientLifecycleMode::Initialize).await
                        }
                        other => other,
                    }
                }
            }
        };
        match tokio::time::timeout(timeout, connecting).await {
            Ok(result) => result,
            Err(_) => Err(Failed::from(McpError::ConnectTimeout { target, timeout })),
        }
    }

    /// One connection attempt with this lifecycle.
    async fn open_with(
        &self,
        lifecycle: ClientLifecycleMode,
    ) -> Result<RunningService<RoleClient, ClientSide>, Failed> {
        let handler = ClientSide {
            progress: self.progress.clone(),
            askers: self.options.forward_questions.then(|| self.askers.clone()),
            tools_changed: self.tools_changed.clone(),
            task_statuses: self.task_statuses.clone(),
            info: self.client_config(),
            elicitation: self.options.elicitation.clone(),
            sampling: self.options.sampling.clone(),
        };
        let target = self.target.to_string();
        match &self.target {
            McpTarget::Command { program, args, env } => {
                let mut command = tokio::process::Command::new(program);
                command.args(args).envs(env.iter().cloned());
                let (transport, _) = TokioChildProcess::builder(command)
                    .stderr(Stdio::inherit())
                    .spawn()
                    .map_err(|source| Failed {
                        error: McpError::Spawn {
                            command: target.clone(),
                            source,
                        },
                        fatal: true,
                        challenge: None,
                    })?;
                handler
                    .serve_with_lifecycle(transport, lifecycle)
                    .await
                    .map_err(|e| {
                        Failed::from(McpError::Connect {
                            target,
                            reason: Cause::explained(crate::util::error_chain(&e), e),
                        })
                    })
            }
            McpTarget::Url(url) => {
                let oauth_token = self.oauth_token().await;
                let (transport, http) =
                    self.http_transport(url, oauth_token)
                        .map_err(|error| Failed {
                            error,
                            fatal: true,
                            challenge: None,
                        })?;
                match handler.serve_with_lifecycle(transport, lifecycle).await {
                    Ok(service) => Ok(service),
                    Err(e) => {
                        let challenge = match &e {
                            ClientInitializeError::TransportError { error, .. } => {
                                auth_challenge(error)
                            }
                            _ => None,
                        };
                        if let (Some(challenge), Some(_)) = (&challenge, &self.options.oauth) {
                            return Err(Failed {
                                error: McpError::Connect {
                                    target,
                                    reason: Cause::explained(
                                        "the server requires authorization (OAuth)",
                                        e,
                                    ),
                                },
                                fatal: true,
                                challenge: Some(challenge.clone()),
                            });
                        }
                        let sent_token = self.options.endpoint.has_bearer_token();
                        let mut fatal = false;
                        let message = match credentials_refused(&e, sent_token) {
                            Some(reason) => reason,
                            None => match unreachable_cause(&http, url).await {
                                Some(cause) => {
                                    fatal = true;
                                    cause
                                }
                                None => crate::util::error_chain(&e),
                            },
                        };
                        let reason = Cause::explained(message, e);
                        Err(Failed {
                            error: McpError::Connect { target, reason },
                            fatal,
                            challenge: None,
                        })
                    }
                }
            }
        }
    }

    /// In the stateless era, open the `subscriptions/listen` stream that carries tool-list
    /// changes (the handshake era pushes them to [`ClientSide`]), and follow it until the
    /// returned guard is dropped. `None` in the handshake era, or when the server does not
    /// announce list changes or refuses the stream.
    async fn listen(&self, peer: &Peer<RoleClient>) -> Option<DropGuard> {
        let info = peer.peer_info()?;
        let announced = info
            .capabilities
            .tools
            .as_ref()
            .is_some_and(|tools| tools.list_changed == Some(true));
        if info.protocol_version.has_initialize() || !announced {
            return None;
        }
        // Bounded like `tools/list`: a server that never acknowledges must not hold the
        // connection (and every caller waiting for it).
        let listening =
            tokio::time::timeout(self.options.request_wait(), peer.listen(tool_list_filter()));
        let subscription = match listening.await {
            Ok(Ok(subscription)) => subscription,
            Ok(Err(e)) => {
                tracing::warn!(
                    server = %self.target,
                    error = %e,
                    "the server refused `subscriptions/listen`: tool-list changes will not be followed"
                );
                return None;
            }
            Err(_) => {
                tracing::warn!(
                    server = %self.target,
                    "`subscriptions/listen` was not acknowledged in time: tool-list changes will not be followed"
                );
                return None;
            }
        };
        let stop = CancellationToken::new();
        let follower = follow_subscription(peer.clone(), self.tools_changed.clone(), subscription);
        let stopped = stop.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = stopped.cancelled() => {}
                _ = follower => {}
            }
        });
        Some(stop.drop_guard())
    }

    fn client_config(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.options.elicitation.is_some() || self.options.forward_questions {
            let mut elicitation = rmcp::model::ElicitationCapability::new();
            elicitation.form = Some(rmcp::model::FormElicitationCapability::default());
            capabilities.elicitation = Some(elicitation);
        }
        if self.options.sampling.is_some() || self.options.forward_questions {
            capabilities.sampling = Some(rmcp::model::SamplingCapability::default());
        }
        let mut config = ClientConfig::new(
            capabilities,
            Implementation::new(self.options.name.clone(), self.options.version.clone()),
        );
        config.protocol_version = ProtocolVersion::V_2025_11_25;
        config
    }
}

impl fmt::Debug for McpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpClient")
            .field("target", &self.inner.target)
            .finish_non_exhaustive()
    }
}

/// The client side of the session: routes progress and list-changed notifications, and hands
/// the server's questions to the asker of the call they belong to (when forwarded) or to the
/// callers the options name.
struct ClientSide {
    progress: Arc<ProgressRouter>,
    /// With [`McpClientOptions::forward_questions`]: the calls in flight.
    askers: Option<Arc<CallAskers>>,
    tools_changed: watch::Sender<u64>,
    task_statuses: watch::Sender<u64>,
    info: ClientConfig,
    elicitation: Option<Answerer>,
    sampling: Option<Answerer>,
}

impl ClientSide {
    /// Who answers a request for `capability` the server sent with `context`: the asker of the
    /// call it belongs to when questions are forwarded (with the signal that pauses the call),
    /// else `handler`.
    async fn answerer(
        &self,
        context: &RequestContext<RoleClient>,
        capability: &'static str,
        handler: &Option<Answerer>,
    ) -> Result<(Arc<dyn Caller>, Option<Arc<tokio::sync::Notify>>), ErrorData> {
        let mut unanswered = None;
        if let Some(askers) = &self.askers {
            let origin = context
                .extensions
                .get::<rmcp::service::InboundStreamOrigin>();
            match askers.route(origin).await {
                Route::Call(Asking {
                    caller: Some(caller),
                    paused,
                }) => return Ok((caller, Some(paused))),
                Route::Call(_) => {
                    unanswered = Some(format!(
                        "the call this {capability} request belongs to can ask nobody (it runs outside an agent run that pauses at questions, an MCP session, or a context with a `Caller`), and this client has no handler for it"
                    ));
                }
                Route::Ambiguous(calls) => {
                    unanswered = Some(format!(
                        "this client cannot tell which of its {calls} calls in flight the {capability} request belongs to (the transport does not say: stdio), and it has no handler for it"
                    ));
                }
                Route::Handler => {}
            }
        }
        match handler {
            Some(Answerer(caller)) => Ok((caller.clone(), None)),
            None => Err(ErrorData::invalid_request(
                unanswered.unwrap_or_else(|| {
                    format!(
                        "this client answers no {capability} (it did not declare the capability)"
                    )
                }),
                None,
            )),
        }
    }
}

/// What the server is told when a question of its is held for an agent run that paused: the
/// call is cancelled, and made again with the answer when the run resumes.
fn held(error: &AskError, paused: Option<&tokio::sync::Notify>) -> ErrorData {
    if let (AskError::Paused, Some(paused)) = (error, paused) {
        paused.notify_one();
    }
    ErrorData::internal_error(error.to_string(), None)
}

impl ClientHandler for ClientSide {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.dispatch(params);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.send_modify(|v| *v += 1);
    }

    async fn on_custom_notification(
        &self,
        notification: rmcp::model::CustomNotification,
        _context: NotificationContext<RoleClient>,
    ) {
        if notification.method == "notifications/tasks/status" {
            self.task_statuses.send_modify(|v| *v += 1);
        }
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let (caller, paused) = self
            .answerer(&context, "elicitation", &self.elicitation)
            .await?;
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        else {
            return Err(ErrorData::invalid_params(
                "this client answers form elicitation only (it did not declare `url`)",
                None,
            ));
        };
        let schema = serde_json::to_value(&requested_schema)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let question = Elicitation::new(message, schema);
        match caller.elicit(question.clone()).await {
            Ok(Elicited::Accepted(answer)) => Ok(ElicitResult::new(ElicitationAction::Accept)
                .with_content(question.with_defaults(answer))),
            Ok(Elicited::Declined) => Ok(ElicitResult::new(ElicitationAction::Decline)),
            Ok(Elicited::Cancelled) => Ok(ElicitResult::new(ElicitationAction::Cancel)),
            Err(e) => Err(held(&e, paused.as_deref())),
        }
    }

    #[allow(deprecated)] // sampling: the 2025-11-25 era (SEP-2577 drops it later)
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let (caller, paused) = self.answerer(&context, "sampling", &self.sampling).await?;
        let messages = params
            .messages
            .iter()
            .map(|message| {
                let role = match message.role {
                    Role::Assistant => "assistant",
                    _ => "user",
                };
                let text: Vec<String> = message
                    .content
                    .iter()
                    .filter_map(|block| block.as_text().map(|t| t.text.clone()))
                    .collect();
                (role.to_owned(), text.join("\n"))
            })
            .collect();
        let mut request = Sampling::prompt("", params.max_tokens);
        request.messages = messages;
        request.system_prompt = params.system_prompt;
        let answer: Sampled = caller
            .sample(request)
            .await
            .map_err(|e| held(&e, paused.as_deref()))?;
        let mut result =
            CreateMessageResult::new(SamplingMessage::assistant_text(answer.text), answer.model);
        result.stop_reason = answer.stop_reason;
        Ok(result)
    }
}

fn tool_list_filter() -> SubscriptionFilter {
    SubscriptionFilter::builder().tools_list_changed().build()
}

/// Turn the tool-list notifications of a `subscriptions/listen` stream into bumps of
/// `changed`. A stream that ends (a proxy closed it, the server shut it down) is opened again
/// after a pause, with a bump, since changes in between were not heard; a closed connection
/// ends the follower.
async fn follow_subscription(
    peer: Peer<RoleClient>,
    changed: watch::Sender<u64>,
    mut subscription: Subscription,
) {
    loop {
        match subscription.next().await {
            Ok(Some(ServerNotification::ToolListChangedNotification(_))) => {
                changed.send_modify(|v| *v += 1);
            }
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => loop {
                if peer.is_transport_closed() {
                    return;
                }
                tokio::time::sleep(RELISTEN_DELAY).await;
                let again = tokio::time::timeout(RELISTEN_TIMEOUT, peer.listen(tool_list_filter()));
                if let Ok(Ok(again)) = again.await {
                    subscription = again;
                    changed.send_modify(|v| *v += 1);
                    break;
                }
            },
        }
    }
}

/// A guard that sends `notifications/cancelled` for call `id` if its caller stops waiting
/// (the call's future is dropped before the answer came). Best effort, in the background.
fn cancel_on_drop(peer: Peer<RoleClient>, id: rmcp::model::RequestId) -> OnDrop<impl FnOnce()> {
    OnDrop::new(move || {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            let reason = Some("the caller stopped waiting for the result".to_string());
            let _ = peer
                .notify_cancelled(CancelledNotificationParam::new(Some(id), reason))
                .await;
        });
    })
}
