//! Quickstart: runs offline, with no setup.
//!
//! Shows tools defined with `#[tool]` and `#[tools]`, a hidden `#[preset]` bound at
//! registration, a hidden `#[ctx]` value injected by type, the same function registered twice
//! under two names with different presets, the schemas the model sees in two provider
//! dialects, a group switched on at runtime, and calls — good ones and bad ones — each getting
//! exactly one result.
//!
//! Run it with `cargo run --example quickstart`.

use std::sync::atomic::{AtomicU64, Ordering};

use agent_toolkit::Dialect;
use agent_toolkit::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Who is asking; put in the context by the application, never sent by the model.
struct User {
    name: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Serialize, JsonSchema)]
struct Forecast {
    city: String,
    days: u32,
    temperatures: Vec<f64>,
    unit: &'static str,
}

/// Get the weather forecast for a city.
#[tool(group = "weather", read_only)]
async fn get_weather(
    /// City name, e.g. "Paris".
    city: String,
    /// Temperature unit; Celsius when omitted.
    unit: Option<Unit>,
    /// Number of days to forecast.
    #[arg(default = 1)]
    days: u32,
    #[preset] api_key: String,
    #[ctx] user: Ctx<User>,
) -> Result<Json<Forecast>, ToolError> {
    if city.trim().is_empty() {
        return Err(ToolError::execution("the city name is empty"));
    }
    // A real tool would call a weather API with `api_key` here.
    let base = if api_key.is_empty() { 0.0 } else { 18.0 };
    let (unit, temps) = match unit {
        Some(Unit::Fahrenheit) => (
            "°F",
            (0..days).map(|d| (base + d as f64) * 1.8 + 32.0).collect(),
        ),
        _ => ("°C", (0..days).map(|d| base + d as f64).collect()),
    };
    println!("    (get_weather ran for user {})", user.name);
    Ok(Json(Forecast {
        city,
        days,
        temperatures: temps,
        unit,
    }))
}

/// Search one document index.
#[tool]
fn search(
    /// What to look for.
    query: String,
    #[preset] index: String,
    /// How many hits to return.
    #[arg(default = 3)]
    limit: usize,
) -> String {
    format!("{limit} hits for {query:?} in index {index}")
}

/// Account administration tools, sharing one value.
struct Admin {
    resets: AtomicU64,
}

#[tools]
impl Admin {
    /// Reset a user's password. Destructive.
    #[tool(group = "admin", destructive, requires_approval)]
    async fn reset_password(
        &self,
        /// The account to reset.
        account: String,
    ) -> String {
        let n = self.resets.fetch_add(1, Ordering::Relaxed) + 1;
        format!("password of {account} reset (reset #{n})")
    }

    /// Count the password resets done so far.
    #[tool(group = "admin", read_only)]
    fn reset_count(&self) -> u64 {
        self.resets.load(Ordering::Relaxed)
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let toolkit = Toolkit::builder()
        .group("weather", "Weather lookups")
        .inactive_group("admin", "Account administration")
        .register(GetWeather)
        .preset("api_key", "sk-demo")
        // One function, two tools: each registration binds its own hidden index.
        .register_as("search_docs", Search)
        .preset("index", "docs")
        .register_as("search_tickets", Search)
        .preset("index", "tickets")
        .default_arg("limit", 10)
        .register(Admin {
            resets: AtomicU64::new(0),
        })
        .context(User { name: "ada".into() })
        .build()?;

    println!("== Tools the model sees (admin is off) ==");
    for def in toolkit.definitions() {
        println!("  {}: {}", def.name(), def.description());
    }
    println!("\n== get_weather for OpenAI strict mode ==");
    println!("{:#}", toolkit.definitions_for(Dialect::OpenAiStrict)[0]);
    println!("\n== get_weather for Gemini ==");
    println!("{:#}", toolkit.definitions_for(Dialect::Gemini)[0]);

    let ctx = ToolContext::new();
    let calls = [
        ToolCall::new("1", "get_weather", r#"{"city": "Paris", "days": 2}"#),
        ToolCall::new(
            "2",
            "get_weather",
            r#"{"city": "Oslo", "unit": "fahrenheit"}"#,
        ),
        ToolCall::new("3", "search_docs", r#"{"query": "groups"}"#),
        ToolCall::new("4", "search_tickets", r#"{"query": "login"}"#),
        // Bad calls: each gets an error result the model can act on.
        ToolCall::new(
            "5",
            "get_weather",
            r#"{"city": "Rome", "api_key": "stolen"}"#,
        ),
        ToolCall::new("6", "get_weather", r#"{"days": "three"}"#),
        ToolCall::new("7", "get_weather", r#"{"city": "Rome""#),
        ToolCall::new("8", "reset_password", r#"{"account": "bob"}"#),
        ToolCall::new("9", "get_wether", r#"{}"#),
    ];
    println!("\n== Calls ==");
    for call in calls.clone() {
        println!("  {} {}", call.name, call.arguments);
        println!("    -> {}", toolkit.call(call, &ctx).await.model_text());
    }

    println!("\n== Switch the admin group on ==");
    toolkit.set_group_active("admin", true)?;
    let call = ToolCall::new("10", "reset_password", r#"{"account": "bob"}"#);
    println!("    -> {}", toolkit.call(call, &ctx).await.model_text());
    let call = ToolCall::new("11", "reset_count", "");
    println!("    -> {}", toolkit.call(call, &ctx).await.model_text());

    println!("\n== A view has its own groups ==");
    let view = toolkit.view();
    view.set_group_active("weather", false)?;
    println!(
        "  toolkit: {} tools, view: {} tools",
        toolkit.definitions().len(),
        view.definitions().len()
    );
    Ok(())
}
