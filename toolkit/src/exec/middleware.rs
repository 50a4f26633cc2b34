//! [`Around`]: a built-in middleware of the stack around the service below it, as a tower
//! service. Each middleware says only what it does with a call ([`Middleware`]); readiness and
//! the request, response and error types are the same for all of them, written here once.

use std::future::Future;
use std::task::{Context, Poll};

use super::ToolInvocation;
use crate::error::ToolError;
use crate::tool::ToolOutput;

/// What a call through the stack ends with: the tool's output, or the error the model sees.
pub(crate) type Outcome = Result<ToolOutput, ToolError>;

/// A service of the stack: an invocation in, an [`Outcome`] out.
pub(crate) trait StackService:
    tower::Service<ToolInvocation, Response = ToolOutput, Error = ToolError>
{
}

impl<S> StackService for S where
    S: tower::Service<ToolInvocation, Response = ToolOutput, Error = ToolError>
{
}

/// What one built-in middleware does with a call, given the service below it.
pub(crate) trait Middleware<S> {
    /// The call's future.
    type Future: Future<Output = Outcome>;

    /// Start the call `inv`; `inner` is ready (tower's `poll_ready` came first).
    fn call(&self, inner: &mut S, inv: ToolInvocation) -> Self::Future;
}

/// The middleware `M` around the service `S`: a tower service, ready when `S` is.
#[derive(Clone, Debug)]
pub(crate) struct Around<M, S> {
    middleware: M,
    inner: S,
}

impl<M, S> Around<M, S> {
    /// `middleware` around `inner`.
    pub(crate) fn new(middleware: M, inner: S) -> Self {
        Around { middleware, inner }
    }
}

impl<M: Middleware<S>, S: StackService> tower::Service<ToolInvocation> for Around<M, S> {
    type Response = ToolOutput;
    type Error = ToolError;
    type Future = M::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), ToolError>> {
        self.inner.poll_ready(cx)
    }

    #[inline]
    fn call(&mut self, inv: ToolInvocation) -> M::Future {
        self.middleware.call(&mut self.inner, inv)
    }
}
