//! Peer figures: one tool call dispatched by name through `agent_toolkit` and through rig,
//! compared in the same run.
//!
//! `peers_dispatch/*` measures one call of an equivalent 3-parameter tool
//! (`a: i64, b: i64, label: String` -> `{label, total}`), from an owned JSON argument string
//! to the text the model sees:
//!
//! - `agent_toolkit`: `Toolkit::call` on a `ToolCall`, then `ToolResult::model_text()`.
//! - `rig_toolset`: rig's name-keyed registry, `rig_agent::tool::ToolSet::execute` (rig 0.44
//!   moved `ToolSet` out of `rig-core` into `rig-agent` and replaced `ToolSet::call` with
//!   `execute`), then `ToolOutput::render()` on the result.
//! - `by_hand`: the common baseline, `serde_json::from_str` into the argument struct, a direct
//!   call and `serde_json::to_string`.
//!
//! Both dispatch paths are awaited on a tokio current-thread runtime; the argument string (or
//! `ToolCall`) is cloned in the batch setup so both sides start from owned input.
//!
//! rig is only compiled with the `peer-benches` feature, so it stays out of the default
//! dependency tree. Run with
//! `cargo bench -p agent-toolkit-examples --features peer-benches --bench peers`.

use std::convert::Infallible;
use std::hint::black_box;

use agent_toolkit::prelude::*;
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use rig_agent::tool::ToolSet;
use rig_core::tool::{Tool as RigTool, ToolContext as RigToolContext};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, JsonSchema)]
struct Sum {
    label: String,
    total: i64,
}

fn add3_direct(a: i64, b: i64, label: String) -> Sum {
    Sum {
        label,
        total: a + b,
    }
}

/// Add two numbers and label the sum.
#[tool]
async fn add3(a: i64, b: i64, label: String) -> Json<Sum> {
    Json(add3_direct(a, b, label))
}

#[derive(Deserialize)]
struct Add3Args {
    a: i64,
    b: i64,
    label: String,
}

/// The same tool on rig's side.
struct RigAdd3;

impl RigTool for RigAdd3 {
    const NAME: &'static str = "add3";
    type Args = Add3Args;
    type Output = Sum;
    type Error = Infallible;

    fn description(&self) -> String {
        "Add two numbers and label the sum.".to_string()
    }

    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "properties": {
                "a": { "type": "integer" },
                "b": { "type": "integer" },
                "label": { "type": "string" }
            },
            "required": ["a", "b", "label"]
        })
    }

    async fn call(&self, _context: &mut RigToolContext, args: Add3Args) -> Result<Sum, Infallible> {
        Ok(add3_direct(args.a, args.b, args.label))
    }
}

const ARGS: &str = r#"{"a": 40, "b": 2, "label": "answer"}"#;
const EXPECTED: &str = r#"{"label":"answer","total":42}"#;

fn peers_dispatch(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();

    let toolkit = Toolkit::builder().register(Add3).build().unwrap();
    let ctx = ToolContext::new();
    let call = ToolCall::new("call_1", "add3", ARGS);

    let mut rig_tools = ToolSet::default();
    rig_tools.add_tool(RigAdd3);

    // Both sides must succeed and show the model the same text.
    let ours = rt.block_on(toolkit.call(call.clone(), &ctx));
    assert_eq!(ours.model_text(), EXPECTED);
    let theirs = rt.block_on(rig_tools.execute("add3", ARGS, &mut RigToolContext::default()));
    assert!(theirs.is_success(), "{theirs:?}");
    assert_eq!(theirs.output().render(), EXPECTED);

    let mut group = c.benchmark_group("peers_dispatch");
    group.bench_function("agent_toolkit", |b| {
        let (toolkit, ctx) = (&toolkit, &ctx);
        b.to_async(&rt).iter_batched(
            || call.clone(),
            |call| async move {
                let result = toolkit.call(call, ctx).await;
                black_box(result.model_text().len());
                result
            },
            BatchSize::SmallInput,
        )
    });
    group.bench_function("rig_toolset", |b| {
        let rig_tools = &rig_tools;
        b.to_async(&rt).iter_batched(
            || (ARGS.to_string(), RigToolContext::default()),
            |(args, mut context)| async move {
                let result = rig_tools.execute("add3", args, &mut context).await;
                let text = black_box(result.output().render());
                (result, text, context)
            },
            BatchSize::SmallInput,
        )
    });
    group.bench_function("by_hand", |b| {
        b.iter(|| {
            let args: Add3Args = serde_json::from_str(black_box(ARGS)).unwrap();
            let out = add3_direct(args.a, args.b, args.label);
            black_box(serde_json::to_string(&out).unwrap())
        })
    });
    group.finish();
}

criterion_group!(benches, peers_dispatch);
criterion_main!(benches);
