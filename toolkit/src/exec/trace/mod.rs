//! One `execute_tool` span per call, named and tagged after the OpenTelemetry GenAI semantic
//! conventions: `gen_ai.operation.name = "execute_tool"`, `gen_ai.tool.name`,
//! `gen_ai.tool.call.id`; on failure `error.type` holds the [`ToolErrorKind`](crate::error::ToolErrorKind)
//! name, and `gen_ai.tool.attempts` the attempts made. Retries and approval decisions are
//! events inside the span.

mod future;
mod layer;

pub(crate) use future::TraceFuture;
pub(crate) use layer::TraceLayer;

use std::task::{Context, Poll};

use super::ToolInvocation;
use crate::error::ToolError;
use crate::tool::ToolOutput;

/// The span of one call. Also used for calls that never reach a tool (unknown name), so every
/// call is traced the same way.
pub(crate) fn span(tool: &str, call_id: &str) -> tracing::Span {
    tracing::info_span!(
        "execute_tool",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = tool,
        gen_ai.tool.call.id = call_id,
        gen_ai.tool.attempts = tracing::field::Empty,
        error.type = tracing::field::Empty,
    )
}

/// Runs each invocation inside its `execute_tool` span.
#[derive(Clone, Debug)]
pub(crate) struct Trace<S> {
    inner: S,
}

impl<S> Trace<S> {
    /// Wrap `inner`.
    pub fn new(inner: S) -> Self {
        Trace { inner }
    }
}

impl<S> tower::Service<ToolInvocation> for Trace<S>
where
    S: tower::Service<ToolInvocation, Response = ToolOutput, Error = ToolError>,
{
    type Response = ToolOutput;
    type Error = ToolError;
    type Future = TraceFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), ToolError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, inv: ToolInvocation) -> Self::Future {
        let span = span(&inv.info().tool_name, &inv.info().call_id);
        let attempts = inv.attempt_counter();
        let future = span.in_scope(|| self.inner.call(inv));
        TraceFuture::new(future, span, attempts)
    }
}
