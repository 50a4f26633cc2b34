//! Runs paused at approvals (and at external calls), stored as JSON, and resumed by a new agent:
//! each waiting call answered exactly once, the others never run again, and every bad state
//! refused with a typed error before anything runs.

mod fixture;
mod process;
mod questions;

use std::sync::Arc;

use agent_toolkit::agent::{AgentError, PausedRun, ResumeError, RunOutcome};
use agent_toolkit::exec::ApprovalDecision;
use agent_toolkit::model::{AssistantMessage, ChatRequest, ChatResponse, Message, Role};
use agent_toolkit::prelude::*;
use agent_toolkit::testing::{ScriptedModel, ScriptedTurn};
use agent_toolkit::{AgentEvent, ReActAgent, ToolDefinition};
use futures::StreamExt;
use serde_json::json;

use fixture::Log;

/// `(call id, text, is_error)` of every tool message the model was sent.
fn tool_results(req: &ChatRequest) -> Vec<(String, String, bool)> {
    req.messages
        .iter()
        .filter_map(Message::as_tool)
        .map(|m| (m.call_id.to_string(), m.content.clone(), m.is_error))
        .collect()
}

fn expect_results(
    want: Vec<(&'static str, &'static str, bool)>,
) -> impl Fn(&ChatRequest) -> Result<(), String> + Send + Sync + 'static {
    move |req| {
        let got = tool_results(req);
        let want: Vec<(String, String, bool)> = want
            .iter()
            .map(|(id, text, error)| (id.to_string(), text.to_string(), *error))
            .collect();
        (got == want)
            .then_some(())
            .ok_or(format!("tool results {got:?}, want {want:?}"))
    }
}

/// Run `input` in an agent whose model makes `calls` and pause; return the state as JSON.
async fn pause_as_json(calls: ScriptedTurn, log: &Log) -> String {
    let mut agent = fixture::agent(ScriptedModel::new([calls]), Log::at(log.path()));
    let run = match agent.run("Tidy up").await {
        Err(AgentError::Paused(run)) => run,
        other => panic!("expected a pause, got {other:?}"),
    };
    serde_json::to_string(&run).unwrap()
}

fn delete(path: &str) -> ScriptedTurn {
    ScriptedTurn::call("delete_file", json!({ "path": path }))
}

