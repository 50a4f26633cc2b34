//! Per-attempt and total deadlines; blocking tools on the blocking pool (until they prove
//! quick).

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_toolkit::RetryPolicy;
use agent_toolkit::error::ToolErrorKind;
use agent_toolkit::prelude::*;
use futures::StreamExt;

use super::tools::*;
use super::{call, err, numbered};

#[tokio::test]
async fn a_tool_timeout_drops_the_future_and_names_tool_and_limit() {
    let probe = Arc::new(Probe::default());
    let kit = kit(&probe).build().unwrap();
    let r = call(&kit, "hang", "{}").await;
    let e = err(&r);
    assert_eq!(e.kind(), ToolErrorKind::Timeout);
    assert_eq!(
        e.message(),
        "tool `hang` did not finish within 50ms (the limit per attempt)"
    );
    assert_eq!(
        probe.get(&probe.alive),
        0,
        "the timed-out future was dropped"
    );
    assert_eq!(r.attempts, 1, "not idempotent: not retried");
}

#[tokio::test]
async fn the_toolkit_default_applies_and_a_builder_override_wins() {
    let probe = Arc::new(Probe::default());
    let kit = kit(&probe)
        .timeout(Duration::from_millis(20))
        .build()
        .unwrap();
    let r = call(&kit, "nap", r#"{"ms": 2000}"#).await;
    assert!(
        err(&r).message().contains("within 20ms"),
        "{}",
        err(&r).message()
    );

    let kit = Toolkit::builder()
        .timeout(Duration::from_millis(20))
        .register(Nap)
        .tool_timeout(Duration::from_millis(500))
        .context_shared(probe.clone())
        .build()
        .unwrap();
    let r = call(&kit, "nap", r#"{"ms": 60}"#).await;
    assert_eq!(
        r.model_text(),
        "slept 60",
        "the per-tool 500ms beats the toolkit's 20ms"
    );
}

#[tokio::test]
async fn the_total_deadline_bounds_retries_and_backoff() {
    let probe = Arc::new(Probe::default());
    let kit = kit(&probe)
        .total_timeout(Duration::from_millis(70))
        .retry(RetryPolicy::exponential(10, Duration::from_millis(10), 1.0).with_jitter(0.0))
        .build()
        .unwrap();
    let started = Instant::now();
    // hang_idempotent: 30ms per attempt, retried; the 70ms total stops it.
    let r = call(&kit, "hang_idempotent", "{}").await;
    let e = err(&r);
    assert_eq!(e.kind(), ToolErrorKind::Timeout);
    assert!(
        e.message().contains("the limit for the whole call"),
        "{}",
        e.message()
    );
    assert!(
        r.attempts >= 2,
        "it was retried before the total deadline: {}",
        r.attempts
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(probe.get(&probe.alive), 0);
}

#[tokio::test(flavor = "current_thread")]
async fn blocking_tools_do_not_stall_the_runtime() {
    let probe = Arc::new(Probe::default());
    let kit = kit(&probe).build().unwrap();
    let calls = vec![
        numbered(0, "block", r#"{"ms": 300}"#),
        numbered(1, "nap", r#"{"ms": 10}"#),
    ];
    let ctx = ToolContext::new();
    // On a single-threaded runtime, the nap can only finish first if the blocking tool runs
    // on another thread.
    let order: Vec<String> = kit
        .call_stream(calls, &ctx)
        .map(|r| r.call_id.to_string())
        .collect()
        .await;
    assert_eq!(order, ["call-1", "call-0"]);
}

/// Which thread ran it; blocks that long first (0: quick).
#[tool]
fn where_am_i(block_us: u64) -> String {
    if block_us > 0 {
        std::thread::sleep(Duration::from_micros(block_us));
    }
    format!("{:?}", std::thread::current().id())
}

#[tokio::test(flavor = "current_thread")]
async fn a_quick_blocking_tool_runs_inline_after_proving_quick_and_a_slow_one_goes_back_to_the_pool()
 {
    let kit = Toolkit::builder().register(WhereAmI).build().unwrap();
    let here = format!("{:?}", std::thread::current().id());
    let on_caller = |r: &ToolResult| r.model_text().trim_matches('"') == here;
    let quick = r#"{"block_us": 0}"#;
    let slow = r#"{"block_us": 2000}"#;
    // The first eight calls run on the blocking pool (another thread), timed there.
    for n in 0..8 {
        let r = call(&kit, "where_am_i", quick).await;
        assert!(!on_caller(&r), "call {n} ran on the pool");
    }
    // Quick eight times in a row (a call the OS preempted may need to be made up for): from
    // then on it runs on the caller's thread.
    let mut calls = 0;
    while !on_caller(&call(&kit, "where_am_i", quick).await) {
        calls += 1;
        assert!(calls < 100, "a proven-quick tool runs inline");
    }
    // A slow call (inline, so it holds this thread once) sends it back to the pool.
    assert!(on_caller(&call(&kit, "where_am_i", slow).await));
    assert!(!on_caller(&call(&kit, "where_am_i", quick).await));
    // Slow three times in all: on the pool for good, however quick it is again.
    call(&kit, "where_am_i", slow).await;
    call(&kit, "where_am_i", slow).await;
    for _ in 0..40 {
        let r = call(&kit, "where_am_i", quick).await;
        assert!(!on_caller(&r), "a tool slow three times stays on the pool");
    }
    // A second toolkit keeps its own record: the tool starts on the pool there.
    let other = Toolkit::builder().register(WhereAmI).build().unwrap();
    assert!(!on_caller(&call(&other, "where_am_i", quick).await));
}

#[tokio::test]
async fn a_timed_out_blocking_tool_is_abandoned_not_awaited() {
    let kit = Toolkit::builder()
        .register(Block)
        .tool_timeout(Duration::from_millis(30))
        .build()
        .unwrap();
    let started = Instant::now();
    let r = call(&kit, "block", r#"{"ms": 400}"#).await;
    assert_eq!(err(&r).kind(), ToolErrorKind::Timeout);
    assert!(
        started.elapsed() < Duration::from_millis(300),
        "the caller did not wait for the thread"
    );
}

#[test]
fn without_a_runtime_time_limits_fail_cleanly_instead_of_panicking() {
    let kit = Toolkit::builder()
        .timeout(Duration::from_secs(1))
        .register(Echo)
        .build()
        .unwrap();
    let r = futures::executor::block_on(call(&kit, "echo", r#"{"n": 1}"#));
    assert!(
        err(&r)
            .source()
            .unwrap()
            .to_string()
            .contains("need a tokio runtime")
    );
    // No limits: no runtime needed.
    let kit = Toolkit::builder().register(Echo).build().unwrap();
    let r = futures::executor::block_on(call(&kit, "echo", r#"{"n": 1}"#));
    assert_eq!(r.model_text(), "1");
}
