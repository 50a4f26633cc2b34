//! Thousands of tools, a few shown: deferred groups, the `search_tools` meta tool, and tools
//! found by search becoming callable.
//!
//! Shows: 2,000 generated tools in 50 deferred groups plus the tools of one imported MCP
//! server (a deferred group too), an agent whose model is shown only `add` and
//! `search_tools`, searches, is told what it found, and calls it in its next step; a call of
//! a tool it never found refused with the hint to search; what each request carried.
//!
//! It runs offline: the model is scripted, and the MCP server is this same program started
//! again in server mode over stdio (as in the `mcp_import` example).
//!
//! Run it with `cargo run --example tool_search --features mcp`.

use std::sync::Arc;

use agent_toolkit::mcp::{McpImport, McpTarget};
use agent_toolkit::prelude::*;
use agent_toolkit::tool::{ToolArgs, ToolFuture, ToolOptions, ToolSpec};
use agent_toolkit::{
    AgentEvent, AgentTool, ReActAgent,
    testing::{ScriptedModel, ScriptedTurn},
};
use futures::StreamExt;
use serde_json::json;

/// Set in the child process: serve the harbour tools instead of importing them.
const SERVE: &str = "TOOL_SEARCH_EXAMPLE_SERVE";

/// Tide tables for a harbour.
#[tool(read_only)]
fn tides(
    /// The harbour, e.g. "Brest".
    harbour: String,
) -> String {
    format!("high tide in {harbour} at 12:40, low tide at 18:55")
}

/// The marine weather forecast for a stretch of coast.
#[tool(read_only)]
fn marine_forecast(coast: String) -> String {
    format!("{coast}: west 4 to 5, good visibility")
}

/// Add two numbers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

const DOMAINS: [&str; 50] = [
    "crm",
    "billing",
    "hr",
    "payroll",
    "inventory",
    "shipping",
    "support",
    "marketing",
    "sales",
    "legal",
    "finance",
    "travel",
    "calendar",
    "email",
    "chat",
    "docs",
    "wiki",
    "search",
    "maps",
    "weather",
    "news",
    "stocks",
    "crypto",
    "banking",
    "insurance",
    "health",
    "fitness",
    "recipes",
    "music",
    "video",
    "photos",
    "social",
    "games",
    "education",
    "jobs",
    "realestate",
    "cars",
    "flights",
    "hotels",
    "restaurants",
    "events",
    "tickets",
    "library",
    "translation",
    "security",
    "devops",
    "database",
    "storage",
    "analytics",
    "iot",
];
const VERBS: [&str; 8] = [
    "list", "get", "create", "update", "delete", "search", "export", "archive",
];
const OBJECTS: [&str; 5] = ["records", "reports", "settings", "attachments", "comments"];

/// One generated catalog tool: it answers with what it was asked.
struct CatalogTool {
    name: String,
    description: String,
}

impl AgentTool for CatalogTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(self.name.clone(), self.description.clone())
            .with_input_schema(json!({
                "type": "object",
                "properties": {"query": {"type": "string", "description": "What to look for"}},
            }))
            .with_options(ToolOptions::default().read_only())
    }

    fn call(&self, args: ToolArgs) -> ToolFuture {
        let text = format!("{} answered {}", self.name, args.raw());
        Box::pin(async move { Ok(ToolOutput::text(text)) })
    }
}

async fn serve() {
    let toolkit = Toolkit::builder()
        .register(Tides)
        .register(MarineForecast)
        .build()
        .expect("the server's toolkit is configured correctly");
    if let Err(e) = toolkit.serve_mcp_stdio().await {
        eprintln!("tool_search (server): {e}");
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::var_os(SERVE).is_some() {
        serve().await;
        return Ok(());
    }
    let server = McpTarget::command(
        std::env::current_exe()?.to_string_lossy(),
        Vec::<String>::new(),
    )
    .env(SERVE, "1");
    let harbour = McpImport::connect(server, "harbour").await?;

    let mut builder = Toolkit::builder()
        .register(Add)
        .deferred_group("harbour", "Tides and marine forecasts (an MCP server)")
        .dynamic("harbour", harbour.tools());
    for domain in DOMAINS {
        builder = builder.deferred_group(domain, format!("{domain} tools"));
        for verb in VERBS {
            for object in OBJECTS {
                let tool = CatalogTool {
                    name: format!("{domain}_{verb}_{object}"),
                    description: format!("{verb} the {object} of the {domain} service."),
                };
                builder = builder.register(tool).in_group(domain);
            }
        }
    }
    let toolkit = builder.build()?;
    let snapshot = toolkit.snapshot();
    println!(
        "{} tools: {} shown up front, {} deferred (found by search)",
        snapshot.len() + snapshot.deferred().len(),
        snapshot.len(),
        snapshot.deferred().len()
    );

    let model = Arc::new(ScriptedModel::new([
        // A tool it was never shown: refused, with the hint to search.
        ScriptedTurn::call("harbour__tides", json!({"harbour": "Brest"})),
        ScriptedTurn::call(
            "search_tools",
            json!({"query": "tide tables for a harbour", "limit": 2}),
        ),
        ScriptedTurn::call("harbour__tides", json!({"harbour": "Brest"})),
        ScriptedTurn::call(
            "search_tools",
            json!({"query": "export the billing reports"}),
        ),
        ScriptedTurn::call("billing_export_reports", json!({"query": "2026-11"})),
        ScriptedTurn::text(
            "High tide in Brest is at 12:40; the November billing report is exported.",
        ),
    ]));
    let mut agent = ReActAgent::builder(model.clone())
        .toolkit(&toolkit)
        .build()?;
    let mut events = std::pin::pin!(
        agent.run_stream("When is high tide in Brest? Then export November's billing report.")
    );
    while let Some(event) = events.next().await {
        match event {
            AgentEvent::ToolCallStarted(call) => println!("→ {} {}", call.name, call.arguments),
            AgentEvent::ToolResult(result) => println!("← {result}"),
            AgentEvent::Final(answer) => println!("answer: {answer}"),
            AgentEvent::Failed(error) => return Err(error.into()),
            _ => {}
        }
    }
    for (n, request) in model.requests().iter().enumerate() {
        let names: Vec<&str> = request.tools.iter().map(|t| t.name()).collect();
        println!(
            "request {}: {} tools: {}",
            n + 1,
            names.len(),
            names.join(", ")
        );
    }
    // What this agent found is its own: the toolkit itself still shows only `add`.
    assert_eq!(toolkit.definitions().len(), 1);
    Ok(())
}
