//! A ReAct agent: a model calls tools — several in parallel — sees their results, and answers.
//!
//! By default it runs **offline with a scripted model** (it says so when it starts), so it
//! needs no key. Set `OPENAI_API_KEY` (and optionally `OPENAI_BASE_URL`, `OPENAI_MODEL`, e.g.
//! for Ollama: `OPENAI_BASE_URL=http://localhost:11434/v1 OPENAI_MODEL=llama3.1`) or
//! `ANTHROPIC_API_KEY` to run the same task against a real model.
//!
//! Shows: parallel tool calls, the agent switching on a tool group itself
//! (`reset_equipped_tools`), progress events from a running tool, and an approval asked of the
//! person running the example (here answered automatically), all through `run_stream`.
//!
//! Run it with `cargo run --example react_agent --features openai,anthropic`.

use std::time::Duration;

use agent_toolkit::model::{AnthropicMessages, OpenAiChat};
use agent_toolkit::prelude::*;
use agent_toolkit::{
    AgentEvent, ChatModel, ReActAgent,
    testing::{ScriptedModel, ScriptedTurn},
};
use futures::StreamExt;
use serde_json::json;

/// Current weather of a city.
#[tool(read_only)]
async fn get_weather(city: String) -> String {
    match city.to_lowercase().as_str() {
        "paris" => "Paris: 21°C, sunny".into(),
        "oslo" => "Oslo: 8°C, rain".into(),
        _ => format!("{city}: 15°C, cloudy"),
    }
}

/// Flight options between two cities.
#[tool(read_only)]
async fn search_flights(from: String, to: String, #[ctx] progress: ToolEmitter) -> String {
    for (i, airline) in ["AirOne", "Blue", "Cirrus"].iter().enumerate() {
        progress.progress(i as u32 + 1, Some(3.0), format!("asking {airline}"));
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
    format!("{from} → {to}: AirOne 09:10 €120, Blue 13:45 €95")
}

/// Book a flight. Spends money, so it needs approval.
#[tool(group = "booking", requires_approval, destructive)]
async fn book_flight(flight: String) -> String {
    format!("booked {flight}; confirmation XK42")
}

fn scripted() -> ScriptedModel {
    ScriptedModel::new([
        ScriptedTurn::calls([
            ("get_weather", json!({"city": "Paris"})),
            ("get_weather", json!({"city": "Oslo"})),
            ("search_flights", json!({"from": "Oslo", "to": "Paris"})),
        ]),
        ScriptedTurn::call("reset_equipped_tools", json!({"groups": ["booking"]})),
        ScriptedTurn::call("book_flight", json!({"flight": "Blue 13:45"})),
        ScriptedTurn::text(
            "Paris is 21°C and sunny (Oslo: 8°C, rain). I booked the cheaper Blue flight at 13:45 for €95; your confirmation is XK42.",
        ),
    ])
}

/// A real model if a key is set, else the scripted one.
fn model() -> Result<Box<dyn ChatModel>, Box<dyn std::error::Error>> {
    if std::env::var("OPENAI_API_KEY").is_ok() {
        println!("(using an OpenAI-compatible endpoint)");
        return Ok(Box::new(OpenAiChat::from_env()?));
    }
    if std::env::var("ANTHROPIC_API_KEY").is_ok() {
        println!("(using Anthropic)");
        return Ok(Box::new(AnthropicMessages::from_env()?));
    }
    println!("(no OPENAI_API_KEY or ANTHROPIC_API_KEY: running offline with a scripted model)");
    Ok(Box::new(scripted()))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let toolkit = Toolkit::builder()
        .inactive_group("booking", "Booking flights (spends the user's money)")
        .register(GetWeather)
        .register(SearchFlights)
        .register(BookFlight)
        .build()?;
    let mut agent = ReActAgent::builder(model()?)
        .toolkit(&toolkit)
        .system_prompt(
            "You are a travel assistant. Compare the weather, find flights, and book the cheapest \
             one. Booking tools are in the `booking` group: equip it with reset_equipped_tools.",
        )
        .agent_managed_groups(["booking"])
        .max_iterations(8)
        .build()?;

    let task = "I'm in Oslo. Is Paris warmer today? If so, book me the cheapest flight there.";
    println!("user: {task}\n");
    let mut events = Box::pin(agent.run_stream(task));
    while let Some(event) = events.next().await {
        match event {
            AgentEvent::Iteration(n) => println!("— step {n}"),
            AgentEvent::TextDelta(text) => print!("{text}"),
            AgentEvent::ToolCallStarted(call) => println!("  → {}({})", call.name, call.arguments),
            AgentEvent::ToolProgress(p) => println!("    … {:?}", p.event),
            AgentEvent::ToolResult(r) => println!("  ← {}: {}", r.name, r.model_text()),
            AgentEvent::ApprovalRequested(req, responder) => {
                println!(
                    "  ? approve {} {}? (approving for this demo)",
                    req.tool, req.arguments
                );
                responder.approve();
            }
            AgentEvent::Final(_) => println!("\n— done"),
            AgentEvent::Failed(e) => println!("\n— failed: {e}"),
            // Events added in later versions.
            _ => {}
        }
    }
    Ok(())
}
