//! A run paused for approval in one process, the process exited, and the run resumed in a new
//! process — with approve and with deny — and the same for a tool's question (the
//! `paused-run-child` binary, `child.rs`).

use std::path::Path;
use std::process::{Command, Output};

use agent_toolkit::agent::PausedRun;

use super::fixture::Log;

const CHILD: &str = env!("CARGO_BIN_EXE_paused-run-child");

fn child(args: &[&str]) -> Output {
    let output = Command::new(CHILD)
        .args(args)
        .output()
        .expect("start paused-run-child");
    assert!(
        output.status.success(),
        "paused-run-child {args:?} failed ({}):\nstdout: {}\nstderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// First process: pause and exit. Returns the run id of the stored state.
fn pause_in_a_process(state: &Path, log: &Log) -> String {
    let paths = [state.to_str().unwrap(), log.path().to_str().unwrap()];
    let output = child(&["pause", paths[0], paths[1]]);
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "paused at call_1_1\n"
    );
    // The call that needs no approval ran once; the one waiting for approval did not.
    assert_eq!(log.lines(), ["write_note before"]);
    let run = PausedRun::from_json(&std::fs::read_to_string(state).unwrap()).unwrap();
    assert_eq!(run.pending_approvals().len(), 1);
    assert_eq!(run.pending_approvals()[0].tool(), "delete_file");
    assert_eq!(run.pending_approvals()[0].decision(), None);
    run.run_id().to_string()
}

fn state_file(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!(
        "agent-toolkit-paused-{name}-{}.json",
        std::process::id()
    ))
}

#[test]
fn paused_in_one_process_and_approved_in_another() {
    let (state, log) = (state_file("approve"), Log::temp("process-approve"));
    let run_id = pause_in_a_process(&state, &log);

    let paths = [state.to_str().unwrap(), log.path().to_str().unwrap()];
    let output = child(&["resume", paths[0], paths[1], "approve"]);
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "approved: deleted /tmp/a\n"
    );
    // The approved call ran exactly once, in the same run and step it was made in; the note
    // was not written again.
    assert_eq!(
        log.lines(),
        [
            "write_note before".to_string(),
            format!("delete_file /tmp/a run={run_id} step=1"),
        ]
    );
    let _ = std::fs::remove_file(state);
    let _ = std::fs::remove_file(log.path());
}

#[test]
fn paused_in_one_process_and_denied_in_another() {
    let (state, log) = (state_file("deny"), Log::temp("process-deny"));
    pause_in_a_process(&state, &log);

    let paths = [state.to_str().unwrap(), log.path().to_str().unwrap()];
    let output = child(&["resume", paths[0], paths[1], "deny"]);
    // The model was sent the denial as the call's result (the child's model checks it).
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "denied: Error: the call of tool `delete_file` was not approved: keep /tmp/a until Monday\n"
    );
    assert_eq!(
        log.lines(),
        ["write_note before"],
        "a denied call never runs"
    );
    let _ = std::fs::remove_file(state);
    let _ = std::fs::remove_file(log.path());
}

#[test]
fn asked_in_one_process_and_answered_in_another() {
    let (state, log) = (state_file("ask"), Log::temp("process-ask"));
    let paths = [state.to_str().unwrap(), log.path().to_str().unwrap()];
    let output = child(&["ask", paths[0], paths[1]]);
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "asked at call_1_0: New name for /tmp/a?\n"
    );
    assert_eq!(log.lines(), ["rename_file /tmp/a asks"]);

    let output = child(&["answer", paths[0], paths[1], "b.txt"]);
    assert_eq!(String::from_utf8_lossy(&output.stdout), "Renamed.\n");
    assert_eq!(
        log.lines(),
        [
            "rename_file /tmp/a asks",
            "rename_file /tmp/a asks",
            "rename_file /tmp/a -> b.txt"
        ]
    );
    let _ = std::fs::remove_file(state);
    let _ = std::fs::remove_file(log.path());
}
