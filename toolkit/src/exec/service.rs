//! [`ToolService`]: the innermost service, which runs the tool itself.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::{Context, Poll};
use std::time::Instant;

use tokio::task::JoinHandle;

use super::ToolInvocation;
use super::middleware::Outcome;
use super::output::truncate_output;
use super::pace::SyncPace;
use crate::error::{ToolError, ToolErrorKind};
use crate::tool::{ToolFuture, ToolOutput};

/// Runs the tool of a [`ToolInvocation`] and bounds its output.
///
/// Async tools run on the caller's task. Synchronous tools (plain `fn`s) start on tokio's
/// blocking pool so that they cannot stall the runtime's worker threads; a timeout or
/// cancellation then stops *waiting* for them, but the thread runs the function to its end (a
/// thread cannot be interrupted), and the late result is discarded. A synchronous tool whose
/// calls prove quick runs inline instead, where the hop to the pool (two thread wake-ups)
/// would cost more than the tool: see [`SyncPace`]. Outside a tokio runtime, synchronous tools
/// run inline.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ToolService;

impl tower::Service<ToolInvocation> for ToolService {
    type Response = ToolOutput;
    type Error = ToolError;
    type Future = ToolServiceFuture;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), ToolError>> {
        Poll::Ready(Ok(()))
    }

    #[inline]
    fn call(&mut self, inv: ToolInvocation) -> ToolServiceFuture {
        let super::invocation::RunParts {
            max_output_bytes: max,
            blocking,
            tool,
            args,
            attempts: counter,
            pace,
        } = inv.into_run();
        let args = match args {
            Ok(args) => args,
            Err(e) => {
                return ToolServiceFuture {
                    state: State::Refused(Some(Box::new(e))),
                    max,
                    attempts: None,
                };
            }
        };
        let attempt = counter.fetch_add(1, Ordering::Relaxed) + 1;
        tracing::debug!(attempt, "tool attempt started");
        let future = tool.call(args);
        let state = match tokio::runtime::Handle::try_current() {
            Ok(handle) if blocking => match pace {
                Some(pace) if pace.inline() => State::Inline(future, pace),
                pace => State::Blocking(handle.spawn_blocking(move || {
                    let start = Instant::now();
                    let result = futures::executor::block_on(future);
                    if let Some(pace) = pace {
                        pace.record(start.elapsed(), false);
                    }
                    result
                })),
            },
            _ => State::Running(future),
        };
        ToolServiceFuture {
            state,
            max,
            attempts: Some(counter),
        }
    }
}

enum State {
    /// The arguments could not be resolved (boxed: the rare path).
    Refused(Option<Box<ToolError>>),
    Running(ToolFuture),
    /// A synchronous tool that has proven quick, run on the caller's thread and timed.
    Inline(ToolFuture, Arc<SyncPace>),
    Blocking(JoinHandle<Result<ToolOutput, ToolError>>),
}

/// Response future of [`ToolService`].
pub(crate) struct ToolServiceFuture {
    state: State,
    max: usize,
    /// The invocation's attempt counter, when this attempt counted.
    attempts: Option<Arc<AtomicU32>>,
}

impl Future for ToolServiceFuture {
    type Output = Outcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let max = self.max;
        let result = match &mut self.state {
            State::Refused(error) => Err(error.take().map_or_else(
                || ToolError::execution("internal error: tool future polled after completion"),
                |e| *e,
            )),
            State::Running(future) => std::task::ready!(future.as_mut().poll(cx)),
            State::Inline(future, pace) => {
                let start = Instant::now();
                let poll = future.as_mut().poll(cx);
                pace.record(start.elapsed(), true);
                std::task::ready!(poll)
            }
            State::Blocking(handle) => match std::task::ready!(Pin::new(handle).poll(cx)) {
                Ok(result) => result,
                Err(join) if join.is_panic() => {
                    let detail = super::guard::panic_message(join.into_panic());
                    Err(
                        ToolError::new(ToolErrorKind::Panicked, "the tool failed unexpectedly")
                            .with_detail(detail),
                    )
                }
                Err(_) => Err(ToolError::new(
                    ToolErrorKind::Cancelled,
                    "the tool was cancelled",
                )),
            },
        };
        // Generated tools check their arguments when called; a refusal there means the
        // function never ran, so it was no attempt.
        if let (Err(e), Some(attempts)) = (&result, &self.attempts)
            && matches!(
                e.kind(),
                ToolErrorKind::InvalidArguments
                    | ToolErrorKind::HiddenArgument
                    | ToolErrorKind::MissingContext
            )
        {
            attempts.fetch_sub(1, Ordering::Relaxed);
        }
        Poll::Ready(result.map(|out| truncate_output(out, max)))
    }
}
