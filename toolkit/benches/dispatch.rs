//! Core figures (issue: core), compared in the same run:
//!
//! - `dispatch/*`: one call of a 3-parameter tool through `Toolkit::call` (parse, resolve,
//!   deserialize, run, serialize the output) against the same work done by hand
//!   (`serde_json::from_str` into the argument struct, a direct call, `serde_json::to_string`).
//! - `definitions/*`: `Toolkit::definitions()` with 10,000 tools in 100 groups, right after a
//!   group toggle (cache rebuilt) and when cached.
//! - `dispatch_traced/*` (with the `otel` feature): the same call with no subscriber, with a
//!   `fmt` layer writing to a sink, with `tracing-opentelemetry` over an SDK tracer provider
//!   whose batch processor exports to nowhere (every span built, sampled, ended and queued, as
//!   with an OTLP exporter), and the last with content recording on.
//!
//! Run with `cargo bench -p agent-toolkit --bench dispatch` (add `--features otel` for the
//! traced group).

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

mod common;

use agent_toolkit::prelude::*;
use common::{ARGS, Add3, Add3Args, add3_direct};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

fn dispatch(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let toolkit = Toolkit::builder().register(Add3).build().unwrap();
    let ctx = ToolContext::new();
    let call = ToolCall::new("call_1", "add3", ARGS);

    let mut group = c.benchmark_group("dispatch");
    group.bench_function("by_hand", |b| {
        b.iter(|| {
            let args: Add3Args = serde_json::from_str(black_box(ARGS)).unwrap();
            let out = add3_direct(args.a, args.b, args.label);
            black_box(serde_json::to_string(&out).unwrap())
        })
    });
    // The tool never waits, so its future completes on the first poll: polling it directly
    // measures the toolkit, not an executor.
    let mut cx = Context::from_waker(Waker::noop());
    group.bench_function("toolkit_call", |b| {
        b.iter_batched(
            || call.clone(),
            |call| {
                let mut fut = pin!(toolkit.call(call, &ctx));
                match fut.as_mut().poll(&mut cx) {
                    Poll::Ready(result) => black_box(result.model_text().len()),
                    Poll::Pending => unreachable!("add3 never waits"),
                }
            },
            BatchSize::SmallInput,
        )
    });
    group.bench_function("toolkit_call_in_tokio", |b| {
        b.to_async(&rt).iter_batched(
            || call.clone(),
            |call| async {
                let result = toolkit.call(call, &ctx).await;
                black_box(result.model_text().len())
            },
            BatchSize::SmallInput,
        )
    });
    // The model's arguments arrive as an owned string: the same baseline, paying for it.
    group.bench_function("by_hand_owned_input", |b| {
        b.iter_batched(
            || ARGS.to_string(),
            |text| {
                let args: Add3Args = serde_json::from_str(&text).unwrap();
                let out = add3_direct(args.a, args.b, args.label);
                black_box(serde_json::to_string(&out).unwrap())
            },
            BatchSize::SmallInput,
        )
    });
    // What the by-hand version does not pay for: the ToolCall's three strings.
    group.bench_function("toolcall_clone", |b| {
        b.iter_batched(|| (), |_| black_box(call.clone()), BatchSize::SmallInput)
    });
    group.finish();
}

#[derive(Serialize, JsonSchema)]
struct Hit {
    title: String,
    score: f64,
}

fn search_direct(query: String, limit: u32, filters: Vec<String>) -> Vec<Hit> {
    (0..limit.min(3))
        .map(|i| Hit {
            title: format!("{} #{i} [{}]", &query[..20], filters.len()),
            score: 1.0 / f64::from(i + 1),
        })
        .collect()
}

/// Search documents.
#[tool]
async fn search(query: String, limit: u32, filters: Vec<String>) -> Json<Vec<Hit>> {
    Json(search_direct(query, limit, filters))
}

#[derive(Deserialize)]
struct SearchArgs {
    query: String,
    limit: u32,
    filters: Vec<String>,
}

