//! The HTTP side shared by the servers ([`a2a_router`]): card route, JSON-RPC route, version
//! dispatch, auth and the body limit.

use std::sync::Arc;

use a2a::{A2AError, AgentCard, JsonRpcId};
use a2a_server::{AgentExecutor, DefaultRequestHandler, ServiceParams};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::Value;
use tower::ServiceExt;

use super::card::served_card;
use super::options::ServerOptions;
use super::rpc::rpc_error;
use super::v03;
use super::validate::{SendCheck, Validated};
use crate::a2a::compat;

/// Builds the agent card (without `supportedInterfaces` and security, which the router fills
/// in). Called on every card request, so the card follows runtime changes such as group toggles.
pub type CardFn = Arc<dyn Fn() -> AgentCard + Send + Sync>;

#[derive(Clone)]
struct AppState {
    handler: Arc<Validated>,
    official: Router,
    card: CardFn,
    options: Arc<ServerOptions>,
}

/// The axum router of an A2A server running `executor`: the card routes and the JSON-RPC
/// endpoint at `/`, for A2A 1.0 and 0.3 (see the [module docs](super)). `card` is called for
/// every card request (the `options` set its name, description and version where given);
/// `check` runs on every `SendMessage` before a task is created. Tasks live in memory (a
/// [`MemoryTaskStore`](super::MemoryTaskStore) with the options' limits on finished tasks), or in
/// the options' `task_store` (features `postgres`, `sqlite`; its cancels from other servers
/// then reach `executor`'s [`cancel`](AgentExecutor::cancel) here).
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
    let handler = match options.durable_store() {
        #[cfg(durable)]
        Some(store) => DefaultRequestHandler::new(
            super::replicas::Replicated::new(executor, store.clone()),
            store.clone(),
        ),
        _ => DefaultRequestHandler::new(executor, options.memory_store()),
    }
    .with_capabilities(capabilities);
    let handler = Arc::new(Validated::new(handler, check));
    let official = a2a_server::jsonrpc::jsonrpc_router(handler.clone());
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

async fn agent_card(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let body = served_card((state.card)(), &state.options, &headers);
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

fn authorized(options: &ServerOptions, headers: &HeaderMap) -> bool {
    options
        .bearer_token
        .as_ref()
        .is_none_or(|token| token.is_bearer_in(headers))
}

async fn json_rpc(State(state): State<AppState>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    if !authorized(&state.options, &parts.headers) {
        let mut response = rpc_error(
            StatusCode::UNAUTHORIZED,
            JsonRpcId::Null,
            A2AError::invalid_request(
                "unauthorized (HTTP 401): send the server's token as `Authorization: Bearer <token>`",
            ),
        );
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return response;
    }
    let limit = state.options.body_limit();
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
