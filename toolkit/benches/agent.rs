//! Agent figure (issue: agent, P6): the agent's own overhead per iteration, model latency
//! excluded — a `ScriptedModel` answers instantly and five trivial tools run.
//!
//! `agent_iteration/one_call_per_turn`: a run of 10 iterations (9 turns calling one tool,
//! then an answer), divided by 10 in the report below. `react_overhead` is the same run minus
//! the cost of the tool calls themselves measured through `Toolkit::call_all` alone, so what
//! remains is the loop: snapshot, request building, memory, events, result messages.
//!
//! Run with `cargo bench -p agent-toolkit --bench agent`.

use std::hint::black_box;

use agent_toolkit::prelude::*;
use agent_toolkit::{
    ReActAgent,
    testing::{ScriptedModel, ScriptedTurn},
};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::json;

/// Tool one.
#[tool]
async fn t1(n: u32) -> u32 {
    n
}
/// Tool two.
#[tool]
async fn t2(n: u32) -> u32 {
    n + 1
}
/// Tool three.
#[tool]
async fn t3(s: String) -> String {
    s
}
/// Tool four.
#[tool]
async fn t4() -> &'static str {
    "four"
}
/// Tool five.
#[tool]
async fn t5(flag: bool) -> bool {
    !flag
}

const TURNS: usize = 10;

fn script() -> ScriptedModel {
    let mut model = ScriptedModel::new([]);
    for i in 0..TURNS - 1 {
        model = model.then(ScriptedTurn::call("t1", json!({"n": i})));
    }
    model.then(ScriptedTurn::text("done"))
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let toolkit = Toolkit::builder()
        .register(T1)
        .register(T2)
        .register(T3)
        .register(T4)
        .register(T5)
        .build()
        .unwrap();
    let ctx = ToolContext::new();
    let mut group = c.benchmark_group("agent_iteration");
    group.bench_function("run_10_iterations", |b| {
        b.to_async(&rt).iter_batched(
            || {
                ReActAgent::builder(script())
                    .toolkit(&toolkit)
                    .max_iterations(TURNS)
                    .build()
                    .unwrap()
            },
            |mut agent| async move { black_box(agent.run("go").await.unwrap().len()) },
            BatchSize::SmallInput,
        )
    });
    group.bench_function("tool_calls_alone_9", |b| {
        b.to_async(&rt).iter(|| async {
            for i in 0..TURNS - 1 {
                let calls = vec![ToolCall::new(
                    format!("c{i}"),
                    "t1",
                    format!(r#"{{"n": {i}}}"#),
                )];
                black_box(toolkit.call_all(calls, &ctx).await.len());
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
