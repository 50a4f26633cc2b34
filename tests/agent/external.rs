//! External (client-side) tools: a run stops at their calls, returns them, and resumes with
//! the results the caller ran elsewhere.

use agent_toolkit::model::{Message, Role};
use agent_toolkit::{
    ReActAgent, ToolDefinition,
    testing::{ScriptedModel, ScriptedTurn},
};
use agent_toolkit::{
    agent::{AgentError, RunOutcome},
    model::ChatRequest,
};
use serde_json::json;

use super::tools::toolkit;

fn open_door() -> ToolDefinition {
    ToolDefinition::new(
        "open_door",
        "Open a door of the client's house",
        json!({"type":"object","properties":{"door":{"type":"string"}},"required":["door"]}),
    )
}

fn tool_message(id: &str, content: &str, is_error: bool) -> Message {
    if is_error {
        Message::tool_error(id, "", content)
    } else {
        Message::tool(id, "", content)
    }
}

fn tool_texts(req: &ChatRequest) -> Vec<(String, String, bool)> {
    req.messages
        .iter()
        .filter_map(Message::as_tool)
        .map(|m| (m.call_id.to_string(), m.content.clone(), m.is_error))
        .collect()
}

#[tokio::test]
async fn a_run_stops_at_external_calls_and_resumes_with_their_results() {
    let kit = toolkit();
    let model = std::sync::Arc::new(
        ScriptedModel::new([ScriptedTurn::calls([
            ("open_door", json!({"door": "front"})),
            ("get_weather", json!({"city": "Paris"})),
        ])])
        .then_expect(
            |req| {
                let texts = tool_texts(req);
                (texts
                    == [
                        ("call_1_1".into(), "Paris: 21°C, sunny".into(), false),
                        ("call_1_0".into(), "front door open".into(), false),
                    ])
                .then_some(())
                .ok_or(format!("results not fed back: {texts:?}"))
            },
            ScriptedTurn::text("The front door is open and it is sunny."),
        ),
    );
    let mut agent = ReActAgent::builder(model.clone())
        .toolkit(&kit)
        .build()
        .unwrap();
    let outcome = agent
        .run_with_external_tools("Open the front door; weather?", vec![open_door()])
        .await
        .unwrap();
    let RunOutcome::ToolCalls(calls) = outcome else {
        panic!("expected external calls, got {outcome:?}")
    };
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name, "open_door");
    assert_eq!(calls[0].arguments, r#"{"door":"front"}"#);
    assert_eq!(agent.pending_external_calls(), &calls[..]);
    // The model was offered the external tool next to the local ones.
    let offered: Vec<_> = model.requests()[0]
        .tools
        .iter()
        .map(|t| t.name().to_string())
        .collect();
    assert!(offered.contains(&"open_door".to_string()), "{offered:?}");
    assert!(offered.contains(&"get_weather".to_string()), "{offered:?}");
    // The local call of the same turn already ran.
    assert!(
        agent
            .memory()
            .iter()
            .any(|m| m.role() == Role::Tool && m.content() == "Paris: 21°C, sunny")
    );

    let outcome = agent
        .resume_with_results(vec![tool_message(&calls[0].id, "front door open", false)])
        .await
        .unwrap();
    assert_eq!(
        outcome,
        RunOutcome::Final("The front door is open and it is sunny.".into())
    );
    assert!(agent.pending_external_calls().is_empty());
    assert_eq!(model.remaining(), 0);
}

#[tokio::test]
async fn bad_results_are_refused_and_the_run_keeps_waiting() {
    let model = ScriptedModel::new([ScriptedTurn::call("open_door", json!({"door": "back"}))])
        .then_expect(
            |req| {
                let texts = tool_texts(req);
                (texts == [("call_1_0".into(), "Error: jammed".into(), true)])
                    .then_some(())
                    .ok_or(format!("{texts:?}"))
            },
            ScriptedTurn::text("The back door is jammed."),
        );
    let mut agent = ReActAgent::builder(model).build().unwrap();
    let err = agent.resume_with_results(vec![]).await.unwrap_err();
    assert!(matches!(err, AgentError::External(ref m) if m.contains("no run is waiting")));

    let RunOutcome::ToolCalls(calls) = agent
        .run_with_external_tools("Open the back door", vec![open_door()])
        .await
        .unwrap()
    else {
        panic!("expected external calls")
    };
    let err = agent
        .resume_with_results(vec![tool_message("nope", "x", false)])
        .await
        .unwrap_err();
    assert!(
        matches!(err, AgentError::External(ref m) if m.contains("`nope` answers no pending call")),
        "{err}"
    );
    let err = agent
        .resume_with_results(vec![Message::user("not a tool message")])
        .await
        .unwrap_err();
    assert!(matches!(err, AgentError::External(_)));
    let twice = vec![
        tool_message(&calls[0].id, "a", false),
        tool_message(&calls[0].id, "b", false),
    ];
    let err = agent.resume_with_results(twice).await.unwrap_err();
    assert!(matches!(err, AgentError::External(ref m) if m.contains("answered twice")));
    // Still waiting: a correct resume works (an error result reaches the model as one).
    assert_eq!(agent.pending_external_calls(), &calls[..]);
    let outcome = agent
        .resume_with_results(vec![tool_message(&calls[0].id, "Error: jammed", true)])
        .await
        .unwrap();
    assert_eq!(
        outcome,
        RunOutcome::Final("The back door is jammed.".into())
    );
}

