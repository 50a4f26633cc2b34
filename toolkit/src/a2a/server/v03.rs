//! The A2A 0.3 JSON-RPC binding: 0.3 requests converted to 1.0, run by the same handler, and
//! the answers (and stream events) converted back with [`compat`](crate::a2a::compat).

use a2a::{A2AError, JsonRpcId, JsonRpcRequest, JsonRpcResponse, StreamResponse, methods};
use a2a_server::{RequestHandler, ServiceParams};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::Value;

use super::rpc::{invalid_params, rpc_error};
use super::validate::Validated;
use crate::a2a::compat;

/// Whether the `A2A-Version` header (absent means 0.3) allows a 0.3 method.
fn version_allows_v03(params: &ServiceParams) -> Result<(), A2AError> {
    match params.get("a2a-version").and_then(|v| v.first()) {
        None => Ok(()),
        Some(v) if v.trim().is_empty() || v.trim().starts_with("0.") => Ok(()),
        Some(v) => Err(A2AError::version_not_supported(&format!(
            "{v}: this is an A2A 0.3 method; send it without `A2A-Version` (or with 0.3), or \
             use the 1.0 method with `A2A-Version: 1.0`"
        ))),
    }
}

/// Whether the request is on the 0.3 wire: no `A2A-Version`, or a 0.x one.
pub(super) fn is_v03_request(params: &ServiceParams) -> bool {
    version_allows_v03(params).is_ok()
}

/// The answer to a 0.3 request naming a method A2A does not have: `-32601`, after the same
/// envelope checks as any other request.
pub(super) fn method_not_found(envelope: &Value, method: &str) -> Response {
    let request: JsonRpcRequest = match serde_json::from_value(envelope.clone()) {
        Ok(r) => r,
        Err(e) => return invalid_request(envelope, e),
    };
    if request.jsonrpc != "2.0" {
        return error_v03(
            request.id,
            A2AError::invalid_request("invalid jsonrpc version"),
        );
    }
    error_v03(request.id, A2AError::method_not_found(method))
}

/// `-32600` for an envelope that is not a JSON-RPC request, echoing its id when it has one.
fn invalid_request(envelope: &Value, e: serde_json::Error) -> Response {
    let id = envelope
        .get("id")
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or(JsonRpcId::Null);
    rpc_error(
        StatusCode::OK,
        id,
        A2AError::invalid_request(format!("invalid request: {e}")),
    )
}

/// A 0.3 JSON-RPC error: code and message (0.3 had no structured `data`).
fn error_v03(id: JsonRpcId, error: A2AError) -> Response {
    let mut rpc = error.to_jsonrpc_error();
    rpc.data = None;
    axum::Json(JsonRpcResponse::error(id, rpc)).into_response()
}

fn ok(id: JsonRpcId, result: Value) -> Response {
    axum::Json(JsonRpcResponse::success(id, result)).into_response()
}

fn sse(id: JsonRpcId, stream: BoxStream<'static, Result<StreamResponse, A2AError>>) -> Response {
    let events = stream.map(|item| item.map(|event| compat::stream_response_to_v03(&event)));
    a2a_server::sse::sse_jsonrpc_stream(id, Box::pin(events)).into_response()
}

/// Runs one 0.3 request (`v1_method` is its 1.0 name) and answers in 0.3 JSON.
pub(super) async fn dispatch(
    handler: &Validated,
    params: &ServiceParams,
    envelope: &Value,
    v1_method: &str,
) -> Response {
    let request: JsonRpcRequest = match serde_json::from_value(envelope.clone()) {
        Ok(r) => r,
        Err(e) => return invalid_request(envelope, e),
    };
    let id = request.id.clone();
    if request.jsonrpc != "2.0" {
        return error_v03(id, A2AError::invalid_request("invalid jsonrpc version"));
    }
    if let Err(e) = version_allows_v03(params) {
        return error_v03(id, e);
    }
    let raw = request.params.unwrap_or(Value::Null);
    let result = match v1_method {
        methods::SEND_MESSAGE => match compat::send_params_from_v03(&raw) {
            Ok(req) => handler
                .send_message(params, req)
                .await
                .map(|r| compat::send_response_to_v03(&r)),
            Err(e) => Err(invalid_params(e)),
        },
        methods::SEND_STREAMING_MESSAGE => {
            return match compat::send_params_from_v03(&raw) {
                Ok(req) => match handler.send_streaming_message(params, req).await {
                    Ok(stream) => sse(id, stream),
                    Err(e) => error_v03(id, e),
                },
                Err(e) => error_v03(id, invalid_params(e)),
            };
        }
        methods::GET_TASK => match compat::get_task_params_from_v03(&raw) {
            Ok(req) => handler
                .get_task(params, req)
                .await
                .map(|t| compat::task_to_v03(&t)),
            Err(e) => Err(invalid_params(e)),
        },
        methods::CANCEL_TASK => match compat::cancel_params_from_v03(&raw) {
            Ok(req) => handler
                .cancel_task(params, req)
                .await
                .map(|t| compat::task_to_v03(&t)),
            Err(e) => Err(invalid_params(e)),
        },
        methods::SUBSCRIBE_TO_TASK => {
            return match compat::subscribe_params_from_v03(&raw) {
                Ok(req) => match handler.subscribe_to_task(params, req).await {
                    Ok(stream) => sse(id, stream),
                    Err(e) => error_v03(id, e),
                },
                Err(e) => error_v03(id, invalid_params(e)),
            };
        }
        methods::GET_EXTENDED_AGENT_CARD => handler
            .get_extended_agent_card(params, a2a::GetExtendedAgentCardRequest { tenant: None })
            .await
            .map(|c| compat::card_to_v03(&c)),
        // Push notifications are not offered (the card says so); every push method of 0.3
        // gets the error A2A defines for that.
        _ => Err(A2AError::push_notification_not_supported()),
    };
    match result {
        Ok(value) => ok(id, value),
        Err(e) => error_v03(id, e),
    }
}
