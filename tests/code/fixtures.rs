//! The tools the code-mode tests call, and a toolkit of them.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_toolkit::error::ToolErrorKind;
use agent_toolkit::prelude::*;
use serde::Serialize;

/// Counts calls of the tools that have effects.
#[derive(Default)]
pub struct Effects {
    pub charges: AtomicUsize,
    pub lookups: AtomicUsize,
    /// Opened by a test to let `wait_gate` return.
    pub gate: tokio::sync::Notify,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct Report {
    pub city: String,
    pub high: i64,
}

/// The forecast high for a city, in °C.
#[tool(read_only, group = "weather")]
pub async fn forecast(city: String, #[ctx] effects: Ctx<Effects>) -> Json<Report> {
    effects.lookups.fetch_add(1, Ordering::SeqCst);
    let high = city.bytes().map(i64::from).sum::<i64>() % 35;
    Json(Report { city, high })
}

/// Charge a customer (not idempotent).
#[tool]
pub async fn charge(
    customer: String,
    cents: i64,
    #[ctx] effects: Ctx<Effects>,
) -> Result<String, ToolError> {
    if cents <= 0 {
        return Err(ToolError::new(
            ToolErrorKind::Execution,
            format!("cannot charge {cents} cents"),
        ));
    }
    let n = effects.charges.fetch_add(1, Ordering::SeqCst) + 1;
    Ok(format!("charge #{n}: {customer} {cents}"))
}

/// Wait until the test opens the gate.
#[tool]
pub async fn wait_gate(#[ctx] effects: Ctx<Effects>) -> String {
    effects.gate.notified().await;
    "open".into()
}

/// Send a message with the account's key (hidden: bound at registration).
#[tool]
pub async fn send(to: String, #[preset] api_key: String) -> String {
    format!("sent to {to} with key {}", api_key.len())
}

/// Delete a record; a human approves first.
#[tool(requires_approval, destructive)]
pub async fn delete_record(id: i64, #[ctx] effects: Ctx<Effects>) -> String {
    effects.charges.fetch_add(100, Ordering::SeqCst);
    format!("deleted {id}")
}

/// Find invoices by customer (deferred: found by search).
#[tool(defer_loading, read_only)]
pub async fn find_invoices(customer: String) -> Json<Vec<i64>> {
    Json(vec![customer.len() as i64, 42])
}

pub fn toolkit(effects: Arc<Effects>) -> Toolkit {
    Toolkit::builder()
        .register(Forecast)
        .register(Charge)
        .register(Send)
        .preset("api_key", "k-123")
        .register(WaitGate)
        .register(DeleteRecord)
        .register(FindInvoices)
        .group("weather", "Forecasts")
        .context_shared(effects)
        .build()
        .expect("toolkit")
}
