//! [`McpHttpService`]: rmcp's streamable-HTTP server over a toolkit, one session per client,
//! as a tower service axum can mount.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use axum::body::Body;
use axum::body::Bytes;
use axum::http::{Method, Request, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use futures::future::BoxFuture;
use rmcp::model::{ClientJsonRpcMessage, ErrorData, NumberOrString, ServerJsonRpcMessage};
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use super::types::StreamableHttpServerConfig;
use serde_json::Value;

use super::polling::{CallStream, Cut, Polling};
use super::server::McpServer;
use super::tasks::{self, Decorate, Inbound};
use crate::toolkit::Toolkit;

/// The browser origins [`McpHttpService::new`] accepts: pages served from this machine's
/// loopback interface, on any port (the MCP transport's DNS-rebinding rule: a page of another
/// site that resolves to 127.0.0.1 still carries its own `Origin`).
pub const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

/// Largest request body accepted (the limit rmcp applies too): 4 MiB.
const MAX_BODY_BYTES: usize = 4 << 20;

/// A streamable-HTTP MCP endpoint serving both eras. In the handshake era (2025-11-25)
/// `initialize` opens a session named by the `Mcp-Session-Id` header, a GET opens the stream
/// that carries `list_changed`, DELETE ends the session; each session gets its own
/// [`view`](crate::Toolkit::view) of the toolkit, so group switches made in one session stay in
/// it, while switches of the served toolkit reach every session that has not overridden that
/// group. In the stateless era (2026-07-28) each request stands alone (any replica can answer
/// it) and tool-list changes go out on `subscriptions/listen` streams; see the
/// [module docs](super) for what that means for per-session state.
///
/// Mount it in axum with `nest_service` (or `route_service`):
///
/// ```no_run
/// use agent_toolkit::prelude::*;
///
/// /// Add two numbers.
/// #[tool(read_only)]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// # async fn run() -> std::io::Result<()> {
/// use axum::serve::ListenerExt;
///
/// let toolkit = Toolkit::builder().register(Add).build().unwrap();
/// let app = axum::Router::new().nest_service("/mcp", toolkit.mcp_http_service());
/// // No Nagle delay between the events of one SSE response (progress, then the result).
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8000")
///     .await?
///     .tap_io(|tcp| {
///         let _ = tcp.set_nodelay(true);
///     });
/// axum::serve(listener, app).await
/// # }
/// ```
///
/// Protection against DNS rebinding is on: only `Host` headers naming the loopback interface
/// are accepted (rmcp's default; use [`with_config`](Self::with_config) with
/// [`StreamableHttpServerConfig::with_allowed_hosts`] when serving other hosts), and a browser
/// request's `Origin` must be a loopback one too (`http` or `https` on `localhost`,
/// `127.0.0.1` or `[::1]`, any port: [`LOOPBACK_ORIGINS`]); a page of any other site is refused
/// with HTTP 403 (allow origins with `with_allowed_origins`). Requests without an `Origin`
/// (every non-browser client) pass. [`bearer_token`](Self::bearer_token) requires a token.
///
/// Bad input gets a JSON-RPC answer: a body that is not JSON gets HTTP 400 with a `-32700`
/// parse error, JSON that is not a JSON-RPC message HTTP 400 with `-32600`.
#[derive(Clone)]
pub struct McpHttpService {
    inner: StreamableHttpService<McpServer, LocalSessionManager>,
    /// The served toolkit: which tools are background tools (MCP tasks, `tasks.rs`).
    toolkit: crate::toolkit::Toolkit,
    /// Required as `Authorization: Bearer <token>` on every request, when set.
    bearer_token: Option<crate::endpoint::Secret>,
    /// The `tools/call` streams followed for SSE polling (`polling.rs`).
    polling: Arc<Polling>,
    /// Close the stream of a call still running after this long, telling the client to come
    /// back after the second duration.
    close_after: Option<(std::time::Duration, std::time::Duration)>,
}

impl McpHttpService {
    /// Serve `server`'s toolkit, one view per session, with rmcp's default configuration
    /// plus `Origin` validation against [`LOOPBACK_ORIGINS`].
    pub fn new(server: McpServer) -> Self {
        Self::with_config(
            server,
            StreamableHttpServerConfig::default()
                .with_allowed_origins(LOOPBACK_ORIGINS)
                .enforce_origin_validation(),
        )
    }

    /// Serve with this rmcp configuration (allowed hosts and origins, SSE keep-alive,
    /// cancellation token that stops every session).
    pub fn with_config(server: McpServer, config: StreamableHttpServerConfig) -> Self {
        let toolkit = server.toolkit().clone();
        let factory = move || Ok(server.new_session());
        McpHttpService {
            toolkit,
            inner: StreamableHttpService::new(
                factory,
                LocalSessionManager::default().into(),
                config,
            ),
            bearer_token: None,
            polling: Arc::default(),
            close_after: None,
        }
    }

    /// Close the event stream of every call still running after `after`, telling the client
    /// to come back after `retry` (SEP-1699 polling, revision 2025-11-25): the client
    /// reconnects with `Last-Event-ID` and gets what the call sent since, then the rest —
    /// its result included — so a long call holds no connection open (through proxies that
    /// cut idle ones, or to free the client's). A tool can do the same for its own call with
    /// [`CallStream`]. Off by default; calls of the stateless era and JSON answers are not
    /// affected.
    pub fn close_streams_after(
        mut self,
        after: std::time::Duration,
        retry: std::time::Duration,
    ) -> Self {
        self.close_after = Some((after, retry));
        self
    }

    /// Require `Authorization: Bearer <token>` on every request (POST, the GET stream,
    /// DELETE). Anything else is refused with HTTP 401 and `WWW-Authenticate: Bearer`, before
    /// MCP sees it; compared in constant time.
    ///
    /// ```no_run
    /// # let toolkit = agent_toolkit::Toolkit::builder().build().unwrap();
    /// let mcp = toolkit.mcp_http_service().bearer_token("s3cret");
    /// let app: axum::Router = axum::Router::new().nest_service("/mcp", mcp);
    /// ```
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(crate::endpoint::Secret(token.into()));
        self
    }

    async fn handle(self, request: Request<Body>) -> Response {
        if let Some(token) = &self.bearer_token
            && !token.is_bearer_in(request.headers())
        {
            return unauthorized();
        }
        if request.method() == Method::GET
            && let Some(resumed) = self.polling.resume(request.headers())
        {
            return resumed;
        }
        if request.method() != Method::POST || !is_json(&request) {
            // rmcp answers these itself (GET streams, DELETE, 405, 415).
            return self.inner.handle(request).await.into_response();
        }
        let (mut parts, body) = request.into_parts();
        let bytes = match axum::body::to_bytes(body, MAX_BODY_BYTES).await {
            Ok(bytes) => bytes,
            Err(_) => {
                return (
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("Payload Too Large: the request body exceeds {MAX_BODY_BYTES} bytes"),
                )
                    .into_response();
            }
        };
        // The task messages rmcp does not model (`tasks.rs`).
        let (bytes, decorate) = match tasks::inbound(&bytes) {
            Inbound::Unchanged => (bytes, None),
            Inbound::Renamed(renamed) => (renamed.into(), None),
            Inbound::Decorate(id, what) => (bytes, Some((id, what))),
        };
        // A call of a session (the handshake era) may have its stream closed while it runs.
        let session = parts
            .headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let cut = (session.is_some() && is_tool_call(&bytes)).then(|| {
            let cut = Arc::new(Cut::default());
            parts.extensions.insert(CallStream::new(Arc::clone(&cut)));
            cut
        });
        // rmcp reads the message itself and answers a body it cannot read (with a JSON
        // content type, as here) with a plain-text 415; only then is the body read again, to
        // give the JSON-RPC error instead. The common case parses once.
        let request = Request::from_parts(parts, Body::from(bytes.clone()));
        let response = self.inner.handle(request).await.into_response();
        if let (Some(cut), Some(session)) = (cut, session)
            && response.status().is_success()
            && is_event_stream(&response)
        {
            return self
                .polling
                .follow(session, response, cut, self.close_after);
        }
        if response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE
            && let Err(e) = serde_json::from_slice::<ClientJsonRpcMessage>(&bytes)
        {
            return bad_message(&bytes, &e);
        }
        match decorate {
            Some((id, what)) if response.status().is_success() => {
                decorated(response, self.toolkit.clone(), id, what).await
            }
            _ => response,
        }
    }
}

