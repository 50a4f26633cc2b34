//! Retries: only what is safe, reported as attempts, never for argument errors.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use agent_toolkit::RetryPolicy;
use agent_toolkit::error::ToolErrorKind;
use agent_toolkit::prelude::*;

use super::tools::*;
use super::{call, err};

fn fast_backoff(probe: &Arc<Probe>) -> Toolkit {
    kit(probe)
        .retry(RetryPolicy::exponential(0, Duration::from_millis(1), 2.0))
        .build()
        .unwrap()
}

#[tokio::test]
async fn two_retryable_failures_then_success_is_three_attempts_and_one_result() {
    let probe = Arc::new(Probe::default());
    probe.failures_left.store(2, Ordering::SeqCst);
    let kit = fast_backoff(&probe);
    let r = call(&kit, "flaky", "{}").await;
    assert_eq!(r.model_text(), "ok at last");
    assert_eq!(r.attempts, 3);
    assert_eq!(probe.get(&probe.started), 3);
}

#[tokio::test]
async fn retries_stop_at_the_limit() {
    let probe = Arc::new(Probe::default());
    probe.failures_left.store(100, Ordering::SeqCst);
    let kit = fast_backoff(&probe);
    let r = call(&kit, "flaky", "{}").await;
    assert_eq!(err(&r).message(), "upstream busy");
    assert_eq!(
        r.attempts, 4,
        "#[tool(retries = 3)]: one attempt and three retries"
    );
}

#[tokio::test]
async fn a_non_retryable_failure_is_tried_once() {
    let probe = Arc::new(Probe::default());
    let r = call(&fast_backoff(&probe), "broken", "{}").await;
    assert_eq!(err(&r).kind(), ToolErrorKind::Execution);
    assert_eq!(r.attempts, 1);
}

#[tokio::test]
async fn timeouts_are_retried_only_for_idempotent_or_read_only_tools() {
    let probe = Arc::new(Probe::default());
    let kit = fast_backoff(&probe);
    let r = call(&kit, "hang_idempotent", "{}").await;
    assert_eq!(err(&r).kind(), ToolErrorKind::Timeout);
    assert_eq!(r.attempts, 3, "idempotent, retries = 2");
    let r = call(&kit, "hang", "{}").await;
    assert_eq!(r.attempts, 1, "not idempotent: a timeout is not retried");
    assert_eq!(probe.get(&probe.alive), 0);
}

#[tokio::test]
async fn argument_errors_are_never_retried() {
    let probe = Arc::new(Probe::default());
    let kit = fast_backoff(&probe);
    let r = call(&kit, "flaky", r#"{"surprise": 1}"#).await;
    assert_eq!(err(&r).kind(), ToolErrorKind::InvalidArguments);
    assert_eq!(r.attempts, 0);
    assert_eq!(probe.get(&probe.started), 0);
}

#[tokio::test]
async fn the_toolkit_policy_applies_to_tools_without_their_own() {
    let probe = Arc::new(Probe::default());
    probe.failures_left.store(1, Ordering::SeqCst);
    let kit = Toolkit::builder()
        .retry(RetryPolicy::exponential(1, Duration::from_millis(1), 2.0))
        .register(Flaky)
        .tool_retries(0)
        .context_shared(probe.clone())
        .build()
        .unwrap();
    let r = call(&kit, "flaky", "{}").await;
    assert_eq!(
        r.attempts, 1,
        "the builder override (0) beats #[tool(retries = 3)]"
    );
    assert!(r.is_error());
}
