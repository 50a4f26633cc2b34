//! The approval hook point: a tool marked `requires_approval` runs only after an
//! [`ApprovalHook`] approved it, with arguments that were validated first.
//!
//! The hook belongs to the toolkit handle a call is made through: the toolkit's own
//! ([`ToolkitBuilder::approval_hook`](crate::toolkit::ToolkitBuilder::approval_hook)), or one
//! given to a handle ([`Toolkit::with_approval_hook`](crate::Toolkit::with_approval_hook)),
//! which is how an agent brings its approver. With no hook at all the call is **denied** (fail closed): a tool someone marked as needing
//! approval never runs unapproved because a hook was forgotten.

mod error;
mod future;
mod layer;

pub(crate) use error::denied;
pub(crate) use future::ApprovalFuture;
pub(crate) use layer::ApprovalLayer;

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};

use super::ToolInvocation;
use crate::context::ToolContext;
use crate::error::ToolError;
use crate::tool::ToolOutput;

/// What an [`ApprovalHook`] is asked to decide.
#[derive(Clone, Debug)]
#[non_exhaustive]
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
///
/// Serializable (`"approve"`, `{"deny": "reason"}`, `{"edit": "{...}"}`), so a decision can be
/// stored with a [`PausedRun`](crate::agent::PausedRun) and applied by another process.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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

/// Asks the invocation's approver before running tools that require approval; passes
/// everything else through.
#[derive(Clone, Debug)]
pub(crate) struct Approval<S> {
    inner: S,
}

impl<S> Approval<S> {
    /// Wrap `inner`.
    pub(crate) fn new(inner: S) -> Self {
        Approval { inner }
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
        if !inv.options().requires_approval {
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
        let Some(hook) = inv.approver().cloned() else {
            return ApprovalFuture::fail(error::no_hook(inv.tool_name()));
        };
        let request = ApprovalRequest {
            call_id: inv.info().call_id.clone(),
            tool: inv.info().tool_name.clone(),
            arguments,
            context,
        };
        let review = hook.review(request);
        let clone = self.inner.clone();
        let service = std::mem::replace(&mut self.inner, clone);
        ApprovalFuture::review(review, service, inv)
    }
}
