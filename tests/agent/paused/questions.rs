//! Runs paused at a tool's question (elicitation, sampling): the question carried in the
//! stored state, answered by the application, and the call run again with the answer — exactly
//! one result per call, nothing after the question kept from the first run, and every wrong
//! answer a typed error.

use std::sync::Arc;

use agent_toolkit::ReActAgent;
use agent_toolkit::agent::{AgentError, PausedRun, ResumeError, RunOutcome};
use agent_toolkit::context::{
    Answer, AskError, Caller, Elicitation, Elicited, Elicitor, Question, Sampled, Sampling,
};
use agent_toolkit::prelude::*;
use agent_toolkit::testing::{ScriptedModel, ScriptedTurn};
use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::fixture::{self, Log};
use super::{expect_results, tool_results};

fn rename(path: &str) -> ScriptedTurn {
    ScriptedTurn::call("rename_file", json!({ "path": path }))
}

/// Run "Tidy up" with a model that makes `calls`, expect a pause, and hand the state back
/// through JSON (as another process would read it).
async fn paused(calls: ScriptedTurn, log: &Log) -> PausedRun {
    let mut agent = fixture::agent(ScriptedModel::new([calls]), Log::at(log.path()));
    match agent.run("Tidy up").await {
        Err(AgentError::Paused(run)) => PausedRun::from_json(&run.to_json()).unwrap(),
        other => panic!("expected a pause, got {other:?}"),
    }
}

#[tokio::test]
async fn a_question_pauses_the_run_and_the_answer_runs_the_call_again() {
    let log = Log::temp("ask");
    let mut run = paused(rename("/tmp/a"), &log).await;
    // The tool started once and stopped at its question; nothing after it ran.
    assert_eq!(log.lines(), ["rename_file /tmp/a asks"]);
    assert!(run.pending_approvals().is_empty());
    let [pending] = run.pending_questions() else {
        panic!("one call asks: {:?}", run.pending_questions())
    };
    assert_eq!(pending.tool(), "rename_file");
    assert_eq!(pending.call().id.as_ref(), "call_1_0");
    assert_eq!(pending.answer(), None);
    let Question::Elicit(form) = pending.question() else {
        panic!("a form: {:?}", pending.question())
    };
    assert_eq!(form.message, "New name for /tmp/a?");
    assert_eq!(
        form.schema["properties"]["overwrite"]["default"],
        json!(false)
    );
    assert_eq!(form.schema["required"], json!(["name"]));

    run.answer("call_1_0", Answer::accept(json!({"name": "b"})))
        .unwrap();
    let model = Arc::new(ScriptedModel::new([]).then_expect(
        expect_results(vec![(
            "call_1_0",
            "renamed /tmp/a to b (overwrite: false)",
            false,
        )]),
        ScriptedTurn::text("Renamed."),
    ));
    let mut agent = fixture::agent(model.clone(), Log::at(log.path()));
    assert_eq!(
        agent.resume(run).await.unwrap(),
        RunOutcome::Final("Renamed.".into())
    );
    // Run again from its start with the answer (the form's default filled in by the typed
    // reading), renamed once.
    assert_eq!(
        log.lines(),
        [
            "rename_file /tmp/a asks",
            "rename_file /tmp/a asks",
            "rename_file /tmp/a -> b"
        ]
    );
    // One result for the one call, in the conversation after the call.
    let sent = &model.requests()[0];
    assert_eq!(tool_results(sent).len(), 1);
}

#[tokio::test]
async fn a_declined_question_is_the_tools_to_handle() {
    let log = Log::temp("ask-decline");
    let mut run = paused(rename("/tmp/a"), &log).await;
    run.answer("call_1_0", Answer::decline()).unwrap();
    let model = ScriptedModel::new([]).then_expect(
        expect_results(vec![("call_1_0", "kept /tmp/a", false)]),
        ScriptedTurn::text("Kept."),
    );
    let mut agent = fixture::agent(model, Log::at(log.path()));
    assert_eq!(
        agent.resume(run).await.unwrap(),
        RunOutcome::Final("Kept.".into())
    );
    assert_eq!(log.lines().len(), 2, "{:?}", log.lines());
}

