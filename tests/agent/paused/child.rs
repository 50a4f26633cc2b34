//! The other processes of the paused-run process tests (`tests/agent/paused/process.rs`):
//!
//! - `paused-run-child pause STATE LOG`: run an agent that pauses at the approval of
//!   `delete_file`, write the state as JSON to STATE, and exit;
//! - `paused-run-child resume STATE LOG approve|deny`: build a new agent the same way, read the
//!   state, decide, resume, and print the answer;
//! - `paused-run-child ask STATE LOG`: run an agent whose `rename_file` asks the user for a
//!   name, write the state to STATE, and exit;
//! - `paused-run-child answer STATE LOG NAME`: read the state, answer the question with NAME,
//!   resume, and print the answer.
//!
//! The scripted model of the resuming process checks what it is sent (the conversation of the
//! first process, and the result of the decided call); a request it does not expect fails the
//! run, and the process exits with 1. The tools write what they do to LOG.

// Shared with the tests, which use the parts this process does not.
#[path = "fixture.rs"]
#[allow(dead_code)]
mod fixture;

use std::process::ExitCode;

use agent_toolkit::agent::{AgentError, PausedRun, RunOutcome};
use agent_toolkit::context::{Answer, Question};
use agent_toolkit::model::{ChatRequest, Message, Role};
use agent_toolkit::testing::{ScriptedModel, ScriptedTurn};
use serde_json::json;

use fixture::Log;

const INPUT: &str = "Write a note, then delete /tmp/a";
const REASON: &str = "keep /tmp/a until Monday";

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["pause", state, log] => pause(state, log).await,
        ["resume", state, log, decision] => resume(state, log, decision).await,
        ["ask", state, log] => ask(state, log).await,
        ["answer", state, log, name] => answer(state, log, name).await,
        _ => Err(format!(
            "usage: paused-run-child pause STATE LOG | resume STATE LOG approve|deny | ask STATE LOG | answer STATE LOG NAME (got {args:?})"
        )),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("paused-run-child: {why}");
            ExitCode::FAILURE
        }
    }
}

async fn pause(state: &str, log: &str) -> Result<(), String> {
    let model = ScriptedModel::new([ScriptedTurn::calls([
        ("write_note", json!({"text": "before"})),
        ("delete_file", json!({"path": "/tmp/a"})),
    ])]);
    let mut agent = fixture::agent(model, Log::at(log));
    match agent.run(INPUT).await {
        Err(AgentError::Paused(run)) => {
            let text = serde_json::to_string(&run).map_err(|e| e.to_string())?;
            std::fs::write(state, text).map_err(|e| format!("writing {state}: {e}"))?;
            println!("paused at {}", run.pending_approvals()[0].call().id);
            Ok(())
        }
        other => Err(format!("expected a pause, got {other:?}")),
    }
}

async fn resume(state: &str, log: &str, decision: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(state).map_err(|e| format!("reading {state}: {e}"))?;
    let mut run = PausedRun::from_json(&text).map_err(|e| e.to_string())?;
    let id = run.pending_approvals()[0].call().id.to_string();
    let (said, expected) = match decision {
        "approve" => {
            run.approve(&id).map_err(|e| e.to_string())?;
            ("approved", ("deleted /tmp/a".to_string(), false))
        }
        "deny" => {
            run.deny(&id, REASON).map_err(|e| e.to_string())?;
            let denial =
                format!("Error: the call of tool `delete_file` was not approved: {REASON}");
            ("denied", (denial, true))
        }
        other => return Err(format!("unknown decision {other}")),
    };
    let answer = format!("{said}: {}", expected.0);
    let model = ScriptedModel::new([]).then_expect(
        move |req| check(req, &expected),
        ScriptedTurn::text(answer.clone()),
    );
    let mut agent = fixture::agent(model, Log::at(log));
    match agent.resume(run).await {
        Ok(RunOutcome::Final(text)) if text == answer => {
            println!("{text}");
            Ok(())
        }
        other => Err(format!("expected the answer {answer:?}, got {other:?}")),
    }
}

async fn ask(state: &str, log: &str) -> Result<(), String> {
    let model = ScriptedModel::new([ScriptedTurn::call("rename_file", json!({"path": "/tmp/a"}))]);
    let mut agent = fixture::agent(model, Log::at(log));
    match agent.run("Rename /tmp/a").await {
        Err(AgentError::Paused(run)) => {
            std::fs::write(state, run.to_json()).map_err(|e| format!("writing {state}: {e}"))?;
            let pending = &run.pending_questions()[0];
            let Question::Elicit(form) = pending.question() else {
                return Err(format!("expected a form, got {:?}", pending.question()));
            };
            println!("asked at {}: {}", pending.call().id, form.message);
            Ok(())
        }
        other => Err(format!("expected a pause, got {other:?}")),
    }
}

async fn answer(state: &str, log: &str, name: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(state).map_err(|e| format!("reading {state}: {e}"))?;
    let mut run = PausedRun::from_json(&text).map_err(|e| e.to_string())?;
    let id = run.pending_questions()[0].call().id.to_string();
    run.answer(&id, Answer::accept(json!({ "name": name })))
        .map_err(|e| e.to_string())?;
    let want = format!("renamed /tmp/a to {name} (overwrite: false)");
    let model = ScriptedModel::new([]).then_expect(
        move |req| {
            let results: Vec<&str> = req
                .messages
                .iter()
                .filter_map(Message::as_tool)
                .map(|m| m.content.as_str())
                .collect();
            (results == [want.as_str()])
                .then_some(())
                .ok_or(format!("unexpected results {results:?}"))
        },
        ScriptedTurn::text("Renamed."),
    );
    let mut agent = fixture::agent(model, Log::at(log));
    match agent.resume(run).await {
        Ok(RunOutcome::Final(text)) => {
            println!("{text}");
            Ok(())
        }
        other => Err(format!("expected the answer, got {other:?}")),
    }
}

/// The request after the resume: the system prompt, the first process's input and calls, and
/// one result per call — the note's from before the pause, the decided call's now.
fn check(req: &ChatRequest, decided: &(String, bool)) -> Result<(), String> {
    let roles: Vec<Role> = req.messages.iter().map(|m| m.role()).collect();
    let expected_roles = [
        Role::System,
        Role::User,
        Role::Assistant,
        Role::Tool,
        Role::Tool,
    ];
    if roles != expected_roles || req.messages[1].content() != INPUT {
        return Err(format!("unexpected conversation: {:?}", req.messages));
    }
    let results: Vec<(&str, &str, bool)> = req.messages[3..]
        .iter()
        .filter_map(Message::as_tool)
        .map(|m| (&*m.call_id, m.content.as_str(), m.is_error))
        .collect();
    let want = [
        ("call_1_0", "noted before", false),
        ("call_1_1", decided.0.as_str(), decided.1),
    ];
    if results != want {
        return Err(format!("unexpected results: {results:?}, want {want:?}"));
    }
    Ok(())
}