/// The same comparison with arguments of a realistic size (a ~300-byte query).
fn dispatch_realistic(c: &mut Criterion) {
    let toolkit = Toolkit::builder().register(Search).build().unwrap();
    let ctx = ToolContext::new();
    let args = serde_json::json!({
        "query": "how do I configure retries with exponential backoff and jitter for idempotent tools when the upstream search API rate-limits us with HTTP 429 and a Retry-After header, and what happens to tools that are not idempotent? Please include examples for both the builder and the attribute forms.",
        "limit": 10,
        "filters": ["docs", "engine", "retries", "2026"]
    })
    .to_string();
    let call = ToolCall::new("call_1", "search", args.clone());
    let mut group = c.benchmark_group("dispatch_300b_args");
    group.bench_function("by_hand_owned_input", |b| {
        b.iter_batched(
            || args.clone(),
            |text| {
                let a: SearchArgs = serde_json::from_str(&text).unwrap();
                black_box(
                    serde_json::to_string(&search_direct(a.query, a.limit, a.filters)).unwrap(),
                )
            },
            BatchSize::SmallInput,
        )
    });
    let mut cx = Context::from_waker(Waker::noop());
    group.bench_function("toolkit_call", |b| {
        b.iter_batched(
            || call.clone(),
            |call| {
                let mut fut = pin!(toolkit.call(call, &ctx));
                match fut.as_mut().poll(&mut cx) {
                    Poll::Ready(result) => black_box(result.model_text().len()),
                    Poll::Pending => unreachable!("search never waits"),
                }
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

/// One tool registered 10,000 times under different names, spread over 100 groups.
fn big_toolkit() -> Toolkit {
    let mut builder = Toolkit::builder();
    for g in 0..100 {
        builder = builder.group(format!("g{g}"), format!("group {g}"));
    }
    for i in 0..10_000 {
        builder = builder
            .register_as(format!("tool_{i}"), Add3)
            .in_group(format!("g{}", i % 100));
    }
    builder.build().unwrap()
}

fn definitions(c: &mut Criterion) {
    let toolkit = big_toolkit();
    let mut group = c.benchmark_group("definitions_10k_tools_100_groups");
    let mut on = false;
    group.bench_function("after_toggle", |b| {
        b.iter(|| {
            on = !on;
            toolkit.set_group_active("g0", on).unwrap();
            black_box(toolkit.definitions().len())
        })
    });
    group.bench_function("cached", |b| {
        b.iter(|| black_box(toolkit.definitions().len()))
    });
    group.bench_function("snapshot_after_toggle", |b| {
        b.iter(|| {
            on = !on;
            toolkit.set_group_active("g0", on).unwrap();
            black_box(toolkit.snapshot().len())
        })
    });
    group.bench_function("snapshot_cached", |b| {
        b.iter(|| black_box(toolkit.snapshot().len()))
    });
    group.finish();
}

/// An exporter that drops what it gets: the cost measured is the spans', not a network's.
#[cfg(feature = "otel")]
#[derive(Debug)]
struct Discard;

#[cfg(feature = "otel")]
impl opentelemetry_sdk::trace::SpanExporter for Discard {
    async fn export(
        &self,
        batch: Vec<opentelemetry_sdk::trace::SpanData>,
    ) -> opentelemetry_sdk::error::OTelSdkResult {
        black_box(batch);
        Ok(())
    }
}

#[cfg(feature = "otel")]
fn dispatch_traced(c: &mut Criterion) {
    use opentelemetry::trace::TracerProvider as _;
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt;

    let plain = Toolkit::builder().register(Add3).build().unwrap();
    let with_content = Toolkit::builder()
        .register(Add3)
        .trace_content(true)
        .build()
        .unwrap();
    let ctx = ToolContext::new();
    let call = ToolCall::new("call_1", "add3", ARGS);
    let mut cx = Context::from_waker(Waker::noop());
    let mut run = |b: &mut criterion::Bencher, toolkit: &Toolkit| {
        b.iter_batched(
            || call.clone(),
            |call| {
                let mut fut = pin!(toolkit.call(call, &ctx));
                match fut.as_mut().poll(&mut cx) {
                    Poll::Ready(result) => black_box(result.model_text().len()),
                    Poll::Pending => unreachable!("add3 never waits"),
                }
            },
            BatchSize::SmallInput,
        )
    };
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_batch_exporter(Discard)
        .build();
    let otel = || {
        tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("bench")))
    };
    let fmt = || {
        tracing_subscriber::registry().with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::sink)
                .with_filter(tracing_subscriber::filter::LevelFilter::INFO),
        )
    };

    let mut group = c.benchmark_group("dispatch_traced");
    group.bench_function("no_subscriber", |b| run(b, &plain));
    group.bench_function("fmt_to_sink", |b| {
        let _on = tracing::subscriber::set_default(fmt());
        run(b, &plain)
    });
    group.bench_function("opentelemetry", |b| {
        let _on = tracing::subscriber::set_default(otel());
        run(b, &plain)
    });
    group.bench_function("opentelemetry_with_content", |b| {
        let _on = tracing::subscriber::set_default(otel());
        run(b, &with_content)
    });
    group.finish();
    let _ = provider.shutdown();
}

#[cfg(feature = "otel")]
criterion_group!(
    benches,
    dispatch,
    dispatch_realistic,
    definitions,
    dispatch_traced
);
#[cfg(not(feature = "otel"))]
criterion_group!(benches, dispatch, dispatch_realistic, definitions);
criterion_main!(benches);
