//! Deferred tools: not shown up front, found by search, callable once loaded — per scope,
//! like groups — and refused with a hint to search before that.

use std::sync::Arc;

use agent_toolkit::ToolDefinition;
use agent_toolkit::error::ToolErrorKind;
use agent_toolkit::prelude::*;
use agent_toolkit::toolkit::DynamicTools;

use super::{call, err, ok};

/// Current weather for a city.
#[tool(defer_loading)]
fn get_weather(
    /// The city, e.g. "Paris".
    city: String,
) -> String {
    format!("sunny in {city}")
}

/// Add two numbers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Look up an invoice by its number.
#[tool(group = "billing")]
fn find_invoice(number: u32) -> String {
    format!("invoice {number}")
}

/// Refund a payment to the customer's card.
#[tool(group = "billing")]
fn refund_payment(payment_id: String) -> String {
    format!("refunded {payment_id}")
}

fn toolkit() -> Toolkit {
    Toolkit::builder()
        .deferred_group("billing", "Invoices and payments")
        .register(GetWeather)
        .register(Add)
        .register(FindInvoice)
        .register(RefundPayment)
        .build()
        .unwrap()
}

fn names(defs: &[ToolDefinition]) -> Vec<&str> {
    defs.iter().map(|d| d.name()).collect()
}

#[tokio::test]
async fn deferred_tools_are_hidden_found_by_search_and_callable_once_loaded() {
    let toolkit = toolkit();
    assert_eq!(names(&toolkit.definitions()), ["add"]);
    let snapshot = toolkit.snapshot();
    let deferred: Vec<&str> = snapshot.deferred().map(|d| d.name()).collect();
    assert_eq!(deferred, ["get_weather", "find_invoice", "refund_payment"]);
    assert!(toolkit.has_deferred());

    // Called before it is found: refused like a switched-off tool, with the hint to search.
    let refused = call(&toolkit, "get_weather", r#"{"city": "Paris"}"#).await;
    assert_eq!(err(&refused).kind(), ToolErrorKind::Unavailable);
    assert!(
        err(&refused).message().contains("search_tools"),
        "{}",
        err(&refused).message()
    );

    let hits = toolkit.search_tools("what is the weather like in Paris?", 3);
    assert_eq!(hits[0].name, "get_weather");
    assert_eq!(hits[0].summary, "Current weather for a city.");
    let hits = toolkit.search_tools("give my customer a refund", 3);
    assert_eq!(hits[0].name, "refund_payment");

    assert_eq!(
        toolkit.load_tools(["get_weather", "add", "nope"]),
        ["get_weather"]
    );
    // Loading twice loads nothing new.
    assert!(toolkit.load_tools(["get_weather"]).is_empty());
    assert_eq!(names(&toolkit.definitions()), ["get_weather", "add"]);
    assert_eq!(
        ok(&call(&toolkit, "get_weather", r#"{"city": "Paris"}"#).await),
        "sunny in Paris"
    );
}

#[tokio::test]
async fn what_one_view_found_another_did_not() {
    let toolkit = toolkit();
    let (a, b) = (toolkit.view(), toolkit.view());
    a.load_tools(["find_invoice"]);
    assert_eq!(names(&a.definitions()), ["add", "find_invoice"]);
    assert_eq!(names(&b.definitions()), ["add"]);
    assert_eq!(
        ok(&call(&a, "find_invoice", r#"{"number": 7}"#).await),
        "invoice 7"
    );
    assert_eq!(
        err(&call(&b, "find_invoice", r#"{"number": 7}"#).await).kind(),
        ToolErrorKind::Unavailable
    );
    // Found toolkit-wide: found in every view.
    toolkit.load_tools(["refund_payment"]);
    assert_eq!(names(&b.definitions()), ["add", "refund_payment"]);
}

#[tokio::test]
async fn a_group_switched_off_hides_its_tools_found_or_not_and_search_skips_them() {
    let toolkit = toolkit();
    toolkit.load_tools(["find_invoice"]);
    toolkit.set_group_active("billing", false).unwrap();
    assert_eq!(names(&toolkit.definitions()), ["add"]);
    assert_eq!(
        toolkit.snapshot().deferred().len(),
        1,
        "get_weather stays findable"
    );
    assert!(toolkit.search_tools("invoice", 5).is_empty());
    let refused = call(&toolkit, "find_invoice", r#"{"number": 7}"#).await;
    assert!(!err(&refused).message().contains("search_tools"));
    // Loading a tool of a group that is off does nothing.
    assert!(toolkit.load_tools(["refund_payment"]).is_empty());
    toolkit.set_group_active("billing", true).unwrap();
    assert_eq!(names(&toolkit.definitions()), ["add", "find_invoice"]);
}

#[tokio::test]
async fn a_deferred_dynamic_set_is_searched_as_it_changes() {
    let remote = DynamicTools::new();
    let toolkit = Toolkit::builder()
        .register(Add)
        .deferred_group("remote", "An imported server")
        .dynamic("remote", &remote)
        .build()
        .unwrap();
    remote
        .replace(vec![Arc::new(GetWeather) as Arc<dyn AgentTool>])
        .unwrap();
    assert_eq!(names(&toolkit.definitions()), ["add"]);
    assert_eq!(toolkit.search_tools("weather", 5)[0].name, "get_weather");
    let refused = call(&toolkit, "get_weather", r#"{"city": "Oslo"}"#).await;
    assert!(err(&refused).message().contains("search_tools"));
    toolkit.load_tools(["get_weather"]);
    assert_eq!(
        ok(&call(&toolkit, "get_weather", r#"{"city": "Oslo"}"#).await),
        "sunny in Oslo"
    );

    // The set changes: the index follows (the old tool gone, the new one found).
    remote
        .replace(vec![Arc::new(RefundPayment) as Arc<dyn AgentTool>])
        .unwrap();
    assert!(toolkit.search_tools("weather", 5).is_empty());
    assert_eq!(toolkit.search_tools("refund", 5)[0].name, "refund_payment");
    assert_eq!(names(&toolkit.definitions()), ["add"]);
}
