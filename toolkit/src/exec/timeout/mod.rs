//! Per-attempt deadline: an attempt that runs longer than
//! [`ExecSettings::attempt_timeout`](super::ExecSettings) is dropped (its future cancelled)
//! and fails with a [`Timeout`](crate::ToolErrorKind::Timeout) error naming the tool and the
//! limit. Whether it is retried is the retry layer's decision.

pub(crate) mod error;
mod future;
mod layer;

pub use future::TimeoutFuture;
pub use layer::TimeoutLayer;

use std::task::{Context, Poll};

use super::ToolInvocation;
use crate::error::ToolError;
use crate::tool::ToolOutput;

/// Applies the per-attempt deadline of each invocation.
#[derive(Clone, Debug)]
pub struct Timeout<S> {
    inner: S,
}

impl<S> Timeout<S> {
    /// Wrap `inner`.
    pub fn new(inner: S) -> Self {
        Timeout { inner }
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
        let limit = inv.settings.attempt_timeout;
        let tool = inv.info.tool_name.clone();
        if let Some(error) = limit.and_then(|_| super::no_timer(&tool)) {
            return TimeoutFuture::failed(error, tool);
        }
        TimeoutFuture::new(Some(self.inner.call(inv)), limit, tool)
    }
}
