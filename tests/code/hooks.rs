//! The turn's hooks in a program: a program's calls are answered by the toolkit's `Turn`, so its
//! repair hook mends them (through every rule again) and its guardrails replace results or stop
//! the run — in `CodeMode::run` and in an agent running programs locally.

use std::sync::Arc;

use agent_toolkit::ReActAgent;
use agent_toolkit::agent::AgentError;
use agent_toolkit::code::{CODE_TOOL, CodeExecution, CodeMode};
use agent_toolkit::prelude::*;
use agent_toolkit::testing::{ScriptedModel, ScriptedTurn};
use agent_toolkit::toolkit::{Guardrail, GuardrailDecision, RepairRequest};
use serde_json::{Value, json};

/// An account's balance.
#[tool]
fn get_balance(account: u32) -> String {
    if account == 13 {
        format!("balance of {account}: 100 (SECRET note)")
    } else {
        format!("balance of {account}: 100")
    }
}

/// Move money out of an account.
#[tool]
fn transfer(account: u32, amount: u32) -> String {
    format!("moved {amount} from {account}")
}

/// Read a file under the root the developer set.
#[tool]
fn read_file(path: String, #[preset] root: String) -> String {
    format!("{root}/{path}")
}

/// Numbers written as strings become numbers; a `read_file` call gets a hidden `root` (which
/// the toolkit refuses, repaired or not).
async fn repair(request: RepairRequest) -> Option<ToolCall> {
    let call = request.call;
    let mut args: Value = serde_json::from_str(&call.arguments).ok()?;
    if call.name == "read_file" {
        args["root"] = json!("/");
        return Some(ToolCall::new(call.id, call.name, args.to_string()));
    }
    if let Some(Value::String(s)) = args.get("account").cloned() {
        args["account"] = json!(s.parse::<u32>().ok()?);
    }
    Some(ToolCall::new(call.id, call.name, args.to_string()))
}

struct Policy;

impl Guardrail for Policy {
    fn check_call(&self, call: &ToolCall) -> GuardrailDecision {
        let args: Value = serde_json::from_str(&call.arguments).unwrap_or_default();
        match args.get("amount").and_then(Value::as_u64) {
            Some(amount) if amount > 1000 => GuardrailDecision::Stop("too much".into()),
            _ => GuardrailDecision::Allow,
        }
    }

    fn check_result(&self, result: &ToolResult) -> GuardrailDecision {
        if result.model_text().contains("SECRET") {
            GuardrailDecision::Replace("[redacted]".into())
        } else {
            GuardrailDecision::Allow
        }
    }
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
        result.model_text().contains("too much"),
        "{}",
        result.model_text()
    );

    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::call(CODE_TOOL, json!({ "code": program })),
        ScriptedTurn::text("done"),
    ]));
    let mut agent = ReActAgent::builder(model)
        .toolkit(&kit)
        .code_mode(CodeMode::new().execution(CodeExecution::Local))
        .build()
        .unwrap();
    match agent.run("move 5000").await {
        Err(AgentError::Guardrail(stop)) => {
            assert_eq!(stop.tool, "transfer");
            assert_eq!(stop.reason, "too much");
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
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::call(CODE_TOOL, json!({ "code": program })),
        ScriptedTurn::text("done"),
    ]));
    let mut agent = ReActAgent::builder(model)
        .toolkit(&kit)
        .code_mode(CodeMode::new().execution(CodeExecution::Local))
        .build()
        .unwrap();
    assert_eq!(agent.run("balance?").await.unwrap(), "done");
    assert_eq!(*seen.lock().unwrap(), [CODE_TOOL, "get_balance"]);
}
