//! `CodeTool`: code mode registered as the `run_code` tool of a toolkit, running in the view
//! that calls it, the call id as the program id; as a background job of the in-process queue; and
//! `Toolkit::downgrade`.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use agent_toolkit::ToolContext;
use agent_toolkit::code::{CODE_TOOL, CodeMode, CodeTool, JournalStore, MemoryJournalStore};
use agent_toolkit::prelude::*;

use super::fixtures::{Charge, Effects, Forecast, toolkit};
use super::{err, ok};

const PROGRAM: &str = r#"
    const a = await tools.charge({ customer: "acme", cents: 100 });
    const [x, y] = await Promise.all([tools.forecast({ city: "Oslo" }), tools.forecast({ city: "Rome" })]);
    return [a, x.high + y.high];
"#;

fn call(id: &str, code: &str) -> ToolCall {
    ToolCall::new(
        id,
        CODE_TOOL,
        serde_json::json!({ "code": code }).to_string(),
    )
}

fn builder(effects: &Arc<Effects>) -> agent_toolkit::toolkit::ToolkitBuilder {
    Toolkit::builder()
        .register(Forecast)
        .register(Charge)
        .group("weather", "Forecasts")
        .context_shared(effects.clone())
}

#[tokio::test]
async fn run_code_runs_the_program_through_its_toolkit_under_the_call_id() {
    let effects = Arc::new(Effects::default());
    let store = MemoryJournalStore::new();
    let kit = builder(&effects)
        .register(CodeTool::new(CodeMode::new().journal_store(store.clone())))
        .build()
        .unwrap();
    let expected = ok(&CodeMode::new()
        .run(
            &toolkit(Arc::new(Effects::default())),
            "p",
            PROGRAM,
            &ToolContext::new(),
        )
        .await);
    let result = kit.call(call("call_1", PROGRAM), &ToolContext::new()).await;
    assert_eq!(ok(&result), expected);
    assert_eq!(effects.charges.load(Ordering::SeqCst), 1);
    // The program's journal is kept under the call's id.
    let journal = store.load("call_1").await.unwrap().expect("journaled");
    assert!(journal.is_finished());
    assert_eq!(journal.entries().len(), 3);

    // The same call again (a retry, a job delivered again) resumes the program: nothing runs.
    let again = kit.call(call("call_1", PROGRAM), &ToolContext::new()).await;
    assert_eq!(ok(&again), expected);
    assert_eq!(effects.charges.load(Ordering::SeqCst), 1);
    // Another call is another program.
    kit.call(call("call_2", PROGRAM), &ToolContext::new()).await;
    assert_eq!(effects.charges.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn run_code_takes_the_parameters_of_the_code_mode_definition() {
    let effects = Arc::new(Effects::default());
    let with_store = builder(&effects)
        .register(CodeTool::new(
            CodeMode::new().journal_store(MemoryJournalStore::new()),
        ))
        .build()
        .unwrap();
    let definition = with_store.definition(CODE_TOOL).unwrap();
    let mode = CodeMode::new().definition(&with_store);
    assert_eq!(definition.parameters(), mode.parameters());
    assert!(definition.description().contains("tools.NAME(args)"));
    // Resumable with a journal store: declared idempotent, so the queue and retries may run it
    // again. Without one, running it again would repeat its calls.
    assert!(
        with_store
            .options(CODE_TOOL)
            .unwrap()
            .annotations
            .idempotent
    );
    let without = builder(&effects)
        .register(CodeTool::new(CodeMode::new()).description("Run a program."))
        .build()
        .unwrap();
    assert!(!without.options(CODE_TOOL).unwrap().annotations.idempotent);
    assert_eq!(
        without.definition(CODE_TOOL).unwrap().description(),
        "Run a program."
    );

    let bad = without
        .call(
            ToolCall::new("c", CODE_TOOL, r#"{"program": "return 1;"}"#),
            &ToolContext::new(),
        )
        .await;
    assert!(err(&bad).starts_with("InvalidArguments"), "{}", err(&bad));
}

#[tokio::test]
async fn a_code_tool_holds_no_toolkit_and_runs_in_the_calling_view() {
    let effects = Arc::new(Effects::default());
    let kit = builder(&effects)
        .register(CodeTool::new(CodeMode::new()))
        .build()
        .unwrap();
    let weak = kit.downgrade();
    assert!(weak.upgrade().is_some());
    // The tool inside holds no toolkit: no reference cycle keeps it alive.
    drop(kit);
    assert!(
        weak.upgrade().is_none(),
        "the toolkit outlived its last handle"
    );

    // A program runs in the view that called `run_code`: its group state, not the toolkit's.
    let kit = builder(&effects)
        .register(CodeTool::new(CodeMode::new()))
        .build()
        .unwrap();
    let program = "return (await tools.forecast({ city: \"Oslo\" })).city;";
    let view = kit.view();
    view.set_group_active("weather", false).unwrap();
    let refused = view.call(call("c1", program), &ToolContext::new()).await;
    assert!(refused.is_error(), "{}", refused.model_text());
    let ran = kit.call(call("c2", program), &ToolContext::new()).await;
    assert_eq!(ok(&ran), "Oslo");
}

#[tokio::test]
async fn a_weak_view_upgrades_to_the_view_while_it_lives() {
    let kit = toolkit(Arc::new(Effects::default()));
    let view = kit.view();
    view.set_group_active("weather", false).unwrap();
    let weak = view.downgrade();
    let again = weak.upgrade().expect("the view is alive");
    assert!(!again.is_group_active("weather").unwrap());
    assert!(kit.is_group_active("weather").unwrap());
    drop((view, again));
    assert!(weak.upgrade().is_none());
    assert!(kit.downgrade().upgrade().is_some());
}

#[tokio::test]
async fn run_code_in_the_background_answers_pending_and_reports_the_program_result() {
    let effects = Arc::new(Effects::default());
    let kit = builder(&effects)
        .register(CodeTool::new(CodeMode::new()).background())
        .build()
        .unwrap();
    let pending = kit.call(call("bg_1", PROGRAM), &ToolContext::new()).await;
    assert!(pending.is_pending(), "{}", pending.model_text());
    kit.background().drain().await.unwrap();
    let results = kit.background().take_finished().await.unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(&*results[0].call_id, "bg_1");
    let value: serde_json::Value = serde_json::from_str(&ok(&results[0])).unwrap();
    assert_eq!(value[0], "charge #1: acme 100");
    assert_eq!(effects.charges.load(Ordering::SeqCst), 1);
}