/// rmcp's answer to request `id` with the task fields added (`tasks::decorate`): a JSON body
/// is read whole, an event stream rewritten line by line as it goes.
async fn decorated(response: Response, toolkit: Toolkit, id: Value, what: Decorate) -> Response {
    let (mut parts, body) = response.into_parts();
    let content_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let decorate = move |message: &mut Value| {
        if message.get("id") == Some(&id) {
            tasks::decorate(&toolkit, what, message);
        }
    };
    if content_type.starts_with("application/json") {
        let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY_BYTES * 4).await else {
            return StatusCode::BAD_GATEWAY.into_response();
        };
        let Ok(mut message) = serde_json::from_slice::<Value>(&bytes) else {
            return Response::from_parts(parts, Body::from(bytes));
        };
        decorate(&mut message);
        parts.headers.remove(header::CONTENT_LENGTH);
        let body = serde_json::to_vec(&message).unwrap_or_else(|_| bytes.to_vec());
        return Response::from_parts(parts, Body::from(body));
    }
    if !content_type.starts_with("text/event-stream") {
        return Response::from_parts(parts, body);
    }
    // Events end with a blank line, so every event's lines end with a newline: a line is
    // rewritten once whole, and bytes after the last newline wait for the next chunk.
    let partial = Arc::new(Mutex::new(Vec::<u8>::new()));
    let rest = Arc::clone(&partial);
    let lines = body.into_data_stream().map(move |chunk| {
        let chunk = chunk?;
        let mut partial = crate::util::lock(&partial);
        partial.extend_from_slice(&chunk);
        let Some(last) = partial.iter().rposition(|b| *b == b'\n') else {
            return Ok(Bytes::new());
        };
        let whole: Vec<u8> = partial.drain(..=last).collect();
        let mut out = Vec::with_capacity(whole.len() + 64);
        for line in whole.split_inclusive(|b| *b == b'\n') {
            out.extend_from_slice(&decorated_line(line, &decorate));
        }
        Ok::<_, axum::Error>(Bytes::from(out))
    });
    let tail = futures::stream::once(async move {
        Ok::<_, axum::Error>(Bytes::from(std::mem::take(&mut *crate::util::lock(&rest))))
    });
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from_stream(lines.chain(tail)))
}

