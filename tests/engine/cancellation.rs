//! Cancellation: dropping a batch or cancelling its token stops every tool, and nothing keeps
//! running afterwards.

use std::sync::Arc;
use std::time::Duration;

use agent_toolkit::error::ToolErrorKind;
use agent_toolkit::prelude::*;

use super::numbered;
use super::tools::*;

#[tokio::test]
async fn dropping_the_batch_future_drops_every_tool_future() {
    let probe = Arc::new(Probe::default());
    let kit = kit(&probe).build().unwrap();
    let calls: Vec<_> = (0..20)
        .map(|i| numbered(i, "nap", r#"{"ms": 10000}"#))
        .collect();
    let ctx = ToolContext::new();
    let batch = kit.call_all(calls, &ctx);
    // Let them start, then give up on the batch.
    let timed_out = tokio::time::timeout(Duration::from_millis(50), batch).await;
    assert!(timed_out.is_err());
    assert_eq!(
        probe.get(&probe.started),
        16,
        "16 = the default concurrency cap"
    );
    assert_eq!(
        probe.get(&probe.alive),
        0,
        "every tool future was dropped with the batch"
    );
    assert_eq!(probe.get(&probe.finished), 0);
}

#[tokio::test]
async fn no_task_outlives_a_dropped_batch() {
    let probe = Arc::new(Probe::default());
    let kit = kit(&probe).build().unwrap();
    let metrics = tokio::runtime::Handle::current().metrics();
    let before = metrics.num_alive_tasks();
    let calls: Vec<_> = (0..10)
        .map(|i| {
            numbered(
                i,
                if i % 2 == 0 { "nap" } else { "cooperative" },
                r#"{"ms": 10000}"#,
            )
        })
        .collect();
    let ctx = ToolContext::new();
    let _ = tokio::time::timeout(Duration::from_millis(30), kit.call_all(calls, &ctx)).await;
    assert_eq!(probe.get(&probe.alive), 0);
    assert_eq!(metrics.num_alive_tasks(), before, "no task was left behind");
}

#[tokio::test]
async fn cancelling_the_token_stops_in_flight_tools_with_cancelled_results() {
    let probe = Arc::new(Probe::default());
    let kit = kit(&probe).build().unwrap();
    let token = CancellationToken::new();
    let ctx = ToolContext::new().with_cancellation(token.clone());
    let calls = vec![
        numbered(0, "nap", r#"{"ms": 10000}"#),
        numbered(1, "cooperative", "{}"),
        numbered(2, "echo", r#"{"n": 7}"#),
    ];
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(30)).await;
        token.cancel();
    });
    let results = tokio::time::timeout(Duration::from_secs(5), kit.call_all(calls, &ctx))
        .await
        .expect("cancellation ends the batch");
    canceller.await.unwrap();
    assert_eq!(results[0].error().unwrap().kind(), ToolErrorKind::Cancelled);
    assert_eq!(
        results[0].error().unwrap().message(),
        "tool `nap` was cancelled before it finished"
    );
    assert_eq!(results[1].error().unwrap().kind(), ToolErrorKind::Cancelled);
    assert_eq!(results[2].model_text(), "7", "finished before the cancel");
    assert_eq!(probe.get(&probe.alive), 0);
}

#[tokio::test]
async fn a_call_made_with_a_cancelled_token_does_not_start() {
    let probe = Arc::new(Probe::default());
    let kit = kit(&probe).build().unwrap();
    let token = CancellationToken::new();
    token.cancel();
    let ctx = ToolContext::new().with_cancellation(token);
    let r = kit.call(numbered(0, "nap", r#"{"ms": 1}"#), &ctx).await;
    assert_eq!(r.error().unwrap().kind(), ToolErrorKind::Cancelled);
    assert_eq!(probe.get(&probe.started), 0);
}

#[tokio::test]
async fn cooperative_tools_see_the_token() {
    let probe = Arc::new(Probe::default());
    let kit = kit(&probe).build().unwrap();
    let token = CancellationToken::new();
    let ctx = ToolContext::new().with_cancellation(token.clone());
    let call = kit.call(numbered(0, "cooperative", "{}"), &ctx);
    let (result, ()) = tokio::join!(call, async {
        tokio::time::sleep(Duration::from_millis(20)).await;
        token.cancel();
    });
    // The stack answers Cancelled; the tool itself was woken by the same token.
    assert_eq!(result.error().unwrap().kind(), ToolErrorKind::Cancelled);
    assert_eq!(probe.get(&probe.alive), 0);
}
