//! Engine figures (issue: execution engine), compared in the same run:
//!
//! - `engine_call/*` (P2): one call through the full default stack (trace, approval check,
//!   deadline, retry, timeout, panic guard, tool service) — with no limits configured, and
//!   with a per-attempt timeout, a total deadline and a retry policy configured — against the
//!   hand-written baseline (`serde_json::from_str` + direct call + `serde_json::to_string`).
//! - `engine_fanout/1000_x_20ms_cap_1000` (P3): wall time of a batch of 1,000 calls to a tool
//!   that sleeps 20 ms, with the concurrency cap at 1,000; the floor is 20 ms.
//! - `engine_throughput/10000_trivial_cap_64`: a batch of 10,000 trivial calls, cap 64
//!   (criterion reports elements per second).
//!
//! Run with `cargo bench -p agent-toolkit --bench engine`.

use std::hint::black_box;
use std::time::Duration;

mod common;

use agent_toolkit::RetryPolicy;
use agent_toolkit::prelude::*;
use common::{ARGS, Add3, Add3Args, add3_direct};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};

/// Sleep for 20 ms.
#[tool]
async fn nap() -> &'static str {
    tokio::time::sleep(Duration::from_millis(20)).await;
    "rested"
}

/// Return the number.
#[tool]
async fn echo(n: u64) -> u64 {
    n
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn engine_call(c: &mut Criterion) {
    let rt = runtime();
    let plain = Toolkit::builder().register(Add3).build().unwrap();
    let limited = Toolkit::builder()
        .timeout(Duration::from_secs(30))
        .total_timeout(Duration::from_secs(60))
        .retry(RetryPolicy::exponential(3, Duration::from_millis(200), 2.0))
        .register(Add3)
        .build()
        .unwrap();
    let ctx = ToolContext::new();
    let call = ToolCall::new("call_1", "add3", ARGS);
    let mut group = c.benchmark_group("engine_call");
    group.bench_function("by_hand", |b| {
        b.iter(|| {
            let args: Add3Args = serde_json::from_str(black_box(ARGS)).unwrap();
            black_box(serde_json::to_string(&add3_direct(args.a, args.b, args.label)).unwrap())
        })
    });
    for (name, kit) in [("full_stack", &plain), ("full_stack_with_limits", &limited)] {
        group.bench_function(name, |b| {
            b.to_async(&rt).iter_batched(
                || call.clone(),
                |call| async {
                    let result = kit.call(call, &ctx).await;
                    black_box(result.model_text().len())
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

fn engine_fanout(c: &mut Criterion) {
    let rt = runtime();
    let kit = Toolkit::builder()
        .max_concurrency(1000)
        .register(Nap)
        .build()
        .unwrap();
    let ctx = ToolContext::new();
    let calls: Vec<ToolCall> = (0..1000)
        .map(|i| ToolCall::new(format!("c{i}"), "nap", "{}"))
        .collect();
    let mut group = c.benchmark_group("engine_fanout");
    group.sample_size(20);
    group.bench_function("1000_x_20ms_cap_1000", |b| {
        b.to_async(&rt).iter_batched(
            || calls.clone(),
            |calls| async {
                let results = kit.call_all(calls, &ctx).await;
                assert!(results.iter().all(|r| !r.is_error()));
                black_box(results.len())
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

fn engine_throughput(c: &mut Criterion) {
    let rt = runtime();
    let kit = Toolkit::builder()
        .max_concurrency(64)
        .register(Echo)
        .build()
        .unwrap();
    let ctx = ToolContext::new();
    let calls: Vec<ToolCall> = (0..10_000)
        .map(|i| ToolCall::new(format!("c{i}"), "echo", format!(r#"{{"n": {i}}}"#)))
        .collect();
    let mut group = c.benchmark_group("engine_throughput");
    group.throughput(Throughput::Elements(10_000));
    group.sample_size(20);
    group.bench_function("10000_trivial_cap_64", |b| {
        b.to_async(&rt).iter_batched(
            || calls.clone(),
            |calls| async { black_box(kit.call_all(calls, &ctx).await.len()) },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, engine_call, engine_fanout, engine_throughput);
criterion_main!(benches);
