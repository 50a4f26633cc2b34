//! Deferred tools in an agent: the `search_tools` meta tool (local search), the provider's own
//! search (deferred tools sent to it, its finds callable), and the tool-list changes recorded
//! for providers that keep their prompt cache.

use std::sync::Arc;

use agent_toolkit::ReActAgent;
use agent_toolkit::agent::ToolSearch;
use agent_toolkit::model::{ChatRequest, Message, ToolChange, ToolFeatures};
use agent_toolkit::prelude::*;
use agent_toolkit::testing::{ScriptedModel, ScriptedTurn};
use serde_json::json;

/// Current weather for a city.
#[tool(group = "weather")]
fn get_weather(
    /// The city, e.g. "Paris".
    city: String,
) -> String {
    format!("sunny in {city}")
}

/// Tide tables for a harbour.
#[tool(group = "weather")]
fn tides(harbour: String) -> String {
    format!("high tide at noon in {harbour}")
}

/// Look up an invoice by its number.
#[tool(group = "billing")]
fn find_invoice(number: u32) -> String {
    format!("invoice {number}")
}

/// Add two numbers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn toolkit() -> Toolkit {
    Toolkit::builder()
        .deferred_group("weather", "Forecasts and tides")
        .deferred_group("billing", "Invoices")
        .register(GetWeather)
        .register(Tides)
        .register(FindInvoice)
        .register(Add)
        .build()
        .unwrap()
}

fn offered(request: &ChatRequest) -> Vec<String> {
    request.tools.iter().map(|t| t.name().to_string()).collect()
}

#[tokio::test]
async fn the_model_searches_and_calls_what_it_found_in_the_next_step() {
    let kit = toolkit();
    let model = Arc::new(
        ScriptedModel::new([])
            .then_expect(
                |req| {
                    (offered(req) == ["add", "search_tools"] && req.deferred_tools.is_empty())
                        .then_some(())
                        .ok_or(format!("first request offers {:?}", offered(req)))
                },
                ScriptedTurn::call(
                    "search_tools",
                    json!({"query": "weather in a city", "limit": 1}),
                ),
            )
            .then_expect(
                |req| {
                    let last = req.messages.last().unwrap();
                    (offered(req) == ["get_weather", "add", "search_tools"]
                        && last
                            .content()
                            .contains("- get_weather(city): Current weather for a city.")
                        && last.as_tool().unwrap().tool_references == ["get_weather"])
                    .then_some(())
                    .ok_or(format!("after the search: {:?} / {:?}", offered(req), last))
                },
                ScriptedTurn::call("get_weather", json!({"city": "Paris"})),
            )
            .then(ScriptedTurn::text("Sunny.")),
    );
    let mut agent = ReActAgent::builder(model.clone())
        .toolkit(&kit)
        .build()
        .unwrap();
    assert_eq!(agent.run("Weather in Paris?").await.unwrap(), "Sunny.");
    let results: Vec<&str> = agent
        .memory()
        .iter()
        .filter_map(Message::as_tool)
        .filter(|m| m.name == "get_weather")
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(results, ["sunny in Paris"]);
    // What this agent found is its own.
    assert_eq!(kit.definitions().len(), 1);
    let other = ReActAgent::builder(ScriptedModel::new([]))
        .toolkit(&kit)
        .build()
        .unwrap();
    assert!(other.toolkit().snapshot().get("get_weather").is_none());
}

#[tokio::test]
async fn a_deferred_tool_called_before_any_search_is_refused_with_the_hint() {
    let model = Arc::new(
        ScriptedModel::new([ScriptedTurn::call("find_invoice", json!({"number": 3}))])
            .then(ScriptedTurn::text("I will search first.")),
    );
    let mut agent = ReActAgent::builder(model.clone())
        .toolkit(&toolkit())
        .build()
        .unwrap();
    agent.run("Invoice 3?").await.unwrap();
    let refusal = agent.memory()[2].as_tool().unwrap();
    assert!(refusal.is_error);
    assert!(
        refusal.content.contains("not available"),
        "{}",
        refusal.content
    );
    assert!(
        refusal.content.contains("search_tools"),
        "{}",
        refusal.content
    );
}

#[tokio::test]
async fn bad_search_arguments_get_a_clear_error_and_an_empty_search_says_so() {
    let model = Arc::new(
        ScriptedModel::new([
            ScriptedTurn::call("search_tools", json!({"limit": 3})),
            ScriptedTurn::call("search_tools", json!({"query": "zebra crossing"})),
        ])
        .then(ScriptedTurn::text("No luck.")),
    );
    let mut agent = ReActAgent::builder(model.clone())
        .toolkit(&toolkit())
        .build()
        .unwrap();
    agent.run("?").await.unwrap();
    let memory = agent.memory();
    assert!(
        memory[2].as_tool().is_some_and(|m| m.is_error)
            && memory[2].content().contains("needs a `query`"),
        "{:?}",
        memory[2]
    );
    assert!(
        memory[4].content().starts_with("No tool matches"),
        "{:?}",
        memory[4]
    );
}

