//! Agents in code mode with the scripted model: the model sees one tool, its program runs here
//! through the turn's toolkit; a program stopped at an approval pauses the run, which resumes
//! from its stored JSON in a new agent and replays the program without running its finished
//! calls again; with a provider that runs programs itself, the request asks for that and the
//! program's calls are answered as ordinary calls.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use agent_toolkit::ReActAgent;
use agent_toolkit::agent::{PausedRun, RunOutcome};
use agent_toolkit::code::{CODE_TOOL, CodeExecution, CodeMode};
use agent_toolkit::model::{Role, ToolFeatures};
use agent_toolkit::testing::{ScriptedModel, ScriptedTurn};
use serde_json::json;

use super::fixtures::{Effects, toolkit};

const PROGRAM: &str = r#"
    const highs = await Promise.all(["Oslo", "Rome"].map(city => tools.forecast({ city })));
    const paid = await tools.charge({ customer: "acme", cents: 100 });
    const gone = await tools.delete_record({ id: 7 });
    return { highs: highs.map(h => h.high), paid, gone };
"#;

fn tool_results(model: &ScriptedModel, request: usize) -> Vec<String> {
    model.requests()[request]
        .messages
        .iter()
        .filter(|m| m.role() == Role::Tool)
        .map(|m| m.content().to_string())
        .collect()
}

#[tokio::test]
async fn the_model_sees_the_code_tool_and_its_program_runs_here() {
    let effects = Arc::new(Effects::default());
    let kit = toolkit(effects.clone());
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::call(
            CODE_TOOL,
            json!({ "code": "return (await tools.forecast({ city: 'Oslo' })).high;" }),
        ),
        ScriptedTurn::text("done"),
    ]));
    let mut agent = ReActAgent::builder(model.clone())
        .toolkit(&kit)
        .code_mode(CodeMode::new())
        .build()
        .unwrap();
    assert_eq!(agent.run("how warm in Oslo?").await.unwrap(), "done");
    let first = &model.requests()[0];
    let names: Vec<&str> = first.tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, [CODE_TOOL]);
    assert!(
        first.tools[0]
            .description()
            .contains("forecast(args: { city: string }): Promise<{ city: string; high: number }>;")
    );
    assert!(!first.hosted_code);
    let high = "Oslo".bytes().map(i64::from).sum::<i64>() % 35;
    assert_eq!(tool_results(&model, 1), [high.to_string()]);
    assert_eq!(effects.lookups.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_bad_code_call_is_an_argument_error_for_the_model() {
    let kit = toolkit(Arc::new(Effects::default()));
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::call(CODE_TOOL, json!({ "program": "return 1" })),
        ScriptedTurn::text("sorry"),
    ]));
    let mut agent = ReActAgent::builder(model.clone())
        .toolkit(&kit)
        .code_mode(CodeMode::new())
        .build()
        .unwrap();
    agent.run("x").await.unwrap();
    let results = tool_results(&model, 1);
    // Checked against `run_code`'s schema by the toolkit, like any tool's arguments.
    assert!(
        results[0].contains("invalid arguments for tool `run_code`")
            && results[0].contains("missing required argument `code`"),
        "{results:?}"
    );
}