#[tokio::test]
async fn a_call_without_a_result_gets_an_error_result() {
    let model = ScriptedModel::new([ScriptedTurn::calls([
        ("open_door", json!({"door": "a"})),
        ("open_door", json!({"door": "b"})),
    ])])
    .then_expect(
        |req| {
            let texts = tool_texts(req);
            (texts.len() == 2
                && texts[0] == ("call_1_0".into(), "opened a".into(), false)
                && texts[1].2
                && texts[1].1.contains("no result"))
            .then_some(())
            .ok_or(format!("{texts:?}"))
        },
        ScriptedTurn::text("Door a is open; b did not answer."),
    );
    let mut agent = ReActAgent::builder(model).build().unwrap();
    let RunOutcome::ToolCalls(calls) = agent
        .run_with_external_tools("open a and b", vec![open_door()])
        .await
        .unwrap()
    else {
        panic!("expected external calls")
    };
    assert_eq!(calls.len(), 2);
    let outcome = agent
        .resume_with_results(vec![tool_message(&calls[0].id, "opened a", false)])
        .await
        .unwrap();
    assert!(matches!(outcome, RunOutcome::Final(_)));
}

#[tokio::test]
async fn external_tools_may_not_shadow_local_ones() {
    let kit = toolkit();
    let mut agent = ReActAgent::builder(ScriptedModel::new([]))
        .toolkit(&kit)
        .build()
        .unwrap();
    let clash = ToolDefinition::new("get_weather", "client's own", json!({"type":"object"}));
    let err = agent
        .run_with_external_tools("hi", vec![clash])
        .await
        .unwrap_err();
    assert!(matches!(err, AgentError::External(ref m) if m.contains("`get_weather`")));
    let err = agent
        .run_with_external_tools("hi", vec![open_door(), open_door()])
        .await
        .unwrap_err();
    assert!(matches!(err, AgentError::External(ref m) if m.contains("defined twice")));
}

#[tokio::test]
async fn a_new_run_closes_a_waiting_one_and_iterations_count_across_resumes() {
    let model = std::sync::Arc::new(
        ScriptedModel::new([ScriptedTurn::call("open_door", json!({"door": "a"}))])
            .then_expect(
                |req| {
                    // Every call of the abandoned run was answered before the new input.
                    let texts = tool_texts(req);
                    (texts.len() == 1 && texts[0].2)
                        .then_some(())
                        .ok_or(format!("{texts:?}"))
                },
                ScriptedTurn::call("open_door", json!({"door": "b"})),
            )
            .then(ScriptedTurn::call("open_door", json!({"door": "c"}))),
    );
    let mut agent = ReActAgent::builder(model.clone())
        .max_iterations(2)
        .build()
        .unwrap();
    let first = agent
        .run_with_external_tools("open a", vec![open_door()])
        .await
        .unwrap();
    assert!(matches!(first, RunOutcome::ToolCalls(_)));
    // Start over without answering: the pending call is closed with an error result.
    let RunOutcome::ToolCalls(calls) = agent
        .run_with_external_tools("open b instead", vec![open_door()])
        .await
        .unwrap()
    else {
        panic!("expected external calls")
    };
    let RunOutcome::ToolCalls(calls) = agent
        .resume_with_results(vec![tool_message(&calls[0].id, "opened b", false)])
        .await
        .unwrap()
    else {
        panic!("expected external calls")
    };
    let err = agent
        .resume_with_results(vec![tool_message(&calls[0].id, "opened c", false)])
        .await
        .unwrap_err();
    assert!(
        matches!(err, AgentError::MaxIterations { iterations: 2, .. }),
        "{err}"
    );
}
