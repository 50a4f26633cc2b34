use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;

use crate::error::ToolError;
use crate::tool::ToolOutput;

pin_project! {
    /// Response future of [`PanicGuard`](super::PanicGuard).
    pub struct PanicGuardFuture<F> {
        #[pin]
        inner: Option<F>,
        // Boxed: only a call refused before it started carries one.
        failed: Option<Box<ToolError>>,
        tool: Arc<str>,
    }
}

impl<F> PanicGuardFuture<F> {
    pub(super) fn running(inner: F, tool: Arc<str>) -> Self {
        PanicGuardFuture {
            inner: Some(inner),
            failed: None,
            tool,
        }
    }

    pub(super) fn failed(error: ToolError) -> Self {
        PanicGuardFuture {
            inner: None,
            failed: Some(Box::new(error)),
            tool: Arc::from(""),
        }
    }
}

impl<F> Future for PanicGuardFuture<F>
where
    F: Future<Output = Result<ToolOutput, ToolError>>,
{
    type Output = Result<ToolOutput, ToolError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let Some(inner) = this.inner.as_mut().as_pin_mut() else {
            return Poll::Ready(Err(this.failed.take().map(|e| *e).unwrap_or_else(|| {
                ToolError::execution("internal error: guard future polled after completion")
            })));
        };
        match catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(poll) => poll,
            Err(payload) => {
                // The panicked future must not be polled again.
                this.inner.set(None);
                this.failed.take().map(|e| *e);
                Poll::Ready(Err(super::error::panicked(this.tool, payload)))
            }
        }
    }
}
