//! The turn's hooks in a program: a program's calls are answered by the toolkit's `Turn`, so its
//! repair hook mends them (through every rule again) and its guardrails replace results or stop
//! the run — in `CodeMode::run` and in an agent running programs locally.

use std::sync::Arc;

use agent_toolkit::ReActAgent;
use agent_toolkit::agent::AgentError;
use agent_toolkit::code::{CODE_TOOL, CodeExecution, CodeMode};
use agent_toolkit::prelude::*;
use agent_toolkit::testing::{ScriptedModel, ScriptedTurn};
use serde_json::json;

use super::bank::{GetBalance, Policy, ReadFile, Transfer, repair};

/// An agent running programs here, whose model writes `program` and then answers "done".
fn local_code_agent(kit: &Toolkit, program: &str) -> ReActAgent {
    let model = ScriptedModel::new([
        ScriptedTurn::call(CODE_TOOL, json!({ "code": program })),
        ScriptedTurn::text("done"),
    ]);
    ReActAgent::builder(model)
        .toolkit(kit)
        .code_mode(CodeMode::new().execution(CodeExecution::Local))
        .build()
        .unwrap()
}

fn toolkit() -> Toolkit {
    Toolkit::builder()
        .register(GetBalance)
        .register(Transfer)
        .register(ReadFile)
        .preset("root", "/srv")
        .repair_calls(repair)
        .guardrail(Policy)
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_programs_calls_are_repaired_and_guarded() {
    let kit = toolkit();
    let program = r#"
        const a = await tools.get_balance({ account: "2" });
        const b = await tools.get_balance({ account: 13 });
        let c;
        try { c = await tools.read_file({ path: "x", root: "/" }); } catch (e) { c = e.kind; }
        return [a, b, c].join(" | ");
    "#;
    let result = CodeMode::new()
        .run(&kit, "p1", program, &ToolContext::new())
        .await;
    assert_eq!(
        result.model_text(),
        "balance of 2: 100 | [redacted] | hidden_argument"
    );
}

#[tokio::test]
async fn a_guardrail_stop_ends_the_program_and_the_agents_run() {
    let kit = toolkit();
    let program = r#"
        await tools.transfer({ account: 1, amount: 5000 });
        return "moved";
    "#;
    let result = CodeMode::new()
        .run(&kit, "p1", program, &ToolContext::new())
        .await;
    assert!(result.is_error(), "{}", result.model_text());
    assert!(
        result.model_text().contains("needs a human"),
        "{}",
        result.model_text()
    );

    let mut agent = local_code_agent(&kit, program);
    match agent.run("move 5000").await {
        Err(AgentError::Guardrail(stop)) => {
            assert_eq!(stop.tool, "transfer");
            assert_eq!(stop.reason, "a transfer of 5000 needs a human");
        }
        other => panic!("expected a guardrail stop, got {other:?}"),
    }
}

#[tokio::test]
async fn a_users_layer_sees_run_code_and_the_programs_calls_like_any_other() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let kit = Toolkit::builder()
        .register(GetBalance)
        .layer(super::seen::SeenLayer(seen.clone()))
        .build()
        .unwrap();
    let program = "return await tools.get_balance({ account: 1 });";
    let mut agent = local_code_agent(&kit, program);
    assert_eq!(agent.run("balance?").await.unwrap(), "done");
    assert_eq!(*seen.lock().unwrap(), [CODE_TOOL, "get_balance"]);
}
