use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use pin_project_lite::pin_project;
use tokio::time::Sleep;

use super::error::{Limit, elapsed};
use crate::error::ToolError;
use crate::tool::ToolOutput;

pin_project! {
    /// Response future of [`Timeout`](super::Timeout). Without a limit it is the inner
    /// future plus a branch.
    pub struct TimeoutFuture<F> {
        #[pin]
        inner: Option<F>,
        // Boxed: most calls have no limit, and an unboxed `Sleep` would make every call's
        // future (moved several times per call) much larger.
        sleep: Option<Pin<Box<Sleep>>>,
        limit: Option<Duration>,
        // Boxed: only a call refused before it started carries one.
        failed: Option<Box<ToolError>>,
        tool: Arc<str>,
    }
}

impl<F> TimeoutFuture<F> {
    pub(super) fn new(inner: Option<F>, limit: Option<Duration>, tool: Arc<str>) -> Self {
        TimeoutFuture {
            inner,
            sleep: limit.map(|l| Box::pin(tokio::time::sleep(l))),
            limit,
            failed: None,
            tool,
        }
    }

    pub(super) fn failed(error: ToolError, tool: Arc<str>) -> Self {
        TimeoutFuture {
            inner: None,
            sleep: None,
            limit: None,
            failed: Some(Box::new(error)),
            tool,
        }
    }
}

impl<F> Future for TimeoutFuture<F>
where
    F: Future<Output = Result<ToolOutput, ToolError>>,
{
    type Output = Result<ToolOutput, ToolError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let Some(inner) = this.inner.as_pin_mut() else {
            return Poll::Ready(Err(this.failed.take().map(|e| *e).unwrap_or_else(|| {
                ToolError::execution("internal error: timeout polled after completion")
            })));
        };
        if let Poll::Ready(result) = inner.poll(cx) {
            return Poll::Ready(result);
        }
        let expired = this
            .sleep
            .as_mut()
            .is_some_and(|sleep| sleep.as_mut().poll(cx).is_ready());
        match *this.limit {
            Some(limit) if expired => Poll::Ready(Err(elapsed(this.tool, limit, Limit::Attempt))),
            _ => Poll::Pending,
        }
    }
}
