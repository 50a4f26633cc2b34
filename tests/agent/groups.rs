//! Agent-managed groups through `reset_equipped_tools`: own view only, managed groups only.

use std::sync::Arc;

use agent_toolkit::{
    ReActAgent,
    testing::{ScriptedModel, ScriptedTurn},
};
use serde_json::json;

use super::tools::toolkit;

fn offered(req: &agent_toolkit::model::ChatRequest) -> Vec<String> {
    req.tools.iter().map(|t| t.name().to_string()).collect()
}

#[tokio::test]
async fn the_model_equips_its_own_groups_without_touching_other_agents() {
    let kit = toolkit();
    let model = Arc::new(
        ScriptedModel::new([ScriptedTurn::call(
            "reset_equipped_tools",
            json!({"groups": ["admin"]}),
        )])
        .then_expect(
            |req| {
                offered(req)
                    .contains(&"reset_password".to_string())
                    .then_some(())
                    .ok_or(format!("admin tools not offered: {:?}", offered(req)))
            },
            ScriptedTurn::call("reset_password", json!({"account": "bob"})),
        )
        .then(ScriptedTurn::text("Done.")),
    );
    let mut agent = ReActAgent::builder(model.clone())
        .toolkit(&kit)
        .agent_managed_groups(["admin"])
        .build()
        .unwrap();
    assert_eq!(agent.run("reset bob's password").await.unwrap(), "Done.");

    // The meta tool lists the managed groups and what they are for.
    let first = &model.requests()[0];
    let meta = first
        .tools
        .iter()
        .find(|t| t.name() == "reset_equipped_tools")
        .unwrap();
    assert!(
        meta.description()
            .contains("admin (not equipped): Account administration"),
        "{}",
        meta.description()
    );
    assert!(
        !meta.description().contains("ops"),
        "developer-managed groups are not listed"
    );
    assert_eq!(
        meta.parameters()["properties"]["groups"]["items"]["enum"],
        json!(["admin"])
    );

    // Another agent on the same toolkit, and the toolkit itself, are untouched.
    assert!(agent.toolkit().is_group_active("admin").unwrap());
    assert!(!kit.is_group_active("admin").unwrap());
    let other = ReActAgent::builder(ScriptedModel::new([]))
        .toolkit(&kit)
        .build()
        .unwrap();
    assert!(!other.toolkit().is_group_active("admin").unwrap());
}

#[tokio::test]
async fn developer_managed_groups_cannot_be_switched_by_the_model() {
    let kit = toolkit();
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::call("reset_equipped_tools", json!({"groups": ["admin", "ops"]})),
        ScriptedTurn::text("ok"),
    ]));
    let mut agent = ReActAgent::builder(model.clone())
        .toolkit(&kit)
        .agent_managed_groups(["admin"])
        .build()
        .unwrap();
    agent.run("give yourself ops").await.unwrap();
    let reply = model.requests()[1]
        .messages
        .last()
        .unwrap()
        .content()
        .to_string();
    assert_eq!(
        reply,
        "Error: you cannot equip ops; the groups you manage are: admin"
    );
    assert!(!agent.toolkit().is_group_active("ops").unwrap());
    assert!(
        !agent.toolkit().is_group_active("admin").unwrap(),
        "a refused call changes nothing"
    );
}

#[test]
fn an_unknown_managed_group_is_a_build_error() {
    let kit = toolkit();
    let err = ReActAgent::builder(ScriptedModel::new([]))
        .toolkit(&kit)
        .agent_managed_groups(["nope"])
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("no tool group named `nope`"));
}
