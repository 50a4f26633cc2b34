use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::future::BoxFuture;
use pin_project_lite::pin_project;

use super::ApprovalDecision;
use crate::error::ToolError;
use crate::exec::ToolInvocation;
use crate::tool::ToolOutput;

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
    /// Response future of [`Approval`](super::Approval).
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
    type Output = Result<ToolOutput, ToolError>;

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
                            error: Some(super::error::denied(inv.tool_name(), &reason)),
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
