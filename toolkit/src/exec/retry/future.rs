use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use pin_project_lite::pin_project;
use tokio::time::Sleep;

use crate::error::ToolError;
use crate::exec::ToolInvocation;
use crate::tool::ToolOutput;

pin_project! {
    #[project = StateProj]
    enum State<F> {
        Calling { #[pin] future: F },
        // Boxed: a `Sleep` is large and only retries need one.
        Waiting { sleep: Pin<Box<Sleep>> },
        Ready,
    }
}

pin_project! {
    /// Response future of [`Retry`](super::Retry): the current attempt, or the wait before
    /// the next one.
    pub struct RetryFuture<S: tower::Service<ToolInvocation>> {
        // What a retry needs, boxed: calls without retries carry no copy of the invocation.
        again: Option<Box<(S, ToolInvocation)>>,
        #[pin]
        state: State<S::Future>,
    }
}

impl<S: tower::Service<ToolInvocation>> RetryFuture<S> {
    pub(super) fn once(future: S::Future) -> Self {
        RetryFuture {
            again: None,
            state: State::Calling { future },
        }
    }

    pub(super) fn new(service: S, invocation: ToolInvocation, future: S::Future) -> Self {
        RetryFuture {
            again: Some(Box::new((service, invocation))),
            state: State::Calling { future },
        }
    }
}

impl<S> Future for RetryFuture<S>
where
    S: tower::Service<ToolInvocation, Response = ToolOutput, Error = ToolError> + Clone,
{
    type Output = Result<ToolOutput, ToolError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        loop {
            match this.state.as_mut().project() {
                StateProj::Calling { future } => {
                    let result = ready!(future.poll(cx));
                    let Some((_, inv)) = this.again.as_deref() else {
                        return Poll::Ready(result);
                    };
                    let Err(error) = &result else {
                        return Poll::Ready(result);
                    };
                    let attempts = inv.attempts();
                    let settings = inv.settings();
                    if !settings
                        .retry
                        .should_retry(error, attempts, inv.options().retry_timeouts())
                    {
                        return Poll::Ready(result);
                    }
                    if let Some(no_timer) = crate::exec::no_timer(inv.tool_name()) {
                        return Poll::Ready(Err(no_timer));
                    }
                    let wait = settings.retry.backoff(attempts);
                    tracing::info!(
                        attempt = attempts,
                        error.type = error.kind().as_str(),
                        backoff_ms = wait.as_millis() as u64,
                        "retrying tool call"
                    );
                    this.state.set(State::Waiting {
                        sleep: Box::pin(tokio::time::sleep(wait)),
                    });
                }
                StateProj::Waiting { sleep } => {
                    ready!(sleep.as_mut().poll(cx));
                    this.state.set(State::Ready);
                }
                StateProj::Ready => {
                    let Some((service, inv)) = this.again.as_deref_mut() else {
                        return Poll::Ready(Err(ToolError::execution(
                            "internal error: retry state lost",
                        )));
                    };
                    ready!(service.poll_ready(cx))?;
                    let future = service.call(inv.clone());
                    this.state.set(State::Calling { future });
                }
            }
        }
    }
}