fn paused_agent(model: Arc<ScriptedModel>, effects: Arc<Effects>) -> ReActAgent {
    ReActAgent::builder(model)
        .toolkit(&toolkit(effects))
        .code_mode(CodeMode::new())
        .pause_at_approvals()
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_program_pauses_at_an_approval_and_replays_in_a_new_agent() {
    let effects = Arc::new(Effects::default());
    let model = Arc::new(ScriptedModel::new([ScriptedTurn::call(
        CODE_TOOL,
        json!({ "code": PROGRAM }),
    )]));
    let mut agent = paused_agent(model.clone(), effects.clone());
    let RunOutcome::Paused(paused) = agent
        .run_with_external_tools("tidy up", Vec::new())
        .await
        .unwrap()
    else {
        panic!("the run pauses at the program's delete");
    };
    // What ran before the waiting call ran once; the waiting call did not run.
    assert_eq!(effects.lookups.load(Ordering::SeqCst), 2);
    assert_eq!(effects.charges.load(Ordering::SeqCst), 1);
    let waiting = &paused.pending_approvals()[0];
    assert_eq!(waiting.tool(), "delete_record");
    assert_eq!(waiting.call().arguments, r#"{"id":7}"#);
    assert!(waiting.call().id.ends_with("/3"), "{}", waiting.call().id);

    // The stored form keeps the program beside the waiting call as runs paused by earlier
    // releases stored it — the model's call, the journal key, the call's number, the journal —
    // so those resume too.
    let json: serde_json::Value = serde_json::from_str(&paused.to_json()).unwrap();
    let program = &json["approvals"][0]["program"];
    let keys: Vec<&str> = program
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["call", "key", "seq", "journal"], "{program}");
    assert_eq!(program["seq"], 3);

    // Stored, read back, approved, resumed by a new agent built the same way.
    let mut stored = PausedRun::from_json(&paused.to_json()).unwrap();
    let id = stored.pending_approvals()[0].call().id.to_string();
    stored.approve(&id).unwrap();
    let model2 = Arc::new(ScriptedModel::new([ScriptedTurn::text("all done")]));
    let mut agent2 = paused_agent(model2.clone(), effects.clone());
    let outcome = agent2.resume(stored).await.unwrap();
    assert!(
        matches!(outcome, RunOutcome::Final(ref a) if a == "all done"),
        "{outcome:?}"
    );
    // Replayed: the lookups and the charge were answered from the journal.
    assert_eq!(effects.lookups.load(Ordering::SeqCst), 2);
    assert_eq!(effects.charges.load(Ordering::SeqCst), 1 + 100);
    let results = tool_results(&model2, 0);
    assert_eq!(results.len(), 1);
    let value: serde_json::Value = serde_json::from_str(&results[0]).unwrap();
    assert_eq!(value["paid"], "charge #1: acme 100");
    assert_eq!(value["gone"], "deleted 7");
}

#[tokio::test]
async fn a_denied_call_throws_in_the_program_on_resume() {
    let effects = Arc::new(Effects::default());
    let model = Arc::new(ScriptedModel::new([ScriptedTurn::call(
        CODE_TOOL,
        json!({ "code": "try { await tools.delete_record({ id: 1 }); return 'deleted'; } catch (e) { return e.kind + ': ' + e.message; }" }),
    )]));
    let mut agent = paused_agent(model, effects.clone());
    let RunOutcome::Paused(mut paused) = agent
        .run_with_external_tools("x", Vec::new())
        .await
        .unwrap()
    else {
        panic!("paused");
    };
    let id = paused.pending_approvals()[0].call().id.to_string();
    paused.deny(&id, "not today").unwrap();
    let model2 = Arc::new(ScriptedModel::new([ScriptedTurn::text("ok")]));
    let mut agent2 = paused_agent(model2.clone(), effects.clone());
    agent2.resume(*paused).await.unwrap();
    assert_eq!(effects.charges.load(Ordering::SeqCst), 0);
    let results = tool_results(&model2, 0);
    assert!(results[0].starts_with("denied: "), "{results:?}");
    assert!(results[0].contains("not today"), "{results:?}");
}

#[tokio::test]
async fn an_agent_without_code_mode_refuses_a_run_paused_in_a_program() {
    let effects = Arc::new(Effects::default());
    let model = Arc::new(ScriptedModel::new([ScriptedTurn::call(
        CODE_TOOL,
        json!({ "code": PROGRAM }),
    )]));
    let mut agent = paused_agent(model, effects.clone());
    let RunOutcome::Paused(mut paused) = agent
        .run_with_external_tools("x", Vec::new())
        .await
        .unwrap()
    else {
        panic!("paused");
    };
    let id = paused.pending_approvals()[0].call().id.to_string();
    paused.approve(&id).unwrap();
    let mut plain = ReActAgent::builder(ScriptedModel::new([]))
        .toolkit(&toolkit(effects))
        .pause_at_approvals()
        .build()
        .unwrap();
    let error = plain.resume(*paused).await.unwrap_err();
    assert!(
        error.to_string().contains("waits in a program (code mode)"),
        "{error}"
    );
}

#[tokio::test]
async fn with_a_provider_that_runs_programs_the_request_asks_for_it() {
    let effects = Arc::new(Effects::default());
    let kit = toolkit(effects.clone());
    let hosted = ToolFeatures::default().with_hosted_code(true);
    let script = || {
        ScriptedModel::new([
            // A call from the provider's program arrives as an ordinary call.
            ScriptedTurn::call("forecast", json!({ "city": "Oslo" })),
            ScriptedTurn::text("done"),
        ])
        .with_tool_features(hosted)
    };
    let model = Arc::new(script());
    let mut agent = ReActAgent::builder(model.clone())
        .toolkit(&kit)
        .code_mode(CodeMode::new())
        .build()
        .unwrap();
    agent.run("x").await.unwrap();
    let first = &model.requests()[0];
    assert!(first.hosted_code);
    assert!(first.tools.iter().any(|t| t.name() == "forecast"));
    assert!(!first.tools.iter().any(|t| t.name() == CODE_TOOL));
    assert_eq!(effects.lookups.load(Ordering::SeqCst), 1);

    // Forced local: the sandbox, whatever the provider offers.
    let model = Arc::new(script());
    let mut agent = ReActAgent::builder(model.clone())
        .toolkit(&kit)
        .code_mode(CodeMode::new().execution(CodeExecution::Local))
        .build()
        .unwrap();
    let _ = agent.run("x").await;
    assert!(!model.requests()[0].hosted_code);
    assert_eq!(model.requests()[0].tools[0].name(), CODE_TOOL);

    // Hosted asked of a model without it: a configuration error.
    let error = ReActAgent::builder(ScriptedModel::new([]))
        .toolkit(&kit)
        .code_mode(CodeMode::new().execution(CodeExecution::Hosted))
        .build()
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("runs no programs on its provider's side"),
        "{error}"
    );
}

#[tokio::test]
async fn a_declared_tool_called_directly_still_runs_through_the_same_rules() {
    let effects = Arc::new(Effects::default());
    let kit = toolkit(effects.clone());
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::calls([
            ("forecast", json!({ "city": "Oslo" })),
            ("send", json!({ "to": "bo", "api_key": "stolen" })),
        ]),
        ScriptedTurn::text("done"),
    ]));
    let mut agent = ReActAgent::builder(model.clone())
        .toolkit(&kit)
        .code_mode(CodeMode::new())
        .build()
        .unwrap();
    agent.run("x").await.unwrap();
    assert_eq!(effects.lookups.load(Ordering::SeqCst), 1);
    let results = tool_results(&model, 1);
    assert!(
        results[1].contains("does not accept `api_key` from the model"),
        "{results:?}"
    );
}
