//! The same behaviour on both engines: submit, run, read back, restart, refuse.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_toolkit::background::{JobError, JobQueue, JobStatus, Worker};
use agent_toolkit::error::ToolErrorKind;
use agent_toolkit::prelude::*;
use futures::StreamExt;

use super::Db;
use super::fixture::{self, call};

/// Wait until the queue has no pending job, or fail after `secs`.
async fn settle(kit: &Toolkit, secs: u64) {
    tokio::time::timeout(Duration::from_secs(secs), kit.background().drain())
        .await
        .expect("the queue did not settle in time")
        .expect("the ledger is readable");
}

fn temp_log(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!(
        "agent-toolkit-jobs-{name}-{}-{}.log",
        std::process::id(),
        fastrand_u32()
    ))
}

fn fastrand_u32() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u8(0);
    h.finish() as u32
}

async fn round_trip(db: Db) {
    let queue = db.queue("round-trip").await;
    let delivered: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = delivered.clone();
    let kit = fixture::submitter()
        .job_queue(queue.clone())
        .on_tool_result(move |r| sink.lock().unwrap().push(r.call_id.to_string()))
        .build()
        .unwrap();
    let mut stream = Box::pin(kit.background().results());
    let ctx = ToolContext::new();

    // Stored before answered: the pending result names a job the ledger already has, before
    // any worker exists.
    let pending = kit.call(call("c1", "record", 1, 10), &ctx).await;
    assert!(pending.is_pending(), "{}", pending.model_text());
    let job = pending.job_id().unwrap();
    let record = kit.background().get(job).await.unwrap().unwrap();
    assert_eq!(record.status, JobStatus::Pending);
    assert_eq!(&*record.call.id, "c1");
    assert_eq!(record.call.arguments, r#"{"n": 1, "ms": 10}"#);
    // A call id used again is a job of its own.
    let again = kit.call(call("c1", "transfer", u32::MAX, 10), &ctx).await;
    assert_ne!(again.job_id(), Some(job));
    // Argument errors are answered at once and never queued.
    let bad = kit
        .call(ToolCall::new("c2", "record", r#"{"n": "x"}"#), &ctx)
        .await;
    assert_eq!(bad.error().unwrap().kind(), ToolErrorKind::InvalidArguments);
    // A JSON result, stored and read back as JSON.
    let square = kit
        .call(ToolCall::new("c3", "square", r#"{"n": 12}"#), &ctx)
        .await
        .job_id()
        .unwrap();
    assert_eq!(kit.background().pending().await.unwrap().len(), 3);

    let log = temp_log("round-trip");
    let worker_kit = fixture::worker_toolkit(log.clone());
    let (stop, signal) = stop_signal();
    let worker = tokio::spawn(
        Worker::new(&worker_kit, &queue)
            .concurrency(4)
            .run_until(signal),
    );
    settle(&kit, 30).await;

    let mut streamed = Vec::new();
    while streamed.len() < 3 {
        let r = tokio::time::timeout(Duration::from_secs(10), stream.next())
            .await
            .expect("results are streamed")
            .unwrap();
        streamed.push(r);
    }
    streamed.sort_by_key(|r| r.job_id());
    assert_eq!(streamed[0].model_text(), "recorded 1");
    assert_eq!(
        streamed[0].job,
        Some(agent_toolkit::background::Job::Finished(job))
    );
    assert_eq!(streamed[1].error().unwrap().message(), "no such account");
    assert_eq!(streamed[2].job_id(), Some(square));
    assert_eq!(streamed[2].model_text(), "144");
    assert!(
        streamed[2].output().unwrap().structured().is_some(),
        "still JSON"
    );
    assert_eq!(
        delivered.lock().unwrap().len(),
        3,
        "callbacks heard all three"
    );

    let ledger = kit.background();
    assert_eq!(ledger.finished().await.unwrap().len(), 2);
    assert_eq!(ledger.failed().await.unwrap().len(), 1);
    assert_eq!(ledger.by_call_id("c1").await.unwrap().len(), 2);
    let taken = ledger.take_finished().await.unwrap();
    assert_eq!(taken.len(), 3);
    assert!(
        ledger.take_finished().await.unwrap().is_empty(),
        "taken once"
    );

    stop.send(()).unwrap();
    worker.await.unwrap().unwrap();
    let _ = std::fs::remove_file(log);
}

/// A stop signal for `Worker::run_until`, and the future the worker waits on.
pub fn stop_signal() -> (
    tokio::sync::oneshot::Sender<()>,
    impl std::future::Future<Output = ()> + Send + 'static,
) {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    (tx, async move {
        let _ = rx.await;
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_round_trip() {
    round_trip(Db::sqlite("round-trip")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_round_trip() {
    let Some(db) = Db::postgres() else { return };
    round_trip(db).await;
}

/// A submitting toolkit that is dropped and built again (a restarted agent) still gets the
/// results of the calls it made before.
async fn results_survive_a_restart_of_the_submitter(db: Db) {
    let queue = db.queue("restart").await;
    let ctx = ToolContext::new();
    let jobs = {
        let kit = fixture::submitter()
            .job_queue(queue.clone())
            .build()
            .unwrap();
        let mut jobs = Vec::new();
        for n in 0..5 {
            jobs.push(
                kit.call(call(&format!("r{n}"), "record", n, 1), &ctx)
                    .await
                    .job_id()
                    .unwrap(),
            );
        }
        jobs
    };
    let log = temp_log("restart");
    let worker_kit = fixture::worker_toolkit(log.clone());
    let (stop, signal) = stop_signal();
    let worker = tokio::spawn(Worker::new(&worker_kit, &queue).run_until(signal));

    let heard: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = heard.clone();
    let kit = fixture::submitter()
        .job_queue(queue.clone())
        .on_tool_result(move |r| sink.lock().unwrap().push(r.model_text().into_owned()))
        .build()
        .unwrap();
    settle(&kit, 30).await;
    let taken = kit.background().take_finished().await.unwrap();
    let mut ids: Vec<_> = taken.iter().map(|r| r.job_id().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, jobs);
    tokio::time::timeout(Duration::from_secs(10), async {
        while heard.lock().unwrap().len() < 5 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the restarted submitter's callback hears every result");
    stop.send(()).unwrap();
    worker.await.unwrap().unwrap();
    let _ = std::fs::remove_file(log);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_results_survive_a_restart_of_the_submitter() {
    results_survive_a_restart_of_the_submitter(Db::sqlite("restart")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_results_survive_a_restart_of_the_submitter() {
    let Some(db) = Db::postgres() else { return };
    results_survive_a_restart_of_the_submitter(db).await;
}

/// Call-level context is not carried: a call whose context holds what the tool takes is
/// refused at submission, and a tool the worker lacks ends with a clear error result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_context_and_unknown_tools_get_clear_errors() {
    let db = Db::sqlite("refusals");
    let queue = db.queue("refusals").await;
    let kit = fixture::submitter()
        .job_queue(queue.clone())
        .build()
        .unwrap();

    let ctx = ToolContext::new().with(fixture::Tenant("globex".into()));
    let refused = kit
        .call(ToolCall::new("t1", "tenant_report", "{}"), &ctx)
        .await;
    let error = refused.error().expect("refused at submission");
    assert_eq!(error.kind(), ToolErrorKind::MissingContext);
    assert!(
        error
            .message()
            .contains("takes `Ctx<Tenant>` from the context"),
        "{}",
        error.message()
    );
    assert!(
        error
            .source()
            .unwrap()
            .to_string()
            .contains("ToolkitBuilder::context")
    );
    // Types are told apart by type id, not by name: another type called `Tenant` in the call's
    // context is not what the tool reads, and the call is accepted.
    mod other {
        pub struct Tenant;
    }
    let unrelated = ToolContext::new().with(other::Tenant);
    let accepted = kit
        .call(ToolCall::new("t0", "tenant_report", "{}"), &unrelated)
        .await;
    assert!(accepted.is_pending(), "{accepted}");
    // Without a call-level value, the worker's own toolkit context serves it.
    let plain = ToolContext::new();
    let accepted = kit
        .call(ToolCall::new("t2", "tenant_report", "{}"), &plain)
        .await;
    assert!(accepted.is_pending());
    let unknown = kit
        .call(ToolCall::new("a1", "audit", r#"{"n": 7}"#), &plain)
        .await;
    assert!(unknown.is_pending());

    let log = temp_log("refusals");
    let worker_kit = fixture::worker_toolkit(log.clone());
    let (stop, signal) = stop_signal();
    let worker = tokio::spawn(
        Worker::new(&worker_kit, &queue)
            .name("only-worker")
            .run_until(signal),
    );
    settle(&kit, 30).await;
    let report = kit
        .background()
        .get(accepted.job_id().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(report.result.unwrap().model_text(), "report for acme");
    let audit = kit
        .background()
        .get(unknown.job_id().unwrap())
        .await
        .unwrap()
        .unwrap();
    let error = audit.result.unwrap().outcome.unwrap_err();
    assert_eq!(error.kind(), ToolErrorKind::UnknownTool);
    assert!(
        error.message().contains("no tool named `audit`"),
        "{}",
        error.message()
    );
    stop.send(()).unwrap();
    worker.await.unwrap().unwrap();
    let _ = std::fs::remove_file(log);
}

/// A database URL that is wrong or a server that is not there is a typed error, not a panic.
#[tokio::test]
async fn bad_configuration_is_a_typed_error() {
    let error = agent_toolkit::background::JobQueue::postgres("mysql://nope")
        .await
        .unwrap_err();
    assert!(
        matches!(error, JobError::Config(_) | JobError::Database(_)),
        "{error}"
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let error = agent_toolkit::background::JobQueue::postgres(&format!(
        "postgres://postgres@127.0.0.1:{port}/none"
    ))
    .await
    .unwrap_err();
    let JobError::Database(cause) = &error else {
        panic!("{error:?}")
    };
    assert!(cause.database().contains(&port.to_string()), "{cause}");
    assert!(
        cause.is_retryable(),
        "a database that is not there may come: {cause:?}"
    );
    // The cause is kept whole, not only its text.
    let source = std::error::Error::source(cause).expect("the sqlx error");
    assert!(!source.to_string().is_empty());
}

/// Batches of calls submitted at once while a worker runs and results stream back: every
/// batch completes (SQLite serializes the writers of submissions, the worker and the reports).
async fn batches_while_working(db: Db) {
    let queue = db.queue("batches").await;
    let kit = fixture::submitter()
        .job_queue(queue.clone())
        .build()
        .unwrap();
    let mut results = kit.background().results();
    let log = temp_log("batches");
    let worker_kit = fixture::worker_toolkit(log.clone());
    let (stop, signal) = stop_signal();
    let worker = tokio::spawn(
        Worker::new(&worker_kit, &queue)
            .concurrency(16)
            .run_until(signal),
    );
    let ctx = ToolContext::new();
    for batch in 0..3u32 {
        let calls =
            (0..200u32).map(|n| call(&format!("b{batch}-{n}"), "record", batch * 1000 + n, 0));
        let pending = futures::future::join_all(calls.map(|c| kit.call(c, &ctx))).await;
        assert!(pending.iter().all(ToolResult::is_pending), "batch {batch}");
        for _ in 0..200 {
            tokio::time::timeout(Duration::from_secs(30), results.next())
                .await
                .unwrap_or_else(|_| panic!("batch {batch} did not complete"))
                .unwrap();
        }
    }
    stop.send(()).unwrap();
    worker.await.unwrap().unwrap();
    let _ = std::fs::remove_file(log);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_batches_while_working() {
    batches_while_working(Db::sqlite("batches")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_batches_while_working() {
    let Some(db) = Db::postgres() else { return };
    batches_while_working(db).await;
}

/// Thirty processes open one SQLite file at once, fresh and then existing: every one of them
/// opens the queue and submits a call (they take turns creating the tables, and wait for each
/// other's locks as long as the busy timeout says).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_processes_open_one_sqlite_file_at_once() {
    let file = super::db::SqliteFile::new("many-opens");
    let db = format!("sqlite:{}", file.path().display());
    for round in ["fresh", "existing"] {
        let children: Vec<_> = (0..30)
            .map(|_| {
                tokio::process::Command::new(env!("CARGO_BIN_EXE_jobs-child"))
                    .args(["open", &db, "many"])
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .kill_on_drop(true)
                    .spawn()
                    .expect("start jobs-child")
            })
            .collect();
        let mut failed = Vec::new();
        for child in children {
            let out = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
                .await
                .expect("every process ends")
                .unwrap();
            if !out.status.success() {
                failed.push(
                    String::from_utf8_lossy(&out.stdout).into_owned()
                        + &String::from_utf8_lossy(&out.stderr),
                );
            }
        }
        assert!(
            failed.is_empty(),
            "{round} file: {} of 30 failed: {failed:#?}",
            failed.len()
        );
    }
    let queue = JobQueue::sqlite(file.path()).await.unwrap().name("many");
    let kit = super::fixture::submitter()
        .job_queue(queue)
        .build()
        .unwrap();
    assert_eq!(kit.background().pending().await.unwrap().len(), 60);
}
