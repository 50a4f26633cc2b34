//! Opening a SQLite queue while another process is busy on the file: a worker process running
//! a stream of jobs (which this process submits). Every open must wait for the locks it needs
//! (the 30 s busy timeout), never fail at once with `database is locked`.
//!
//! The open at risk is the first one after a table filled up since the last open, such as the
//! apalis `Workers` table once a worker has registered: opening refreshes the query planner's
//! statistics of such a table (`PRAGMA optimize` runs `ANALYZE`), a write. Here every open finds
//! that state: before each, the statistics of `Workers` are deleted (those of the other tables
//! are kept), as they are on a file where a worker started after the last open.

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use agent_toolkit::prelude::*;
use sqlx::Connection;
use tokio::process::Command;

use super::Db;
use super::crash::child;
use super::fixture::{self, call};

/// Opens of the file while the worker is busy, each by a process of its own.
const OPENS: u32 = 60;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_opens_while_a_worker_process_is_busy_all_succeed() {
    let db = Db::sqlite("busy-opens");
    let Db::Sqlite(file) = &db else {
        unreachable!()
    };
    let dbarg = db.arg();
    let log = std::env::temp_dir().join(format!(
        "agent-toolkit-busy-opens-{}.log",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&log);
    let kit = fixture::submitter()
        .job_queue(db.queue("busy").await)
        .build()
        .unwrap();
    let mut worker = child(&["work", &dbarg, "busy", &log.to_string_lossy(), "16"]).await;

    // A stream of jobs: a batch of 16 short calls every 20 ms, until the opens are done.
    let stop = Arc::new(AtomicBool::new(false));
    let submitted = Arc::new(AtomicU32::new(0));
    let submitting = tokio::spawn({
        let (kit, stop, submitted) = (kit.clone(), stop.clone(), submitted.clone());
        async move {
            let ctx = ToolContext::new();
            while !stop.load(Ordering::Relaxed) {
                let first = submitted.fetch_add(16, Ordering::Relaxed);
                let calls = (first..first + 16)
                    .map(|n| kit.call(call(&format!("call_{n}"), "record", n, 1), &ctx));
                for result in futures::future::join_all(calls).await {
                    assert!(result.is_pending(), "{}", result.model_text());
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    });
    // The worker is registered and busy: it has finished jobs of the stream.
    let finished_before = wait_for_finished(&kit, 1).await;

    // Statistics of every table, then none of `Workers` before each open.
    let options = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(file.path())
        .busy_timeout(Duration::from_secs(30));
    let mut raw = sqlx::SqliteConnection::connect_with(&options)
        .await
        .unwrap();
    sqlx::query("ANALYZE").execute(&mut raw).await.unwrap();
    let started = Instant::now();
    let mut failed = Vec::new();
    for _ in 0..OPENS {
        sqlx::query("DELETE FROM sqlite_stat1 WHERE tbl = 'Workers'")
            .execute(&mut raw)
            .await
            .unwrap();
        let opener = Command::new(env!("CARGO_BIN_EXE_jobs-child"))
            .args(["open-only", &dbarg])
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .output();
        let out = tokio::time::timeout(Duration::from_secs(60), opener)
            .await
            .expect("the opener ends")
            .unwrap();
        let out = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if out != "opened" {
            failed.push(out);
            continue;
        }
        // The open did the write at risk: it analyzed `Workers`.
        let analyzed: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM sqlite_stat1 WHERE tbl = 'Workers'")
                .fetch_one(&mut raw)
                .await
                .unwrap();
        assert!(analyzed > 0, "the open did not analyze `Workers`");
    }
    let took = started.elapsed();
    // Still busy at the end: more jobs finished meanwhile.
    let finished_after = wait_for_finished(&kit, finished_before + 1).await;

    stop.store(true, Ordering::Relaxed);
    submitting.await.unwrap();
    raw.close().await.unwrap();
    // Killed: how the worker stops is not this test's subject (a graceful stop now and then
    // takes 30 s).
    worker.start_kill().unwrap();
    worker.wait().await.unwrap();
    let _ = std::fs::remove_file(&log);
    eprintln!(
        "{} of {OPENS} opens failed, in {took:?}, while the worker finished {} jobs \
         ({} submitted)",
        failed.len(),
        finished_after - finished_before,
        submitted.load(Ordering::Relaxed)
    );
    assert!(
        failed.is_empty(),
        "{} of {OPENS} opens failed while a worker was busy: {failed:#?}",
        failed.len()
    );
}

/// Wait until at least `n` jobs of the queue finished; how many have.
async fn wait_for_finished(kit: &Toolkit, n: usize) -> usize {
    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let done = kit.background().finished().await.unwrap().len();
            if done >= n {
                return done;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the worker finishes jobs")
}