/// One line of an event stream, decorated when it is the `data` of a JSON message.
fn decorated_line(line: &[u8], decorate: &impl Fn(&mut Value)) -> Vec<u8> {
    let Some(data) = line.strip_prefix(b"data:") else {
        return line.to_vec();
    };
    let Ok(mut message) = serde_json::from_slice::<Value>(data) else {
        return line.to_vec();
    };
    decorate(&mut message);
    let mut out = b"data: ".to_vec();
    if serde_json::to_writer(&mut out, &message).is_err() {
        return line.to_vec();
    }
    out.extend_from_slice(if line.ends_with(b"\r\n") {
        b"\r\n"
    } else {
        b"\n"
    });
    out
}

/// Whether `body` is a `tools/call` request (read only as far as its method).
fn is_tool_call(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Method<'a> {
        #[serde(borrow)]
        method: Option<std::borrow::Cow<'a, str>>,
    }
    serde_json::from_slice::<Method<'_>>(body)
        .is_ok_and(|m| m.method.as_deref() == Some("tools/call"))
}

fn is_event_stream(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().starts_with("text/event-stream"))
}

fn is_json(request: &Request<Body>) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
        })
}

/// HTTP 401 for a request without the server's token.
fn unauthorized() -> Response {
    let error = ErrorData::invalid_request(
        "Unauthorized: send the server's token as `Authorization: Bearer <token>`",
        None,
    );
    let body = serde_json::to_vec(&ServerJsonRpcMessage::error(error, None)).unwrap_or_default();
    (
        StatusCode::UNAUTHORIZED,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::WWW_AUTHENTICATE, "Bearer"),
        ],
        body,
    )
        .into_response()
}

/// HTTP 400 with the JSON-RPC error for a body rmcp could not read as a message.
fn bad_message(body: &[u8], error: &serde_json::Error) -> Response {
    use serde_json::error::Category;
    let (error, id) = match error.classify() {
        Category::Syntax | Category::Eof | Category::Io => (
            ErrorData::parse_error(
                format!("Parse error: the body is not valid JSON ({error})"),
                None,
            ),
            None,
        ),
        Category::Data => (
            ErrorData::invalid_request(
                format!(
                    "Invalid Request: the body is JSON but not one JSON-RPC 2.0 message ({error}); batches are not supported"
                ),
                None,
            ),
            request_id(body),
        ),
    };
    let message = ServerJsonRpcMessage::error(error, id);
    let body = serde_json::to_vec(&message).unwrap_or_default();
    (
        StatusCode::BAD_REQUEST,
        [(header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}

/// The id of a malformed request, when it has a usable one.
fn request_id(body: &[u8]) -> Option<NumberOrString> {
    match serde_json::from_slice::<Value>(body).ok()?.get("id")? {
        Value::Number(n) => n.as_i64().map(NumberOrString::Number),
        Value::String(s) => Some(NumberOrString::String(s.as_str().into())),
        _ => None,
    }
}

impl tower::Service<Request<Body>> for McpHttpService {
    type Response = Response;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let this = self.clone();
        Box::pin(async move { Ok(this.handle(request).await) })
    }
}

impl std::fmt::Debug for McpHttpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHttpService").finish_non_exhaustive()
    }
}
