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
        Reviewing { review: BoxFuture<'static, ApprovalDecision>, service: S, inv: Option<ToolInvocation> },
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
                service,
                inv: Some(inv),
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
                    service,
                    inv,
                } => {
                    let decision = ready!(review.as_mut().poll(cx));
                    ready!(service.poll_ready(cx))?;
                    let Some(mut inv) = inv.take() else {
                        return Poll::Ready(Err(ToolError::execution(
                            "internal error: approval state lost",
                        )));
                    };
                    tracing::info!(decision = ?decision, "approval decided");
                    let next = match decision {
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
