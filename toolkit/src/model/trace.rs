//! The `chat` span of one model request, after the OpenTelemetry GenAI semantic conventions:
//! named `chat <model>` (`otel.name`), of kind client, with `gen_ai.operation.name = "chat"`,
//! `gen_ai.provider.name`, `gen_ai.request.model` and the request's `max_tokens` and
//! `temperature`; once answered, `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens` and
//! `gen_ai.response.finish_reasons`, or `error.type` when the request failed. No content unless
//! the agent's toolkit turns it on ([`ToolkitBuilder::trace_content`](crate::toolkit::ToolkitBuilder::trace_content)):
//! then `gen_ai.input.messages` and `gen_ai.output.messages`, JSON in the conventions' shape
//! (`[{"role": "user", "parts": [{"type": "text", "content": "…"}]}]`, tool calls as
//! `tool_call` parts, results as `tool_call_response` parts).
//!
//! And the conventions' client metrics, as `tracing` events of target `agent_toolkit::metrics`
//! that `tracing-opentelemetry`'s `MetricsLayer` turns into histograms (fields prefixed
//! `histogram.`): `gen_ai.client.operation.duration` (seconds) and `gen_ai.client.token.usage`
//! (per `gen_ai.token.type`, `input` or `output`). They belong to no span.

use serde_json::{Value, json};

use super::{
    AssistantMessage, ChatModel, ChatRequest, ChatResponse, FinishReason, Message, ModelError,
};
use crate::tool::ToolCall;

/// Content recording: a call's arguments as a span may record them (without values for hidden
/// parameters); `None` records no content.
pub(crate) type Content<'a> = Option<&'a (dyn Fn(&ToolCall) -> String + Sync)>;

/// The span of one request of `model`; with `content`, the messages sent.
pub(crate) fn chat_span(
    model: &dyn ChatModel,
    request: &ChatRequest,
    content: Content<'_>,
) -> tracing::Span {
    let name = model.name();
    let span = tracing::info_span!(
        "chat",
        otel.name = format!("chat {name}"),
        otel.kind = "client",
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = model.provider(),
        gen_ai.request.model = name,
        gen_ai.request.max_tokens = tracing::field::Empty,
        gen_ai.request.temperature = tracing::field::Empty,
        gen_ai.usage.input_tokens = tracing::field::Empty,
        gen_ai.usage.output_tokens = tracing::field::Empty,
        gen_ai.response.finish_reasons = tracing::field::Empty,
        gen_ai.input.messages = tracing::field::Empty,
        gen_ai.output.messages = tracing::field::Empty,
        error.type = tracing::field::Empty,
    );
    if let Some(arguments) = content.filter(|_| !span.is_disabled()) {
        let messages: Vec<Value> = request
            .messages
            .iter()
            .filter_map(|m| message(m, arguments))
            .collect();
        span.record(
            "gen_ai.input.messages",
            Value::Array(messages).to_string().as_str(),
        );
    }
    if let Some(max) = request.options.max_tokens {
        span.record("gen_ai.request.max_tokens", i64::from(max));
    }
    if let Some(temperature) = request.options.temperature {
        span.record("gen_ai.request.temperature", f64::from(temperature));
    }
    span
}

/// Record what the request got on its span; with `content`, the answer.
pub(crate) fn record_answer(
    span: &tracing::Span,
    answer: &Result<ChatResponse, ModelError>,
    content: Content<'_>,
) {
    match answer {
        Ok(response) => {
            if let Some(arguments) = content.filter(|_| !span.is_disabled()) {
                let mut output = assistant(&response.message, arguments);
                output["finish_reason"] = json!(finish_reason(&response.finish_reason));
                span.record(
                    "gen_ai.output.messages",
                    json!([output]).to_string().as_str(),
                );
            }
            // Signed: exporters write unsigned integers as strings.
            span.record(
                "gen_ai.usage.input_tokens",
                signed(response.usage.input_tokens),
            );
            span.record(
                "gen_ai.usage.output_tokens",
                signed(response.usage.output_tokens),
            );
            span.record(
                "gen_ai.response.finish_reasons",
                finish_reason(&response.finish_reason),
            );
        }
        Err(error) => {
            span.record("error.type", error_type(error));
        }
    }
}

/// Report the request's duration and tokens as the conventions' metrics.
pub(crate) fn measure(
    model: &dyn ChatModel,
    answer: &Result<ChatResponse, ModelError>,
    took: std::time::Duration,
) {
    let (provider, name) = (model.provider(), model.name());
    let error = answer.as_ref().err().map(error_type).unwrap_or_default();
    tracing::event!(
        target: "agent_toolkit::metrics",
        parent: None,
        tracing::Level::INFO,
        histogram.gen_ai.client.operation.duration = took.as_secs_f64(),
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = provider,
        gen_ai.request.model = name,
        error.type = error,
    );
    let Ok(response) = answer else {
        return;
    };
    for (kind, tokens) in [
        ("input", response.usage.input_tokens),
        ("output", response.usage.output_tokens),
    ] {
        tracing::event!(
            target: "agent_toolkit::metrics",
            parent: None,
            tracing::Level::INFO,
            histogram.gen_ai.client.token.usage = tokens,
            gen_ai.token.type = kind,
            gen_ai.operation.name = "chat",
            gen_ai.provider.name = provider,
            gen_ai.request.model = name,
        );
    }
}

/// One message in the conventions' shape (`role`, `parts`); `None` for what is no message of
/// the conversation (a tool list change).
fn message(message: &Message, arguments: &dyn Fn(&ToolCall) -> String) -> Option<Value> {
    let text = |role: &str, content: &str| json!({"role": role, "parts": [{"type": "text", "content": content}]});
    Some(match message {
        Message::System { content } => text("system", content),
        Message::User { content } => text("user", content),
        Message::Assistant(turn) => assistant(turn, arguments),
        Message::Tool(result) => json!({
            "role": "tool",
            "parts": [{
                "type": "tool_call_response",
                "id": &*result.call_id,
                "response": result.content,
            }],
        }),
        _ => return None,
    })
}

/// A model's turn in the conventions' shape: its text and its calls (their arguments as
/// `arguments` gives them).
fn assistant(turn: &AssistantMessage, arguments: &dyn Fn(&ToolCall) -> String) -> Value {
    let mut parts = Vec::new();
    if !turn.content.is_empty() {
        parts.push(json!({"type": "text", "content": turn.content}));
    }
    for call in &turn.tool_calls {
        let text = arguments(call);
        let arguments =
            serde_json::from_str::<Value>(&text).unwrap_or_else(|_| Value::String(text.clone()));
        parts.push(json!({
            "type": "tool_call",
            "id": &*call.id,
            "name": call.name,
            "arguments": arguments,
        }));
    }
    json!({"role": "assistant", "parts": parts})
}

/// A count as OpenTelemetry's integers are: signed.
fn signed(count: u64) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

/// The conventions' name of a finish reason.
fn finish_reason(reason: &FinishReason) -> &str {
    match reason {
        FinishReason::Stop => "stop",
        FinishReason::ToolCalls => "tool_calls",
        FinishReason::Length => "length",
        FinishReason::ContentFilter => "content_filter",
        FinishReason::Other(other) => other,
    }
}

/// `error.type` of a failed request.
fn error_type(error: &ModelError) -> &'static str {
    match error {
        ModelError::Http { .. } => "http",
        ModelError::RateLimited { .. } => "rate_limited",
        ModelError::OutputRejected { .. } => "output_rejected",
        ModelError::Malformed(_) => "malformed",
        ModelError::Transport(_) => "transport",
        _ => "model",
    }
}
