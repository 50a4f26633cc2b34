//! `AgentInfo`: the agent reference of seeds/003 (`getAgentName(Agent agent)`) — a tool run by
//! an agent learns the agent's name and id, the run and the iteration.

use std::sync::Arc;

use agent_toolkit::model::{Message, Role};
use agent_toolkit::prelude::*;
use agent_toolkit::{
    AgentEvent, ReActAgent,
    testing::{ScriptedModel, ScriptedTurn},
};
use agent_toolkit::{AgentInfo, error::ToolErrorKind};
use futures::StreamExt;
use serde_json::json;

/// Say which agent, run and step this call belongs to.
#[tool]
async fn who_am_i(#[ctx] agent: AgentInfo) -> String {
    format!(
        "{}|{}|{}|{}",
        agent.name, agent.id, agent.run_id, agent.iteration
    )
}

/// Works with or without an agent.
#[tool]
async fn maybe_agent(#[ctx] agent: Option<AgentInfo>) -> String {
    agent.map_or_else(|| "no agent".to_string(), |a| a.name.to_string())
}

fn toolkit() -> Toolkit {
    Toolkit::builder()
        .register(WhoAmI)
        .register(MaybeAgent)
        // The scripts make the same call step after step on purpose, to see each step's
        // information: the loop guard would answer the repeats from the first result.
        .loop_guard(false)
        .build()
        .unwrap()
}

/// Two steps that call `who_am_i`, then an answer.
fn twice() -> ScriptedModel {
    ScriptedModel::new([
        ScriptedTurn::call("who_am_i", json!({})),
        ScriptedTurn::call("who_am_i", json!({})),
        ScriptedTurn::text("done"),
    ])
}

/// `(name, id, run id, iteration)` of a `who_am_i` output.
fn parse(text: &str) -> (String, String, String, usize) {
    let parts: Vec<&str> = text.split('|').collect();
    assert_eq!(parts.len(), 4, "not a who_am_i output: {text}");
    (
        parts[0].into(),
        parts[1].into(),
        parts[2].into(),
        parts[3].parse().unwrap(),
    )
}

/// The `who_am_i` outputs the agent's memory holds from `from` on.
fn outputs(agent: &ReActAgent, from: usize) -> Vec<(String, String, String, usize)> {
    agent.memory()[from..]
        .iter()
        .filter_map(Message::as_tool)
        .filter(|m| m.name == "who_am_i")
        .map(|m| parse(&m.content))
        .collect()
}

#[tokio::test]
async fn a_tool_learns_the_agent_the_run_and_the_step() {
    let kit = toolkit();
    let script = twice()
        .then(ScriptedTurn::call("who_am_i", json!({})))
        .then(ScriptedTurn::text("done again"));
    let mut agent = ReActAgent::builder(script)
        .name("planner")
        .toolkit(&kit)
        .build()
        .unwrap();
    assert_eq!(agent.name(), "planner");
    assert!(!agent.id().is_empty());

    assert_eq!(agent.run("who are you?").await.unwrap(), "done");
    let first = outputs(&agent, 0);
    assert_eq!(first.len(), 2);
    for (i, (name, id, _, iteration)) in first.iter().enumerate() {
        assert_eq!(name, "planner");
        assert_eq!(id, agent.id());
        assert_eq!(*iteration, i + 1, "the step whose call it is");
    }
    assert_eq!(first[0].2, first[1].2, "one run id for the whole run");

    // A second run on the same agent: same agent, new run, steps counted from 1 again.
    let before = agent.memory().len();
    assert_eq!(agent.run("again").await.unwrap(), "done again");
    let second = outputs(&agent, before);
    assert_eq!(second.len(), 1);
    assert_eq!(second[0].1, agent.id());
    assert_eq!(second[0].3, 1);
    assert_ne!(second[0].2, first[0].2, "every run gets its own id");
}

#[tokio::test]
async fn a_streamed_run_supplies_the_same_information() {
    let kit = toolkit();
    let mut agent = ReActAgent::builder(twice())
        .name("streamer")
        .toolkit(&kit)
        .build()
        .unwrap();
    let id = agent.id().to_string();
    let events: Vec<AgentEvent> = agent.run_stream("who are you?").collect().await;
    let seen: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolResult(r) => Some(parse(&r.model_text())),
            _ => None,
        })
        .collect();
    assert_eq!(seen.len(), 2);
    assert_eq!(
        seen.iter()
            .map(|(n, i, _, step)| (n.as_str(), i.as_str(), *step))
            .collect::<Vec<_>>(),
        [("streamer", id.as_str(), 1), ("streamer", id.as_str(), 2)]
    );
    assert_eq!(seen[0].2, seen[1].2);
    assert!(matches!(events.last(), Some(AgentEvent::Final(_))));
}

