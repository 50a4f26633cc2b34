//! The execution engine: every call runs through a stack of real tower
//! [`Service`](tower::Service)s.
//!
//! Outermost first:
//!
//! 1. `trace` — one `execute_tool` span per call (OpenTelemetry GenAI names);
//! 2. the user's own layers ([`ToolkitBuilder::layer`](crate::toolkit::ToolkitBuilder::layer));
//! 3. `approval` — tools marked `requires_approval` wait for an [`ApprovalHook`];
//! 4. `timeout` (whole call) — the limit over all attempts, and cancellation;
//! 5. `retry` — retries of retryable failures, with backoff ([`RetryPolicy`]);
//! 6. `timeout` (attempt) — the limit of one attempt;
//! 7. `guard` — a panic in the tool becomes a `Panicked` error;
//! 8. `service` — runs the tool (synchronous tools on the blocking pool until they prove quick)
//!    and bounds its output.
//!
//! Each middleware is one file: what it does with a call (a `Middleware`), its response
//! future, the errors it produces. `middleware.rs` makes each a tower service around the one
//! below it (`Around`: readiness and the request, response and error types, written once);
//! they are private to the crate, which assembles them in this order. The request is a [`ToolInvocation`], which carries
//! the tool's options and settings, so one stack serves every tool. The error type stays
//! [`ToolError`] from end to end: no `BoxError` reaches the caller. A user layer sees every
//! call as a `Service<ToolInvocation, Response = ToolOutput, Error = ToolError>` (the stack
//! below it is a [`BoxToolService`]).

mod approval;
pub(crate) mod batch;
mod guard;
mod invocation;
mod middleware;
mod output;
mod pace;
mod retry;
mod service;
mod stack;
pub(crate) mod timeout;
pub(crate) mod trace;

pub use approval::{ApprovalDecision, ApprovalHook, ApprovalRequest};
pub(crate) use approval::{Decided, denied};
pub use invocation::{ExecSettings, ToolInvocation};
#[allow(unused_imports)]
pub(crate) use output::truncate_output;
pub use retry::RetryPolicy;
pub use stack::BoxToolService;

pub(crate) use pace::SyncPace;
pub(crate) use stack::{LayerFn, Stack, build_stack};

use crate::error::ToolError;

/// Timers need a tokio runtime; without one, a call that needs a deadline or a backoff fails
/// with this error instead of panicking.
pub(crate) fn no_timer(tool: &str) -> Option<ToolError> {
    if tokio::runtime::Handle::try_current().is_ok() {
        return None;
    }
    Some(
        ToolError::execution(format!("tool `{tool}` could not be run with its time limits"))
            .with_detail("deadlines, timeouts and retry backoff need a tokio runtime with timers; await the call inside one"),
    )
}
