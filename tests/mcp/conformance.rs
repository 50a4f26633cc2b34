//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! `tests/peers/conformance/package.json`, run under the Node 22 that npm provides) against the
//! library, both ways:
//!
//! - every server scenario (`--suite all`) against `mcp-conformance-server`, the suite's tools
//!   written as `#[tool]`s and served by `mcp_http_service` on 127.0.0.1;
//! - every client scenario (each alone, as `conformance list --client` names them) with
//!   `mcp-conformance-client`, the library's `McpClient`, as the client the suite runs against
//!   its own servers.
//!
//! Both runs pass `tests/mcp/conformance-expected.yml`, so the suite itself fails the test on
//! any failure not listed there and on a listed failure that starts passing.

use std::time::Duration;

use tokio::process::Command;

use crate::peers;

/// The expected-failures file both runs read.
fn expected() -> std::path::PathBuf {
    peers::workspace_root().join("tests/mcp/conformance-expected.yml")
}

/// Run the suite's command to its end; panics with its output unless it exits with 0.
async fn run_suite(mut command: Command, what: &str) {
    let out = tokio::time::timeout(
        Duration::from_secs(300),
        command.kill_on_drop(true).output(),
    )
    .await
    .unwrap_or_else(|_| panic!("conformance suite, {what}: ran over 300 s"))
    .unwrap_or_else(|e| panic!("start the conformance suite: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The summary (and, on failure, every check) for the test's log.
    eprintln!("{stdout}\n{stderr}");
    assert!(
        out.status.success(),
        "conformance suite, {what}: the results differ from tests/mcp/conformance-expected.yml \
         (exit {:?}); see the summary above",
        out.status.code()
    );
}

#[tokio::test]
async fn server_scenarios() {
    let mut server = peers::spawn_command_ready(
        Command::new(env!("CARGO_BIN_EXE_mcp-conformance-server")),
        "mcp-conformance-server",
    )
    .await;
    let url = server.ready.clone();

    let mut suite = peers::conformance();
    suite
        .args([
            "server",
            "--suite",
            "all",
            "--url",
            &url,
            "--expected-failures",
        ])
        .arg(expected());
    run_suite(suite, "server scenarios").await;
    assert!(
        server.child.try_wait().unwrap().is_none(),
        "mcp-conformance-server exited during the suite"
    );
}

/// The client scenarios run one at a time (the suite's `--suite all` starts them all at once):
/// `sse-retry` times the client's reconnection against the SSE `retry` field with a 200 ms
/// tolerance, which 26 clients starting together on a small machine could exceed.
#[tokio::test]
async fn client_scenarios() {
    let mut list = peers::conformance();
    list.args(["list", "--client"]);
    let listed = list.output().await.expect("list the client scenarios");
    assert!(
        listed.status.success(),
        "`conformance list --client` failed"
    );
    let scenarios: Vec<String> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .filter_map(|line| line.trim().strip_prefix("- "))
        .filter_map(|rest| rest.split_whitespace().next())
        .map(str::to_owned)
        .collect();
    assert!(
        scenarios.len() >= 20 && scenarios.iter().any(|s| s == "sse-retry"),
        "the suite lists its client scenarios: {scenarios:?}"
    );
    for scenario in &scenarios {
        let mut suite = peers::conformance();
        suite
            .args(["client", "--scenario", scenario, "--command"])
            .arg(env!("CARGO_BIN_EXE_mcp-conformance-client"))
            .arg("--expected-failures")
            .arg(expected());
        run_suite(suite, &format!("client scenario `{scenario}`")).await;
    }
}
