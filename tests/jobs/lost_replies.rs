//! Replies lost on the way back from Postgres (the statement ran and committed, the answer never
//! arrived: what a database going away mid-request does), made to happen exactly where each test
//! wants it with a cutting proxy (`tests/db/proxy.rs`). Nothing may be lost or stranded: a result
//! whose taking lost its reply is delivered to the next take, a job whose start lost its reply
//! still runs once, jobs a worker fetched when its fetch lost its reply are run.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_toolkit::background::{JobQueue, Worker};
use agent_toolkit::prelude::*;

use super::db;
use super::engines::stop_signal;
use super::fixture::{self, call};
use super::proxy::CutProxy;

/// A Postgres cluster, a proxy in front of it, and a queue through the proxy.
async fn setup(name: &str) -> Option<(db::Postgres, CutProxy, JobQueue)> {
    let pg = db::Postgres::start()?;
    pg.database(name);
    let proxy = CutProxy::start(pg.port()).await;
    let queue = JobQueue::postgres(&proxy.url(name))
        .await
        .unwrap()
        .name(name)
        .heartbeat(Duration::from_secs(1));
    Some((pg, proxy, queue))
}

fn temp_log(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!(
        "agent-toolkit-{name}-{}-{}.log",
        std::process::id(),
        fastrand_u32()
    ))
}

fn fastrand_u32() -> u32 {
    use std::time::{SystemTime, UNIX_EPOCH};
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0)
}

/// Submit `n` calls of `tool`, run them with a worker, wait until all finished.
async fn run_jobs(queue: &JobQueue, kit: &Toolkit, tool: &str, n: u32, log: &std::path::Path) {
    let ctx = ToolContext::new();
    for i in 0..n {
        let result = kit.call(call(&format!("c{i}"), tool, i, 5), &ctx).await;
        assert!(result.is_pending(), "{result}");
    }
    let worker_kit = fixture::worker_toolkit(log.to_path_buf());
    let (stop, signal) = stop_signal();
    let worker = tokio::spawn(Worker::new(&worker_kit, queue).run_until(signal));
    tokio::time::timeout(Duration::from_secs(60), kit.background().drain())
        .await
        .expect("the jobs finish")
        .unwrap();
    stop.send(()).unwrap();
    worker.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_take_whose_reply_is_lost_is_delivered_to_the_next_take() {
    let Some((_pg, proxy, queue)) = setup("lost_take").await else {
        return;
    };
    let kit = fixture::submitter()
        .job_queue(queue.clone())
        .build()
        .unwrap();
    let log = temp_log("lost-take");
    run_jobs(&queue, &kit, "record", 5, &log).await;

    proxy.cut_reply_to("SET taker");
    // Bounded: this test once hung in CI (not reproduced since); a hang fails it in minutes
    // instead of holding the whole run.
    let bound = Duration::from_secs(120);
    let lost = tokio::time::timeout(bound, kit.background().take_finished())
        .await
        .expect("a take whose reply is cut ends (with an error) rather than hanging");
    assert_eq!(proxy.cuts(), 1, "the take's reply was cut");
    assert!(lost.is_err(), "the first take got no reply: {lost:?}");
    let taken = tokio::time::timeout(bound, kit.background().take_finished())
        .await
        .expect("the next take ends")
        .unwrap();
    let mut ids: Vec<_> = taken.iter().map(|r| r.call_id.to_string()).collect();
    ids.sort();
    assert_eq!(
        ids,
        ["c0", "c1", "c2", "c3", "c4"],
        "the next take delivers them"
    );
    let again = kit.background().take_finished().await.unwrap();
    // What came twice, and the ledger's rows, to tell a result handed out twice from a row
    // stored twice (this failed once in CI, on a machine twenty times slower than usual).
    let seen: Vec<_> = again
        .iter()
        .map(|r| (r.call_id.to_string(), r.job))
        .collect();
    let rows: Vec<_> = kit
        .background()
        .finished()
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.id, r.call.id.to_string(), r.taken))
        .collect();
    assert!(
        again.is_empty(),
        "and only once: {seen:?}; the ledger: {rows:?}"
    );
    let _ = std::fs::remove_file(log);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_whose_reply_is_lost_reaches_the_callbacks() {
    let Some((_pg, proxy, queue)) = setup("lost_report").await else {
        return;
    };
    // The jobs finish first, submitted by a toolkit that reports to no one.
    let submitter = fixture::submitter()
        .job_queue(queue.clone())
        .build()
        .unwrap();
    let log = temp_log("lost-report");
    run_jobs(&queue, &submitter, "record", 5, &log).await;

    // Then a toolkit with a callback starts reporting; the reply of its first report is lost.
    proxy.cut_reply_to("SET notifier");
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = seen.clone();
    let kit = fixture::submitter()
        .job_queue(queue.clone())
        .on_tool_result(move |result: &ToolResult| {
            sink.lock().unwrap().push(result.call_id.to_string());
        })
        .build()
        .unwrap();
    let _ = kit.background().pending().await;
    let reported = tokio::time::timeout(Duration::from_secs(20), async {
        while seen.lock().unwrap().len() < 5 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert_eq!(proxy.cuts(), 1, "the report's reply was cut");
    assert!(reported.is_ok(), "reported: {:?}", seen.lock().unwrap());
    let mut ids = seen.lock().unwrap().clone();
    ids.sort();
    assert_eq!(ids, ["c0", "c1", "c2", "c3", "c4"], "each once");
    let _ = std::fs::remove_file(log);
}

/// The worker marks a job of a tool that must not run twice as started; that mark's reply is
/// lost. The tool has not run anywhere: it runs now, once, and its result is the job's — not
/// *outcome unknown*.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_whose_reply_is_lost_still_runs_the_job_once() {
    let Some((_pg, proxy, queue)) = setup("lost_start").await else {
        return;
    };
    let kit = fixture::submitter()
        .job_queue(queue.clone())
        .build()
        .unwrap();
    proxy.cut_reply_to("SET state = 'running'");
    let log = temp_log("lost-start");
    run_jobs(&queue, &kit, "transfer", 1, &log).await;
    assert_eq!(proxy.cuts(), 1, "the start's reply was cut");
    let taken = kit.background().take_finished().await.unwrap();
    assert_eq!(taken.len(), 1);
    assert_eq!(taken[0].model_text(), "transferred 0", "{}", taken[0]);
    let runs = fixture::runs(&log);
    assert_eq!(
        runs.get(&("transfer".into(), 0)).map(Vec::len),
        Some(1),
        "{runs:?}"
    );
    let _ = std::fs::remove_file(log);
}

/// A worker's fetch of jobs commits (the jobs are locked to the worker) but the reply of its
/// `COMMIT` is lost. The worker lives on; the jobs it never started must not stay locked to it
/// forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_fetched_by_a_fetch_whose_reply_is_lost_still_run() {
    let Some((_pg, proxy, queue)) = setup("lost_fetch").await else {
        return;
    };
    let kit = fixture::submitter()
        .job_queue(queue.clone())
        .build()
        .unwrap();
    let ctx = ToolContext::new();
    for i in 0..6u32 {
        let result = kit.call(call(&format!("c{i}"), "record", i, 5), &ctx).await;
        assert!(result.is_pending(), "{result}");
    }
    proxy.cut_reply_after("apalis.get_jobs", "COMMIT");
    let log = temp_log("lost-fetch");
    let worker_kit = fixture::worker_toolkit(log.clone());
    let (stop, signal) = stop_signal();
    let worker = tokio::spawn(Worker::new(&worker_kit, &queue).run_until(signal));
    let drained = tokio::time::timeout(Duration::from_secs(40), kit.background().drain()).await;
    assert_eq!(proxy.cuts(), 1, "the fetch's reply was cut");
    assert!(
        drained.is_ok(),
        "jobs stuck: {:?}",
        kit.background().pending().await
    );
    assert_eq!(kit.background().take_finished().await.unwrap().len(), 6);
    stop.send(()).unwrap();
    worker.await.unwrap().unwrap();
    let _ = std::fs::remove_file(log);
}

