//! The A2A 0.3 wire for [`RemoteAgent`](super::RemoteAgent): JSON-RPC with the 0.3 method names
//! (`message/send`, `message/stream`, `tasks/get`, `tasks/cancel`) and the `kind` shapes.
//!
//! `a2a-client-lf` speaks 1.0 only. Requests and answers are converted at this boundary by
//! [`compat`](crate::a2a::compat), so the rest of the client sees the 1.0 types. No
//! `A2A-Version` header is sent: a missing header means 0.3, which is what both pure 0.3
//! servers and the 1.x SDK's compatibility layer expect.

use a2a::{
    CancelTaskRequest, GetTaskRequest, SendMessageRequest, SendMessageResponse, StreamResponse,
    Task,
};
use eventsource_stream::Eventsource;
use futures::StreamExt;
use serde_json::{Value, json};

use super::error::A2aClientError;
use super::wire::EventStream;
use crate::a2a::compat;
use crate::error::Cause;
use crate::util::prefix;

/// A JSON-RPC client for one 0.3 endpoint.
pub(crate) struct V03Client {
    http: reqwest::Client,
    endpoint: String,
    bearer: Option<String>,
}

impl V03Client {
    pub(crate) fn new(http: reqwest::Client, endpoint: String, bearer: Option<String>) -> Self {
        V03Client {
            http,
            endpoint,
            bearer,
        }
    }

    pub(crate) async fn send_message(
        &self,
        request: &SendMessageRequest,
    ) -> Result<SendMessageResponse, A2aClientError> {
        let result = self
            .call("message/send", compat::send_params_to_v03(request))
            .await?;
        compat::send_response_from_v03(&result).map_err(|e| self.protocol(e.to_string()))
    }

    pub(crate) async fn send_streaming_message(
        &self,
        request: &SendMessageRequest,
    ) -> Result<EventStream, A2aClientError> {
        let body = envelope("message/stream", compat::send_params_to_v03(request));
        let response = self
            .post(&body)
            .header("Accept", "text/event-stream")
            .send()
            .await
            .map_err(|e| A2aClientError::from_http(&self.endpoint, e))?;
        let is_stream = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
        if !is_stream {
            // An error (or a non-streaming answer) comes back as a plain JSON-RPC response.
            let status = response.status();
            let text = response
                .text()
                .await
                .map_err(|e| A2aClientError::from_http(&self.endpoint, e))?;
            return Err(match self.read_envelope(status, &text) {
                Err(error) => error,
                Ok(_) => self.protocol("a streaming request got a non-streaming answer".into()),
            });
        }
        let endpoint = self.endpoint.clone();
        let events = response.bytes_stream().eventsource();
        // After a `final: true` status update the task is over: end the stream there.
        let stream = futures::stream::unfold((events.boxed(), false), move |(mut events, done)| {
            let endpoint = endpoint.clone();
            async move {
                if done {
                    return None;
                }
                loop {
                    let event = match events.next().await? {
                        Ok(event) => event,
                        Err(e) => {
                            let error = A2aClientError::Connection {
                                url: endpoint.clone(),
                                source: Cause::explained(format!("event stream failed: {e}"), e),
                            };
                            return Some((Err(error), (events, true)));
                        }
                    };
                    if event.data.trim().is_empty() {
                        continue;
                    }
                    let (item, last) = stream_item(&endpoint, &event.data);
                    return Some((item, (events, last)));
                }
            }
        });
        Ok(stream.boxed())
    }

    pub(crate) async fn cancel_task(
        &self,
        request: &CancelTaskRequest,
    ) -> Result<Task, A2aClientError> {
        let params = compat::cancel_params_to_v03(request);
        self.task("tasks/cancel", params).await
    }

    pub(crate) async fn get_task(&self, request: &GetTaskRequest) -> Result<Task, A2aClientError> {
        let params = compat::get_task_params_to_v03(request);
        self.task("tasks/get", params).await
    }

    /// Call `method`, whose answer is a task.
    async fn task(&self, method: &str, params: Value) -> Result<Task, A2aClientError> {
        let result = self.call(method, params).await?;
        compat::task_from_v03(&result).map_err(|e| self.protocol(e.to_string()))
    }

    async fn call(&self, method: &str, params: Value) -> Result<Value, A2aClientError> {
        let response = self
            .post(&envelope(method, params))
            .send()
            .await
            .map_err(|e| A2aClientError::from_http(&self.endpoint, e))?;
        let status = response.status();
        let text = response
            .text()
            .await
            .map_err(|e| A2aClientError::from_http(&self.endpoint, e))?;
        self.read_envelope(status, &text)
    }

