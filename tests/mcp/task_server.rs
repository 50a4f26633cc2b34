//! `mcp-task-server PORT [DB]` (or `mcp-task-server stdio`): a toolkit whose background tools are served as MCP tasks over
//! streamable HTTP on `127.0.0.1:PORT`, for `tests/mcp/tasks.rs`. With `DB`, the jobs (and so
//! the tasks) live in that SQLite file and a worker of this process runs them: a task
//! survives this process being killed and started again. Without, they live in its memory.
//! Prints `READY <port>` once it accepts connections (PORT 0: any free port). `stdio` serves
//! the same tools over stdio, their jobs in memory.

use std::time::Duration;

use agent_toolkit::background::{JobQueue, Worker};
use agent_toolkit::prelude::*;

/// Write a report on a topic; takes `seconds`.
#[tool(background, read_only)]
async fn slow_report(topic: String, seconds: u64) -> String {
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    format!("report on {topic}")
}

/// Fail after a moment.
#[tool(background)]
async fn failing_job() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_millis(100)).await;
    Err(ToolError::execution("the job failed on purpose"))
}

/// Add two numbers (not a background tool: no tasks).
#[tool(read_only)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn tools() -> agent_toolkit::toolkit::ToolkitBuilder {
    Toolkit::builder()
        .register(SlowReport)
        .register(FailingJob)
        .register(Add)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    if std::env::args().nth(1).as_deref() == Some("stdio") {
        tools().build()?.serve_mcp_stdio().await?;
        return Ok(());
    }
    let port: u16 = args
        .next()
        .ok_or("usage: mcp-task-server PORT [DB]")?
        .parse()?;
    let (toolkit, worker) = match args.next() {
        Some(db) => {
            let queue = JobQueue::sqlite(db)
                .await?
                .heartbeat(Duration::from_secs(1));
            let served = tools().job_queue(queue.clone()).build()?;
            let runs = tools().build()?;
            let worker = tokio::spawn(async move {
                Worker::new(&runs, &queue)
                    .run_until(std::future::pending::<()>())
                    .await
            });
            (served, Some(worker))
        }
        None => (tools().build()?, None),
    };
    let app = axum::Router::new().nest_service("/mcp", toolkit.mcp_http_service());
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!("READY {}", listener.local_addr()?.port());
    axum::serve(listener, app).await?;
    drop(worker);
    Ok(())
}