#[tokio::test]
async fn approved_after_a_round_trip_through_json_the_call_runs_once() {
    let log = Log::temp("approve");
    let json = pause_as_json(delete("/tmp/a"), &log).await;
    assert!(log.lines().is_empty(), "nothing ran before the decision");

    let mut run = PausedRun::from_json(&json).unwrap();
    assert_eq!(run.iteration(), 1);
    assert!(run.usage().input_tokens > 0, "{:?}", run.usage());
    let [approval] = run.pending_approvals() else {
        panic!("one call waits: {:?}", run.pending_approvals())
    };
    assert_eq!(approval.tool(), "delete_file");
    assert_eq!(approval.call().id.as_ref(), "call_1_0");
    assert_eq!(approval.call().arguments, r#"{"path":"/tmp/a"}"#);
    run.approve("call_1_0").unwrap();
    let run_id = run.run_id().to_string();

    let model = Arc::new(ScriptedModel::new([]).then_expect(
        expect_results(vec![("call_1_0", "deleted /tmp/a", false)]),
        ScriptedTurn::text("Deleted /tmp/a."),
    ));
    let mut agent = fixture::agent(model.clone(), Log::at(log.path()));
    let outcome = agent.resume(run).await.unwrap();
    assert_eq!(outcome, RunOutcome::Final("Deleted /tmp/a.".into()));
    assert_eq!(
        log.lines(),
        [format!("delete_file /tmp/a run={run_id} step=1")]
    );
    // The new agent carries on the first one's conversation, after its own system prompt.
    let sent = &model.requests()[0].messages;
    assert_eq!(sent[0].role(), Role::System);
    assert_eq!(sent[1].content(), "Tidy up");
    assert_eq!(agent.memory().len(), 4, "{:?}", agent.memory());
    assert!(agent.paused_run().is_none());
}

#[tokio::test]
async fn denied_the_model_gets_the_reason_as_the_result() {
    let log = Log::temp("deny");
    let json = pause_as_json(delete("/etc/passwd"), &log).await;
    let mut run = PausedRun::from_json(&json).unwrap();
    run.deny("call_1_0", "never touch /etc").unwrap();

    let model = ScriptedModel::new([]).then_expect(
        expect_results(vec![(
            "call_1_0",
            "Error: the call of tool `delete_file` was not approved: never touch /etc",
            true,
        )]),
        ScriptedTurn::text("I may not delete that."),
    );
    let mut agent = fixture::agent(model, Log::at(log.path()));
    let outcome = agent.resume(run).await.unwrap();
    assert_eq!(outcome, RunOutcome::Final("I may not delete that.".into()));
    assert!(log.lines().is_empty(), "a denied call never runs");
}

/// A turn where some calls need approval and others do not: the others run before the pause,
/// their results are kept in the state, and nothing runs them again; an edited call runs with
/// the new arguments. The run pauses a second time in the same run.
#[tokio::test]
async fn in_a_mixed_turn_only_the_waiting_calls_run_on_resume() {
    let log = Log::temp("mixed");
    let turn = ScriptedTurn::calls([
        ("write_note", json!({"text": "one"})),
        ("delete_file", json!({"path": "/tmp/a"})),
        ("write_note", json!({"text": "two"})),
        ("delete_file", json!({"path": "/tmp/b"})),
    ]);
    let json = pause_as_json(turn, &log).await;
    assert_eq!(log.lines(), ["write_note one", "write_note two"]);

    let mut run = PausedRun::from_json(&json).unwrap();
    let waiting: Vec<&str> = run
        .pending_approvals()
        .iter()
        .map(|a| a.call().id.as_ref())
        .collect();
    assert_eq!(waiting, ["call_1_1", "call_1_3"]);
    // The results of the calls that ran are in the state's conversation.
    let kept: Vec<&str> = run
        .messages()
        .iter()
        .filter(|m| m.role() == Role::Tool)
        .map(|m| m.content())
        .collect();
    assert_eq!(kept, ["noted one", "noted two"]);
    run.approve("call_1_1").unwrap();
    run.decide(
        "call_1_3",
        ApprovalDecision::Edit(r#"{"path":"/tmp/c"}"#.into()),
    )
    .unwrap();
    let first_usage = run.usage();
    let run_id = run.run_id().to_string();

    let model = ScriptedModel::new([]).then_expect(
        expect_results(vec![
            ("call_1_0", "noted one", false),
            ("call_1_2", "noted two", false),
            ("call_1_1", "deleted /tmp/a", false),
            ("call_1_3", "deleted /tmp/c", false),
        ]),
        ScriptedTurn::calls([
            ("write_note", json!({"text": "three"})),
            ("delete_file", json!({"path": "/tmp/d"})),
        ]),
    );
    let mut agent = fixture::agent(model, Log::at(log.path()));
    let RunOutcome::Paused(again) = agent.resume(run).await.unwrap() else {
        panic!("expected a second pause")
    };
    assert_eq!(
        log.lines(),
        [
            "write_note one".to_string(),
            "write_note two".to_string(),
            format!("delete_file /tmp/a run={run_id} step=1"),
            format!("delete_file /tmp/c run={run_id} step=1"),
            "write_note three".to_string(),
        ]
    );
    assert_eq!(again.run_id(), run_id, "the same run");
    assert_eq!(again.iteration(), 2);
    assert!(again.usage().input_tokens > first_usage.input_tokens);
    assert_eq!(again.pending_approvals().len(), 1);
    // The agent still holds the paused run: the same state as the one handed back.
    assert_eq!(agent.paused_run().as_ref(), Some(&*again));
}

#[tokio::test]
async fn in_one_process_the_same_agent_resumes_and_run_stream_pauses_too() {
    let log = Log::temp("same-agent");
    let model = ScriptedModel::new([delete("/tmp/a")]).then_expect(
        expect_results(vec![("call_1_0", "deleted /tmp/a", false)]),
        ScriptedTurn::text("done"),
    );
    let mut agent = fixture::agent(model, Log::at(log.path()));
    let Err(AgentError::Paused(mut run)) = agent.run("Tidy up").await else {
        panic!("expected a pause")
    };
    run.approve("call_1_0").unwrap();
    assert_eq!(
        agent.resume(*run).await.unwrap(),
        RunOutcome::Final("done".into())
    );
    assert_eq!(log.lines().len(), 1);

    // In a stream nobody is asked: the stream ends with the pause.
    let mut agent = fixture::agent(ScriptedModel::new([delete("/tmp/b")]), Log::temp("s"));
    let events: Vec<AgentEvent> = agent.run_stream("Tidy up").collect().await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::ApprovalRequested(..))),
        "{events:?}"
    );
    let Some(AgentEvent::Failed(AgentError::Paused(run))) = events.last() else {
        panic!("the stream ends with the pause: {events:?}")
    };
    assert_eq!(
        run.pending_approvals()[0].call().arguments,
        r#"{"path":"/tmp/b"}"#
    );
}

