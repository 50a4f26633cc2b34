//! Running a model turn's tool calls: the execution engine.
//!
//! Shows a batch of calls run concurrently with results in call order, a per-tool timeout, a
//! flaky tool retried with backoff until it succeeds, a panicking tool contained, progress
//! events from inside a tool, a `sequential` tool acting as a barrier, an approval hook, and a
//! background job reported when it finishes. Runs offline: `cargo run --example batch`.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use agent_toolkit::prelude::*;
use agent_toolkit::{
    RetryPolicy,
    exec::{ApprovalDecision, ApprovalRequest},
};
use futures::StreamExt;

/// Fetch a web page (simulated: takes `ms` milliseconds).
#[tool(read_only, timeout = "200ms")]
async fn fetch(url: String, ms: u64, #[ctx] progress: ToolEmitter) -> String {
    for step in 1..=3u32 {
        progress.progress(step, Some(3.0), format!("downloading {url}"));
        tokio::time::sleep(Duration::from_millis(ms / 3)).await;
    }
    format!("<html>{url}</html>")
}

static FLAKES: AtomicU32 = AtomicU32::new(0);

/// Query the inventory service, which is busy the first two times.
#[tool(idempotent, retries = 3)]
async fn inventory(sku: String) -> Result<String, ToolError> {
    if FLAKES.fetch_add(1, Ordering::SeqCst) < 2 {
        return Err(ToolError::retryable("inventory service busy"));
    }
    Ok(format!("{sku}: 12 in stock"))
}

/// A tool with a bug.
#[tool]
async fn buggy() -> String {
    panic!("index out of bounds")
}

/// Commit the order; runs alone, after everything before it.
#[tool(sequential, requires_approval)]
async fn commit_order(sku: String, quantity: u32) -> String {
    format!("ordered {quantity} x {sku}")
}

/// Rebuild the search index (slow; runs in the background).
#[tool(background)]
async fn reindex() -> &'static str {
    tokio::time::sleep(Duration::from_millis(150)).await;
    "index rebuilt: 10,482 documents"
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Rust's default hook prints every panic, even one the toolkit contains; keep it short.
    std::panic::set_hook(Box::new(|info| eprintln!("  (a tool panicked: {info})")));
    let toolkit = Toolkit::builder()
        .max_concurrency(8)
        .retry(RetryPolicy::exponential(0, Duration::from_millis(20), 2.0))
        .approval_hook(|req: ApprovalRequest| async move {
            println!(
                "  approval asked for {} {} -> approved",
                req.tool, req.arguments
            );
            ApprovalDecision::Approve
        })
        .register(Fetch)
        .register(Inventory)
        .register(Buggy)
        .register(CommitOrder)
        .register(Reindex)
        .build()?;

    let (ctx, mut progress) = ToolContext::new().progress_channel(64);
    let printer = tokio::spawn(async move {
        while let Some(p) = progress.recv().await {
            println!("  progress [{}] {:?}", p.call_id, p.event);
        }
    });

    let calls = vec![
        ToolCall::new("1", "fetch", r#"{"url": "https://example.com", "ms": 60}"#),
        ToolCall::new(
            "2",
            "fetch",
            r#"{"url": "https://slow.example", "ms": 900}"#,
        ),
        ToolCall::new("3", "inventory", r#"{"sku": "A-42"}"#),
        ToolCall::new("4", "buggy", "{}"),
        ToolCall::new("5", "commit_order", r#"{"sku": "A-42", "quantity": 2}"#),
        ToolCall::new("6", "reindex", "{}"),
    ];
    println!("== one model turn, six calls ==");
    let results = toolkit.call_all(calls, &ctx).await;
    drop(ctx);
    printer.await?;
    for r in &results {
        println!(
            "[{}] {} (attempts: {}) -> {}",
            r.call_id,
            r.name,
            r.attempts,
            r.model_text()
        );
    }

    println!("\n== the background job reports when it is done ==");
    let done = toolkit.background().results().next().await;
    if let Some(r) = done {
        println!("[{}] {} -> {}", r.call_id, r.name, r.model_text());
    }
    Ok(())
}
