//! A model turn's background calls are stored in one transaction (one multi-row insert), and
//! one call the database refuses does not take the others of its turn with it.

use std::time::Duration;

use agent_toolkit::background::Worker;
use agent_toolkit::prelude::*;

use super::Db;
use super::db;
use super::engines::stop_signal;
use super::fixture::{self, call};

/// One value from a query.
fn psql_value(url: &str, sql: &str) -> String {
    let out = std::process::Command::new("psql")
        .args([url, "-tAc", sql])
        .output()
        .expect("run psql");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The calls of one `call_all` (what an agent does with a turn's calls) are written by one
/// transaction: their ledger rows and their apalis jobs have one transaction id. Each turn is
/// its own transaction, and every call runs once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turns_background_calls_are_stored_in_one_transaction() {
    let Some(pg) = db::Postgres::start() else {
        return;
    };
    let url = pg.database("turns");
    let db = Db::Postgres(pg, url.clone());
    let queue = db.queue("turns").await;
    let kit = fixture::submitter()
        .job_queue(queue.clone())
        .build()
        .unwrap();
    let ctx = ToolContext::new();
    for turn in 0..3u32 {
        // Repeatable and non-repeatable tools mixed; 40 calls, more than the toolkit's
        // max_concurrency (16), which background calls (they only submit) do not count against.
        let calls: Vec<ToolCall> = (0..40u32)
            .map(|n| {
                let tool = if n % 3 == 0 { "transfer" } else { "record" };
                call(&format!("t{turn}c{n}"), tool, turn * 100 + n, 1)
            })
            .collect();
        let pending = kit.call_all(calls, &ctx).await;
        assert!(pending.iter().all(ToolResult::is_pending), "turn {turn}");
        let transactions = psql_value(
            &url,
            &format!(
                "SELECT count(DISTINCT xmin::text) FROM agent_toolkit_jobs \
                 WHERE call_id LIKE 't{turn}c%'"
            ),
        );
        assert_eq!(transactions, "1", "turn {turn}: its ledger rows");
        let ids: Vec<String> = pending
            .iter()
            .map(|r| r.job_id().unwrap().to_string())
            .collect();
        let with_jobs = psql_value(
            &url,
            &format!(
                "SELECT count(DISTINCT l.xmin::text) || ' ' || count(DISTINCT a.xmin::text) \
                 || ' ' || bool_and(l.xmin::text = a.xmin::text) \
                 FROM agent_toolkit_jobs l JOIN apalis.jobs a \
                 ON convert_from(a.job, 'UTF8')::jsonb ->> 'job' = l.id::text \
                 WHERE l.id IN ({})",
                ids.join(", ")
            ),
        );
        assert_eq!(
            with_jobs, "1 1 true",
            "turn {turn}: rows and apalis jobs together"
        );
    }
    let turns = psql_value(
        &url,
        "SELECT count(DISTINCT xmin::text) FROM agent_toolkit_jobs WHERE call_id LIKE 't%'",
    );
    assert_eq!(turns, "3", "one transaction per turn");

    let log = std::env::temp_dir().join(format!("agent-toolkit-turns-{}.log", std::process::id()));
    let worker_kit = fixture::worker_toolkit(log.clone());
    let (stop, signal) = stop_signal();
    let worker = tokio::spawn(Worker::new(&worker_kit, &queue).run_until(signal));
    tokio::time::timeout(Duration::from_secs(60), kit.background().drain())
        .await
        .expect("the turns' jobs finish")
        .unwrap();
    stop.send(()).unwrap();
    worker.await.unwrap().unwrap();
    let results = kit.background().take_finished().await.unwrap();
    assert_eq!(results.len(), 120);
    assert!(results.iter().all(|r| !r.is_error()), "{results:?}");
    let runs = fixture::runs(&log);
    assert_eq!(runs.len(), 120);
    assert!(runs.values().all(|pids| pids.len() == 1), "{runs:?}");
    // Finished jobs leave nothing behind in apalis's table: the ledger is the record.
    assert_eq!(
        psql_value(
            &url,
            "SELECT count(*) FROM apalis.jobs WHERE job_type = 'turns'"
        ),
        "0"
    );
    let _ = std::fs::remove_file(log);
}

/// In a turn, one call the database refuses to store (a call id with a NUL byte, which Postgres
/// text cannot hold) gets an error result; the other calls of the turn are stored, run and
/// reported as if it were not there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_the_database_refuses_fails_alone() {
    let Some(db) = Db::postgres() else {
        return;
    };
    let queue = db.queue("refused").await;
    let kit = fixture::submitter()
        .job_queue(queue.clone())
        .build()
        .unwrap();
    let ctx = ToolContext::new();
    let calls = vec![
        call("fine-1", "record", 1, 1),
        call("bad\0id", "record", 2, 1),
        call("fine-3", "transfer", 3, 1),
    ];
    let answered = kit.call_all(calls, &ctx).await;
    assert!(answered[0].is_pending(), "{}", answered[0]);
    assert!(answered[2].is_pending(), "{}", answered[2]);
    assert!(answered[1].is_error(), "{:?}", answered[1]);
    assert!(
        answered[1].model_text().contains("could not be queued"),
        "{}",
        answered[1]
    );

    let log =
        std::env::temp_dir().join(format!("agent-toolkit-refused-{}.log", std::process::id()));
    let worker_kit = fixture::worker_toolkit(log.clone());
    let (stop, signal) = stop_signal();
    let worker = tokio::spawn(Worker::new(&worker_kit, &queue).run_until(signal));
    tokio::time::timeout(Duration::from_secs(60), kit.background().drain())
        .await
        .expect("the jobs finish")
        .unwrap();
    stop.send(()).unwrap();
    worker.await.unwrap().unwrap();
    let mut texts: Vec<String> = kit
        .background()
        .take_finished()
        .await
        .unwrap()
        .iter()
        .map(|r| r.model_text().into_owned())
        .collect();
    texts.sort();
    assert_eq!(texts, ["recorded 1", "transferred 3"]);
    let _ = std::fs::remove_file(log);
}
