//! The turn's hooks: a repair hook mends calls the toolkit would refuse (an unknown tool name,
//! arguments that do not fit) and the mended call goes through every rule again (a hidden
//! parameter can never be set by it); guardrails check calls and results (allow, replace what
//! the model sees, stop the run with a typed error). The same in an agent run and in a resumed
//! run; `tests/code/hooks.rs` shows them in a program.

use std::sync::Arc;

use agent_toolkit::ReActAgent;
use agent_toolkit::agent::{AgentError, RunOutcome};
use agent_toolkit::exec::ApprovalDecision;
use agent_toolkit::model::Message;
use agent_toolkit::prelude::*;
use agent_toolkit::testing::{ScriptedModel, ScriptedTurn};
use agent_toolkit::toolkit::{Guardrail, GuardrailDecision, ToolkitBuilder};
use serde_json::json;

use super::bank::{GetBalance, Policy, ReadFile, Transfer, repair};

/// Answers calls of `read_file` with a fixed text, whatever they ask (a per-tool guardrail).
struct NoFiles;

impl Guardrail for NoFiles {
    fn check_call(&self, _: &ToolCall) -> GuardrailDecision {
        GuardrailDecision::Replace("files are off today".into())
    }
}

fn builder() -> ToolkitBuilder {
    Toolkit::builder()
        .register(GetBalance)
        .register(Transfer)
        .register(ReadFile)
        .preset("root", "/srv")
        .repair_calls(repair)
        .guardrail(Policy)
}

/// `(call id, text, is_error)` of each tool result in the agent's memory.
fn results(agent: &ReActAgent) -> Vec<(String, String, bool)> {
    agent
        .memory()
        .iter()
        .filter_map(Message::as_tool)
        .map(|m| (m.call_id.to_string(), m.content.clone(), m.is_error))
        .collect()
}

#[tokio::test]
async fn in_a_run_calls_are_repaired_through_every_rule_and_results_guarded() {
    let kit = builder().build().unwrap();
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::calls([
            ("balance", json!({"account": 1})),
            ("get_balance", json!({"account": "2"})),
            ("read_file", json!({"path": "a.txt"})),
            ("get_balance", json!({"account": 13})),
        ]),
        ScriptedTurn::call("read_file", json!({"path": "b.txt", "root": "/"})),
        ScriptedTurn::text("Done."),
    ]));
    let mut agent = ReActAgent::builder(model).toolkit(&kit).build().unwrap();
    assert_eq!(agent.run("go").await.unwrap(), "Done.");
    let results = results(&agent);
    // An unknown name mended to a tool offered; the id stays the model's.
    assert_eq!(results[0].1, "balance of 1: 100");
    assert_eq!(results[0].0, "call_1_0");
    // A number written as a string, mended.
    assert_eq!(results[1].1, "balance of 2: 100");
    // A call that needed no repair ran as it was.
    assert_eq!(results[2].1, "/srv/a.txt");
    // A result with a secret: the model sees the guardrail's replacement.
    assert_eq!(results[3].1, "[redacted]");
    // The model set the hidden `root` itself: refused; the repair sets it again: refused again.
    let (_, text, is_error) = &results[4];
    assert!(*is_error, "{text}");
    assert!(text.contains("root"), "{text}");
}

#[tokio::test]
async fn a_guardrail_stops_the_run_with_a_typed_error_and_every_call_answered() {
    let kit = builder().build().unwrap();
    let model = Arc::new(ScriptedModel::new([ScriptedTurn::calls([
        ("get_balance", json!({"account": 1})),
        ("transfer", json!({"account": 1, "amount": 5000})),
    ])]));
    let mut agent = ReActAgent::builder(model)
        .toolkit(&kit)
        .approver(|_| async { ApprovalDecision::Approve })
        .build()
        .unwrap();
    match agent.run("go").await {
        Err(AgentError::Guardrail(stop)) => {
            assert_eq!(stop.tool, "transfer");
            assert_eq!(stop.stage, "the call");
            assert!(stop.reason.contains("5000"), "{}", stop.reason);
        }
        other => panic!("expected a guardrail stop, got {other:?}"),
    }
    let results = results(&agent);
    assert_eq!(results.len(), 2, "every call is answered: {results:?}");
    assert!(
        results
            .iter()
            .all(|(_, text, _)| text.contains("guardrail")),
        "nothing ran once the run was stopped: {results:?}"
    );
}

