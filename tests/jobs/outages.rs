//! Repeated database outages: Postgres stopped for 1–5 s at a different moment of each of ten
//! rounds, while calls are submitted, jobs run in a worker and a taker takes results every
//! 100 ms. Nothing may be lost or stranded: every call that was accepted (answered pending) ends
//! with exactly one result, taken exactly once; the queue drains; no call of a tool that must
//! not run twice ran twice.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_toolkit::background::{JobId, JobQueue, Worker};
use agent_toolkit::prelude::*;

use super::db;
use super::engines::stop_signal;
use super::fixture::{self, call};

const ROUNDS: u64 = 10;
const CALLS_PER_ROUND: u32 = 30;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_outages_during_submit_run_and_take_lose_and_strand_nothing() {
    let Some(pg) = db::Postgres::start() else {
        return;
    };
    let url = pg.database("outages");
    let queue = JobQueue::postgres(&url)
        .await
        .unwrap()
        .name("outages")
        .heartbeat(Duration::from_secs(1));
    let kit = fixture::submitter()
        .job_queue(queue.clone())
        .build()
        .unwrap();
    let log =
        std::env::temp_dir().join(format!("agent-toolkit-outages-{}.log", std::process::id()));
    let worker_kit = fixture::worker_toolkit(log.clone());
    let (stop, signal) = stop_signal();
    let worker = tokio::spawn(
        Worker::new(&worker_kit, &queue)
            .concurrency(8)
            .run_until(signal),
    );

    let taken: Arc<Mutex<HashMap<JobId, usize>>> = Arc::default();
    let taking = tokio::spawn({
        let (kit, taken) = (kit.clone(), taken.clone());
        async move {
            loop {
                if let Ok(results) = kit.background().take_finished().await {
                    let mut taken = taken.lock().unwrap();
                    for result in results {
                        *taken.entry(result.job_id().expect("a job")).or_default() += 1;
                    }
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    });

    let mut accepted: Vec<JobId> = Vec::new();
    for round in 0..ROUNDS {
        let submitting = tokio::spawn({
            let kit = kit.clone();
            async move {
                let mut accepted = Vec::new();
                let ctx = ToolContext::new();
                for i in 0..CALLS_PER_ROUND {
                    let n = round as u32 * 1000 + i;
                    let tool = if n.is_multiple_of(2) {
                        "record"
                    } else {
                        "transfer"
                    };
                    let result = kit.call(call(&format!("c{n}"), tool, n, 40), &ctx).await;
                    if let Some(job) = result.job_id().filter(|_| result.is_pending()) {
                        accepted.push(job);
                    }
                    tokio::time::sleep(Duration::from_millis(60)).await;
                }
                accepted
            }
        });
        // A different moment and length each round: 0–1.4 s in, down for 1–5 s.
        let at = Duration::from_millis(round * 997 % 1400);
        let down = Duration::from_millis(1000 + round * 1733 % 4000);
        tokio::time::sleep(at).await;
        pg.stop();
        tokio::time::sleep(down).await;
        pg.restart();
        accepted.extend(submitting.await.unwrap());
    }

    tokio::time::timeout(Duration::from_secs(120), kit.background().drain())
        .await
        .unwrap_or_else(|_| {
            panic!(
                "stranded: {:?}",
                futures::executor::block_on(kit.background().pending())
            )
        })
        .unwrap();
    // Every result is taken within a few takes once all finished.
    let all_taken = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            if taken.lock().unwrap().len() >= accepted.len() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    taking.abort();
    let taken = taken.lock().unwrap().clone();
    assert!(
        all_taken.is_ok(),
        "{} accepted, {} taken",
        accepted.len(),
        taken.len()
    );
    assert!(
        accepted.len() > (ROUNDS as usize) * 5,
        "{} calls accepted",
        accepted.len()
    );
    for job in &accepted {
        assert_eq!(
            taken.get(job),
            Some(&1),
            "job {job} taken {:?} times",
            taken.get(job)
        );
    }
    assert_eq!(
        taken.len(),
        accepted.len(),
        "only accepted jobs have results"
    );
    let runs = fixture::runs(&log);
    let twice: Vec<_> = runs
        .iter()
        .filter(|((tool, _), runs)| tool == "transfer" && runs.len() > 1)
        .collect();
    assert!(twice.is_empty(), "transfers that ran twice: {twice:?}");

    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(60), worker)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let _ = std::fs::remove_file(log);
}
