use std::time::Duration;

use crate::error::{ToolError, ToolErrorKind};

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

    /// The same policy with another cap on each wait.
    pub fn with_max_backoff(mut self, max_backoff: Duration) -> Self {
        self.max_backoff = max_backoff;
        self
    }

    /// The same policy with another jitter fraction (clamped to 0..=1).
    pub fn with_jitter(mut self, jitter: f64) -> Self {
        self.jitter = jitter.clamp(0.0, 1.0);
        self
    }

    /// The same policy with another number of retries.
    pub fn with_max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = max_retries;
        self
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
        super::backoff::delay(self, retry)
    }
}
