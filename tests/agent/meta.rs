//! The meta tools are tools of the agent's view: `search_tools` and `reset_equipped_tools` run
//! through the toolkit's execution stack like every other call, so a user's tower layer sees
//! them, and the calling view (`#[ctx] toolkit: Toolkit`) is what an ordinary tool uses to do
//! the same.

use std::sync::{Arc, Mutex};

use agent_toolkit::ReActAgent;
use agent_toolkit::prelude::*;
use agent_toolkit::testing::{ScriptedModel, ScriptedTurn};
use serde_json::json;

use super::seen::SeenLayer;

/// Current weather for a city.
#[tool(group = "weather")]
fn get_weather(city: String) -> String {
    format!("sunny in {city}")
}

/// Reset an account's password.
#[tool(group = "admin")]
fn reset_password(account: String) -> String {
    format!("password of {account} reset")
}

/// The groups on in the view this tool is called in: the calling view as an extractor.
#[tool]
fn equipped(#[ctx] toolkit: Toolkit) -> String {
    let on: Vec<String> = toolkit
        .groups()
        .iter()
        .filter(|g| toolkit.is_group_active(&g.name).unwrap_or(false))
        .map(|g| g.name.clone())
        .collect();
    on.join(",")
}

fn toolkit(seen: &Arc<Mutex<Vec<String>>>) -> Toolkit {
    Toolkit::builder()
        .deferred_group("weather", "Forecasts")
        .group("admin", "Account administration")
        .register(GetWeather)
        .register(ResetPassword)
        .register(Equipped)
        .layer(SeenLayer(seen.clone()))
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_users_layer_sees_the_meta_tools_calls_like_any_other() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kit = toolkit(&seen);
    kit.set_group_active("admin", false).unwrap();
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::call("search_tools", json!({"query": "weather in a city"})),
        ScriptedTurn::call("get_weather", json!({"city": "Oslo"})),
        ScriptedTurn::call("reset_equipped_tools", json!({"groups": ["admin"]})),
        ScriptedTurn::call("equipped", json!({})),
        ScriptedTurn::text("Done."),
    ]));
    let mut agent = ReActAgent::builder(model.clone())
        .toolkit(&kit)
        .agent_managed_groups(["admin"])
        .build()
        .unwrap();
    assert_eq!(agent.run("go").await.unwrap(), "Done.");
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "search_tools",
            "get_weather",
            "reset_equipped_tools",
            "equipped"
        ],
        "every call, the meta tools' included, went through the user's layer"
    );
    // The tool with the calling view saw the agent's view (admin equipped there), while the
    // toolkit itself still has it off.
    let results: Vec<String> = agent
        .memory()
        .iter()
        .filter(|m| m.as_tool().is_some())
        .map(|m| m.content().to_string())
        .collect();
    assert!(results[0].contains("get_weather"), "{results:?}");
    assert_eq!(results[3], "weather,admin", "{results:?}");
    assert!(!kit.is_group_active("admin").unwrap());
}

#[tokio::test]
async fn the_calling_view_is_the_handle_the_call_is_made_through() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kit = toolkit(&seen);
    let view = kit.view();
    view.set_group_active("admin", false).unwrap();
    let call = || ToolCall::new("1", "equipped", "{}");
    let through_kit = kit.call(call(), &ToolContext::new()).await;
    assert_eq!(through_kit.model_text(), "weather,admin");
    let through_view = view.call(call(), &ToolContext::new()).await;
    assert_eq!(through_view.model_text(), "weather");
}
