//! An MCP server over stdio: ordinary `#[tool]` functions served to any MCP client (an IDE, a
//! desktop assistant, another agent) with one call.
//!
//! Shows: a tool with a `Json<T>` return (listed with an `outputSchema`, answered with
//! `structuredContent`), a tool reporting progress through its `ToolEmitter` (sent as
//! `notifications/progress` to clients that ask for it), read-only hints, and a group the
//! client's session unlocks itself (the client is told the tool list changed).
//!
//! Run it with `cargo run --example mcp_server --features mcp`; it then waits for an MCP client
//! on stdin.
//! To use it from an MCP client, add it to the client's configuration, e.g.:
//!
//! ```json
//! {"mcpServers": {"weather": {"command": "cargo", "args": ["run", "--quiet", "--features", "mcp", "--example", "mcp_server"]}}}
//! ```
//!
//! stdout carries the protocol; this program writes its own messages to stderr.

use std::time::Duration;

use agent_toolkit::mcp::{McpServer, McpSession};
use agent_toolkit::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Serialize, JsonSchema)]
struct Forecast {
    /// The city asked about.
    city: String,
    /// One temperature per day, starting today.
    temperatures: Vec<f64>,
    /// `celsius` or `fahrenheit`.
    unit: String,
}

/// Daily temperatures for a city.
#[tool(read_only)]
fn get_forecast(
    /// City name, e.g. "Oslo".
    city: String,
    /// How many days (1 to 7).
    #[arg(default = 3)]
    days: u8,
    /// Temperature unit (default celsius).
    unit: Option<Unit>,
) -> Result<Json<Forecast>, ToolError> {
    if !(1..=7).contains(&days) {
        return Err(ToolError::invalid_arguments(
            "`days` must be between 1 and 7",
        ));
    }
    let base = city.bytes().map(f64::from).sum::<f64>() % 15.0 + 5.0;
    let celsius: Vec<f64> = (0..days).map(|d| base + f64::from(d) * 0.5).collect();
    let (temperatures, unit) = match unit.unwrap_or(Unit::Celsius) {
        Unit::Celsius => (celsius, "celsius"),
        Unit::Fahrenheit => (
            celsius.iter().map(|c| c * 9.0 / 5.0 + 32.0).collect(),
            "fahrenheit",
        ),
    };
    Ok(Json(Forecast {
        city,
        temperatures,
        unit: unit.into(),
    }))
}

/// Check every weather station of a region, one after the other (slow; reports progress).
#[tool(read_only)]
async fn check_stations(
    /// Region name.
    region: String,
    #[ctx] progress: ToolEmitter,
) -> String {
    let stations = ["north", "east", "south", "west"];
    for (i, station) in stations.iter().enumerate() {
        tokio::time::sleep(Duration::from_millis(300)).await;
        progress.progress(
            i as u32 + 1,
            Some(stations.len() as f64),
            format!("{station} station ok"),
        );
    }
    format!(
        "all {} stations of {region} report normally",
        stations.len()
    )
}

/// Switch on the station-maintenance tools for this session.
#[tool]
fn enter_maintenance_mode(#[ctx] session: Ctx<McpSession>) -> Result<&'static str, ToolError> {
    session
        .toolkit()
        .set_group_active("maintenance", true)
        .map_err(|e| ToolError::execution(e.to_string()))?;
    Ok("maintenance tools are available now")
}

/// Restart a weather station.
#[tool(group = "maintenance", destructive)]
fn restart_station(
    /// Station name.
    station: String,
) -> String {
    format!("station {station} restarted")
}

#[tokio::main]
async fn main() {
    let toolkit = Toolkit::builder()
        .inactive_group("maintenance", "Station maintenance")
        .register(GetForecast)
        .register(CheckStations)
        .register(EnterMaintenanceMode)
        .register(RestartStation)
        .timeout(Duration::from_secs(30))
        .build()
        .expect("the toolkit is configured correctly");
    eprintln!(
        "mcp_server: serving {} tools over stdio",
        toolkit.definitions().len()
    );
    let served = McpServer::new(&toolkit)
        .name("weather", env!("CARGO_PKG_VERSION"))
        .instructions(
            "Weather forecasts and station checks. Call enter_maintenance_mode before maintenance.",
        )
        .serve_stdio()
        .await;
    match served {
        Ok(()) => eprintln!("mcp_server: the client disconnected"),
        Err(e) => {
            eprintln!("mcp_server: {e}");
            std::process::exit(1);
        }
    }
}
