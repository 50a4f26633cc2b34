//! The execution engine: every call runs through a stack of real tower [`Service`](tower::Service)s.
//!
//! Outermost first:
//!
//! 1. [`trace`] — one `execute_tool` span per call (OpenTelemetry GenAI names);
//! 2. the user's own layers ([`ToolkitBuilder::layer`](crate::ToolkitBuilder::layer));
//! 3. [`approval`] — tools marked `requires_approval` wait for an [`ApprovalHook`];
//! 4. [`deadline`] — the total deadline over all attempts, and cancellation;
//! 5. [`retry`] — retries of retryable failures, with backoff;
//! 6. [`timeout`] — the deadline of one attempt;
//! 7. [`guard`] — a panic in the tool becomes a `Panicked` error;
//! 8. [`ToolService`] — runs the tool (blocking tools on the blocking pool) and bounds its
//!    output.
//!
//! Each middleware has tower's own shape (`mod.rs` the service, `layer.rs` the layer,
//! `future.rs` its response future, `error.rs` the errors it produces). The request is a
//! [`ToolInvocation`], which carries the per-tool settings, so one stack serves every tool. The
//! error type stays [`ToolError`] from end to end: no `BoxError` reaches the caller.

pub mod approval;
pub mod batch;
pub mod deadline;
pub mod guard;
pub mod retry;
pub mod timeout;
pub mod trace;

mod output;
mod service;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

pub use approval::{ApprovalDecision, ApprovalHook, ApprovalRequest};
pub use output::truncate_output;
pub use retry::RetryPolicy;
pub use service::ToolService;

use crate::args::ToolArgs;
use crate::context::{CallInfo, ToolContext};
use crate::error::ToolError;
use crate::tool::{AgentTool, ToolOutput};

/// The request every layer of the stack sees: one call of one tool, with its settings.
///
/// Cloning is cheap (reference counts and the argument text); the retry layer clones it per
/// attempt.
#[derive(Clone)]
pub struct ToolInvocation {
    /// The tool to run.
    pub tool: Arc<dyn AgentTool>,
    /// The resolved arguments, or why they could not be resolved (the tool service then fails
    /// the call with that error, inside the stack, so it is traced like any other result).
    pub args: Result<ToolArgs, ToolError>,
    /// Which call this is.
    pub info: CallInfo,
    /// Settings of this tool in this toolkit.
    pub settings: Arc<ExecSettings>,
    /// Attempts started so far; the retry layer counts, the result reports.
    pub attempts: Arc<AtomicU32>,
}

impl ToolInvocation {
    /// Attempts started so far.
    pub fn attempts(&self) -> u32 {
        self.attempts.load(Ordering::Relaxed)
    }

    /// The tool's registered name.
    pub fn tool_name(&self) -> &str {
        &self.info.tool_name
    }

    /// Whether approval, deadline, retry and timeout layers would all pass this call through.
    fn passes_through_middle_layers(&self) -> bool {
        let s = &*self.settings;
        !s.requires_approval
            && s.attempt_timeout.is_none()
            && s.total_timeout.is_none()
            && s.retry.max_retries == 0
            && self
                .context()
                .is_none_or(|c| c.cancellation_token().is_none())
    }

    /// The call's context (cancellation, progress, values); `None` when the arguments could not
    /// be resolved, in which case the call fails without running.
    pub fn context(&self) -> Option<&ToolContext> {
        self.args.as_ref().ok().map(ToolArgs::context)
    }
}

impl std::fmt::Debug for ToolInvocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolInvocation")
            .field("info", &self.info)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// The execution settings of one registered tool: the toolkit's defaults, overridden by the
/// tool's own options.
#[derive(Clone, Debug, PartialEq)]
pub struct ExecSettings {
    /// Deadline of one attempt.
    pub attempt_timeout: Option<Duration>,
    /// Deadline of the whole call, retries and backoff included.
    pub total_timeout: Option<Duration>,
    /// Retries.
    pub retry: RetryPolicy,
    /// A timed-out attempt may be retried (the tool is `read_only` or `idempotent`).
    pub retry_timeouts: bool,
    /// Runs on the blocking pool (a plain `fn` tool).
    pub blocking: bool,
    /// Must be approved before it runs.
    pub requires_approval: bool,
    /// Runs in the background queue; the call answers at once with a pending result.
    pub background: bool,
    /// Largest output passed on to the model; longer output is cut with a marker.
    pub max_output_bytes: usize,
}

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

/// The stack's service type once boxed: what user layers wrap and what the toolkit calls.
pub type BoxToolService = tower::util::BoxCloneSyncService<ToolInvocation, ToolOutput, ToolError>;

/// Applies one user layer to the boxed stack.
pub(crate) type LayerFn = Arc<dyn Fn(BoxToolService) -> BoxToolService + Send + Sync>;

/// The built-in layers around the tool, innermost last: a concrete type, so calling it needs
/// no allocation.
pub type CoreStack = approval::Approval<
    deadline::Deadline<retry::Retry<timeout::Timeout<guard::PanicGuard<ToolService>>>>,
>;

/// The layers a call needs when approval, deadlines, cancellation and retries have nothing to
/// do for it: the span and the panic guard around the tool.
pub type LeanStack = trace::Trace<guard::PanicGuard<ToolService>>;

/// The whole stack. Without user layers it stays concrete (cheap to clone, no boxed future);
/// user layers are typed by the user, so with them the stack is boxed once below them.
///
/// A call for which the approval, deadline, retry and timeout layers would only pass through —
/// no approval required, no time limit, no retries, no cancellation token — takes the lean
/// stack, skipping those layers: same result, none of their cost. User layers always see every
/// call, so with them every call takes the full stack.
#[derive(Clone)]
pub(crate) enum Stack {
    Core {
        full: trace::Trace<CoreStack>,
        lean: LeanStack,
    },
    Layered(trace::Trace<BoxToolService>),
}

impl Stack {
    /// Run one invocation through the stack.
    pub(crate) async fn run(&self, inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
        use tower::ServiceExt;
        match self {
            Stack::Core { lean, .. } if inv.passes_through_middle_layers() => {
                lean.clone().oneshot(inv).await
            }
            Stack::Core { full, .. } => full.clone().oneshot(inv).await,
            Stack::Layered(service) => service.clone().oneshot(inv).await,
        }
    }
}

/// Assemble the stack in the documented order.
pub(crate) fn build_stack(hook: Option<Arc<dyn ApprovalHook>>, user_layers: &[LayerFn]) -> Stack {
    use tower::ServiceBuilder;
    let core: CoreStack = ServiceBuilder::new()
        .layer(approval::ApprovalLayer::new(hook))
        .layer(deadline::DeadlineLayer)
        .layer(retry::RetryLayer)
        .layer(timeout::TimeoutLayer)
        .layer(guard::PanicGuardLayer)
        .service(ToolService);
    if user_layers.is_empty() {
        let lean = trace::Trace::new(guard::PanicGuard::new(ToolService));
        return Stack::Core {
            full: trace::Trace::new(core),
            lean,
        };
    }
    let mut stack = BoxToolService::new(core);
    // The first layer added is the outermost of the user's layers.
    for layer in user_layers.iter().rev() {
        stack = layer(stack);
    }
    Stack::Layered(trace::Trace::new(stack))
}
