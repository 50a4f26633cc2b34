//! One `execute_tool` span per call, named and tagged after the OpenTelemetry GenAI semantic
//! conventions: exported as `execute_tool <tool>` (`otel.name`), with
//! `gen_ai.operation.name = "execute_tool"`, `gen_ai.tool.type = "function"`, `gen_ai.tool.name`,
//! `gen_ai.tool.call.id`; on failure `error.type` holds the [`ToolErrorKind`](crate::error::ToolErrorKind)
//! name, and `gen_ai.tool.attempts` the attempts made. Retries and approval decisions are
//! events inside the span. With content on ([`ToolkitBuilder::trace_content`](crate::toolkit::ToolkitBuilder::trace_content)),
//! `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result` too.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::{Context, Poll, ready};

use pin_project_lite::pin_project;

use super::ToolInvocation;
use super::middleware::{Middleware, Outcome, StackService};

/// The span of one call. Also used for calls that never reach a tool (unknown name), so every
/// call is traced the same way.
pub(crate) fn span(tool: &str, call_id: &str) -> tracing::Span {
    tracing::info_span!(
        "execute_tool",
        otel.name = format!("execute_tool {tool}"),
        otel.kind = "internal",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.type = "function",
        gen_ai.tool.name = tool,
        gen_ai.tool.call.id = call_id,
        gen_ai.tool.attempts = tracing::field::Empty,
        gen_ai.tool.call.arguments = tracing::field::Empty,
        gen_ai.tool.call.result = tracing::field::Empty,
        error.type = tracing::field::Empty,
    )
}

/// Whether the environment turns content recording on by default: the variable the
/// OpenTelemetry GenAI instrumentations read, `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`,
/// set to `true` (any case) or `1`.
pub(crate) fn content_from_env() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| {
        std::env::var("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
            .is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
    })
}

/// Content on: the call's arguments on its span. Out of line, so that the path without content
/// stays as it was.
#[cold]
#[inline(never)]
fn record_arguments(span: &tracing::Span, inv: &ToolInvocation) {
    if !span.is_disabled()
        && let Ok(args) = &inv.args
    {
        span.record("gen_ai.tool.call.arguments", args.recorded_text().as_ref());
    }
}

/// Content on: the call's result on its span.
#[cold]
#[inline(never)]
fn record_result(span: &tracing::Span, output: &crate::tool::ToolOutput) {
    if !span.is_disabled() {
        span.record("gen_ai.tool.call.result", output.as_text());
    }
}

/// Runs each invocation inside its `execute_tool` span.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Trace {
    /// Record the call's arguments and result.
    pub(crate) content: bool,
}

impl<S: StackService> Middleware<S> for Trace {
    type Future = TraceFuture<S::Future>;

    #[inline]
    fn call(&self, inner: &mut S, inv: ToolInvocation) -> Self::Future {
        let span = span(&inv.info().tool_name, &inv.info().call_id);
        if self.content {
            record_arguments(&span, &inv);
        }
        let attempts = inv.attempt_counter();
        let future = span.in_scope(|| inner.call(inv));
        TraceFuture::new(future, span, attempts, self.content)
    }
}

pin_project! {
    /// Response future of [`Trace`](Trace): polls the inner future inside the span and
    /// records the outcome on it.
    pub struct TraceFuture<F> {
        #[pin]
        inner: F,
        span: tracing::Span,
        attempts: Arc<AtomicU32>,
        content: bool,
    }
}

impl<F> TraceFuture<F> {
    pub(super) fn new(
        inner: F,
        span: tracing::Span,
        attempts: Arc<AtomicU32>,
        content: bool,
    ) -> Self {
        TraceFuture {
            inner,
            span,
            attempts,
            content,
        }
    }
}

impl<F: Future<Output = Outcome>> Future for TraceFuture<F> {
    type Output = Outcome;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let _entered = this.span.enter();
        let result = ready!(this.inner.poll(cx));
        // Signed: exporters write unsigned integers as strings.
        this.span.record(
            "gen_ai.tool.attempts",
            i64::from(this.attempts.load(Ordering::Relaxed)),
        );
        match &result {
            Ok(output) => {
                if *this.content {
                    record_result(this.span, output);
                }
                tracing::debug!("tool call succeeded")
            }
            Err(e) => {
                this.span.record("error.type", e.kind().as_str());
                tracing::info!(error.type = e.kind().as_str(), error.message = e.message(), "tool call failed");
            }
        }
        Poll::Ready(result)
    }
}
