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

pub(crate) mod error;
mod future;
mod layer;

pub(crate) use future::TimeoutFuture;
pub(crate) use layer::TimeoutLayer;

use std::task::{Context, Poll};

use super::{ExecSettings, ToolInvocation};
use crate::error::ToolError;
use crate::tool::ToolOutput;
use error::Limit;

/// Applies one of an invocation's time limits (and, for the whole call, its cancellation).
#[derive(Clone, Debug)]
pub(crate) struct Timeout<S> {
    inner: S,
    scope: Limit,
}

impl<S> Timeout<S> {
    /// Wrap `inner`, applying the limit of `scope`.
    pub(crate) fn new(inner: S, scope: Limit) -> Self {
        Timeout { inner, scope }
    }
}

impl<S> tower::Service<ToolInvocation> for Timeout<S>
where
    S: tower::Service<ToolInvocation, Response = ToolOutput, Error = ToolError>,
{
    type Response = ToolOutput;
    type Error = ToolError;
    type Future = TimeoutFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), ToolError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, inv: ToolInvocation) -> Self::Future {
        let settings: &ExecSettings = inv.settings();
        let (limit, cancel) = match self.scope {
            Limit::Attempt => (settings.attempt_timeout, None),
            Limit::Total => (
                settings.total_timeout,
                inv.context().and_then(|c| c.cancellation().cloned()),
            ),
        };
        let tool = inv.info().tool_name.clone();
        if cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
            return TimeoutFuture::failed(error::cancelled(&tool), tool);
        }
        if let Some(error) = limit.and_then(|_| super::no_timer(&tool)) {
            return TimeoutFuture::failed(error, tool);
        }
        TimeoutFuture::new(self.inner.call(inv), limit, self.scope, cancel, tool)
    }
}