/// A turn's background calls are stored in one transaction whose `COMMIT` runs but whose reply
/// is lost. The calls are stored and will run: each must be answered *pending* with its job
/// (the submitter asks the database once it answers again), never "could not be queued" — a
/// call answered with that error whose job then ran would get two results.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submission_whose_commit_reply_is_lost_is_pending_and_runs_once() {
    let Some((_pg, proxy, queue)) = setup("lost_submit").await else {
        return;
    };
    let kit = fixture::submitter()
        .job_queue(queue.clone())
        .build()
        .unwrap();
    proxy.cut_reply_after("INSERT INTO agent_toolkit_jobs", "COMMIT");
    let ctx = ToolContext::new();
    let calls: Vec<_> = (0..3u32)
        .map(|i| call(&format!("c{i}"), "transfer", i, 5))
        .collect();
    let results = kit.call_all(calls, &ctx).await;
    assert_eq!(proxy.cuts(), 1, "the commit's reply was cut");
    let mut jobs = Vec::new();
    for result in &results {
        assert!(result.is_pending(), "stored, so pending: {result}");
        jobs.push(result.job_id().expect("a job"));
    }
    let log = temp_log("lost-submit");
    let worker_kit = fixture::worker_toolkit(log.clone());
    let (stop, signal) = stop_signal();
    let worker = tokio::spawn(Worker::new(&worker_kit, &queue).run_until(signal));
    tokio::time::timeout(Duration::from_secs(60), kit.background().drain())
        .await
        .expect("the jobs finish")
        .unwrap();
    let mut taken: Vec<_> = kit
        .background()
        .take_finished()
        .await
        .unwrap()
        .iter()
        .map(|r| r.job_id().expect("a job"))
        .collect();
    taken.sort();
    jobs.sort();
    assert_eq!(taken, jobs, "each accepted job's result, once");
    let runs = fixture::runs(&log);
    for i in 0..3 {
        assert_eq!(
            runs.get(&("transfer".into(), i)).map(Vec::len),
            Some(1),
            "{runs:?}"
        );
    }
    stop.send(()).unwrap();
    worker.await.unwrap().unwrap();
    let _ = std::fs::remove_file(log);
}
