//! The journal: replay answers finished calls from it; a crash leaves a call whose outcome is
//! unknown, which is not run again when it has effects; a program that diverges from its journal
//! is stopped with an error naming the difference.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use agent_toolkit::ToolContext;
use agent_toolkit::code::{CodeMode, Journal, JournalStore, MemoryJournalStore, Outcome};

use super::fixtures::{Effects, toolkit};
use super::{err, ok};

const PROGRAM: &str = r#"
    const a = await tools.charge({ customer: "acme", cents: 100 });
    const [x, y] = await Promise.all([tools.forecast({ city: "Oslo" }), tools.forecast({ city: "Rome" })]);
    const b = await tools.charge({ customer: "acme", cents: Math.floor(Math.random() * 1000) + 1 });
    return [a, x.high, y.high, b];
"#;

#[tokio::test]
async fn a_finished_program_runs_again_from_its_journal_without_calling_anything() {
    let effects = Arc::new(Effects::default());
    let toolkit = toolkit(effects.clone());
    let store = MemoryJournalStore::new();
    let mode = CodeMode::new().journal_store(store.clone());
    let first = ok(&mode.run(&toolkit, "p1", PROGRAM, &ToolContext::new()).await);
    assert_eq!(effects.charges.load(Ordering::SeqCst), 2);
    let journal = store.load("p1").await.unwrap().expect("journaled");
    assert!(journal.is_finished());
    let tools: Vec<&str> = journal.entries().iter().map(|e| e.tool.as_str()).collect();
    assert_eq!(tools, ["charge", "forecast", "forecast", "charge"]);
    let again = ok(&mode.run(&toolkit, "p1", PROGRAM, &ToolContext::new()).await);
    assert_eq!(first, again);
    assert_eq!(
        effects.charges.load(Ordering::SeqCst),
        2,
        "nothing ran again"
    );
}

#[tokio::test]
async fn an_interrupted_program_replays_its_finished_calls_and_runs_the_rest() {
    let effects = Arc::new(Effects::default());
    let toolkit = toolkit(effects.clone());
    let store = MemoryJournalStore::new();
    let mode = CodeMode::new().journal_store(store.clone());
    let first = ok(&mode.run(&toolkit, "p1", PROGRAM, &ToolContext::new()).await);
    // As if the process had died after the forecasts: cut the journal there.
    let mut journal = store.load("p1").await.unwrap().unwrap();
    let cut: Journal = serde_json::from_value({
        let mut v = serde_json::to_value(&journal).unwrap();
        v["entries"].as_array_mut().unwrap().truncate(3);
        v.as_object_mut().unwrap().remove("finished");
        v
    })
    .unwrap();
    journal = cut;
    store.save("p2", &journal).await.unwrap();
    let charges = effects.charges.load(Ordering::SeqCst);
    let lookups = effects.lookups.load(Ordering::SeqCst);
    let resumed = ok(&mode.run(&toolkit, "p2", PROGRAM, &ToolContext::new()).await);
    // Same seed, same answers: the same result, with one new charge (the last) and no lookup.
    let (a, b): (serde_json::Value, serde_json::Value) = (
        serde_json::from_str(&first).unwrap(),
        serde_json::from_str(&resumed).unwrap(),
    );
    assert_eq!(a[0], b[0]);
    assert_eq!((&a[1], &a[2]), (&b[1], &b[2]));
    assert_eq!(effects.charges.load(Ordering::SeqCst), charges + 1);
    assert_eq!(effects.lookups.load(Ordering::SeqCst), lookups);
    assert!(
        b[3].as_str()
            .unwrap()
            .ends_with(a[3].as_str().unwrap().rsplit(' ').next().unwrap()),
        "same random amount: {a} {b}"
    );
}

#[tokio::test]
async fn a_call_cut_off_by_a_crash_runs_again_only_when_idempotent() {
    let effects = Arc::new(Effects::default());
    let toolkit = toolkit(effects.clone());
    let store = MemoryJournalStore::new();
    let mode = CodeMode::new().journal_store(store.clone());
    ok(&mode.run(&toolkit, "p1", PROGRAM, &ToolContext::new()).await);
    let journal = store.load("p1").await.unwrap().unwrap();
    // Cut during the forecasts (read-only: run again) and, separately, during the first charge.
    for (keep, id) in [(3usize, "forecasts"), (1, "charge")] {
        let mut v = serde_json::to_value(&journal).unwrap();
        v.as_object_mut().unwrap().remove("finished");
        let entries = v["entries"].as_array_mut().unwrap();
        entries.truncate(keep);
        entries
            .last_mut()
            .unwrap()
            .as_object_mut()
            .unwrap()
            .remove("outcome");
        store
            .save(id, &serde_json::from_value(v).unwrap())
            .await
            .unwrap();
    }
    let (charges, lookups) = (
        effects.charges.load(Ordering::SeqCst),
        effects.lookups.load(Ordering::SeqCst),
    );
    ok(&mode
        .run(&toolkit, "forecasts", PROGRAM, &ToolContext::new())
        .await);
    assert_eq!(
        effects.lookups.load(Ordering::SeqCst),
        lookups + 1,
        "the cut-off lookup ran again"
    );
    assert_eq!(
        effects.charges.load(Ordering::SeqCst),
        charges + 1,
        "only the last charge ran"
    );
    let charges = effects.charges.load(Ordering::SeqCst);
    let result = mode
        .run(&toolkit, "charge", PROGRAM, &ToolContext::new())
        .await;
    let message = err(&result);
    assert!(
        message.contains("`charge` was running when the program was interrupted"),
        "{message}"
    );
    assert_eq!(
        effects.charges.load(Ordering::SeqCst),
        charges,
        "the cut-off charge did not run again"
    );
    let kept = store.load("charge").await.unwrap().unwrap();
    assert!(matches!(
        kept.entries()[0].outcome,
        Some(Outcome::Error { .. })
    ));
}

#[tokio::test]
async fn a_program_that_diverges_from_its_journal_is_stopped() {
    let effects = Arc::new(Effects::default());
    let toolkit = toolkit(effects.clone());
    let store = MemoryJournalStore::new();
    let mode = CodeMode::new().journal_store(store.clone());
    let code = r#"const r = await tools.forecast({ city: "Oslo" }); return await tools.charge({ customer: "acme", cents: r.high + 1 });"#;
    let mut journal = Journal::new(code);
    // The journal says the forecast was for another city.
    let mut v = serde_json::to_value(&journal).unwrap();
    v["entries"] = serde_json::json!([{"tool": "forecast", "arguments": {"city": "Paris"}, "outcome": {"value": {"city": "Paris", "high": 3}}}]);
    journal = serde_json::from_value(v).unwrap();
    store.save("p", &journal).await.unwrap();
    let message = err(&mode.run(&toolkit, "p", code, &ToolContext::new()).await);
    assert!(message.contains("did not replay as journaled: call #0 was `forecast({\"city\":\"Paris\"})` in the journal but is `forecast({\"city\":\"Oslo\"})` now"), "{message}");
    assert_eq!(effects.charges.load(Ordering::SeqCst), 0);
    // Other code under a journaled id is refused before it runs.
    let message = err(&mode
        .run(&toolkit, "p", "return 1;", &ToolContext::new())
        .await);
    assert!(message.contains("journaled with other code"), "{message}");
}
