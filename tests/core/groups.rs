//! Groups: several per tool, switched-off tools refused, views with their own state.

use agent_toolkit::error::ToolErrorKind;
use agent_toolkit::prelude::*;

use super::{call, err, ok};

/// In two groups.
#[tool(group = "a", group = "b")]
fn both() -> &'static str {
    "both"
}

/// In group a only.
#[tool(group = "a")]
fn only_a() -> &'static str {
    "a"
}

/// In no group.
#[tool]
fn always() -> &'static str {
    "always"
}

fn kit() -> Toolkit {
    Toolkit::builder()
        .inactive_group("a", "Group A")
        .inactive_group("b", "Group B")
        .register(Both)
        .register(OnlyA)
        .register(Always)
        .build()
        .unwrap()
}

fn names(kit: &Toolkit) -> Vec<String> {
    kit.definitions()
        .iter()
        .map(|d| d.name().to_string())
        .collect()
}

#[tokio::test]
async fn a_tool_is_on_when_any_of_its_groups_is_on() {
    let kit = kit();
    assert_eq!(names(&kit), ["always"]);
    kit.set_group_active("b", true).unwrap();
    assert_eq!(names(&kit), ["both", "always"]);
    kit.set_group_active("a", true).unwrap();
    assert_eq!(names(&kit), ["both", "only_a", "always"]);
    kit.set_group_active("b", false).unwrap();
    assert_eq!(names(&kit), ["both", "only_a", "always"]);
    assert!(kit.is_group_active("a").unwrap());
    assert!(!kit.is_group_active("b").unwrap());
}

#[tokio::test]
async fn switched_off_tools_are_not_callable() {
    let kit = kit();
    let r = call(&kit, "only_a", "{}").await;
    let e = err(&r);
    assert_eq!(e.kind(), ToolErrorKind::Unavailable);
    assert_eq!(
        e.message(),
        "tool `only_a` is not available; available tools: always"
    );
    kit.set_group_active("a", true).unwrap();
    assert_eq!(ok(&call(&kit, "only_a", "{}").await), "a");
}

#[tokio::test]
async fn unknown_groups_are_errors() {
    let e = kit().set_group_active("c", true).unwrap_err();
    assert_eq!(
        e.to_string(),
        "there is no tool group named `c`; groups: a, b"
    );
}

#[tokio::test]
async fn views_toggle_independently() {
    let kit = kit();
    let agent1 = kit.view();
    let agent2 = kit.view();
    agent1.set_group_active("a", true).unwrap();
    assert_eq!(names(&agent1), ["both", "only_a", "always"]);
    assert_eq!(
        names(&agent2),
        ["always"],
        "agent2 does not see agent1's toggle"
    );
    assert_eq!(names(&kit), ["always"], "nor does the toolkit");
    assert_eq!(
        err(&call(&agent2, "only_a", "{}").await).kind(),
        ToolErrorKind::Unavailable
    );
    assert_eq!(ok(&call(&agent1, "only_a", "{}").await), "a");

    // A view follows the toolkit-wide state for groups it never touched...
    kit.set_group_active("b", true).unwrap();
    assert_eq!(names(&agent2), ["both", "always"]);
    // ...but keeps its own choice for groups it did.
    agent1.set_group_active("b", false).unwrap();
    kit.set_group_active("a", false).unwrap();
    assert_eq!(names(&agent1), ["both", "only_a", "always"]);
    // Clones of a view share its state.
    let clone = agent1.clone();
    clone.set_group_active("a", false).unwrap();
    assert_eq!(names(&agent1), ["always"]);
}

#[tokio::test]
async fn definitions_are_cached_until_the_active_set_changes() {
    let kit = kit();
    kit.set_group_active("a", true).unwrap();
    let first = kit.definitions();
    let second = kit.definitions();
    // Same allocation behind each definition: served from the cache, not rebuilt.
    assert!(std::ptr::eq(first[0].parameters(), second[0].parameters()));
    kit.set_group_active("a", true).unwrap(); // no change: cache stays
    assert_eq!(kit.definitions().len(), 3);
    kit.set_group_active("a", false).unwrap();
    assert_eq!(kit.definitions().len(), 1);
}
