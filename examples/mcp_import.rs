//! Importing the tools of an MCP server into a toolkit group, used by a `ReActAgent`.
//!
//! Shows: `McpImport` starting an MCP server as a child process (stdio), its tools registered
//! as a group under prefixed names (`calc__add`, ...) with a map back to the server's names,
//! calls going through the toolkit's engine, the server's progress notifications arriving as
//! the agent's `ToolProgress` events, and the server's structured results.
//!
//! It runs offline: the agent's model is scripted, and the MCP server is this same program
//! started again in server mode (any stdio MCP server would do the same; pass its command line
//! to list its tools instead:
//! `cargo run --example mcp_import --features mcp -- python my_server.py`).
//!
//! Run it with `cargo run --example mcp_import --features mcp`.

use std::time::Duration;

use agent_toolkit::mcp::{McpImport, McpTarget};
use agent_toolkit::prelude::*;
use agent_toolkit::{
    AgentEvent, ReActAgent,
    testing::{ScriptedModel, ScriptedTurn},
};
use futures::StreamExt;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;

/// Set in the child process: serve the calculator tools instead of importing them.
const SERVE: &str = "MCP_IMPORT_EXAMPLE_SERVE";

#[derive(Serialize, JsonSchema)]
struct Sum {
    sum: i64,
}

/// Add two integers.
#[tool(read_only)]
fn add(a: i64, b: i64) -> Json<Sum> {
    Json(Sum { sum: a + b })
}

/// Count slowly up to `n`, reporting each number as progress.
#[tool(read_only)]
async fn count_to(n: u32, #[ctx] progress: ToolEmitter) -> String {
    for i in 1..=n {
        tokio::time::sleep(Duration::from_millis(100)).await;
        progress.progress(i, Some(f64::from(n)), format!("{i}"));
    }
    format!("counted to {n}")
}

async fn serve() {
    let toolkit = Toolkit::builder()
        .register(Add)
        .register(CountTo)
        .build()
        .expect("the server's toolkit is configured correctly");
    if let Err(e) = toolkit.serve_mcp_stdio().await {
        eprintln!("mcp_import (server): {e}");
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::var_os(SERVE).is_some() {
        serve().await;
        return Ok(());
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some((program, rest)) = args.split_first() {
        return list_tools(McpTarget::command(program, rest)).await;
    }

    let server = McpTarget::command(
        std::env::current_exe()?.to_string_lossy(),
        Vec::<String>::new(),
    )
    .env(SERVE, "1");
    let calc = McpImport::connect(server, "calc").await?;
    let toolkit = Toolkit::builder()
        .group("calc", "Calculator tools from an MCP server")
        .dynamic("calc", calc.tools())
        .timeout(Duration::from_secs(10))
        .build()?;
    for def in toolkit.snapshot().iter() {
        let original = calc.original_name(def.name()).unwrap_or_default();
        println!(
            "imported {} (the server's `{original}`): {}",
            def.name(),
            def.description()
        );
    }

    let model = ScriptedModel::new([
        ScriptedTurn::call("calc__add", json!({"a": 20, "b": 22})),
        ScriptedTurn::call("calc__count_to", json!({"n": 3})),
        ScriptedTurn::text("20 + 22 = 42, and I counted to 3."),
    ]);
    let mut agent = ReActAgent::builder(model).toolkit(&toolkit).build()?;
    let mut events = std::pin::pin!(agent.run_stream("Add 20 and 22, then count to 3."));
    while let Some(event) = events.next().await {
        match event {
            AgentEvent::ToolCallStarted(call) => println!("→ {} {}", call.name, call.arguments),
            AgentEvent::ToolProgress(p) => println!("  … {} {:?}", p.tool_name, p.event),
            AgentEvent::ToolResult(result) => println!("← {result}"),
            AgentEvent::Final(answer) => println!("answer: {answer}"),
            AgentEvent::Failed(error) => return Err(error.into()),
            _ => {}
        }
    }
    Ok(())
}

/// List the tools of another server.
async fn list_tools(target: McpTarget) -> Result<(), Box<dyn std::error::Error>> {
    let import = McpImport::connect(target, "server").await?;
    for name in import.tools().names() {
        println!(
            "{name} (the server's `{}`)",
            import.original_name(&name).unwrap_or_default()
        );
    }
    Ok(())
}
