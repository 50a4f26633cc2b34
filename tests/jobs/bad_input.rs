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

/// While the database is down, a call does not wait the pool's whole acquire timeout each time:
/// once the database is known to be down, calls fail at once (retryable), one a second goes
/// through to find out, and calls succeed again soon after it is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_fail_fast_while_the_database_is_known_to_be_down() {
    let Some(pg) = db::Postgres::start() else {
        return;
    };
    let url = pg.database("fast");
    let queue = agent_toolkit::background::JobQueue::postgres(&url)
        .await
        .unwrap()
        .name("fast");
    let kit = fixture::submitter().job_queue(queue).build().unwrap();
    let ctx = ToolContext::new();
    assert!(kit.call(call("a", "record", 1, 1), &ctx).await.is_pending());
    pg.stop();
    let started = std::time::Instant::now();
    let first = kit.call(call("b", "record", 2, 1), &ctx).await;
    assert!(first.error().is_some_and(|e| e.is_retryable()), "{first}");
    let first_took = started.elapsed();
    for n in 0..5 {
        let started = std::time::Instant::now();
        let again = kit.call(call("c", "record", 3, 1), &ctx).await;
        let error = again.error().expect("refused");
        assert!(error.is_retryable(), "{again}");
        assert!(
            started.elapsed() < Duration::from_millis(500),
            "call {n} waited {:?} (the first took {first_took:?})",
            started.elapsed()
        );
    }
    match kit.background().pending().await {
        Err(e) => assert!(e.is_retryable(), "{e}"),
        Ok(_) => panic!("the database is down"),
    }
    pg.restart();
    let back = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            if kit.call(call("d", "record", 4, 1), &ctx).await.is_pending() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await;
    assert!(
        back.is_ok(),
        "calls never succeeded again after the restart"
    );
}

/// A database written by the first release of the durable queue (its ledger without the claim
/// columns, no schema version table, a result stored as `{"v": 1, …}`) is taken over: the
/// ledger is brought up to date and the old result is read and taken. A database whose ledger
/// is at a schema version newer than this build knows is refused, naming both versions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_of_the_previous_format_is_read_and_a_newer_one_refused() {
    let Some(pg) = db::Postgres::start() else {
        return;
    };
    let url = pg.database("previous");
    psql(
        &url,
        "CREATE TABLE agent_toolkit_jobs (
            id BIGSERIAL PRIMARY KEY, queue TEXT NOT NULL, call_id TEXT NOT NULL,
            tool TEXT NOT NULL, arguments TEXT NOT NULL, state TEXT NOT NULL, result TEXT,
            runs INTEGER NOT NULL DEFAULT 0, taken BOOLEAN NOT NULL DEFAULT FALSE,
            notified BOOLEAN NOT NULL DEFAULT FALSE, submitted_ms BIGINT NOT NULL,
            finished_ms BIGINT);
         INSERT INTO agent_toolkit_jobs (queue, call_id, tool, arguments, state, result,
            submitted_ms, finished_ms)
         VALUES ('previous', 'old_call', 'record', '{\"n\": 1, \"ms\": 1}', 'finished',
            '{\"v\":1,\"attempts\":1,\"outcome\":{\"text\":{\"text\":\"recorded before\",\"metadata\":{}}}}',
            1, 2);",
    );
    let queue = agent_toolkit::background::JobQueue::postgres(&url)
        .await
        .unwrap()
        .name("previous");
    let kit = fixture::submitter().job_queue(queue).build().unwrap();
    let taken = kit.background().take_finished().await.unwrap();
    assert_eq!(taken.len(), 1);
    assert_eq!(taken[0].call_id.as_ref(), "old_call");
    assert_eq!(taken[0].model_text(), "recorded before");
    assert_eq!(
        psql_value(
            &url,
            "SELECT version FROM agent_toolkit_schema WHERE component = 'jobs'"
        ),
        "2"
    );

    psql(
        &url,
        "UPDATE agent_toolkit_schema SET version = 9 WHERE component = 'jobs'",
    );
    let error = agent_toolkit::background::JobQueue::postgres(&url)
        .await
        .unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains("`jobs` tables are at schema version 9, newer than the 2 this build"),
        "{text}"
    );
    assert!(!error.is_retryable());
}
