//! The `chat` span of one model request, after the OpenTelemetry GenAI semantic conventions:
//! named `chat <model>` (`otel.name`), of kind client, with `gen_ai.operation.name = "chat"`,
//! `gen_ai.provider.name`, `gen_ai.request.model` and the request's `max_tokens` and
//! `temperature`; once answered, `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens` and
//! `gen_ai.response.finish_reasons`, or `error.type` when the request failed. No content: the
//! messages and the answer are not recorded.
//!
//! And the conventions' client metrics, as `tracing` events of target `agent_toolkit::metrics`
//! that `tracing-opentelemetry`'s `MetricsLayer` turns into histograms (fields prefixed
//! `histogram.`): `gen_ai.client.operation.duration` (seconds) and `gen_ai.client.token.usage`
//! (per `gen_ai.token.type`, `input` or `output`). They belong to no span.

use super::{ChatModel, ChatRequest, ChatResponse, FinishReason, ModelError};

/// The span of one request of `model`.
pub(crate) fn chat_span(model: &dyn ChatModel, request: &ChatRequest) -> tracing::Span {
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
        error.type = tracing::field::Empty,
    );
    if let Some(max) = request.options.max_tokens {
        span.record("gen_ai.request.max_tokens", i64::from(max));
    }
    if let Some(temperature) = request.options.temperature {
        span.record("gen_ai.request.temperature", f64::from(temperature));
    }
    span
}

/// Record what the request got on its span.
pub(crate) fn record_answer(span: &tracing::Span, answer: &Result<ChatResponse, ModelError>) {
    match answer {
        Ok(response) => {
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
