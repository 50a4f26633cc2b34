//! JSON-RPC error answers, the vocabulary the HTTP layer and the 0.3 binding share.

use a2a::{A2AError, JsonRpcId, JsonRpcResponse, error_code};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// A JSON-RPC error answer with an HTTP status (200 for JSON-RPC errors proper).
pub(super) fn rpc_error(status: StatusCode, id: JsonRpcId, error: A2AError) -> Response {
    let body = JsonRpcResponse::error(id, error.to_jsonrpc_error());
    (status, axum::Json(body)).into_response()
}

/// The JSON-RPC error a request gets when its `params` cannot be read.
pub(super) fn invalid_params(e: impl std::fmt::Display) -> A2AError {
    A2AError::new(error_code::INVALID_PARAMS, format!("invalid params: {e}"))
}
