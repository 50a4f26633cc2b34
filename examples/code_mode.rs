//! Code mode: the model writes one program that calls many tools, instead of one model turn
//! per call.
//!
//! Shows: the one tool the model is shown (`run_code`, its description declaring the tools as
//! TypeScript signatures written from their schemas); a program that fans out over 12
//! employees' expense claims and returns only the answer; a hidden parameter (the HR system's
//! API key, preset at registration) that the program cannot see or set; the same run paused at
//! a call that needs approval, stored as JSON, and resumed by a new agent, the program replaying
//! from its journal so that no finished call runs twice; and the round trips saved against
//! calling the tools one by one.
//!
//! It runs offline: the model is scripted. Run it with `cargo run --example code_mode --features code`.

use std::sync::atomic::{AtomicUsize, Ordering};

use agent_toolkit::agent::{PausedRun, RunOutcome};
use agent_toolkit::code::{CODE_TOOL, CodeMode};
use agent_toolkit::prelude::*;
use agent_toolkit::testing::{ScriptedModel, ScriptedTurn};
use agent_toolkit::{ReActAgent, tool};
use serde_json::json;

/// How many times the HR system was asked for expenses.
static LOOKUPS: AtomicUsize = AtomicUsize::new(0);

/// One employee's expense total this quarter, in euros.
#[tool(read_only)]
fn expenses(employee: u32, #[preset] api_key: String) -> i64 {
    assert_eq!(api_key, "hr-secret", "the preset reaches the tool");
    LOOKUPS.fetch_add(1, Ordering::SeqCst);
    (employee as i64 * 397) % 2_500 + 500
}

/// Flag an employee for a review of their expenses (a human approves each flag).
#[tool(requires_approval)]
fn flag_for_review(employee: u32, reason: String) -> String {
    format!("employee {employee} flagged: {reason}")
}

const PROGRAM: &str = r#"
const ids = Array.from({ length: 12 }, (_, i) => i + 1);
const totals = await Promise.all(ids.map(employee => tools.expenses({ employee })));
const over = ids.filter((id, i) => totals[i] > 2000);
text(`checked ${ids.length} employees, ${over.length} over the 2,000 € budget`);
// The key is preset at registration: the program can neither read nor set it.
try { await tools.expenses({ employee: 1, api_key: "guess" }); } catch (e) { text(`setting the key: ${e.kind}`); }
const flagged = [];
for (const employee of over) {
  flagged.push(await tools.flag_for_review({ employee, reason: "over budget" }));
}
return flagged;
"#;

fn toolkit() -> Toolkit {
    Toolkit::builder()
        .register(Expenses)
        .preset("api_key", "hr-secret")
        .register(FlagForReview)
        .build()
        .expect("toolkit")
}

fn agent(model: ScriptedModel) -> ReActAgent {
    ReActAgent::builder(model)
        .toolkit(&toolkit())
        .code_mode(CodeMode::new())
        .pause_at_approvals()
        .build()
        .expect("agent")
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    // What the model is shown: one tool, with the API declared in its description.
    let shown = CodeMode::new().definition(&toolkit());
    println!(
        "The model sees `{}`:\n{}\n",
        shown.name(),
        shown.description()
    );

    // Turn 1: the model writes the program. It runs here, in the sandbox, until its first
    // `flag_for_review`, which waits for a human: the run pauses.
    let mut first = agent(ScriptedModel::new([ScriptedTurn::call(
        CODE_TOOL,
        json!({ "code": PROGRAM }),
    )]));
    let outcome = first
        .run_with_external_tools("Flag everyone over budget for review.", Vec::new())
        .await
        .expect("run");
    let RunOutcome::Paused(paused) = outcome else {
        panic!("the program waits for an approval");
    };
    println!(
        "Paused after {} expense lookups, waiting for approval of {}({})",
        LOOKUPS.load(Ordering::SeqCst),
        paused.pending_approvals()[0].tool(),
        paused.pending_approvals()[0].call().arguments
    );

    // Stored as JSON, read back (in any process), approved; every later flag waits again.
    let mut stored = paused.to_json();
    let model_turns = vec![ScriptedTurn::text(
        "Flagged the employees over budget for review.",
    )];
    let answer = loop {
        let mut run = PausedRun::from_json(&stored).expect("stored run");
        let id = run.pending_approvals()[0].call().id.to_string();
        println!("  approved {id}");
        run.approve(&id).expect("approve");
        let mut resumed = agent(ScriptedModel::new(model_turns.clone()));
        match resumed.resume(run).await.expect("resume") {
            RunOutcome::Paused(next) => stored = next.to_json(),
            RunOutcome::Final(answer) => {
                let program_result = resumed
                    .memory()
                    .iter()
                    .rev()
                    .find(|m| m.as_tool().is_some_and(|m| m.name == CODE_TOOL))
                    .map(|m| m.content().to_string())
                    .unwrap_or_default();
                println!(
                    "\nThe program's result, all the model saw of its calls:\n{program_result}\n"
                );
                break answer;
            }
            other => panic!("unexpected {other:?}"),
        }
    };
    // Replays answered the 12 lookups from the journal: none ran again.
    assert_eq!(LOOKUPS.load(Ordering::SeqCst), 12);
    println!("Answer: {answer}");
    println!(
        "Expense lookups run: {} (each replay served them from the journal)",
        LOOKUPS.load(Ordering::SeqCst)
    );
    println!("Model round trips: 2 (the program, then the answer), however many calls it made");
}
