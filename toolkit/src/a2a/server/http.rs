//! The HTTP side shared by the servers: card route, JSON-RPC route, version dispatch, auth and
//! the body limit.

use std::sync::Arc;

use a2a::{
    A2AError, AgentCard, AgentInterface, HttpAuthSecurityScheme, JsonRpcId, JsonRpcResponse,
    SecurityScheme, SendMessageRequest, TRANSPORT_PROTOCOL_JSONRPC, error_code,
};
use a2a_server::{AgentExecutor, DefaultRequestHandler, InMemoryTaskStore, ServiceParams};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::Value;
use tower::ServiceExt;

use super::v03;
use super::validate::Validated;
use crate::a2a::compat;

/// Builds the agent card (without `supportedInterfaces` and security, which the router fills
/// in). Called on every card request, so the card follows runtime changes such as group toggles.
pub type CardFn = Arc<dyn Fn() -> AgentCard + Send + Sync>;

/// A server's own check of a `SendMessage` request, run before a task is created; an `Err`
/// (use [`A2AError::invalid_params`]) is the JSON-RPC error the client gets.
pub type SendCheck = Arc<dyn Fn(&SendMessageRequest) -> Result<(), A2AError> + Send + Sync>;

/// HTTP settings shared by the A2A servers.
#[derive(Clone)]
pub struct ServerOptions {
    /// Require `Authorization: Bearer <token>` on the JSON-RPC endpoint (the card stays public
    /// and declares the scheme). `None` (the default): no auth.
    pub bearer_token: Option<String>,
    /// Largest request body accepted, in bytes (default 2 MiB; at most
    /// [`MAX_REQUEST_BODY_BYTES`](a2a_server::jsonrpc::MAX_REQUEST_BODY_BYTES), 10 MiB, the
    /// official router's own limit).
    pub max_body_bytes: usize,
    /// The URL clients reach the server at, e.g. `https://tools.example.com/`, for the card's
    /// interfaces. `None` (the default): `http://` plus the request's `Host` header.
    pub public_url: Option<String>,
}

impl std::fmt::Debug for ServerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The token is a secret: say whether there is one, never what it is.
        f.debug_struct("ServerOptions")
            .field(
                "bearer_token",
                &self.bearer_token.as_ref().map(|_| "<redacted>"),
            )
            .field("max_body_bytes", &self.max_body_bytes)
            .field("public_url", &self.public_url)
            .finish()
    }
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            bearer_token: None,
            max_body_bytes: 2 * 1024 * 1024,
            public_url: None,
        }
    }
}

#[derive(Clone)]
struct AppState {
    handler: Arc<Validated>,
    official: Router,
    card: CardFn,
    options: Arc<ServerOptions>,
}

/// The axum router of an A2A server running `executor`: the card routes and the JSON-RPC
/// endpoint at `/`, for A2A 1.0 and 0.3 (see the [module docs](super)). `check` runs on every
/// `SendMessage` before a task is created. Tasks live in memory.
///
/// [`A2aToolServer`](super::A2aToolServer) and [`A2aAgentServer`](super::A2aAgentServer) are
/// built on it; use it directly to serve an executor of your own.
pub fn a2a_router(
    executor: impl AgentExecutor,
    card: CardFn,
    check: Option<SendCheck>,
    options: ServerOptions,
) -> Router {
    let capabilities = card().capabilities;
    let handler = DefaultRequestHandler::new(executor, InMemoryTaskStore::new())
        .with_capabilities(capabilities);
    let handler = Arc::new(Validated::new(handler, check));
    let official = a2a_server::jsonrpc::jsonrpc_router(handler.clone());
    let mut options = options;
    options.max_body_bytes = options
        .max_body_bytes
        .min(a2a_server::jsonrpc::MAX_REQUEST_BODY_BYTES);
    let state = AppState {
        handler,
        official,
        card,
        options: Arc::new(options),
    };
    Router::new()
        .route(a2a_server::WELL_KNOWN_AGENT_CARD_PATH, get(agent_card))
        .route("/.well-known/agent.json", get(agent_card))
        .route("/", post(json_rpc))
        .with_state(state)
}

/// The URL of the JSON-RPC endpoint as clients should see it.
fn endpoint_url(options: &ServerOptions, headers: &HeaderMap) -> String {
    if let Some(url) = &options.public_url {
        return url.clone();
    }
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1");
    format!("http://{host}/")
}

const BEARER: &str = "bearer";