#[tokio::test]
async fn a_per_tool_guardrail_answers_only_that_tools_calls() {
    let kit = builder()
        .tool_guardrail("read_file", NoFiles)
        .build()
        .unwrap();
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::calls([
            ("read_file", json!({"path": "a.txt"})),
            ("get_balance", json!({"account": 3})),
        ]),
        ScriptedTurn::text("Done."),
    ]));
    let mut agent = ReActAgent::builder(model).toolkit(&kit).build().unwrap();
    agent.run("go").await.unwrap();
    let results = results(&agent);
    assert_eq!(results[0].1, "files are off today");
    assert_eq!(results[1].1, "balance of 3: 100");
}

/// An agent that pauses at approvals, paused at two transfers.
async fn paused_at_two_transfers(kit: &Toolkit) -> Box<agent_toolkit::agent::PausedRun> {
    let pausing = ScriptedModel::new([ScriptedTurn::calls([
        ("transfer", json!({"account": 1, "amount": 5})),
        ("transfer", json!({"account": 2, "amount": 6})),
    ])]);
    let mut agent = ReActAgent::builder(pausing)
        .toolkit(kit)
        .pause_at_approvals()
        .build()
        .unwrap();
    match agent.run("go").await {
        Err(AgentError::Paused(run)) => run,
        other => panic!("expected a pause, got {other:?}"),
    }
}

fn resuming_agent(kit: &Toolkit) -> ReActAgent {
    ReActAgent::builder(ScriptedModel::new([ScriptedTurn::text("Done.")]))
        .toolkit(kit)
        .pause_at_approvals()
        .build()
        .unwrap()
}

#[tokio::test]
async fn in_a_resumed_run_approved_calls_are_repaired_and_guarded_too() {
    let kit = builder().build().unwrap();
    // The first is edited into arguments that do not fit: the repair mends them.
    let mut run = paused_at_two_transfers(&kit).await;
    run.decide(
        "call_1_0",
        ApprovalDecision::Edit(r#"{"account": "7", "amount": 5}"#.into()),
    )
    .unwrap();
    run.approve("call_1_1").unwrap();
    let mut resumed = resuming_agent(&kit);
    match resumed.resume(*run).await.unwrap() {
        RunOutcome::Final(answer) => assert_eq!(answer, "Done."),
        other => panic!("expected the answer, got {other:?}"),
    }
    let answered = results(&resumed);
    assert_eq!(answered[0].1, "moved 5 from 7", "{answered:?}");
    assert_eq!(answered[1].1, "moved 6 from 2", "{answered:?}");

    // The second edited into a transfer the guardrail stops: nothing runs, both are answered.
    let mut run = paused_at_two_transfers(&kit).await;
    run.approve("call_1_0").unwrap();
    run.decide(
        "call_1_1",
        ApprovalDecision::Edit(r#"{"account": 2, "amount": 6000}"#.into()),
    )
    .unwrap();
    let mut resumed = resuming_agent(&kit);
    match resumed.resume(*run).await {
        Err(AgentError::Guardrail(stop)) => assert_eq!(stop.call_id.as_ref(), "call_1_1"),
        other => panic!("expected a guardrail stop, got {other:?}"),
    }
    let answered = results(&resumed);
    assert_eq!(answered.len(), 2, "{answered:?}");
    assert!(
        answered
            .iter()
            .all(|(_, text, err)| *err && text.contains("guardrail")),
        "{answered:?}"
    );
}
