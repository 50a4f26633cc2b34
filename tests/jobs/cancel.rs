//! Cancelling a durable job (`BackgroundJobs::cancel`): a queued job ends without running, and
//! a running one ends at once with its cancelled result while the worker running it, told at
//! its next look at the ledger, stops the tool (freeing its slot for the next job).

use std::time::Duration;

use agent_toolkit::background::{JobStatus, Worker};
use agent_toolkit::error::ToolErrorKind;
use agent_toolkit::prelude::*;

use super::Db;
use super::engines::stop_signal;
use super::fixture::{self, call};

async fn cancel_queued_and_running(db: Db) {
    let queue = db.queue("cancel").await;
    let kit = fixture::submitter()
        .job_queue(queue.clone())
        .build()
        .unwrap();
    let ctx = ToolContext::new();
    // Nobody runs the queue yet: this one is cancelled while queued.
    let queued = kit.call(call("q", "record", 1, 1), &ctx).await;
    let queued = queued.job_id().unwrap();
    assert!(kit.background().cancel(queued).await.unwrap());
    assert!(!kit.background().cancel(queued).await.unwrap(), "once");

    let log = std::env::temp_dir().join(format!("agent-toolkit-cancel-{}.log", fastrand()));
    let worker_kit = fixture::worker_toolkit(log.clone());
    let (stop, signal) = stop_signal();
    let worker = tokio::spawn(
        Worker::new(&worker_kit, &queue)
            .concurrency(1)
            .run_until(signal),
    );
    // One slot: the long job holds it until cancelled, then the short one runs.
    let long = kit.call(call("long", "transfer", 2, 600_000), &ctx).await;
    let long = long.job_id().unwrap();
    tokio::time::timeout(Duration::from_secs(30), async {
        while !fixture::runs(&log).contains_key(&("transfer".to_string(), 2)) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the long job starts");
    let short = kit.call(call("short", "record", 3, 1), &ctx).await;
    assert!(kit.background().cancel(long).await.unwrap());
    let record = kit.background().get(long).await.unwrap().unwrap();
    assert_eq!(record.status, JobStatus::Failed);
    let error = record.result.unwrap().outcome.unwrap_err();
    assert_eq!(error.kind(), ToolErrorKind::Cancelled, "{error}");
    tokio::time::timeout(Duration::from_secs(30), kit.background().drain())
        .await
        .expect("the worker stops the cancelled tool, and runs the next job")
        .unwrap();
    let short = kit
        .background()
        .get(short.job_id().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(short.status, JobStatus::Finished);
    let runs = fixture::runs(&log);
    assert!(
        !runs.contains_key(&("record".to_string(), 1)),
        "the queued job never ran: {runs:?}"
    );
    // Still the cancelled result: what the stopped run returned was dropped.
    let record = kit.background().get(long).await.unwrap().unwrap();
    assert_eq!(
        record.result.unwrap().error().unwrap().kind(),
        ToolErrorKind::Cancelled
    );
    stop.send(()).unwrap();
    worker.await.unwrap().unwrap();
    let _ = std::fs::remove_file(log);
}

fn fastrand() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_cancel_queued_and_running() {
    cancel_queued_and_running(Db::sqlite("cancel")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_cancel_queued_and_running() {
    let Some(db) = Db::postgres() else { return };
    cancel_queued_and_running(db).await;
}
