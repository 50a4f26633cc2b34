//! Retries with exponential backoff and jitter, for failures a [`RetryPolicy`] allows.
//!
//! Requires a `Clone` inner service: each retry calls a fresh clone with a clone of the
//! invocation (cheap: reference counts and the argument text).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use pin_project_lite::pin_project;
use tokio::time::Sleep;

use super::ToolInvocation;
use super::middleware::{Middleware, Outcome, StackService};
use crate::error::{ToolError, ToolErrorKind};
use crate::tool::ToolOutput;

/// Retries each invocation according to its [`ExecSettings`](super::ExecSettings).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Retry;

impl<S: StackService + Clone> Middleware<S> for Retry {
    type Future = RetryFuture<S>;

    fn call(&self, inner: &mut S, inv: ToolInvocation) -> Self::Future {
        // `inner` was made ready by `poll_ready`; keep it for this call and leave a clone.
        let clone = inner.clone();
        let mut ready = std::mem::replace(inner, clone);
        let first = if inv.settings().retry.max_retries == 0 {
            // The common case: no copy of the invocation kept for later.
            return RetryFuture::once(ready.call(inv));
        } else {
            ready.call(inv.clone())
        };
        RetryFuture::new(ready, inv, first)
    }
}

/// When and how often a failed call is tried again.
///
/// Only two kinds of failure are retried: errors the tool marked retryable
/// ([`ToolError::retryable`]) and per-attempt timeouts of tools marked `read_only` or
/// `idempotent` (running those twice is safe). Argument errors are never retried: they go back
/// to the model, which can correct them. Retries happen before an error becomes a result, and
/// the result reports how many attempts were made.
#[derive(Clone, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (0 = no retries).
    pub max_retries: u32,
    /// Wait before the first retry.
    pub initial_backoff: Duration,
    /// Each further wait is the previous one times this.
    pub multiplier: f64,
    /// No wait is longer than this.
    pub max_backoff: Duration,
    /// Random spread of each wait, as a fraction: 0.2 means ±20 %. Spreads out the retries of
    /// many calls that failed together.
    pub jitter: f64,
}

impl Default for RetryPolicy {
    /// No retries.
    fn default() -> Self {
        RetryPolicy::none()
    }
}

impl RetryPolicy {
    /// Never retry.
    pub fn none() -> Self {
        RetryPolicy {
            max_retries: 0,
            initial_backoff: Duration::ZERO,
            multiplier: 1.0,
            max_backoff: Duration::ZERO,
            jitter: 0.0,
        }
    }

    /// Up to `max_retries` retries, waiting `initial_backoff`, then `multiplier` times longer
    /// each time (capped at 30 s), with ±10 % jitter.
    pub fn exponential(max_retries: u32, initial_backoff: Duration, multiplier: f64) -> Self {
        RetryPolicy {
            max_retries,
            initial_backoff,
            multiplier: multiplier.max(1.0),
            max_backoff: Duration::from_secs(30),
            jitter: 0.1,
        }
    }

    crate::util::setters! {
        /// The same policy with another cap on each wait.
        pub fn with_max_backoff(max_backoff: Duration) => max_backoff = max_backoff;

        /// The same policy with another jitter fraction (clamped to 0..=1).
        pub fn with_jitter(jitter: f64) => jitter = jitter.clamp(0.0, 1.0);

        /// The same policy with another number of retries.
        pub fn with_max_retries(max_retries: u32) => max_retries = max_retries;
    }

    /// Whether `error`, after `attempts` attempts, should be tried again. `retry_timeouts` is
    /// whether the tool is safe to repeat after a timeout (`read_only` or `idempotent`).
    pub fn should_retry(&self, error: &ToolError, attempts: u32, retry_timeouts: bool) -> bool {
        if attempts > self.max_retries {
            return false;
        }
        match error.kind() {
            ToolErrorKind::Timeout => retry_timeouts,
            ToolErrorKind::Execution => error.is_retryable(),
            // Argument, configuration, approval, cancellation and panic failures are never
            // retried: repeating them cannot help, or is not safe.
            _ => false,
        }
    }

    /// The wait before retry number `retry` (1-based).
    pub fn backoff(&self, retry: u32) -> Duration {
        delay(self, retry)
    }
}

/// `initial × multiplier^(retry-1)`, capped, then spread by ±jitter.
pub(super) fn delay(policy: &RetryPolicy, retry: u32) -> Duration {
    let exponent = retry.saturating_sub(1).min(64) as i32;
    let base = policy.initial_backoff.as_secs_f64() * policy.multiplier.powi(exponent);
    let capped = base.min(policy.max_backoff.as_secs_f64());
    let spread = if policy.jitter > 0.0 {
        1.0 + policy.jitter * (fastrand::f64() * 2.0 - 1.0)
    } else {
        1.0
    };
    Duration::try_from_secs_f64((capped * spread).max(0.0)).unwrap_or(policy.max_backoff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_by_the_multiplier_and_stops_at_the_cap() {
        let p = RetryPolicy::exponential(10, Duration::from_millis(100), 2.0)
            .with_jitter(0.0)
            .with_max_backoff(Duration::from_millis(500));
        let waits: Vec<_> = (1..=5).map(|r| p.backoff(r).as_millis()).collect();
        assert_eq!(waits, [100, 200, 400, 500, 500]);
    }

    #[test]
    fn jitter_stays_within_its_fraction() {
        let p = RetryPolicy::exponential(3, Duration::from_millis(100), 1.0).with_jitter(0.2);
        for _ in 0..1000 {
            let ms = p.backoff(1).as_secs_f64() * 1000.0;
            assert!((80.0..=120.0).contains(&ms), "{ms}");
        }
    }
}

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
    /// Response future of [`Retry`](Retry): the current attempt, or the wait before
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
    type Output = Outcome;

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