#[tokio::test]
async fn agents_sharing_a_toolkit_each_see_their_own_information() {
    let kit = toolkit();
    let mut alice = ReActAgent::builder(twice())
        .name("alice")
        .toolkit(&kit)
        .build()
        .unwrap();
    let mut unnamed = ReActAgent::builder(twice()).toolkit(&kit).build().unwrap();
    assert_eq!(unnamed.name(), "agent", "the default name");
    assert_ne!(alice.id(), unnamed.id(), "ids are unique per agent");

    let (a, b) = futures::join!(alice.run("hi"), unnamed.run("hi"));
    assert_eq!((a.unwrap(), b.unwrap()), ("done".into(), "done".into()));
    let from_alice = outputs(&alice, 0);
    let from_unnamed = outputs(&unnamed, 0);
    assert!(
        from_alice
            .iter()
            .all(|(n, i, ..)| n == "alice" && i == alice.id())
    );
    assert!(
        from_unnamed
            .iter()
            .all(|(n, i, ..)| n == "agent" && i == unnamed.id())
    );
    assert_ne!(from_alice[0].2, from_unnamed[0].2, "separate runs");
}

#[tokio::test]
async fn the_agent_layer_wins_over_the_toolkit_context() {
    let placeholder = AgentInfo::new("toolkit-level", "none", "none", 0);
    let kit = Toolkit::builder()
        .register(WhoAmI)
        .context(placeholder)
        .loop_guard(false)
        .build()
        .unwrap();
    // Outside an agent the toolkit's value is all there is.
    let direct = kit
        .call(ToolCall::new("1", "who_am_i", "{}"), &ToolContext::new())
        .await;
    assert_eq!(parse(&direct.model_text()).0, "toolkit-level");

    let mut agent = ReActAgent::builder(twice())
        .name("inner")
        .toolkit(&kit)
        .build()
        .unwrap();
    agent.run("hi").await.unwrap();
    assert!(outputs(&agent, 0).iter().all(|(n, ..)| n == "inner"));
}

#[tokio::test]
async fn outside_an_agent_a_tool_gets_a_clear_context_error() {
    let kit = toolkit();
    let ctx = ToolContext::new();
    let result = kit.call(ToolCall::new("1", "who_am_i", "{}"), &ctx).await;
    let error = result.error().expect("no agent, no AgentInfo");
    assert_eq!(error.kind(), ToolErrorKind::MissingContext);
    assert_eq!(
        error.message(),
        "tool `who_am_i` is not configured correctly and could not run",
        "the model learns nothing about the setup"
    );
    let detail = error
        .source()
        .expect("the operator is told why")
        .to_string();
    assert!(detail.contains("`agent: AgentInfo`"), "{detail}");
    assert!(detail.contains("run by a ReActAgent"), "{detail}");
    assert!(detail.contains("Option<AgentInfo>"), "{detail}");

    let optional = kit
        .call(ToolCall::new("2", "maybe_agent", "{}"), &ctx)
        .await;
    assert_eq!(optional.model_text(), "no agent");
    let mut agent = ReActAgent::builder(ScriptedModel::new([
        ScriptedTurn::call("maybe_agent", json!({})),
        ScriptedTurn::text("ok"),
    ]))
    .name("opt")
    .toolkit(&kit)
    .build()
    .unwrap();
    agent.run("hi").await.unwrap();
    let text = agent
        .memory()
        .iter()
        .find(|m| m.role() == Role::Tool)
        .map(|m| m.content().to_string());
    assert_eq!(text.as_deref(), Some("opt"));
}

/// Who a tool works for: one value at each context level.
struct Principal(&'static str);

/// Say who the call is for.
#[tool]
async fn whoami(#[ctx] who: Ctx<Principal>) -> String {
    who.0.0.to_string()
}

/// The precedence rule through an agent run: call (the run's) > agent > toolkit.
#[tokio::test]
async fn a_runs_context_beats_the_agents_which_beats_the_toolkits() {
    use agent_toolkit::ToolContext;
    let kit = Toolkit::builder()
        .register(Whoami)
        .context(Principal("toolkit"))
        .build()
        .unwrap();
    let answers = |n: usize| {
        let turns: Vec<_> = (0..n)
            .flat_map(|_| {
                [
                    ScriptedTurn::call("whoami", json!({})),
                    ScriptedTurn::text("done"),
                ]
            })
            .collect();
        Arc::new(ScriptedModel::new(turns))
    };
    let seen = |agent: &ReActAgent| -> Vec<String> {
        agent
            .memory()
            .iter()
            .filter(|m| m.role() == Role::Tool)
            .map(|m| m.content().to_string())
            .collect()
    };

    let mut plain = ReActAgent::builder(answers(2))
        .toolkit(&kit)
        .build()
        .unwrap();
    plain.run("who?").await.unwrap();
    plain
        .run_with_context("who?", ToolContext::new().with(Principal("call")))
        .await
        .unwrap();
    assert_eq!(seen(&plain), ["toolkit", "call"]);

    let mut agent = ReActAgent::builder(answers(3))
        .toolkit(&kit)
        .context(Principal("agent"))
        .build()
        .unwrap();
    agent.run("who?").await.unwrap();
    agent
        .run_with_context("who?", ToolContext::new().with(Principal("call")))
        .await
        .unwrap();
    // The run's values do not outlive it.
    agent.run("who?").await.unwrap();
    assert_eq!(seen(&agent), ["agent", "call", "agent"]);
}
