//! Retries with exponential backoff and jitter, for failures a [`RetryPolicy`] allows.
//!
//! Requires a `Clone` inner service: each retry calls a fresh clone with a clone of the
//! invocation (cheap: reference counts and the argument text).

mod backoff;
mod future;
mod layer;
mod policy;

pub(crate) use future::RetryFuture;
pub(crate) use layer::RetryLayer;
pub use policy::RetryPolicy;

use std::task::{Context, Poll};

use super::ToolInvocation;
use crate::error::ToolError;
use crate::tool::ToolOutput;

/// Retries each invocation according to its [`ExecSettings`](super::ExecSettings).
#[derive(Clone, Debug)]
pub(crate) struct Retry<S> {
    inner: S,
}

impl<S> Retry<S> {
    /// Wrap `inner`.
    pub fn new(inner: S) -> Self {
        Retry { inner }
    }
}

impl<S> tower::Service<ToolInvocation> for Retry<S>
where
    S: tower::Service<ToolInvocation, Response = ToolOutput, Error = ToolError> + Clone,
{
    type Response = ToolOutput;
    type Error = ToolError;
    type Future = RetryFuture<S>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), ToolError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, inv: ToolInvocation) -> Self::Future {
        // `inner` was made ready by `poll_ready`; keep it for this call and leave a clone.
        let clone = self.inner.clone();
        let mut ready = std::mem::replace(&mut self.inner, clone);
        let first = if inv.settings().retry.max_retries == 0 {
            // The common case: no copy of the invocation kept for later.
            return RetryFuture::once(ready.call(inv));
        } else {
            ready.call(inv.clone())
        };
        RetryFuture::new(ready, inv, first)
    }
}
