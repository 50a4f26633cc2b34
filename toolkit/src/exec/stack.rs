//! The stack itself: the built-in layers in their documented order, with or without the
//! user's layers.

use std::sync::Arc;

use super::ToolInvocation;
use super::approval::Approval;
use super::guard::PanicGuard;
use super::middleware::{Around, Outcome};
use super::retry::Retry;
use super::service::ToolService;
use super::timeout::{Limit, Timeout};
use super::trace::Trace;
use crate::error::ToolError;
use crate::tool::ToolOutput;

/// The stack's service type once boxed: what user layers wrap
/// ([`ToolkitBuilder::layer`](crate::toolkit::ToolkitBuilder::layer)).
pub type BoxToolService = tower::util::BoxCloneSyncService<ToolInvocation, ToolOutput, ToolError>;

/// Applies one user layer to the boxed stack.
pub(crate) type LayerFn = Arc<dyn Fn(BoxToolService) -> BoxToolService + Send + Sync>;

/// The built-in layers around the tool, innermost last: a concrete type, so calling it needs
/// no allocation.
type CoreStack = Around<
    Approval,
    Around<Timeout, Around<Retry, Around<Timeout, Around<PanicGuard, ToolService>>>>,
>;

/// The layers a call needs when approval, time limits, cancellation and retries have nothing
/// to do for it: the span and the panic guard around the tool.
type LeanStack = Around<Trace, Around<PanicGuard, ToolService>>;

/// The whole stack. Without user layers it stays concrete (cheap to clone, no boxed future);
/// user layers are typed by the user, so with them the stack is boxed once below them.
///
/// A call for which the approval, time-limit and retry layers would only pass through — no
/// approval required, no time limit, no retries, no cancellation token — takes the lean
/// stack, skipping those layers: same result, none of their cost. User layers always see every
/// call, so with them every call takes the full stack.
#[derive(Clone)]
pub(crate) enum Stack {
    Core {
        full: Around<Trace, CoreStack>,
        lean: LeanStack,
    },
    Layered(Around<Trace, BoxToolService>),
}

impl Stack {
    /// Run one invocation through the stack.
    ///
    /// Not an `async fn`: the invocation goes straight into the first service's `call` instead
    /// of being kept (and moved) in a future of its own first. The built-in services are always
    /// ready (`poll_ready` is `Ready` all the way down), so they are called directly; user
    /// layers get tower's `poll_ready`-then-`call` through `oneshot`. The slower stacks' futures
    /// are boxed, so that the lean one's stays small.
    pub(crate) fn run(&self, inv: ToolInvocation) -> RunFuture {
        use tower::{Service, ServiceExt};
        match self {
            Stack::Core { lean, .. } if inv.passes_through_middle_layers() => RunFuture::Lean {
                future: lean.clone().call(inv),
            },
            Stack::Core { full, .. } => RunFuture::Boxed {
                future: Box::pin(full.clone().call(inv)),
            },
            Stack::Layered(service) => RunFuture::Boxed {
                future: Box::pin(service.clone().oneshot(inv)),
            },
        }
    }
}

pin_project_lite::pin_project! {
    /// The future of [`Stack::run`].
    #[project = RunProj]
    pub(crate) enum RunFuture {
        Lean {
            #[pin]
            future: <LeanStack as tower::Service<ToolInvocation>>::Future,
        },
        Boxed {
            future: std::pin::Pin<
                Box<dyn std::future::Future<Output = Result<ToolOutput, ToolError>> + Send>,
            >,
        },
    }
}

impl std::future::Future for RunFuture {
    type Output = Outcome;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        match self.project() {
            RunProj::Lean { future } => future.poll(cx),
            RunProj::Boxed { future } => future.as_mut().poll(cx),
        }
    }
}

/// Assemble the stack in the documented order.
pub(crate) fn build_stack(user_layers: &[LayerFn], content: bool) -> Stack {
    let core: CoreStack = tower::ServiceBuilder::new()
        .layer_fn(|s| Around::new(Approval, s))
        .layer_fn(|s| Around::new(Timeout(Limit::Total), s))
        .layer_fn(|s| Around::new(Retry, s))
        .layer_fn(|s| Around::new(Timeout(Limit::Attempt), s))
        .layer_fn(|s| Around::new(PanicGuard, s))
        .service(ToolService);
    if user_layers.is_empty() {
        return Stack::Core {
            full: Around::new(Trace { content }, core),
            lean: Around::new(Trace { content }, Around::new(PanicGuard, ToolService)),
        };
    }
    let mut stack = BoxToolService::new(core);
    // The first layer added is the outermost of the user's layers.
    for layer in user_layers.iter().rev() {
        stack = layer(stack);
    }
    Stack::Layered(Around::new(Trace { content }, stack))
}
