//! The approval hook point: a tool marked `requires_approval` runs only after an
//! [`ApprovalHook`] approved it, with arguments that were validated first.
//!
//! The hook is looked up per call: an `Arc<dyn ApprovalHook>` in the call's (or agent's)
//! context wins over the toolkit's ([`ToolkitBuilder::approval_hook`](crate::ToolkitBuilder::approval_hook)).
//! With no hook at all the call is **denied** (fail closed): a tool someone marked as needing
//! approval never runs unapproved because a hook was forgotten.

mod error;
mod future;
mod layer;

pub use future::ApprovalFuture;
pub use layer::ApprovalLayer;

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;

use super::ToolInvocation;
use crate::context::ToolContext;
use crate::error::ToolError;
use crate::tool::ToolOutput;

/// What an [`ApprovalHook`] is asked to decide.
#[derive(Clone, Debug)]
pub struct ApprovalRequest {
    /// The call's id; a decision applies to this call only.
    pub call_id: Arc<str>,
    /// The tool's registered name.
    pub tool: Arc<str>,
    /// The arguments as JSON text, already validated against the tool's parameters.
    pub arguments: String,
    /// The call's context.
    pub context: ToolContext,
}

/// The answer to an [`ApprovalRequest`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApprovalDecision {
    /// Run the call as it is.
    Approve,
    /// Do not run it; the reason is shown to the model.
    Deny(String),
    /// Run it with these arguments (JSON text) instead; they are validated again.
    Edit(String),
}

/// Decides whether a call of a `requires_approval` tool may run. Async closures work:
/// `|req: ApprovalRequest| async move { ApprovalDecision::Approve }`.
pub trait ApprovalHook: Send + Sync + 'static {
    /// Decide about one call.
    fn review(&self, request: ApprovalRequest) -> BoxFuture<'static, ApprovalDecision>;
}

impl<F, Fut> ApprovalHook for F
where
    F: Fn(ApprovalRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ApprovalDecision> + Send + 'static,
{
    fn review(&self, request: ApprovalRequest) -> BoxFuture<'static, ApprovalDecision> {
        Box::pin(self(request))
    }
}

/// Asks the hook before running tools that require approval; passes everything else through.
#[derive(Clone)]
pub struct Approval<S> {
    inner: S,
    hook: Option<Arc<dyn ApprovalHook>>,
}

impl<S> Approval<S> {
    /// Wrap `inner`, with the toolkit's hook if there is one.
    pub fn new(inner: S, hook: Option<Arc<dyn ApprovalHook>>) -> Self {
        Approval { inner, hook }
    }
}

impl<S: std::fmt::Debug> std::fmt::Debug for Approval<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Approval")
            .field("inner", &self.inner)
            .field("hook", &self.hook.is_some())
            .finish()
    }
}

impl<S> tower::Service<ToolInvocation> for Approval<S>
where
    S: tower::Service<ToolInvocation, Response = ToolOutput, Error = ToolError> + Clone,
{
    type Response = ToolOutput;
    type Error = ToolError;
    type Future = ApprovalFuture<S>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), ToolError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut inv: ToolInvocation) -> Self::Future {
        if !inv.settings.requires_approval {
            return ApprovalFuture::pass(self.inner.call(inv));
        }
        // Validate first: nobody should be asked to approve arguments that cannot run.
        let (arguments, context) = match &mut inv.args {
            Err(_) => return ApprovalFuture::pass(self.inner.call(inv)),
            Ok(args) => match args.validate() {
                Ok(()) => (args.raw().to_string(), args.context().clone()),
                Err(e) => return ApprovalFuture::fail(e),
            },
        };
        let hook = context
            .get::<Arc<dyn ApprovalHook>>()
            .map(|h| Arc::clone(&*h))
            .or_else(|| self.hook.clone());
        let Some(hook) = hook else {
            return ApprovalFuture::fail(error::no_hook(inv.tool_name()));
        };
        let request = ApprovalRequest {
            call_id: inv.info.call_id.clone(),
            tool: inv.info.tool_name.clone(),
            arguments,
            context,
        };
        let review = hook.review(request);
        let clone = self.inner.clone();
        let service = std::mem::replace(&mut self.inner, clone);
        ApprovalFuture::review(review, service, inv)
    }
}
