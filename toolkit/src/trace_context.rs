//! W3C trace context across hops: the current span's OpenTelemetry context as `traceparent`
//! and `tracestate` for a request leaving the process, and a request's context adopted as the
//! parent of the span that serves it — so client, server and tool share one trace. Only with
//! the `otel` feature and `tracing-opentelemetry` installed; otherwise nothing is sent and a
//! received context is ignored.

/// A trace context as it crosses the wire.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct TraceContext {
    /// `00-<trace id>-<parent span id>-<flags>`.
    pub(crate) traceparent: String,
    /// Vendor state, when there is any.
    pub(crate) tracestate: Option<String>,
}

/// The current span's context, if it is part of an OpenTelemetry trace.
#[cfg(feature = "otel")]
pub(crate) fn current() -> Option<TraceContext> {
    use opentelemetry::propagation::TextMapPropagator;
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    let context = tracing::Span::current().context();
    let mut carrier = std::collections::HashMap::new();
    opentelemetry_sdk::propagation::TraceContextPropagator::new()
        .inject_context(&context, &mut carrier);
    let traceparent = carrier.remove("traceparent")?;
    let tracestate = carrier.remove("tracestate").filter(|s| !s.is_empty());
    Some(TraceContext {
        traceparent,
        tracestate,
    })
}

/// Without the `otel` feature, no context is sent.
#[cfg(not(feature = "otel"))]
pub(crate) fn current() -> Option<TraceContext> {
    None
}

/// Make the received context (`traceparent`, `tracestate`) the parent of `span`; a missing or
/// malformed one leaves `span` where it is.
#[cfg(feature = "otel")]
pub(crate) fn adopt(span: &tracing::Span, traceparent: Option<&str>, tracestate: Option<&str>) {
    use opentelemetry::propagation::TextMapPropagator;
    use opentelemetry::trace::TraceContextExt;
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    let Some(traceparent) = traceparent else {
        return;
    };
    let mut carrier = std::collections::HashMap::new();
    carrier.insert("traceparent".to_string(), level_one(traceparent));
    if let Some(state) = tracestate {
        carrier.insert("tracestate".to_string(), state.to_string());
    }
    let context = opentelemetry_sdk::propagation::TraceContextPropagator::new().extract(&carrier);
    if context.span().span_context().is_valid() {
        let _ = span.set_parent(context);
    }
}

/// The span serving an A2A request (`execute` of an agent executor): its parent is the
/// caller's trace when the request's headers (`service_params`) carry one.
#[cfg(feature = "a2a")]
pub(crate) fn a2a_server_span(
    ctx: &a2a_server::ExecutorContext,
    operation: &'static str,
) -> tracing::Span {
    let header = |name: &str| {
        ctx.service_params
            .get(name)
            .and_then(|values| values.first())
            .map(String::as_str)
    };
    let span = tracing::info_span!(
        "a2a",
        otel.name = operation,
        otel.kind = "server",
        rpc.system = "a2a",
        a2a.task_id = %ctx.task_id,
    );
    adopt(&span, header("traceparent"), header("tracestate"));
    span
}

/// Link `span` to the span whose context is `traceparent` (work it follows on: a paused run's,
/// a submitted job's); a malformed one is ignored.
#[cfg(feature = "otel")]
pub(crate) fn link(span: &tracing::Span, traceparent: &str) {
    use opentelemetry::propagation::TextMapPropagator;
    use opentelemetry::trace::TraceContextExt;
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    let carrier =
        std::collections::HashMap::from([("traceparent".to_string(), traceparent.to_string())]);
    let context = opentelemetry_sdk::propagation::TraceContextPropagator::new().extract(&carrier);
    let linked = context.span().span_context().clone();
    if linked.is_valid() {
        span.add_link(linked);
    }
}

/// Without the `otel` feature, nothing is linked.
#[cfg(not(feature = "otel"))]
pub(crate) fn link(_span: &tracing::Span, _traceparent: &str) {}

/// `traceparent` with version-00 flags beyond `sampled` cleared. Trace Context Level 2 adds the
/// `random` flag (`-03`: sampled and random), which the official Python SDKs set; the
/// `opentelemetry` propagator this crate uses refuses a version-00 header with any flag but
/// `sampled`, so the trace would start over. Level 1 says to ignore flags one does not know,
/// and Level 2 accepts this one: the flags are read as Level 1 reads them.
#[cfg(feature = "otel")]
fn level_one(traceparent: &str) -> String {
    let parts: Vec<&str> = traceparent.trim().split('-').collect();
    if let [version @ "00", trace, parent, flags] = parts[..]
        && let Ok(flags) = u8::from_str_radix(flags, 16)
        && flags > 1
    {
        return format!("{version}-{trace}-{parent}-{:02x}", flags & 1);
    }
    traceparent.to_string()
}

/// Without the `otel` feature, a received context is ignored.
#[cfg(not(feature = "otel"))]
pub(crate) fn adopt(_span: &tracing::Span, _traceparent: Option<&str>, _tracestate: Option<&str>) {}

#[cfg(all(test, feature = "otel"))]
mod tests {
    use super::level_one;

    #[test]
    fn level_two_flags_are_read_as_level_one_reads_them() {
        let id = "00-4b04b7e3894baeea9c5ab042b9ca5d6b-086baa6de87f25b7";
        assert_eq!(level_one(&format!("{id}-03")), format!("{id}-01"));
        assert_eq!(level_one(&format!("{id}-02")), format!("{id}-00"));
        assert_eq!(level_one(&format!("{id}-01")), format!("{id}-01"));
        // Other versions and malformed headers are the propagator's to judge.
        let later = "01-4b04b7e3894baeea9c5ab042b9ca5d6b-086baa6de87f25b7-03";
        assert_eq!(level_one(later), later);
        assert_eq!(level_one("garbage"), "garbage");
    }
}