#[tokio::test]
async fn a_tool_that_asks_twice_pauses_twice_and_gets_both_answers_in_order() {
    let log = Log::temp("ask-twice");
    let mut run = paused(
        ScriptedTurn::call("archive_file", json!({"path": "/tmp/r"})),
        &log,
    )
    .await;
    // First the caller's model is asked for a title.
    let [pending] = run.pending_questions() else {
        panic!("{:?}", run.pending_questions())
    };
    let Question::Sample(request) = pending.question() else {
        panic!("a sampling request: {:?}", pending.question())
    };
    assert_eq!(
        request.messages,
        [("user".into(), "A title for /tmp/r".into())]
    );
    assert_eq!(request.max_tokens, 20);
    run.answer("call_1_0", Answer::sampled("Q3 report", "my-model"))
        .unwrap();

    // Resumed, the tool gets its title and asks the user: the run pauses again, at the same
    // call, and carries the first answer.
    let mut agent = fixture::agent(ScriptedModel::new([]), Log::at(log.path()));
    let RunOutcome::Paused(again) = agent.resume(run).await.unwrap() else {
        panic!("a second pause")
    };
    let mut again = PausedRun::from_json(&again.to_json()).unwrap();
    let [pending] = again.pending_questions() else {
        panic!("{:?}", again.pending_questions())
    };
    assert_eq!(pending.call().id.as_ref(), "call_1_0");
    let Question::Elicit(form) = pending.question() else {
        panic!("a form: {:?}", pending.question())
    };
    assert_eq!(form.message, "Archive /tmp/r as \"Q3 report\"?");
    again
        .answer("call_1_0", Answer::accept(json!({"ok": true})))
        .unwrap();

    let model = ScriptedModel::new([]).then_expect(
        expect_results(vec![("call_1_0", "archived /tmp/r as Q3 report", false)]),
        ScriptedTurn::text("Archived."),
    );
    let mut agent = fixture::agent(model, Log::at(log.path()));
    assert_eq!(
        agent.resume(again).await.unwrap(),
        RunOutcome::Final("Archived.".into())
    );
    assert_eq!(
        log.lines(),
        [
            "archive_file /tmp/r starts",
            "archive_file /tmp/r starts",
            "archive_file /tmp/r starts",
            "archive_file /tmp/r as Q3 report"
        ]
    );
}

#[tokio::test]
async fn in_a_mixed_turn_each_call_is_answered_once() {
    let log = Log::temp("ask-mixed");
    let mut run = paused(
        ScriptedTurn::calls([
            ("write_note", json!({"text": "before"})),
            ("rename_file", json!({"path": "/tmp/a"})),
            ("delete_file", json!({"path": "/tmp/c"})),
        ]),
        &log,
    )
    .await;
    assert_eq!(run.pending_approvals().len(), 1);
    assert_eq!(run.pending_questions().len(), 1);
    run.approve("call_1_2").unwrap();
    // Resuming before every question is answered is refused, and names the call.
    let mut agent = fixture::agent(ScriptedModel::new([]), Log::at(log.path()));
    let err = agent.resume(run.clone()).await.unwrap_err();
    assert!(
        matches!(
            err,
            AgentError::Resume(ResumeError::MissingDecisions { ref call_ids }) if call_ids == &["call_1_1"]
        ),
        "{err}"
    );
    run.answer(
        "call_1_1",
        Answer::accept(json!({"name": "b", "overwrite": true})),
    )
    .unwrap();
    let run_id = run.run_id().to_string();
    let model = ScriptedModel::new([]).then_expect(
        expect_results(vec![
            ("call_1_0", "noted before", false),
            ("call_1_2", "deleted /tmp/c", false),
            ("call_1_1", "renamed /tmp/a to b (overwrite: true)", false),
        ]),
        ScriptedTurn::text("Done."),
    );
    let mut agent = fixture::agent(model, Log::at(log.path()));
    assert_eq!(
        agent.resume(run).await.unwrap(),
        RunOutcome::Final("Done.".into())
    );
    assert_eq!(
        log.lines(),
        [
            "write_note before".to_string(),
            "rename_file /tmp/a asks".to_string(),
            format!("delete_file /tmp/c run={run_id} step=1"),
            "rename_file /tmp/a asks".to_string(),
            "rename_file /tmp/a -> b".to_string(),
        ]
    );
}

#[tokio::test]
async fn wrong_answers_are_typed_errors() {
    let log = Log::temp("ask-wrong");
    let mut run = paused(rename("/tmp/a"), &log).await;
    assert_eq!(
        run.answer("call_9_9", Answer::decline()).unwrap_err(),
        ResumeError::UnknownQuestion {
            call_id: "call_9_9".into(),
            asking: vec!["call_1_0".into()]
        }
    );
    let err = run
        .answer("call_1_0", Answer::sampled("b", "m"))
        .unwrap_err();
    assert!(
        matches!(err, ResumeError::WrongAnswer { ref why, .. } if why.contains("elicitation")),
        "{err}"
    );
    let err = run
        .answer("call_1_0", Answer::accept(json!("b")))
        .unwrap_err();
    assert!(
        matches!(err, ResumeError::WrongAnswer { ref why, .. } if why.contains("JSON object")),
        "{err}"
    );
    // A question is not an approval, and an approval is not answered.
    assert!(matches!(
        run.approve("call_1_0").unwrap_err(),
        ResumeError::UnknownDecision { .. }
    ));
    // An accepted form that does not fit the tool's type: the tool's error, and the model
    // reads it as the call's result.
    run.answer("call_1_0", Answer::accept(json!({"title": "b"})))
        .unwrap();
    let model = ScriptedModel::new([ScriptedTurn::text("Could not rename.")]);
    let mut agent = fixture::agent(model, Log::at(log.path()));
    assert_eq!(
        agent.resume(run).await.unwrap(),
        RunOutcome::Final("Could not rename.".into())
    );
    let last = agent
        .memory()
        .iter()
        .rev()
        .find_map(|m| m.as_tool())
        .unwrap();
    assert!(last.is_error, "{last:?}");
    assert!(
        last.content.contains("does not fit the form"),
        "{}",
        last.content
    );
}