#[tokio::test]
async fn with_the_providers_search_deferred_tools_are_sent_and_its_finds_are_callable() {
    let kit = toolkit();
    let model = Arc::new(
        ScriptedModel::new([])
            .with_tool_features(ToolFeatures::all())
            .then_expect(
                |req| {
                    let deferred: Vec<&str> = req
                        .deferred_tools
                        .iter()
                        .map(|d| d.definition.name())
                        .collect();
                    let groups: Vec<&str> = req
                        .deferred_tools
                        .iter()
                        .map(|d| d.group.as_ref().unwrap().name.as_str())
                        .collect();
                    (offered(req) == ["add"]
                        && deferred == ["get_weather", "tides", "find_invoice"]
                        && groups == ["weather", "weather", "billing"]
                        && req.declared_tools.as_ref().unwrap().len() == 1)
                        .then_some(())
                        .ok_or(format!("first request: {:?} {deferred:?}", offered(req)))
                },
                // The provider's search found it: the model calls it straight away.
                ScriptedTurn::call("tides", json!({"harbour": "Brest"})),
            )
            .then_expect(
                |req| {
                    let deferred: Vec<&str> = req
                        .deferred_tools
                        .iter()
                        .map(|d| d.definition.name())
                        .collect();
                    let changes = req
                        .messages
                        .iter()
                        .filter(|m| matches!(m, Message::ToolChange(_)))
                        .count();
                    // The deferred list keeps its order and members (its bytes stay put); the
                    // provider loaded `tides` itself, so no change is announced.
                    (offered(req) == ["tides", "add"]
                        && deferred == ["get_weather", "tides", "find_invoice"]
                        && changes == 0
                        && req.declared_tools.as_ref().unwrap().len() == 1)
                        .then_some(())
                        .ok_or(format!(
                            "second request: {:?} {deferred:?} {changes}",
                            offered(req)
                        ))
                },
                ScriptedTurn::text("High tide at noon."),
            ),
    );
    let mut agent = ReActAgent::builder(model.clone())
        .toolkit(&kit)
        .build()
        .unwrap();
    assert_eq!(
        agent.run("Tides in Brest?").await.unwrap(),
        "High tide at noon."
    );
    assert_eq!(agent.memory()[2].content(), "high tide at noon in Brest");
}

#[tokio::test]
async fn tool_changes_are_recorded_where_they_happen_and_the_declared_list_stays() {
    // Local search on a provider that keeps its cache: the found tool is announced as added.
    let model = Arc::new(
        ScriptedModel::new([ScriptedTurn::call(
            "search_tools",
            json!({"query": "invoice", "limit": 1}),
        )])
        .with_tool_features(ToolFeatures::all())
        .then_expect(
            |req| {
                let declared: Vec<&str> = req
                    .declared_tools
                    .as_ref()
                    .unwrap()
                    .iter()
                    .map(|d| d.name())
                    .collect();
                let change = match req.messages.last() {
                    Some(Message::ToolChange(change)) => Some(change),
                    _ => None,
                };
                let added: Vec<String> = change
                    .map(|c| c.added.iter().map(|d| d.name().to_string()).collect())
                    .unwrap_or_default();
                (declared == ["add", "search_tools"]
                    && offered(req) == ["find_invoice", "add", "search_tools"]
                    && added == ["find_invoice"])
                .then_some(())
                .ok_or(format!("{declared:?} {:?} {added:?}", offered(req)))
            },
            ScriptedTurn::call("find_invoice", json!({"number": 9})),
        )
        .then(ScriptedTurn::text("Invoice 9.")),
    );
    let mut agent = ReActAgent::builder(model.clone())
        .toolkit(&toolkit())
        .tool_search(ToolSearch::Local)
        .build()
        .unwrap();
    assert_eq!(agent.run("Invoice 9?").await.unwrap(), "Invoice 9.");
    assert_eq!(model.requests().len(), 3);
}

#[tokio::test]
async fn a_group_switched_off_is_announced_as_removed() {
    let model = Arc::new(
        ScriptedModel::new([ScriptedTurn::call(
            "reset_equipped_tools",
            json!({"groups": []}),
        )])
        .with_tool_features(ToolFeatures::default().with_tool_changes(true))
        .then_expect(
            |req| {
                let change = match req.messages.last() {
                    Some(Message::ToolChange(change)) => change.clone(),
                    _ => ToolChange::default(),
                };
                let declared: Vec<&str> = req
                    .declared_tools
                    .as_ref()
                    .unwrap()
                    .iter()
                    .map(|d| d.name())
                    .collect();
                (change.removed == ["get_weather"]
                    && change.added.is_empty()
                    && declared == ["get_weather", "add", "reset_equipped_tools"]
                    && offered(req) == ["add", "reset_equipped_tools"])
                .then_some(())
                .ok_or(format!("{change:?} {declared:?}"))
            },
            ScriptedTurn::text("Unequipped."),
        ),
    );
    let kit = Toolkit::builder()
        .group("weather", "Forecasts")
        .register(GetWeather)
        .register(Add)
        .build()
        .unwrap();
    let mut agent = ReActAgent::builder(model.clone())
        .toolkit(&kit)
        .agent_managed_groups(["weather"])
        .build()
        .unwrap();
    assert_eq!(
        agent.run("Unequip the weather tools.").await.unwrap(),
        "Unequipped."
    );
}

#[test]
fn asking_for_a_native_search_the_model_lacks_fails_at_build() {
    let error = ReActAgent::builder(ScriptedModel::new([]))
        .toolkit(&toolkit())
        .tool_search(ToolSearch::Native)
        .build()
        .unwrap_err();
    assert!(
        error.to_string().contains("no tool search of its own"),
        "{error}"
    );
}
