use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use pin_project_lite::pin_project;
use tokio::time::Sleep;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use super::error::{Limit, cancelled, elapsed};
use crate::error::ToolError;
use crate::tool::ToolOutput;

pin_project! {
    /// Response future of [`Timeout`](super::Timeout). Without a limit or a token it is the
    /// inner future plus a branch.
    pub(crate) struct TimeoutFuture<F> {
        #[pin]
        inner: Option<F>,
        // Boxed: most calls have no limit, and an unboxed `Sleep` would make every call's
        // future (moved several times per call) much larger. The same for the token's wait.
        sleep: Option<Pin<Box<Sleep>>>,
        cancel: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
        limit: Option<Duration>,
        scope: Limit,
        // Boxed: only a call refused before it started carries one.
        failed: Option<Box<ToolError>>,
        tool: Arc<str>,
    }
}

impl<F> TimeoutFuture<F> {
    pub(super) fn new(
        inner: F,
        limit: Option<Duration>,
        scope: Limit,
        cancel: Option<CancellationToken>,
        tool: Arc<str>,
    ) -> Self {
        TimeoutFuture {
            inner: Some(inner),
            sleep: limit.map(|l| Box::pin(tokio::time::sleep(l))),
            cancel: cancel.map(|c| Box::pin(c.cancelled_owned())),
            limit,
            scope,
            failed: None,
            tool,
        }
    }

    pub(super) fn failed(error: ToolError, tool: Arc<str>) -> Self {
        TimeoutFuture {
            inner: None,
            sleep: None,
            cancel: None,
            limit: None,
            scope: Limit::Total,
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
        let mut this = self.project();
        let Some(inner) = this.inner.as_mut().as_pin_mut() else {
            return Poll::Ready(Err(this
                .failed
                .take()
                .map(|e| *e)
                .unwrap_or_else(|| cancelled(this.tool))));
        };
        if let Some(cancel) = this.cancel.as_mut()
            && cancel.as_mut().poll(cx).is_ready()
        {
            this.inner.set(None);
            return Poll::Ready(Err(cancelled(this.tool)));
        }
        if let Poll::Ready(result) = inner.poll(cx) {
            return Poll::Ready(result);
        }
        let expired = this
            .sleep
            .as_mut()
            .is_some_and(|sleep| sleep.as_mut().poll(cx).is_ready());
        match *this.limit {
            Some(limit) if expired => {
                this.inner.set(None);
                Poll::Ready(Err(elapsed(this.tool, limit, *this.scope)))
            }
            _ => Poll::Pending,
        }
    }
}
