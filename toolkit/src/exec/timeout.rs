//! Time limits and cancellation, one mechanism used twice in the stack:
//!
//! - outside the retries, the limit of the whole call ([`ExecSettings::total_timeout`], retries
//!   and backoff included) together with the context's
//!   [`CancellationToken`](crate::CancellationToken): the call fails with
//!   [`Timeout`](crate::error::ToolErrorKind::Timeout) or
//!   [`Cancelled`](crate::error::ToolErrorKind::Cancelled);
//! - inside them, the limit of one attempt ([`ExecSettings::attempt_timeout`]); whether a
//!   timed-out attempt is retried is the retry layer's decision.
//!
//! Either way the tool's future is dropped at once, and the error names the tool and the limit.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use pin_project_lite::pin_project;
use tokio::time::Sleep;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use super::middleware::{Middleware, Outcome, StackService};
use super::{ExecSettings, ToolInvocation};
use crate::error::{ToolError, ToolErrorKind};

/// Applies one of an invocation's time limits (and, for the whole call, its cancellation).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Timeout(pub(crate) Limit);

impl<S: StackService> Middleware<S> for Timeout {
    type Future = TimeoutFuture<S::Future>;

    fn call(&self, inner: &mut S, inv: ToolInvocation) -> Self::Future {
        let settings: &ExecSettings = inv.settings();
        let (limit, cancel) = match self.0 {
            Limit::Attempt => (settings.attempt_timeout, None),
            Limit::Total => (
                settings.total_timeout,
                inv.context().and_then(|c| c.cancellation().cloned()),
            ),
        };
        let tool = inv.info().tool_name.clone();
        if cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
            return TimeoutFuture::failed(cancelled(&tool), tool);
        }
        if let Some(error) = limit.and_then(|_| super::no_timer(&tool)) {
            return TimeoutFuture::failed(error, tool);
        }
        TimeoutFuture::new(inner.call(inv), limit, self.0, cancel, tool)
    }
}

/// Which limit a [`Timeout`](Timeout) applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Limit {
    /// The deadline of one attempt.
    Attempt,
    /// The deadline of the whole call, retries included (and its cancellation).
    Total,
}

/// "tool `x` did not finish within 2s (the limit per attempt)".
pub(crate) fn elapsed(tool: &str, after: Duration, limit: Limit) -> ToolError {
    let which = match limit {
        Limit::Attempt => "the limit per attempt",
        Limit::Total => "the limit for the whole call, retries included",
    };
    ToolError::new(
        ToolErrorKind::Timeout,
        format!("tool `{tool}` did not finish within {after:?} ({which})"),
    )
}

/// The call was cancelled through its context's token (or its batch was dropped).
pub(crate) fn cancelled(tool: &str) -> ToolError {
    ToolError::new(
        ToolErrorKind::Cancelled,
        format!("tool `{tool}` was cancelled before it finished"),
    )
}

pin_project! {
    /// Response future of [`Timeout`](Timeout). Without a limit or a token it is the
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

impl<F: Future<Output = Outcome>> Future for TimeoutFuture<F> {
    type Output = Outcome;

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
