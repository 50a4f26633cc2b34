//! Code mode figures (issue 23), compared in the same run:
//!
//! - `code/fresh_program`: a program that returns at once — a new QuickJS runtime and context
//!   on the blocking pool, the prelude, the program, its result back (target < 1 ms).
//! - `code/calls_in_program/10` against `code/toolkit_call/10`: ten calls of the 3-parameter
//!   tool made one after another by a program, and the same ten calls made with
//!   `Toolkit::call`; the difference over ten, minus a fresh program, is the overhead of a call
//!   from inside a program.
//!
//! Run with `cargo bench -p agent-toolkit --features code --bench code`.

use std::hint::black_box;

#[allow(dead_code)]
mod common;

use agent_toolkit::code::CodeMode;
use agent_toolkit::prelude::*;
use common::{ARGS, Add3};
use criterion::{Criterion, criterion_group, criterion_main};

const TEN_CALLS: &str = r#"let total = 0;
for (let i = 0; i < 10; i++) total += (await tools.add3({ a: 40, b: i, label: "answer" })).total;
return total;"#;

fn code(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let toolkit = Toolkit::builder().register(Add3).build().unwrap();
    let ctx = ToolContext::new();
    let mode = CodeMode::new();
    let check = rt.block_on(mode.run(&toolkit, "p", TEN_CALLS, &ctx));
    assert_eq!(check.model_text(), "445");

    let mut group = c.benchmark_group("code");
    group.bench_function("fresh_program", |b| {
        b.to_async(&rt)
            .iter(|| async { black_box(mode.run(&toolkit, "p", "return 1;", &ctx).await) })
    });
    group.bench_function("calls_in_program/10", |b| {
        b.to_async(&rt)
            .iter(|| async { black_box(mode.run(&toolkit, "p", TEN_CALLS, &ctx).await) })
    });
    group.bench_function("toolkit_call/10", |b| {
        b.to_async(&rt).iter(|| async {
            for i in 0..10 {
                let call = ToolCall::new(format!("c{i}"), "add3", ARGS);
                black_box(toolkit.call(call, &ctx).await);
            }
        })
    });
    group.finish();
}

criterion_group!(benches, code);
criterion_main!(benches);
