//! Durable background tools: jobs that survive the process that submitted them.
//!
//! Shows a toolkit submitting `background` calls to a SQLite job queue (one file, no server),
//! a `Worker` running them with its own toolkit, a submitting toolkit that is dropped (a crash
//! or a deploy) and built again, and the new one taking the results of the calls the old one
//! made. Runs offline, with nothing to set up: `cargo run --example durable_jobs --features sqlite`.
//! With Postgres, swap `JobQueue::sqlite(path)` for `JobQueue::postgres(url)` and run workers in
//! as many processes as you like (see the README).

use std::time::Duration;

use agent_toolkit::background::{JobQueue, Worker};
use agent_toolkit::prelude::*;

/// Render a long report (simulated). Idempotent: safe to run again after a crash.
#[tool(background, idempotent)]
async fn render_report(quarter: String, #[ctx] office: Ctx<Office>) -> String {
    tokio::time::sleep(Duration::from_millis(200)).await;
    {
        let Office(city) = &*office;
        format!("{quarter} report for the {city} office: revenue up 12%")
    }
}

/// Email a file (simulated). Not idempotent: never run twice, even after a crash.
#[tool(background)]
async fn send_email(to: String, subject: String) -> String {
    tokio::time::sleep(Duration::from_millis(100)).await;
    format!("sent `{subject}` to {to}")
}

/// A value every worker puts in its toolkit's context.
struct Office(&'static str);

fn tools() -> agent_toolkit::toolkit::ToolkitBuilder {
    Toolkit::builder()
        .register(RenderReport)
        .register(SendEmail)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("durable-jobs-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let queue = JobQueue::sqlite(dir.join("jobs.db")).await?;

    // The submitting side: the toolkit an agent would use. Calls are stored before the pending
    // result comes back.
    let ctx = ToolContext::new();
    let jobs = {
        let agent_toolkit = tools().job_queue(queue.clone()).build()?;
        let report = ToolCall::new("call_1", "render_report", r#"{"quarter": "Q3"}"#);
        let email = ToolCall::new(
            "call_2",
            "send_email",
            r#"{"to": "cfo@example.com", "subject": "Q3 numbers"}"#,
        );
        let mut jobs = Vec::new();
        for call in [report, email] {
            let pending = agent_toolkit.call(call, &ctx).await;
            println!("model sees: {}", pending.model_text());
            jobs.push(pending.job_id().expect("a background job"));
        }
        jobs
        // The submitting toolkit is dropped here, as if its process had crashed.
    };

    // The running side: a worker with its own toolkit (in production, its own process).
    let worker_toolkit = tools().context(Office("Lyon")).build()?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let worker = tokio::spawn(
        Worker::new(&worker_toolkit, &queue)
            .concurrency(4)
            .run_until(async {
                let _ = stopped.await;
            }),
    );

    // A new submitting toolkit on the same queue gets the results of the calls made before.
    let restarted = tools().job_queue(queue.clone()).build()?;
    restarted.background().drain().await?;
    for result in restarted.background().take_finished().await? {
        println!(
            "job {} ({}): {}",
            result.job_id().expect("a job"),
            result.call_id,
            result.model_text()
        );
    }
    assert!(restarted.background().pending().await?.is_empty());
    assert_eq!(restarted.background().finished().await?.len(), jobs.len());

    let _ = stop.send(());
    worker.await??;
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