    fn post(&self, body: &Value) -> reqwest::RequestBuilder {
        let mut request = self.http.post(&self.endpoint).json(body);
        if let Some(token) = &self.bearer {
            request = request.bearer_auth(token);
        }
        // The caller's trace goes on on the other side (with the `otel` feature).
        if let Some(trace) = crate::trace_context::current() {
            request = request.header("traceparent", trace.traceparent);
            if let Some(state) = trace.tracestate {
                request = request.header("tracestate", state);
            }
        }
        request
    }

    /// The `result` of a JSON-RPC response, or its error.
    fn read_envelope(
        &self,
        status: reqwest::StatusCode,
        text: &str,
    ) -> Result<Value, A2aClientError> {
        if status == reqwest::StatusCode::UNAUTHORIZED || status == reqwest::StatusCode::FORBIDDEN {
            let message = format!("HTTP {status}: {}", prefix(text, 200));
            return Err(http_error(&self.endpoint, status, message));
        }
        let envelope = serde_json::from_str::<Value>(text).ok();
        let is_rpc = envelope
            .as_ref()
            .is_some_and(|e| e.get("jsonrpc").is_some() || e.get("result").is_some());
        if !is_rpc
            || !status.is_success() && envelope.as_ref().is_some_and(|e| e.get("error").is_none())
        {
            let message = format!("HTTP {status}: {}", prefix(text, 200));
            return Err(http_error(&self.endpoint, status, message));
        }
        rpc_result(&self.endpoint, envelope.unwrap_or_default())
    }

    fn protocol(&self, message: String) -> A2aClientError {
        A2aClientError::Protocol {
            url: self.endpoint.clone(),
            message,
        }
    }
}

fn envelope(method: &str, params: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": a2a::new_message_id(),
        "method": method,
        "params": params,
    })
}

/// The error for an HTTP answer that is not JSON-RPC: refused credentials, or an invalid answer.
fn http_error(url: &str, status: reqwest::StatusCode, message: String) -> A2aClientError {
    let url = url.to_string();
    if status == reqwest::StatusCode::UNAUTHORIZED || status == reqwest::StatusCode::FORBIDDEN {
        A2aClientError::Unauthorized { url, message }
    } else {
        A2aClientError::Protocol { url, message }
    }
}

/// The `result` member of a JSON-RPC response, or its `error` as [`A2aClientError::Rpc`].
fn rpc_result(url: &str, mut envelope: Value) -> Result<Value, A2aClientError> {
    if let Some(error) = envelope.get("error").filter(|e| !e.is_null()) {
        let code = error.get("code").and_then(Value::as_i64);
        let message = error.get("message").and_then(Value::as_str);
        let (Some(code), Some(message)) = (code, message) else {
            return Err(A2aClientError::Protocol {
                url: url.to_string(),
                message: format!("a JSON-RPC error without a code and message: {error}"),
            });
        };
        return Err(A2aClientError::Rpc {
            url: url.to_string(),
            code: i32::try_from(code).unwrap_or(i32::MIN),
            message: message.to_string(),
        });
    }
    match envelope.get_mut("result") {
        Some(result) => Ok(result.take()),
        None => Err(A2aClientError::Protocol {
            url: url.to_string(),
            message: "a JSON-RPC response with neither `result` nor `error`".into(),
        }),
    }
}

/// One SSE `data:` payload → a 1.0 event, and whether it was the last one (`final: true`).
fn stream_item(url: &str, data: &str) -> (Result<StreamResponse, A2aClientError>, bool) {
    let protocol = |message: String| A2aClientError::Protocol {
        url: url.to_string(),
        message,
    };
    let envelope: Value = match serde_json::from_str(data) {
        Ok(v) => v,
        Err(e) => return (Err(protocol(format!("an event is not JSON: {e}"))), true),
    };
    let result = match rpc_result(url, envelope) {
        Ok(result) => result,
        Err(e) => return (Err(e), true),
    };
    let last = result.get("final").and_then(Value::as_bool) == Some(true);
    match compat::stream_response_from_v03(&result) {
        Ok(event) => (Ok(event), last),
        Err(e) => (Err(protocol(e.to_string())), true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_items_read_v03_events_and_errors() {
        let (event, last) = stream_item(
            "u",
            r#"{"jsonrpc":"2.0","id":1,"result":{"kind":"status-update","taskId":"t","contextId":"c","final":true,"status":{"state":"completed"}}}"#,
        );
        assert!(last);
        match event.unwrap() {
            StreamResponse::StatusUpdate(u) => {
                assert_eq!(u.status.state, a2a::TaskState::Completed)
            }
            other => panic!("{other:?}"),
        }
        let (event, _) = stream_item(
            "u",
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad params"}}"#,
        );
        assert!(matches!(
            event,
            Err(A2aClientError::Rpc { code: -32602, .. })
        ));
        let (event, _) = stream_item("u", "not json");
        assert!(matches!(event, Err(A2aClientError::Protocol { .. })));
    }
}