#[tokio::test]
async fn a_state_with_a_question_keeps_it_through_json_and_is_refused_by_an_agent_without_the_tool()
{
    let log = Log::temp("ask-fit");
    let mut run = paused(rename("/tmp/a"), &log).await;
    let stored: Value = serde_json::from_str(&run.to_json()).unwrap();
    assert_eq!(stored["questions"][0]["question"]["kind"], "elicit");
    assert_eq!(
        stored["questions"][0]["question"]["request"]["message"],
        "New name for /tmp/a?"
    );
    run.answer("call_1_0", Answer::cancel()).unwrap();
    let stored: Value = serde_json::from_str(&run.to_json()).unwrap();
    assert_eq!(
        stored["questions"][0]["answer"],
        json!({"kind": "elicited", "answer": {"action": "cancel"}})
    );

    let toolkit = Toolkit::builder()
        .register(fixture::WriteNote)
        .build()
        .unwrap();
    let mut agent = ReActAgent::builder(ScriptedModel::new([]))
        .toolkit(&toolkit)
        .pause_at_approvals()
        .build()
        .unwrap();
    let err = agent.resume(run).await.unwrap_err();
    assert!(
        matches!(err, AgentError::Resume(ResumeError::DoesNotFit(ref m)) if m.contains("rename_file")),
        "{err}"
    );
}

/// Answers every form with the name "live", at once.
struct Live;

impl Caller for Live {
    fn elicit(&self, _: Elicitation) -> BoxFuture<'_, Result<Elicited<Value>, AskError>> {
        Box::pin(async { Ok(Elicited::Accepted(json!({"name": "live"}))) })
    }

    fn sample(&self, _: Sampling) -> BoxFuture<'_, Result<Sampled, AskError>> {
        Box::pin(async { Ok(Sampled::new("live", "m")) })
    }
}

#[tokio::test]
async fn a_caller_in_the_context_answers_at_once_and_without_one_the_tool_is_told_how() {
    // A caller the application put into the agent's context answers: no pause.
    let log = Log::temp("ask-live");
    let model = ScriptedModel::new([rename("/tmp/a")]).then_expect(
        expect_results(vec![(
            "call_1_0",
            "renamed /tmp/a to live (overwrite: false)",
            false,
        )]),
        ScriptedTurn::text("Renamed."),
    );
    let mut agent = ReActAgent::builder(model)
        .toolkit(&fixture::toolkit())
        .context(Log::at(log.path()))
        .context(Arc::new(Live) as Arc<dyn Caller>)
        .pause_at_approvals()
        .build()
        .unwrap();
    assert_eq!(agent.run("Tidy up").await.unwrap(), "Renamed.");

    // An agent that does not pause, with no caller: the tool's question fails with an error
    // that says what to change, and the run goes on.
    let model = ScriptedModel::new([rename("/tmp/a"), ScriptedTurn::text("Could not.")]);
    let mut agent = ReActAgent::builder(model)
        .toolkit(&fixture::toolkit())
        .context(Log::at(log.path()))
        .build()
        .unwrap();
    assert_eq!(agent.run("Tidy up").await.unwrap(), "Could not.");
    let result = agent.memory().iter().find_map(|m| m.as_tool()).unwrap();
    assert!(result.is_error);
    assert!(
        result.content.contains("pause_at_approvals"),
        "{}",
        result.content
    );
}

/// Ask for a label, in the background.
#[tool(background)]
async fn label_later(#[ctx] ask: Elicitor) -> Result<String, ToolError> {
    match ask
        .ask(Elicitation::new("Label?", json!({"type": "object"})))
        .await
    {
        Ok(_) => Ok("asked".into()),
        Err(e) => Err(ToolError::execution(e.to_string())),
    }
}

/// A background call outlives its turn: its question is not held (the run does not pause for
/// it, and it gets exactly one result: the error that nobody can be asked).
#[tokio::test]
async fn a_background_call_that_asks_does_not_pause_the_run() {
    let toolkit = Toolkit::builder().register(LabelLater).build().unwrap();
    let model = ScriptedModel::new([
        ScriptedTurn::call("label_later", json!({})),
        ScriptedTurn::text("Started."),
    ]);
    let mut agent = ReActAgent::builder(model)
        .toolkit(&toolkit)
        .pause_at_approvals()
        .build()
        .unwrap();
    assert_eq!(agent.run("Label it").await.unwrap(), "Started.");
    toolkit.background().drain().await.unwrap();
    let done = toolkit.background().by_call_id("call_1_0").await.unwrap();
    assert_eq!(done.len(), 1, "{done:?}");
    let result = done[0].result.as_ref().expect("finished");
    let error = result.error().expect("nobody could be asked").to_string();
    assert!(error.contains("nobody can be asked"), "{error}");
}
