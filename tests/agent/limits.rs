//! A model that asks for hundreds of calls in one turn: they run at most `max_concurrency` at a
//! time (16 by default), and each gets exactly one result, in call order.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_toolkit::model::Role;
use agent_toolkit::prelude::*;
use agent_toolkit::toolkit::DEFAULT_MAX_CONCURRENCY;
use agent_toolkit::{
    ReActAgent,
    testing::{ScriptedModel, ScriptedTurn},
};
use serde_json::json;

#[derive(Default)]
struct Running {
    now: AtomicUsize,
    most: AtomicUsize,
}

/// Take a moment, counting how many run at once.
#[tool(read_only)]
async fn fetch(page: u32, #[ctx] running: Ctx<Running>) -> String {
    let now = running.now.fetch_add(1, Ordering::SeqCst) + 1;
    running.most.fetch_max(now, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(2)).await;
    running.now.fetch_sub(1, Ordering::SeqCst);
    format!("page {page}")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_turn_of_800_calls_runs_them_within_the_cap() {
    let running = Arc::new(Running::default());
    let kit = Toolkit::builder()
        .register(Fetch)
        .context_shared(running.clone())
        .build()
        .unwrap();
    let calls: Vec<_> = (0..800)
        .map(|page| ("fetch", json!({"page": page})))
        .collect();
    let model = ScriptedModel::new([
        ScriptedTurn::calls(calls),
        ScriptedTurn::text("Fetched 800 pages."),
    ]);
    let mut agent = ReActAgent::builder(model).toolkit(&kit).build().unwrap();
    assert_eq!(
        agent.run("fetch everything").await.unwrap(),
        "Fetched 800 pages."
    );
    let most = running.most.load(Ordering::SeqCst);
    assert!(
        most <= DEFAULT_MAX_CONCURRENCY && most > 1,
        "{most} ran at once"
    );
    let results: Vec<&str> = agent
        .memory()
        .iter()
        .filter(|m| m.role() == Role::Tool)
        .map(|m| m.content())
        .collect();
    assert_eq!(results.len(), 800);
    assert!(
        results
            .iter()
            .enumerate()
            .all(|(i, r)| *r == format!("page {i}"))
    );
}