fn open_door() -> ToolDefinition {
    ToolDefinition::new(
        "open_door",
        "Open a door of the client's house",
        json!({"type":"object","properties":{"door":{"type":"string"}},"required":["door"]}),
    )
}

/// External calls and approvals in one turn, and a run stopped only at external calls, both
/// stored and resumed by a new agent.
#[tokio::test]
async fn external_calls_are_carried_with_their_results() {
    let log = Log::temp("external");
    let turn = ScriptedTurn::calls([
        ("open_door", json!({"door": "front"})),
        ("delete_file", json!({"path": "/tmp/a"})),
    ]);
    let mut agent = fixture::agent(ScriptedModel::new([turn]), Log::at(log.path()));
    let RunOutcome::Paused(run) = agent
        .run_with_external_tools("Open the door and tidy up", vec![open_door()])
        .await
        .unwrap()
    else {
        panic!("expected a pause")
    };
    assert_eq!(run.pending_external_calls()[0].name, "open_door");
    let mut run = PausedRun::from_json(&serde_json::to_string(&run).unwrap()).unwrap();
    run.approve("call_1_1").unwrap();
    run.add_result(Message::tool("call_1_0", "open_door", "front door open"))
        .unwrap();
    let err = run
        .add_result(Message::tool("call_1_0", "open_door", "again"))
        .unwrap_err();
    assert_eq!(
        err,
        ResumeError::DuplicateResult {
            call_id: "call_1_0".into()
        }
    );
    let model = ScriptedModel::new([]).then_expect(
        expect_results(vec![
            ("call_1_1", "deleted /tmp/a", false),
            ("call_1_0", "front door open", false),
        ]),
        // The external tool is still offered after the resume: the run stops at it again.
        ScriptedTurn::call("open_door", json!({"door": "back"})),
    );
    let mut agent = fixture::agent(model, Log::at(log.path()));
    let RunOutcome::ToolCalls(calls) = agent.resume(run).await.unwrap() else {
        panic!("expected external calls")
    };
    assert_eq!(log.lines().len(), 1);

    // Stopped at external calls only: the state comes from the agent, and a new agent resumes.
    let stored = serde_json::to_string(&agent.paused_run().unwrap()).unwrap();
    drop(agent);
    let mut run = PausedRun::from_json(&stored).unwrap();
    assert!(run.pending_approvals().is_empty());
    run.add_result(Message::tool(
        calls[0].id.clone(),
        "open_door",
        "back door open",
    ))
    .unwrap();
    let model = ScriptedModel::new([]).then_expect(
        |req| {
            let last = tool_results(req).pop();
            (last == Some(("call_1_0".into(), "back door open".into(), false)))
                .then_some(())
                .ok_or(format!("{last:?}"))
        },
        ScriptedTurn::text("Both doors are open."),
    );
    let mut agent = fixture::agent(model, Log::at(log.path()));
    assert_eq!(
        agent.resume(run).await.unwrap(),
        RunOutcome::Final("Both doors are open.".into())
    );
}

