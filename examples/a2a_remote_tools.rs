//! Remote tools over A2A: another agent's tools, discovered from its agent card, used in a local
//! toolkit as if they were local — same groups, timeouts, retries, progress and cancellation.
//!
//! Shows `RemoteToolRegistry` discovering the tools of an A2A tool server (skills tagged `tool`,
//! schemas from the card's tools extension), a local `Toolkit` that follows the registry
//! (`dynamic_tools`), a call with its result, a call whose progress streams back to the local
//! progress channel, and a call cut by the local timeout, which cancels the remote task.
//!
//! Run it with `cargo run --example a2a_remote_tools --features a2a`: it starts a small tool
//! server in-process on a free loopback port. To use another server, give its URL:
//! `cargo run --example a2a_tool_server --features a2a` in one terminal, then
//! `cargo run --example a2a_remote_tools --features a2a -- http://127.0.0.1:41241` in another
//! (set `A2A_TOKEN` if the server wants a bearer token).

use std::time::Duration;

use agent_toolkit::RetryPolicy;
use agent_toolkit::a2a::client::{AgentConfig, RemoteToolRegistry};
use agent_toolkit::a2a::server::{A2aToolServer, ServerOptions};
use agent_toolkit::prelude::*;
use agent_toolkit::{Toolkit, context::ProgressEvent};
use serde_json::json;

/// Add two integers.
#[tool(read_only)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Count to `n`, one step every `step_ms` milliseconds, reporting progress.
#[tool(read_only)]
async fn slow_count(
    /// How far to count.
    n: u32,
    /// Milliseconds per step.
    #[arg(default = 100)]
    step_ms: u64,
    #[ctx] progress: ToolEmitter,
) -> String {
    for i in 1..=n {
        tokio::time::sleep(Duration::from_millis(step_ms)).await;
        progress.progress(i, Some(f64::from(n)), format!("counted {i}"));
    }
    format!("counted to {n}")
}

/// Start a tool server in this process (what `examples/a2a_tool_server.rs` runs on its own).
async fn start_server() -> std::io::Result<String> {
    let toolkit = Toolkit::builder()
        .register(Add)
        .register(SlowCount)
        .build()
        .expect("the example toolkit is valid");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    tokio::spawn(
        A2aToolServer::new(&toolkit)
            .options(ServerOptions::new().name("In-process tools"))
            .serve(listener),
    );
    Ok(url)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = match std::env::args().nth(1) {
        Some(url) => url,
        None => {
            let url = start_server().await?;
            println!("started an A2A tool server in-process at {url}");
            url
        }
    };

    // Discover the agent's tools; they are named `tools_<name>` here.
    let registry = RemoteToolRegistry::new();
    let mut agent = AgentConfig::new(&url);
    if let Ok(token) = std::env::var("A2A_TOKEN") {
        agent = agent.bearer_token(token);
    }
    let names = registry.add_agent("tools", agent).await?;
    let remote = registry.agent("tools").expect("just added");
    println!(
        "{} at {} speaks A2A {:?}; tools: {}",
        remote.card().name,
        remote.endpoint(),
        remote.version(),
        names.join(", ")
    );

    // A local toolkit with the remote tools in a group; it follows refreshes of the registry.
    let toolkit = Toolkit::builder()
        .group("remote", "Tools of other agents")
        .dynamic("remote", &registry.dynamic_tools())
        // Connection failures are retried; no call may take more than 2 s in all.
        .retry(RetryPolicy::exponential(2, Duration::from_millis(200), 2.0))
        .total_timeout(Duration::from_secs(2))
        .build()?;
    for def in toolkit.definitions() {
        println!("  {}: {}", def.name(), def.description());
    }

    let ctx = ToolContext::new();
    if names.iter().any(|n| n == "tools_add") {
        let result = toolkit
            .call(
                ToolCall::json("call-1", "tools_add", json!({"a": 2, "b": 3})),
                &ctx,
            )
            .await;
        println!("tools_add(2, 3) = {}", result.model_text());
        // What the remote agent said about the call, for the application (never the model).
        if let Some(output) = result.output() {
            println!(
                "  ran {} ms on the remote agent",
                output
                    .metadata
                    .get("execution_time_ms")
                    .unwrap_or(&json!("?"))
            );
        }
    }

    if names.iter().any(|n| n == "tools_slow_count") {
        // Progress of the remote tool arrives on the local progress channel.
        let (ctx, mut progress) = ToolContext::new().progress_channel(32);
        let printer = tokio::spawn(async move {
            while let Some(event) = progress.recv().await {
                if let ProgressEvent::Progress {
                    done,
                    total,
                    message,
                } = event.event
                {
                    println!("  progress {done}/{}: {message}", total.unwrap_or(0.0));
                }
            }
        });
        let call = ToolCall::json(
            "call-2",
            "tools_slow_count",
            json!({"n": 3, "step_ms": 100}),
        );
        let result = toolkit.call(call, &ctx).await;
        drop(ctx);
        printer.await?;
        println!("tools_slow_count(3) = {}", result.model_text());

        // Too slow for the local 2 s deadline: the call fails here and the remote task is
        // cancelled on the server.
        let call = ToolCall::json(
            "call-3",
            "tools_slow_count",
            json!({"n": 50, "step_ms": 100}),
        );
        let result = toolkit.call(call, &ToolContext::new()).await;
        println!("tools_slow_count(50) = {}", result.model_text());
        // Give the background CancelTask a moment to reach the server before the example ends.
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Ok(())
}
