//! Bad input on a durable queue: payloads this version does not write, a database that goes
//! away mid-run.

use std::time::Duration;

use agent_toolkit::background::{JobError, JobStatus, Worker};
use agent_toolkit::error::ToolErrorKind;
use agent_toolkit::prelude::*;

use super::engines::stop_signal;
use super::fixture::{self, call};
use super::{Db, db};

/// One value from a query.
fn psql_value(url: &str, sql: &str) -> String {
    let out = std::process::Command::new("psql")
        .args([url, "-tAc", sql])
        .output()
        .expect("run psql");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn psql(url: &str, sql: &str) {
    let out = std::process::Command::new("psql")
        .args([url, "-v", "ON_ERROR_STOP=1", "-qc", sql])
        .output()
        .expect("run psql");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Jobs whose stored payload was changed (by hand, or written by another version) are refused
/// with a clear error (one that still names its job ends with an error result), and the worker
/// goes on with the other jobs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsupported_payloads_end_with_clear_errors() {
    let Some(pg) = db::Postgres::start() else {
        return;
    };
    let url = pg.database("payloads");
    let db = Db::Postgres(pg, url.clone());
    let queue = db.queue("payloads").await;
    let kit = fixture::submitter()
        .job_queue(queue.clone())
        .build()
        .unwrap();
    let ctx = ToolContext::new();
    let newer = kit
        .call(call("p1", "record", 1, 1), &ctx)
        .await
        .job_id()
        .unwrap();
    let garbage = kit
        .call(call("p2", "record", 2, 1), &ctx)
        .await
        .job_id()
        .unwrap();
    let fine = kit
        .call(call("p3", "record", 3, 1), &ctx)
        .await
        .job_id()
        .unwrap();
    psql(
        &url,
        &format!(
            "UPDATE apalis.jobs SET job = convert_to('{{\"v\": 99, \"job\": {newer}}}', 'UTF8') \
             WHERE convert_from(job, 'UTF8') LIKE '%\"job\":{newer}}}%'"
        ),
    );
    // The payload form written before the versioned form (`v` for `version`) is still read.
    psql(
        &url,
        &format!(
            "UPDATE apalis.jobs SET job = convert_to('{{\"v\": 1, \"job\": {fine}}}', 'UTF8') \
             WHERE convert_from(job, 'UTF8') LIKE '%\"job\":{fine}}}%'"
        ),
    );
    let garbage_task = psql_value(
        &url,
        &format!(
            "SELECT id FROM apalis.jobs WHERE convert_from(job, 'UTF8') LIKE '%\"job\":{garbage}}}%'"
        ),
    );
    psql(
        &url,
        &format!(
            "UPDATE apalis.jobs SET job = convert_to('{{\"hello\": \"world\"}}', 'UTF8') \
             WHERE convert_from(job, 'UTF8') LIKE '%\"job\":{garbage}}}%'"
        ),
    );

    let log =
        std::env::temp_dir().join(format!("agent-toolkit-payloads-{}.log", std::process::id()));
    let worker_kit = fixture::worker_toolkit(log.clone());
    let (stop, signal) = stop_signal();
    let worker = tokio::spawn(Worker::new(&worker_kit, &queue).run_until(signal));
    let ledger = kit.background();
    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let a = ledger.get(newer).await.unwrap().unwrap();
            let c = ledger.get(fine).await.unwrap().unwrap();
            let engine = psql_value(
                &url,
                &format!("SELECT status FROM apalis.jobs WHERE id = '{garbage_task}'"),
            );
            if a.status != JobStatus::Pending
                && c.status != JobStatus::Pending
                && engine == "Killed"
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the worker went on");
    let a = ledger.get(newer).await.unwrap().unwrap();
    let error = a.result.unwrap().outcome.unwrap_err();
    assert!(
        error
            .message()
            .contains("stored form is not one this worker reads"),
        "{error:?}"
    );
    let detail = error.source().unwrap().to_string();
    assert!(
        detail.contains("a job payload in format version 99, but this build reads versions 1 to 1"),
        "{detail}"
    );
    let c = ledger.get(fine).await.unwrap().unwrap();
    assert_eq!(c.result.unwrap().model_text(), "recorded 3");
    // The other one names no job: the engine marks it killed, and its call never ran.
    let b = ledger.get(garbage).await.unwrap().unwrap();
    assert_eq!(b.status, JobStatus::Pending);
    assert!(!fixture::runs(&log).contains_key(&("record".into(), 2)));
    stop.send(()).unwrap();
    worker.await.unwrap().unwrap();
    let _ = std::fs::remove_file(log);
}

/// The database stops mid-run: calls made meanwhile get a retryable error result, the ledger
/// a typed error; the worker keeps the results of the tools that were running and stores them
/// when the database is back; nothing is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_that_goes_away_loses_nothing() {
    let Some(pg) = db::Postgres::start() else {
        return;
    };
    let url = pg.database("outage");
    let queue = agent_toolkit::background::JobQueue::postgres(&url)
        .await
        .unwrap()
        .name("outage")
        .heartbeat(Duration::from_secs(1));
    let kit = fixture::submitter()
        .job_queue(queue.clone())
        .build()
        .unwrap();
    let ctx = ToolContext::new();
    let mut jobs = Vec::new();
    for n in 0..8u32 {
        let tool = if n.is_multiple_of(2) {
            "record"
        } else {
            "transfer"
        };
        jobs.push(
            kit.call(call(&format!("o{n}"), tool, n, 1500), &ctx)
                .await
                .job_id()
                .unwrap(),
        );
    }
    let log = std::env::temp_dir().join(format!("agent-toolkit-outage-{}.log", std::process::id()));
    let worker_kit = fixture::worker_toolkit(log.clone());
    let (stop, signal) = stop_signal();
    let worker = tokio::spawn(
        Worker::new(&worker_kit, &queue)
            .concurrency(8)
            .run_until(signal),
    );
    // Every tool is running (each sleeps 1.5 s) when the database stops.
    tokio::time::timeout(Duration::from_secs(30), async {
        while fixture::runs(&log).len() < 8 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the tools start");
    pg.stop();

    let refused = kit.call(call("during", "record", 99, 1), &ctx).await;
    let error = refused.error().expect("no queue to put it in");
    assert_eq!(error.kind(), ToolErrorKind::Execution);
    assert!(error.is_retryable());
    assert!(
        error.message().contains("could not be queued"),
        "{}",
        error.message()
    );
    match kit.background().pending().await {
        Err(JobError::Database(cause)) => {
            assert!(cause.database().contains("outage"), "{cause}")
        }
        other => panic!("expected a database error, got {other:?}"),
    }

    tokio::time::sleep(Duration::from_secs(3)).await;
    pg.restart();
    tokio::time::timeout(Duration::from_secs(90), kit.background().drain())
        .await
        .expect("everything finishes once the database is back")
        .unwrap();
    let taken = kit.background().take_finished().await.unwrap();
    let mut ids: Vec<_> = taken.iter().map(|r| r.job_id().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, jobs, "every job has its one result");
    for result in &taken {
        let n: u32 = result.call_id.trim_start_matches('o').parse().unwrap();
        let expected = if n.is_multiple_of(2) {
            format!("recorded {n}")
        } else {
            format!("transferred {n}")
        };
        assert_eq!(
            result.model_text(),
            expected,
            "the run that was going on was kept"
        );
    }
    let runs = fixture::runs(&log);
    assert!(
        runs.iter()
            .filter(|((tool, _), _)| tool == "transfer")
            .all(|(_, r)| r.len() == 1)
    );
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(60), worker)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let _ = std::fs::remove_file(log);
}
