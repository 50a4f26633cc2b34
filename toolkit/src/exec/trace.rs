//! One `execute_tool` span per call, named and tagged after the OpenTelemetry GenAI semantic
//! conventions: exported as `execute_tool <tool>` (`otel.name`), with
//! `gen_ai.operation.name = "execute_tool"`, `gen_ai.tool.type = "function"`, `gen_ai.tool.name`,
//! `gen_ai.tool.call.id`; on failure `error.type` holds the [`ToolErrorKind`](crate::error::ToolErrorKind)
//! name, and `gen_ai.tool.attempts` the attempts made. Retries and approval decisions are
//! events inside the span.

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
        error.type = tracing::field::Empty,
    )
}

/// Runs each invocation inside its `execute_tool` span.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Trace;

impl<S: StackService> Middleware<S> for Trace {
    type Future = TraceFuture<S::Future>;

    #[inline]
    fn call(&self, inner: &mut S, inv: ToolInvocation) -> Self::Future {
        let span = span(&inv.info().tool_name, &inv.info().call_id);
        let attempts = inv.attempt_counter();
        let future = span.in_scope(|| inner.call(inv));
        TraceFuture::new(future, span, attempts)
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
    }
}

impl<F> TraceFuture<F> {
    pub(super) fn new(inner: F, span: tracing::Span, attempts: Arc<AtomicU32>) -> Self {
        TraceFuture {
            inner,
            span,
            attempts,
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
            Ok(_) => tracing::debug!("tool call succeeded"),
            Err(e) => {
                this.span.record("error.type", e.kind().as_str());
                tracing::info!(error.type = e.kind().as_str(), error.message = e.message(), "tool call failed");
            }
        }
        Poll::Ready(result)
    }
}
