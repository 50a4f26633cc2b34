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
use super::middleware::{Middleware, Outcome, StackService};
use crate::error::{ToolError, ToolErrorKind};

/// Catches panics in the inner service's `call` and in every poll of its future.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PanicGuard;

impl<S: StackService> Middleware<S> for PanicGuard {
    type Future = PanicGuardFuture<S::Future>;

    #[inline]
    fn call(&self, inner: &mut S, inv: ToolInvocation) -> Self::Future {
        let tool = inv.info().tool_name.clone();
        // The tool's synchronous part (argument extraction, the start of a plain fn) runs here.
        match catch_unwind(AssertUnwindSafe(|| inner.call(inv))) {
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

impl<F: Future<Output = Outcome>> Future for PanicGuardFuture<F> {
    type Output = Outcome;

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
