//! Tools for the agent tests.

use std::time::Duration;

use agent_toolkit::prelude::*;

/// Current weather of a city.
#[tool(read_only)]
pub async fn get_weather(city: String) -> String {
    format!("{city}: 21°C, sunny")
}

/// Current time in a time zone.
#[tool(read_only)]
pub async fn get_time(tz: String) -> String {
    format!("12:00 {tz}")
}

/// Stock level of an article.
#[tool(read_only)]
pub async fn lookup_stock(sku: String) -> Result<String, ToolError> {
    if sku.starts_with("A-") {
        Ok(format!("{sku}: 12 in stock"))
    } else {
        Err(ToolError::execution(format!(
            "unknown sku {sku}; skus look like A-1"
        )))
    }
}

/// Reset a password (admin).
#[tool(group = "admin")]
pub async fn reset_password(account: String) -> String {
    format!("password of {account} reset")
}

/// Restart a server (ops).
#[tool(group = "ops")]
pub async fn restart(server: String) -> String {
    format!("{server} restarted")
}

/// Delete a file.
#[tool(requires_approval)]
pub async fn delete(path: String) -> String {
    format!("deleted {path}")
}

/// Look something up and answer with it directly.
#[tool]
pub async fn faq(question: String) -> String {
    format!("FAQ answer to {question:?}: restart the router.")
}

/// Rebuild the index in the background.
#[tool(background)]
pub async fn reindex() -> &'static str {
    tokio::time::sleep(Duration::from_millis(30)).await;
    "index rebuilt"
}

/// Wait a while.
#[tool]
pub async fn wait(ms: u64, #[ctx] emitter: ToolEmitter) -> String {
    emitter.progress(0, Some(1.0), "waiting");
    tokio::time::sleep(Duration::from_millis(ms)).await;
    emitter.progress(1, Some(1.0), "done");
    "waited".into()
}

pub fn toolkit() -> Toolkit {
    Toolkit::builder()
        .inactive_group("admin", "Account administration")
        .inactive_group("ops", "Server operations")
        .register(GetWeather)
        .register(GetTime)
        .register(LookupStock)
        .register(ResetPassword)
        .register(Restart)
        .register(Delete)
        .register(Faq)
        .register(Reindex)
        .register(Wait)
        .build()
        .expect("agent test toolkit")
}
