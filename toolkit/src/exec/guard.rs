//! Panic guard: a panic inside a tool becomes a [`Panicked`](crate::error::ToolErrorKind::Panicked)
//! error for that one call; the batch and the process carry on.

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;

use super::ToolInvocation;
use crate::error::{ToolError, ToolErrorKind};
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

    #[inline]
    fn call(&mut self, inv: ToolInvocation) -> Self::Future {
        let tool = inv.info().tool_name.clone();
        // The tool's synchronous part (argument extraction, the start of a plain fn) runs here.
        match catch_unwind(AssertUnwindSafe(|| self.inner.call(inv))) {
            Ok(future) => PanicGuardFuture::running(future, tool),
            Err(payload) => PanicGuardFuture::failed(panicked(&tool, payload)),
        }
    }
}

/// The text of a panic payload, for the operator.
pub(crate) fn panic_message(payload: Box<dyn Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with a non-string payload".into())
}

/// The error for a panicked tool: a short message for the model, the panic text for the
/// operator.
pub(crate) fn panicked(tool: &str, payload: Box<dyn Any + Send>) -> ToolError {
    ToolError::new(
        ToolErrorKind::Panicked,
        format!("tool `{tool}` failed unexpectedly"),
    )
    .with_detail(format!(
        "tool `{tool}` panicked: {}",
        panic_message(payload)
    ))
}

/// Wraps a service in a [`PanicGuard`].
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PanicGuardLayer;

impl<S> tower::Layer<S> for PanicGuardLayer {
    type Service = PanicGuard<S>;
    fn layer(&self, inner: S) -> PanicGuard<S> {
        PanicGuard::new(inner)
    }
}

pin_project! {
    /// Response future of [`PanicGuard`](PanicGuard).
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
                Poll::Ready(Err(panicked(this.tool, payload)))
            }
        }
    }
}