#[tokio::test]
async fn bad_states_and_bad_decisions_are_typed_errors() {
    let log = Log::temp("bad");
    let json = pause_as_json(delete("/tmp/a"), &log).await;

    // Corrupt text.
    for text in ["{not json", "[]", "{}", r#"{"version": "one"}"#] {
        let err = PausedRun::from_json(text).unwrap_err();
        assert!(matches!(err, ResumeError::Malformed(_)), "{text}: {err:?}");
    }
    let truncated = &json[..json.len() / 2];
    assert!(matches!(
        PausedRun::from_json(truncated),
        Err(ResumeError::Malformed(_))
    ));
    let mut value: serde_json::Value = serde_json::from_str(&json).unwrap();
    value.as_object_mut().unwrap().remove("messages");
    let err = PausedRun::from_json(&value.to_string()).unwrap_err();
    assert!(
        matches!(err, ResumeError::Malformed(ref m) if m.contains("messages")),
        "{err}"
    );

    // Another format version: refused by `from_json`, and by `resume` for a state read by
    // other means.
    let later = PausedRun::FORMAT_VERSION + 1;
    let mut value: serde_json::Value = serde_json::from_str(&json).unwrap();
    value["version"] = json!(later);
    assert_eq!(
        PausedRun::from_json(&value.to_string()).unwrap_err(),
        ResumeError::UnsupportedVersion {
            found: u64::from(later),
            supported: PausedRun::FORMAT_VERSION
        }
    );
    let mut future: PausedRun = serde_json::from_value(value).unwrap();
    future.approve("call_1_0").unwrap();
    let mut agent = fixture::agent(ScriptedModel::new([]), Log::at(log.path()));
    let err = agent.resume(future).await.unwrap_err();
    assert!(
        matches!(
            err,
            AgentError::Resume(ResumeError::UnsupportedVersion { found, .. })
                if found == u64::from(later)
        ),
        "{err}"
    );

    // Decisions and results for calls that do not wait.
    let mut run = PausedRun::from_json(&json).unwrap();
    assert_eq!(
        run.approve("call_9_9").unwrap_err(),
        ResumeError::UnknownDecision {
            call_id: "call_9_9".into(),
            waiting: vec!["call_1_0".into()]
        }
    );
    let err = run
        .add_result(Message::tool("call_1_0", "delete_file", "done"))
        .unwrap_err();
    assert!(
        matches!(err, ResumeError::UnknownResult { ref call_id, .. } if call_id == "call_1_0"),
        "an approval is not answered with a result: {err:?}"
    );
    assert_eq!(
        run.add_result(Message::user("hi")).unwrap_err(),
        ResumeError::NotAToolResult
    );

    // Missing decision: nothing runs and the agent is left as it was.
    let mut agent = fixture::agent(ScriptedModel::new([]), Log::at(log.path()));
    let err = agent.resume(run.clone()).await.unwrap_err();
    assert!(
        matches!(
            err,
            AgentError::Resume(ResumeError::MissingDecisions { ref call_ids }) if call_ids == &["call_1_0"]
        ),
        "{err}"
    );
    assert!(agent.memory().is_empty());

    // A tampered state: the waiting call is not the call the model made.
    let mut value: serde_json::Value = serde_json::from_str(&json).unwrap();
    value["approvals"][0]["call"]["arguments"] = json!(r#"{"path":"/"}"#);
    let mut tampered = PausedRun::from_json(&value.to_string()).unwrap();
    tampered.approve("call_1_0").unwrap();
    let err = agent.resume(tampered).await.unwrap_err();
    assert!(
        matches!(err, AgentError::Resume(ResumeError::Malformed(ref m)) if m.contains("not a call of the last model turn")),
        "{err}"
    );
    assert!(log.lines().is_empty(), "no bad state ran anything");
}

/// Delete a file, with no approval asked: a later toolkit's version of `delete_file`.
#[tool(name = "delete_file")]
async fn delete_file_unguarded(path: String) -> String {
    format!("deleted {path} unasked")
}

/// Resume `run` in an agent built around `toolkit` (not the fixture's).
async fn resume_in(toolkit: Toolkit, run: PausedRun, log: &Log) -> Result<RunOutcome, AgentError> {
    let mut agent = ReActAgent::builder(ScriptedModel::new([ScriptedTurn::text("ok")]))
        .toolkit(&toolkit)
        .context(Log::at(log.path()))
        .pause_at_approvals()
        .build()
        .unwrap();
    agent.resume(run).await
}

#[tokio::test]
async fn a_state_that_does_not_fit_the_agent_is_refused() {
    let log = Log::temp("fit");
    let json = pause_as_json(delete("/tmp/a"), &log).await;
    let mut approved = PausedRun::from_json(&json).unwrap();
    approved.approve("call_1_0").unwrap();

    // The toolkit no longer has the tool.
    let without = Toolkit::builder()
        .register(fixture::WriteNote)
        .build()
        .unwrap();
    let err = resume_in(without.clone(), approved.clone(), &log)
        .await
        .unwrap_err();
    assert!(
        matches!(err, AgentError::Resume(ResumeError::DoesNotFit(ref m)) if m.contains("does not have")),
        "{err}"
    );
    // The tool no longer requires approval: the decision would not be what runs it.
    let unguarded = Toolkit::builder()
        .register(DeleteFileUnguarded)
        .build()
        .unwrap();
    let err = resume_in(unguarded, approved, &log).await.unwrap_err();
    assert!(
        matches!(err, AgentError::Resume(ResumeError::DoesNotFit(ref m)) if m.contains("no longer requires approval")),
        "{err}"
    );
    // A denied call never runs, so it fits a toolkit without its tool.
    let mut denied = PausedRun::from_json(&json).unwrap();
    denied.deny("call_1_0", "no").unwrap();
    assert_eq!(
        resume_in(without, denied, &log).await.unwrap(),
        RunOutcome::Final("ok".into())
    );
    assert!(log.lines().is_empty());
}

/// A run that ends while calls wait (the argument budget used up in the paused turn) answers
/// them, so the conversation stays valid for the next run.
#[tokio::test]
async fn a_run_that_fails_in_a_paused_turn_answers_the_waiting_calls() {
    let log = Log::temp("budget");
    let turn = ScriptedTurn::calls([
        ("write_note", json!({"wrong": 1})),
        ("delete_file", json!({"path": "/tmp/a"})),
    ]);
    let mut agent = ReActAgent::builder(ScriptedModel::new([turn]))
        .toolkit(&fixture::toolkit())
        .context(Log::at(log.path()))
        .argument_budget(1)
        .pause_at_approvals()
        .build()
        .unwrap();
    let err = agent.run("Tidy up").await.unwrap_err();
    assert!(matches!(err, AgentError::ArgumentBudget { .. }), "{err}");
    assert!(agent.paused_run().is_none());
    let answered: Vec<(&str, bool)> = agent
        .memory()
        .iter()
        .filter_map(Message::as_tool)
        .map(|m| (&*m.call_id, m.is_error))
        .collect();
    assert_eq!(answered, [("call_1_0", true), ("call_1_1", true)]);
    assert!(log.lines().is_empty());
}

/// A model that asks for two deletions under one call id, then answers.
struct ReusedIds(std::sync::Mutex<u32>);

impl agent_toolkit::ChatModel for ReusedIds {
    fn chat(
        &self,
        _: ChatRequest,
    ) -> futures::future::BoxFuture<'_, Result<ChatResponse, agent_toolkit::model::ModelError>>
    {
        let mut turn = self.0.lock().unwrap();
        *turn += 1;
        let message = if *turn == 1 {
            let call = |path: &str| {
                ToolCall::new("same", "delete_file", json!({"path": path}).to_string())
            };
            AssistantMessage::new("", vec![call("/tmp/a"), call("/tmp/b")])
        } else {
            AssistantMessage::new("done", Vec::new())
        };
        Box::pin(std::future::ready(Ok(ChatResponse::new(message))))
    }
}

/// A call id used twice in the paused turn: the second call gets the engine's duplicate-id
/// error, as in a turn that does not pause, and only the first waits — so the state resumes.
#[tokio::test]
async fn a_reused_call_id_waits_once() {
    let log = Log::temp("reused");
    let mut agent = fixture::agent(ReusedIds(Default::default()), Log::at(log.path()));
    let Err(AgentError::Paused(mut run)) = agent.run("Tidy up").await else {
        panic!("expected a pause")
    };
    assert_eq!(run.pending_approvals().len(), 1);
    assert_eq!(
        run.pending_approvals()[0].call().arguments,
        r#"{"path":"/tmp/a"}"#
    );
    let refused = run.messages().last().and_then(Message::as_tool).unwrap();
    assert!(
        refused.is_error && refused.content.contains("already used"),
        "{refused:?}"
    );
    run.approve("same").unwrap();
    let json = serde_json::to_string(&run).unwrap();
    // This model has made its first turn already: it answers.
    let answers = ReusedIds(std::sync::Mutex::new(1));
    let mut agent = fixture::agent(answers, Log::at(log.path()));
    let outcome = agent.resume(PausedRun::from_json(&json).unwrap()).await;
    assert_eq!(outcome.unwrap(), RunOutcome::Final("done".into()));
    assert_eq!(log.lines().len(), 1, "{:?}", log.lines());
}

/// A paused run stored by the release before messages were a closed set of kinds (format
/// version 1: `{"role": .., "content": .., "tool_calls": ..}` messages): read, upgraded, and
/// resumed to the end; written back in today's version.
#[tokio::test]
async fn a_run_stored_in_format_version_1_is_read_and_resumed() {
    let log = Log::temp("v1");
    let stored = json!({
        "version": 1,
        "run_id": "run-v1",
        "next_iteration": 2,
        "run_start": 0,
        "argument_errors": {},
        "usage": {"input_tokens": 5, "output_tokens": 3},
        "messages": [
            {"role": "user", "content": "Tidy up"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "call_1_0", "name": "delete_file", "arguments": "{\"path\":\"/tmp/a\"}"},
                {"id": "call_1_1", "name": "shred", "arguments": "{}"}
            ]},
            {"role": "tool", "content": "Error: no tool `shred`", "tool_call_id": "call_1_1",
             "name": "shred", "is_error": true}
        ],
        "approvals": [{
            "call": {"id": "call_1_0", "name": "delete_file", "arguments": "{\"path\":\"/tmp/a\"}"},
            "tool": "delete_file"
        }],
        "external_calls": [],
        "external_results": [],
        "external_tools": [],
        "equipped_groups": {}
    });
    let mut run = PausedRun::from_json(&stored.to_string()).expect("a version 1 state is read");
    let [user, turn, refused] = run.messages() else {
        panic!("three messages: {:?}", run.messages())
    };
    assert_eq!(user, &Message::user("Tidy up"));
    let Message::Assistant(turn) = turn else {
        panic!("an assistant turn: {turn:?}")
    };
    assert_eq!(turn.tool_calls.len(), 2);
    let refused = refused.as_tool().expect("a tool result");
    assert_eq!(
        (&*refused.call_id, refused.name.as_str(), refused.is_error),
        ("call_1_1", "shred", true)
    );
    run.approve("call_1_0").unwrap();
    let written: serde_json::Value = serde_json::from_str(&run.to_json()).unwrap();
    assert_eq!(written["version"], json!(PausedRun::FORMAT_VERSION));
    assert_eq!(written["messages"][2]["type"], json!("tool"));

    let model = ScriptedModel::new([]).then_expect(
        |req| {
            let want = [
                (
                    "call_1_1".to_string(),
                    "Error: no tool `shred`".to_string(),
                    true,
                ),
                ("call_1_0".to_string(), "deleted /tmp/a".to_string(), false),
            ];
            let got = tool_results(req);
            (got == want)
                .then_some(())
                .ok_or(format!("tool results {got:?}"))
        },
        ScriptedTurn::text("Done."),
    );
    let mut agent = fixture::agent(model, Log::at(log.path()));
    assert_eq!(
        agent.resume(run).await.unwrap(),
        RunOutcome::Final("Done.".into())
    );
    assert_eq!(log.lines(), ["delete_file /tmp/a run=run-v1 step=1"]);
}

/// A version 1 state whose messages cannot be upgraded (a tool message without the call it
/// answers) is refused as malformed, naming where.
#[test]
fn a_version_1_state_with_a_broken_message_is_malformed() {
    let stored = json!({
        "version": 1, "run_id": "r", "next_iteration": 2, "run_start": 0,
        "argument_errors": {}, "usage": {"input_tokens": 0, "output_tokens": 0},
        "messages": [{"role": "user", "content": "hi"}, {"role": "tool", "content": "x"}],
        "approvals": [], "external_calls": [], "external_results": [], "external_tools": []
    });
    let err = PausedRun::from_json(&stored.to_string()).unwrap_err();
    assert!(
        matches!(err, ResumeError::Malformed(ref why) if why.contains("messages") && why.contains("message 1")),
        "{err}"
    );
}
