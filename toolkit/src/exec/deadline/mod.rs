//! The whole call's deadline and its cancellation: the call fails with
//! [`Timeout`](crate::ToolErrorKind::Timeout) when
//! [`ExecSettings::total_timeout`](super::ExecSettings) runs out (retries and backoff
//! included), and with [`Cancelled`](crate::ToolErrorKind::Cancelled) when the context's
//! [`CancellationToken`](crate::CancellationToken) is cancelled. Either way the tool's future
//! is dropped at once.

pub(crate) mod error;
mod future;
mod layer;

pub use future::DeadlineFuture;
pub use layer::DeadlineLayer;

use std::task::{Context, Poll};

use super::ToolInvocation;
use crate::context::ToolContext;
use crate::error::ToolError;
use crate::tool::ToolOutput;

/// Applies the total deadline and the cancellation token of each invocation.
#[derive(Clone, Debug)]
pub struct Deadline<S> {
    inner: S,
}

impl<S> Deadline<S> {
    /// Wrap `inner`.
    pub fn new(inner: S) -> Self {
        Deadline { inner }
    }
}

impl<S> tower::Service<ToolInvocation> for Deadline<S>
where
    S: tower::Service<ToolInvocation, Response = ToolOutput, Error = ToolError>,
{
    type Response = ToolOutput;
    type Error = ToolError;
    type Future = DeadlineFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), ToolError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, inv: ToolInvocation) -> Self::Future {
        let limit = inv.settings.total_timeout;
        let cancel = inv.context().and_then(ToolContext::cancellation_token);
        let tool = inv.info.tool_name.clone();
        if cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
            return DeadlineFuture::failed(error::cancelled(&tool), tool);
        }
        if let Some(error) = limit.and_then(|_| super::no_timer(&tool)) {
            return DeadlineFuture::failed(error, tool);
        }
        DeadlineFuture::new(self.inner.call(inv), limit, cancel, tool)
    }
}
