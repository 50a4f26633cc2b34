use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::{Context, Poll, ready};

use pin_project_lite::pin_project;

use crate::error::ToolError;
use crate::tool::ToolOutput;

pin_project! {
    /// Response future of [`Trace`](super::Trace): polls the inner future inside the span and
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

impl<F> Future for TraceFuture<F>
where
    F: Future<Output = Result<ToolOutput, ToolError>>,
{
    type Output = Result<ToolOutput, ToolError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let _entered = this.span.enter();
        let result = ready!(this.inner.poll(cx));
        this.span.record(
            "gen_ai.tool.attempts",
            this.attempts.load(Ordering::Relaxed),
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