async fn agent_card(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let mut card = (state.card)();
    let url = endpoint_url(&state.options, &headers);
    let mut legacy = AgentInterface::new(url.clone(), TRANSPORT_PROTOCOL_JSONRPC);
    legacy.protocol_version = compat::V03.to_string();
    card.supported_interfaces = vec![AgentInterface::new(url, TRANSPORT_PROTOCOL_JSONRPC), legacy];
    if state.options.bearer_token.is_some() {
        card.security_schemes = Some(
            [(
                BEARER.to_string(),
                SecurityScheme::HttpAuth(HttpAuthSecurityScheme {
                    scheme: "Bearer".into(),
                    description: Some("The token the server was configured with".into()),
                    bearer_format: None,
                }),
            )]
            .into(),
        );
        card.security_requirements = Some(vec![[(BEARER.to_string(), Vec::new())].into()]);
    }
    let mut body = compat::card_to_v03(&card);
    super::tool_server::skill_schemas_on_card(&mut body);
    (
        [
            (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
            // The card follows the toolkit's groups, so it must not be cached.
            (header::CACHE_CONTROL, "no-cache"),
        ],
        axum::Json(body),
    )
        .into_response()
}

/// A JSON-RPC error answer with an HTTP status (200 for JSON-RPC errors proper).
pub(super) fn rpc_error(status: StatusCode, id: JsonRpcId, error: A2AError) -> Response {
    let body = JsonRpcResponse::error(id, error.to_jsonrpc_error());
    (status, axum::Json(body)).into_response()
}

fn authorized(options: &ServerOptions, headers: &HeaderMap) -> bool {
    let Some(token) = &options.bearer_token else {
        return true;
    };
    headers
        .get_all(header::AUTHORIZATION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| v.split_once(' '))
        .any(|(scheme, given)| {
            scheme.eq_ignore_ascii_case("bearer") && constant_time_eq(given.trim(), token)
        })
}

/// Compares without returning early at the first difference, so timing does not reveal how
/// much of a guessed token was right.
fn constant_time_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut diff = a.len() ^ b.len();
    for i in 0..a.len().max(b.len()) {
        diff |= usize::from(a.get(i).copied().unwrap_or(0) ^ b.get(i).copied().unwrap_or(0));
    }
    diff == 0
}

async fn json_rpc(State(state): State<AppState>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    if !authorized(&state.options, &parts.headers) {
        let mut response = rpc_error(
            StatusCode::UNAUTHORIZED,
            JsonRpcId::Null,
            A2AError::invalid_request(
                "unauthorized: send the server's token as `Authorization: Bearer <token>`",
            ),
        );
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return response;
    }
    let limit = state.options.max_body_bytes;
    let bytes = match axum::body::to_bytes(body, limit).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return rpc_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                JsonRpcId::Null,
                A2AError::invalid_request(format!(
                    "the request body is larger than this server's limit of {limit} bytes"
                )),
            );
        }
    };
    // Only the method decides the generation; reading just it skips building a JSON tree for
    // the 1.0 requests, which the official router parses itself.
    let method = serde_json::from_slice::<MethodOnly>(&bytes)
        .ok()
        .and_then(|m| m.method);
    let Some(method) = method else {
        return forward(state.official, parts, bytes).await;
    };
    let params = service_params(&parts.headers);
    if let Some(v1_method) = compat::method_from_v03(&method)
        && let Ok(envelope) = serde_json::from_slice::<Value>(&bytes)
    {
        return v03::dispatch(&state.handler, &params, &envelope, v1_method).await;
    }
    // A method neither generation has, asked on the 0.3 wire: the official router would check
    // the version first and answer `-32009` for the missing header, which misreports the
    // problem; it is an unknown method.
    if !a2a::methods::is_valid(&method)
        && v03::is_v03_request(&params)
        && let Ok(envelope) = serde_json::from_slice::<Value>(&bytes)
    {
        return v03::method_not_found(&envelope, &method);
    }
    forward(state.official, parts, bytes).await
}

/// The `method` of a JSON-RPC request, if it has a string one.
#[derive(serde::Deserialize)]
struct MethodOnly<'a> {
    #[serde(borrow, default)]
    method: Option<std::borrow::Cow<'a, str>>,
}

/// Hands a 1.0 (or malformed) request to the official JSON-RPC router, which owns the 1.0
/// binding: envelope checks, `A2A-Version`, ProtoJSON, SSE.
async fn forward(official: Router, mut parts: axum::http::request::Parts, body: Bytes) -> Response {
    // The official router serves its endpoint at its own root.
    parts.uri = axum::http::Uri::from_static("/");
    let request = Request::from_parts(parts, Body::from(body));
    match official.oneshot(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

/// Request headers as a2a-server-lf hands them to handlers: lowercase names, string values.
fn service_params(headers: &HeaderMap) -> ServiceParams {
    let mut params = ServiceParams::new();
    for (name, value) in headers {
        if let Ok(v) = value.to_str() {
            params
                .entry(name.as_str().to_owned())
                .or_default()
                .push(v.to_owned());
        }
    }
    params
}

/// The JSON-RPC error a request gets when its `params` cannot be read.
pub(super) fn invalid_params(e: impl std::fmt::Display) -> A2AError {
    A2AError::new(error_code::INVALID_PARAMS, format!("invalid params: {e}"))
}

/// Serve `router` on `listener` with `TCP_NODELAY` on every accepted connection.
///
/// Streamed answers (SSE) are written in small pieces; without `TCP_NODELAY`, Nagle's algorithm
/// holds each piece back until the peer's delayed ACK (about 40 ms on Linux), which made every
/// streamed remote tool call take ~30 ms instead of well under 1 ms.
pub(crate) async fn serve(
    listener: tokio::net::TcpListener,
    router: axum::Router,
) -> std::io::Result<()> {
    use axum::serve::ListenerExt;
    let listener = listener.tap_io(|tcp| {
        // Best effort: a socket that refuses the option still serves, only slower.
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, router).await
}
