//! Panic guard: a panic inside a tool becomes a [`Panicked`](crate::error::ToolErrorKind::Panicked)
//! error for that one call; the batch and the process carry on.

mod error;
mod future;
mod layer;

pub(crate) use error::panic_message;
pub(crate) use future::PanicGuardFuture;
pub(crate) use layer::PanicGuardLayer;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::task::{Context, Poll};

use super::ToolInvocation;
use crate::error::ToolError;
use crate::tool::ToolOutput;

/// Catches panics in the inner service's `call` and in every poll of its future.
#[derive(Clone, Debug)]
pub(crate) struct PanicGuard<S> {
    inner: S,
}

impl<S> PanicGuard<S> {
    /// Guard `inner`.
    pub fn new(inner: S) -> Self {
        PanicGuard { inner }
    }
}

impl<S> tower::Service<ToolInvocation> for PanicGuard<S>
where
    S: tower::Service<ToolInvocation, Response = ToolOutput, Error = ToolError>,
{
    type Response = ToolOutput;
    type Error = ToolError;
    type Future = PanicGuardFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), ToolError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, inv: ToolInvocation) -> Self::Future {
        let tool = inv.info().tool_name.clone();
        // The tool's synchronous part (argument extraction, the start of a plain fn) runs here.
        match catch_unwind(AssertUnwindSafe(|| self.inner.call(inv))) {
            Ok(future) => PanicGuardFuture::running(future, tool),
            Err(payload) => PanicGuardFuture::failed(error::panicked(&tool, payload)),
        }
    }
}
