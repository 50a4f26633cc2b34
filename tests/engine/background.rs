//! Background tools: pending at once, ledger, callbacks, stream, limits, shutdown.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_toolkit::prelude::*;
use agent_toolkit::{
    background::{JobId, JobStatus},
    error::ToolErrorKind,
};
use futures::StreamExt;

use super::tools::*;

fn job(id: &str, ms: u64, fail: bool) -> ToolCall {
    ToolCall::new(id, "long_job", format!(r#"{{"ms": {ms}, "fail": {fail}}}"#))
}

#[tokio::test]
async fn call_now_runs_a_background_tool_here_and_waits() {
    let probe = Arc::new(Probe::default());
    let kit = kit(&probe).build().unwrap();
    let ctx = ToolContext::new();
    let result = kit.call_now(job("n1", 10, false), &ctx).await;
    assert!(!result.is_pending(), "{}", result.model_text());
    assert_eq!(result.model_text(), "job done after 10");
    let failed = kit.call_now(job("n2", 1, true), &ctx).await;
    assert_eq!(failed.error().unwrap().message(), "job failed");
    // Nothing went through the queue.
    assert!(kit.background().pending().await.unwrap().is_empty());
    assert!(kit.background().finished().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_background_call_answers_at_once_and_reports_later() {
    let probe = Arc::new(Probe::default());
    let delivered: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = delivered.clone();
    let kit = kit(&probe)
        .on_tool_result(move |r| sink.lock().unwrap().push(r.call_id.to_string()))
        .build()
        .unwrap();
    let mut results = Box::pin(kit.background().results());
    let ctx = ToolContext::new();

    let pending = kit.call(job("j1", 60, false), &ctx).await;
    assert!(pending.is_pending(), "{}", pending.model_text());
    assert!(
        pending
            .model_text()
            .contains("running in the background (call id j1, job ")
    );
    let failing = kit.call(job("j2", 10, true), &ctx).await;
    assert!(failing.is_pending());
    assert_eq!(kit.background().pending().await.unwrap().len(), 2);

    let first = tokio::time::timeout(Duration::from_secs(5), results.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&*first.call_id, "j2");
    assert_eq!(first.error().unwrap().message(), "job failed");
    let second = tokio::time::timeout(Duration::from_secs(5), results.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(second.model_text(), "job done after 60");
    assert_eq!(second.attempts, 1);

    let ledger = kit.background();
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert!(ledger.pending().await.unwrap().is_empty());
    assert_eq!(ledger.finished().await.unwrap().len(), 1);
    assert_eq!(ledger.failed().await.unwrap().len(), 1);
    let j1 = ledger
        .get(pending.job_id().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(j1.status, JobStatus::Finished);
    assert_eq!(j1.call.name, "long_job");
    assert_eq!(j1.call.arguments, r#"{"ms": 60, "fail": false}"#);
    assert_eq!(ledger.by_call_id("j1").await.unwrap().len(), 1);
    let taken: Vec<_> = ledger
        .take_finished()
        .await
        .unwrap()
        .iter()
        .map(|r| r.call_id.to_string())
        .collect();
    assert_eq!(taken, ["j1", "j2"], "oldest first");
    assert!(
        ledger.take_finished().await.unwrap().is_empty(),
        "each result is handed out once"
    );
    let mut seen = delivered.lock().unwrap().clone();
    seen.sort();
    assert_eq!(seen, ["j1", "j2"]);
}

#[tokio::test]
async fn bad_arguments_are_answered_now_not_queued() {
    let probe = Arc::new(Probe::default());
    let kit = kit(&probe).build().unwrap();
    let r = kit
        .call(
            ToolCall::new("j", "long_job", r#"{"ms": "soon"}"#),
            &ToolContext::new(),
        )
        .await;
    assert_eq!(r.error().unwrap().kind(), ToolErrorKind::InvalidArguments);
    assert!(kit.background().by_call_id("j").await.unwrap().is_empty());
}

#[tokio::test]
async fn background_jobs_respect_their_timeout() {
    let probe = Arc::new(Probe::default());
    let kit = kit(&probe).build().unwrap();
    let mut results = Box::pin(kit.background().results());
    kit.call(job("slow", 10_000, false), &ToolContext::new())
        .await;
    let r = tokio::time::timeout(Duration::from_secs(5), results.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        r.error().unwrap().kind(),
        ToolErrorKind::Timeout,
        "#[tool(timeout = \"2s\")]"
    );
    assert_eq!(probe.get(&probe.alive), 0);
}

#[tokio::test]
async fn the_queue_is_bounded() {
    let probe = Arc::new(Probe::default());
    let kit = kit(&probe).background_capacity(2).build().unwrap();
    let ctx = ToolContext::new();
    assert!(kit.call(job("a", 200, false), &ctx).await.is_pending());
    assert!(kit.call(job("b", 200, false), &ctx).await.is_pending());
    let full = kit.call(job("c", 200, false), &ctx).await;
    assert!(
        full.error()
            .unwrap()
            .message()
            .contains("the background queue is full (2 jobs running)")
    );
    kit.background().drain().await.unwrap();
    assert!(
        kit.call(job("d", 1, false), &ctx).await.is_pending(),
        "room again after draining"
    );
    kit.background().drain().await.unwrap();
    assert_eq!(kit.background().finished().await.unwrap().len(), 3);
}

#[tokio::test]
async fn shutdown_cancels_running_jobs_and_reports_them() {
    let probe = Arc::new(Probe::default());
    let cancelled = Arc::new(AtomicUsize::new(0));
    let counter = cancelled.clone();
    let kit = kit(&probe)
        .on_tool_result(move |r| {
            if r.error()
                .is_some_and(|e| e.kind() == ToolErrorKind::Cancelled)
            {
                counter.fetch_add(1, Ordering::SeqCst);
            }
        })
        .build()
        .unwrap();
    let ctx = ToolContext::new();
    for i in 0..3 {
        kit.call(job(&format!("j{i}"), 10_000, false), &ctx).await;
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(kit.background().running(), 3);
    tokio::time::timeout(Duration::from_secs(5), kit.background().shutdown())
        .await
        .expect("shutdown ends");
    assert_eq!(kit.background().running(), 0);
    assert_eq!(
        cancelled.load(Ordering::SeqCst),
        3,
        "every cancelled job still got its result"
    );
    assert_eq!(kit.background().failed().await.unwrap().len(), 3);
    assert_eq!(probe.get(&probe.alive), 0, "their futures were dropped");
    // After shutdown, no new work is taken.
    let r = kit.call(job("late", 1, false), &ctx).await;
    assert!(r.error().unwrap().message().contains("shutting down"));
}

#[tokio::test]
async fn a_cancelled_job_ends_at_once_with_one_result() {
    let probe = Arc::new(Probe::default());
    let heard: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = heard.clone();
    let kit = kit(&probe)
        .on_tool_result(move |r| sink.lock().unwrap().push(r.call_id.to_string()))
        .build()
        .unwrap();
    let ctx = ToolContext::new();
    let long = kit.call(job("long", 10_000, false), &ctx).await;
    let short = kit.call(job("short", 1, false), &ctx).await;
    let long = long.job_id().unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(kit.background().cancel(long).await.unwrap());
    let record = kit.background().get(long).await.unwrap().unwrap();
    assert_eq!(record.status, JobStatus::Failed);
    let error = record.result.unwrap().outcome.unwrap_err();
    assert_eq!(error.kind(), ToolErrorKind::Cancelled);
    assert!(record.finished.is_some());
    // The run was told to stop: its future is dropped, and what it returns is not recorded.
    tokio::time::timeout(Duration::from_secs(5), kit.background().drain())
        .await
        .expect("the cancelled job stops")
        .unwrap();
    assert_eq!(probe.get(&probe.alive), 0);
    // Ended jobs cannot be cancelled.
    assert!(!kit.background().cancel(long).await.unwrap());
    assert!(
        !kit.background()
            .cancel(short.job_id().unwrap())
            .await
            .unwrap()
    );
    let taken = kit.background().take_finished().await.unwrap();
    assert_eq!(taken.len(), 2);
    let mut heard = heard.lock().unwrap().clone();
    heard.sort();
    assert_eq!(heard, ["long", "short"], "one report each");
}

#[tokio::test]
async fn drain_waits_for_jobs_to_finish() {
    let probe = Arc::new(Probe::default());
    let kit = kit(&probe).build().unwrap();
    let pending = kit.call(job("d1", 30, false), &ToolContext::new()).await;
    kit.background().drain().await.unwrap();
    assert_eq!(
        kit.background()
            .get(pending.job_id().unwrap())
            .await
            .unwrap()
            .unwrap()
            .status,
        JobStatus::Finished
    );
}

/// Local model servers number calls per turn (`call_0` every time), so a model reuses ids: two
/// background calls with one id are two jobs, and neither result may be lost.
#[tokio::test]
async fn a_reused_call_id_loses_no_result() {
    let probe = Arc::new(Probe::default());
    let delivered: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = delivered.clone();
    let kit = kit(&probe)
        .register_as("other_job", LongJob)
        .on_tool_result(move |r| sink.lock().unwrap().push(r.model_text().into_owned()))
        .build()
        .unwrap();
    let mut stream = Box::pin(kit.background().results());
    let ctx = ToolContext::new();

    // The same tool twice, then another tool, all with the id `call_0`; the first is still
    // running when the others are submitted.
    let first = kit.call(job("call_0", 80, false), &ctx).await;
    let second = kit.call(job("call_0", 10, false), &ctx).await;
    let other = kit
        .call(
            ToolCall::new("call_0", "other_job", r#"{"ms": 40, "fail": true}"#),
            &ctx,
        )
        .await;
    for pending in [&first, &second, &other] {
        assert!(pending.is_pending(), "{}", pending.model_text());
    }
    assert_eq!(
        kit.background().pending().await.unwrap().len(),
        3,
        "three jobs, not one"
    );

    let mut streamed = Vec::new();
    for _ in 0..3 {
        let r = tokio::time::timeout(Duration::from_secs(5), stream.next())
            .await
            .expect("every job reports on the stream")
            .unwrap();
        streamed.push(format!("{} {}", r.name, r.model_text()));
    }
    streamed.sort();
    assert_eq!(
        streamed,
        [
            "long_job job done after 10",
            "long_job job done after 80",
            "other_job Error: job failed",
        ]
    );
    kit.background().drain().await.unwrap();

    let ledger = kit.background();
    assert_eq!(ledger.finished().await.unwrap().len(), 2);
    assert_eq!(ledger.failed().await.unwrap().len(), 1);
    let taken: Vec<String> = ledger
        .take_finished()
        .await
        .unwrap()
        .iter()
        .map(|r| format!("{} {} {}", r.call_id, r.name, r.model_text()))
        .collect();
    assert_eq!(
        taken,
        [
            "call_0 long_job job done after 80",
            "call_0 long_job job done after 10",
            "call_0 other_job Error: job failed",
        ],
        "every result once, oldest submission first"
    );
    assert!(ledger.take_finished().await.unwrap().is_empty());
    let mut seen = delivered.lock().unwrap().clone();
    seen.sort();
    assert_eq!(
        seen,
        [
            "Error: job failed",
            "job done after 10",
            "job done after 80"
        ],
        "every callback ran"
    );

    // Each pending result names its own job; the records keep their calls.
    let ids: Vec<JobId> = [&first, &second, &other]
        .iter()
        .map(|r| r.job_id().expect("a pending result carries its job id"))
        .collect();
    assert!(ids[0] < ids[1] && ids[1] < ids[2], "{ids:?}");
    assert!(
        second
            .model_text()
            .contains(&format!("(call id call_0, job {})", ids[1]))
    );
    let records = ledger.by_call_id("call_0").await.unwrap();
    assert_eq!(
        records.iter().map(|r| r.id).collect::<Vec<_>>(),
        ids,
        "every job of the id, oldest first"
    );
    let second_record = ledger.get(ids[1]).await.unwrap().unwrap();
    assert_eq!(second_record.call.arguments, r#"{"ms": 10, "fail": false}"#);
    let result = second_record.result.unwrap();
    assert_eq!(result.model_text(), "job done after 10");
    assert_eq!(
        result.job_id(),
        Some(ids[1]),
        "a finished result names its job"
    );
    assert_eq!(
        ledger.get(ids[2]).await.unwrap().unwrap().status,
        JobStatus::Failed
    );
    assert_eq!(
        ledger.get(ids[2]).await.unwrap().unwrap().call.name,
        "other_job"
    );
}
