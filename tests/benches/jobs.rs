//! Durable background jobs: submit → result for a trivial tool, in-process (the default), on
//! SQLite (a temporary file) and on Postgres (a throwaway cluster on loopback, `fsync=off`),
//! with one and two workers, in the same run.
//!
//! - `throughput/*`: one iteration submits a batch of 200 calls at once and waits until every
//!   result has reached the submitting toolkit's results stream (criterion reports jobs/s).
//! - `latency/*`: one call submitted and its result received.
//! - `submit/*`: only the submission (the pending result returned): the cost of persisting a
//!   call, against the in-process queue.
//!
//! Workers run in this process (each its own apalis worker and connections; the 2-worker
//! figures are two `Worker`s of concurrency 16). Run with
//! `cargo bench -p agent-toolkit-examples --features full --bench jobs`.

#[path = "../db/mod.rs"]
mod db;

use std::time::{Duration, Instant};

use agent_toolkit::background::{JobQueue, Worker};
use agent_toolkit::prelude::*;
use criterion::{Criterion, Throughput, criterion_group};
use futures::StreamExt;

const BATCH: usize = 200;

/// Return `n` (does nothing else).
#[tool(background, idempotent)]
async fn noop(n: u32) -> u32 {
    n
}

fn kit() -> agent_toolkit::toolkit::ToolkitBuilder {
    Toolkit::builder().register(Noop).background_capacity(4096)
}

fn calls(count: usize) -> Vec<ToolCall> {
    (0..count)
        .map(|n| ToolCall::new(format!("c{n}"), "noop", format!(r#"{{"n": {n}}}"#)))
        .collect()
}

/// Submit `count` calls and wait for all their results on `results`.
async fn run_batch(
    toolkit: &Toolkit,
    results: &mut futures::stream::BoxStream<'static, ToolResult>,
    count: usize,
) -> Duration {
    let ctx = ToolContext::new();
    let start = Instant::now();
    let pending =
        futures::future::join_all(calls(count).into_iter().map(|c| toolkit.call(c, &ctx))).await;
    assert!(pending.iter().all(ToolResult::is_pending));
    for received in 0..count {
        let result = tokio::time::timeout(Duration::from_secs(30), results.next())
            .await
            .unwrap_or_else(|_| panic!("only {received} of {count} results arrived in 30 s"))
            .expect("a result");
        assert!(!result.is_error(), "{}", result.model_text());
    }
    start.elapsed()
}

/// A submitting toolkit on `queue`, with `workers` workers serving it.
async fn durable(
    queue: &JobQueue,
    workers: usize,
) -> (Toolkit, Vec<tokio::sync::oneshot::Sender<()>>) {
    let toolkit = kit().job_queue(queue.clone()).build().unwrap();
    let worker_kit = kit().build().unwrap();
    let mut stops = Vec::new();
    for _ in 0..workers {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(
            Worker::new(&worker_kit, queue)
                .concurrency(16)
                .run_until(async {
                    let _ = stopped.await;
                }),
        );
        stops.push(stop);
    }
    (toolkit, stops)
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let sqlite_file = db::SqliteFile::new("bench");
    let pg = db::Postgres::start().expect("Postgres is needed for this bench");
    let url = pg.database("bench");

    let mut setups: Vec<(&str, Toolkit, Vec<tokio::sync::oneshot::Sender<()>>)> = Vec::new();
    setups.push(("in_process", kit().build().unwrap(), Vec::new()));
    rt.block_on(async {
        let sqlite = JobQueue::sqlite(sqlite_file.path())
            .await
            .unwrap()
            .poll_interval(Duration::from_millis(5));
        let (kit, stops) = durable(&sqlite.clone().name("one"), 1).await;
        setups.push(("sqlite_1_worker", kit, stops));
        let postgres = JobQueue::postgres(&url)
            .await
            .unwrap()
            .poll_interval(Duration::from_millis(5));
        let (kit, stops) = durable(&postgres.clone().name("one"), 1).await;
        setups.push(("postgres_1_worker", kit, stops));
        let (kit, stops) = durable(&postgres.clone().name("two"), 2).await;
        setups.push(("postgres_2_workers", kit, stops));
    });

    let mut throughput = c.benchmark_group("throughput");
    throughput
        .sample_size(10)
        .throughput(Throughput::Elements(BATCH as u64));
    for (name, toolkit, _) in &setups {
        let mut results = toolkit.background().results();
        throughput.bench_function(*name, |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        total += run_batch(toolkit, &mut results, BATCH).await;
                    }
                    total
                })
            })
        });
    }
    throughput.finish();

    let mut latency = c.benchmark_group("latency");
    latency.sample_size(20);
    for (name, toolkit, _) in &setups {
        let mut results = toolkit.background().results();
        latency.bench_function(*name, |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        total += run_batch(toolkit, &mut results, 1).await;
                    }
                    total
                })
            })
        });
    }
    latency.finish();

    let mut submit = c.benchmark_group("submit");
    submit.sample_size(20);
    for (name, toolkit, _) in &setups {
        let ctx = ToolContext::new();
        submit.bench_function(*name, |b| {
            b.iter(|| {
                rt.block_on(async {
                    let call = ToolCall::new("s", "noop", r#"{"n": 1}"#);
                    assert!(toolkit.call(call, &ctx).await.is_pending());
                })
            })
        });
        // Let the workers catch up before the next engine is measured.
        rt.block_on(async {
            let _ =
                tokio::time::timeout(Duration::from_secs(60), toolkit.background().drain()).await;
        });
    }
    submit.finish();

    for (_, _, stops) in setups {
        for stop in stops {
            let _ = stop.send(());
        }
    }
    drop(pg);
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
