//! The approval hook point: a tool marked `requires_approval` runs only after an
//! [`ApprovalHook`] approved it, with arguments that were validated first.
//!
//! The hook belongs to the toolkit handle a call is made through: the toolkit's own
//! ([`ToolkitBuilder::approval_hook`](crate::toolkit::ToolkitBuilder::approval_hook)), or one
//! given to a handle ([`Toolkit::with_approval_hook`](crate::Toolkit::with_approval_hook)),
//! which is how an agent brings its approver. With no hook at all the call is **denied** (fail closed): a tool someone marked as needing
//! approval never runs unapproved because a hook was forgotten.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use futures::future::BoxFuture;
use pin_project_lite::pin_project;
use serde::{Deserialize, Serialize};

use super::ToolInvocation;
use super::middleware::{Middleware, Outcome, StackService};
use crate::context::ToolContext;
use crate::error::{ToolError, ToolErrorKind};
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
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Approval;

impl<S: StackService + Clone> Middleware<S> for Approval {
    type Future = ApprovalFuture<S>;

    fn call(&self, inner: &mut S, mut inv: ToolInvocation) -> Self::Future {
        if !inv.options().requires_approval {
            return ApprovalFuture::pass(inner.call(inv));
        }
        // Validate first: nobody should be asked to approve arguments that cannot run.
        let (arguments, context) = match &mut inv.args {
            Err(_) => return ApprovalFuture::pass(inner.call(inv)),
            Ok(args) => match args.validate() {
                Ok(()) => (args.raw().to_string(), args.context().clone()),
                Err(e) => return ApprovalFuture::fail(e),
            },
        };
        let Some(hook) = inv.approver().cloned() else {
            return ApprovalFuture::fail(no_hook(inv.tool_name()));
        };
        let request = ApprovalRequest {
            call_id: inv.info().call_id.clone(),
            tool: inv.info().tool_name.clone(),
            arguments,
            context,
        };
        let review = hook.review(request);
        let clone = inner.clone();
        let service = std::mem::replace(inner, clone);
        ApprovalFuture::review(review, service, inv)
    }
}

pub(super) fn no_hook(tool: &str) -> ToolError {
    ToolError::new(
        ToolErrorKind::Denied,
        format!("tool `{tool}` needs approval before it runs, and no one is available to approve it"),
    )
    .with_detail(
        "no ApprovalHook: set one for the toolkit (ToolkitBuilder::approval_hook), for a handle (Toolkit::with_approval_hook) or for an agent (ReActAgentBuilder::approver)",
    )
}

pub(crate) fn denied(tool: &str, reason: &str) -> ToolError {
    ToolError::new(
        ToolErrorKind::Denied,
        format!("the call of tool `{tool}` was not approved: {reason}"),
    )
}

pin_project! {
    #[project = StateProj]
    enum State<S: tower::Service<ToolInvocation>> {
        Calling { #[pin] future: S::Future },
        // Boxed: only calls that need approval carry a service and an invocation here.
        Reviewing {
            review: BoxFuture<'static, ApprovalDecision>,
            decision: Option<ApprovalDecision>,
            pending: Option<Box<(S, ToolInvocation)>>,
        },
        Failed { error: Option<ToolError> },
    }
}

pin_project! {
    /// Response future of [`Approval`](Approval).
    pub struct ApprovalFuture<S: tower::Service<ToolInvocation>> {
        #[pin]
        state: State<S>,
    }
}

impl<S: tower::Service<ToolInvocation>> ApprovalFuture<S> {
    pub(super) fn pass(future: S::Future) -> Self {
        ApprovalFuture {
            state: State::Calling { future },
        }
    }
    pub(super) fn fail(error: ToolError) -> Self {
        ApprovalFuture {
            state: State::Failed { error: Some(error) },
        }
    }
    pub(super) fn review(
        review: BoxFuture<'static, ApprovalDecision>,
        service: S,
        inv: ToolInvocation,
    ) -> Self {
        ApprovalFuture {
            state: State::Reviewing {
                review,
                decision: None,
                pending: Some(Box::new((service, inv))),
            },
        }
    }
}

impl<S> Future for ApprovalFuture<S>
where
    S: tower::Service<ToolInvocation, Response = ToolOutput, Error = ToolError>,
{
    type Output = Outcome;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        loop {
            match this.state.as_mut().project() {
                StateProj::Calling { future } => return future.poll(cx),
                StateProj::Failed { error } => {
                    return Poll::Ready(Err(error.take().unwrap_or_else(|| {
                        ToolError::execution("internal error: approval polled after completion")
                    })));
                }
                StateProj::Reviewing {
                    review,
                    decision,
                    pending,
                } => {
                    if decision.is_none() {
                        let decided = ready!(review.as_mut().poll(cx));
                        tracing::info!(decision = ?decided, "approval decided");
                        *decision = Some(decided);
                    }
                    let Some((service, _)) = pending.as_deref_mut() else {
                        return Poll::Ready(Err(lost()));
                    };
                    // Kept across a pending readiness: the decision is not asked for twice.
                    ready!(service.poll_ready(cx))?;
                    let (Some(decided), Some(boxed)) = (decision.take(), pending.take()) else {
                        return Poll::Ready(Err(lost()));
                    };
                    let (mut service, mut inv) = *boxed;
                    let next = match decided {
                        ApprovalDecision::Approve => State::Calling {
                            future: service.call(inv),
                        },
                        ApprovalDecision::Deny(reason) => State::Failed {
                            error: Some(denied(inv.tool_name(), &reason)),
                        },
                        ApprovalDecision::Edit(arguments) => {
                            let edited = match &mut inv.args {
                                Ok(args) => args.replace_arguments(arguments),
                                Err(e) => Err(e.clone()),
                            };
                            match edited {
                                Ok(()) => State::Calling {
                                    future: service.call(inv),
                                },
                                Err(e) => State::Failed { error: Some(e) },
                            }
                        }
                    };
                    this.state.set(next);
                }
            }
        }
    }
}

fn lost() -> ToolError {
    ToolError::execution("internal error: approval state lost")
}

/// Approves the calls decided before they ran (a run resumed, a program replayed to a call that
/// waited), by call id, and no other.
pub(crate) struct Decided(Arc<HashSet<Arc<str>>>);

impl Decided {
    /// Approve exactly `calls` (by call id).
    pub(crate) fn new(calls: HashSet<Arc<str>>) -> Self {
        Decided(Arc::new(calls))
    }
}

impl ApprovalHook for Decided {
    fn review(&self, request: ApprovalRequest) -> BoxFuture<'static, ApprovalDecision> {
        let decision = if self.0.contains(&request.call_id) {
            ApprovalDecision::Approve
        } else {
            ApprovalDecision::Deny("this call was not approved before it was resumed".into())
        };
        Box::pin(std::future::ready(decision))
    }
}
