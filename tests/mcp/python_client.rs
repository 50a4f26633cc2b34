//! The official Python MCP client (mcp 2.x) against our stdio and streamable-HTTP servers:
//! the `server/discover` fallback, `tools/list` with output schemas and annotations, calls,
//! progress, tool errors, refused calls, cancellation and `list_changed`.

use std::time::Duration;

use serde_json::{Value, json};

use crate::peers::{self, Env};

async fn run_client(args: &[&str]) -> Value {
    let (ok, stdout, stderr) = peers::run_script(
        Env::Mcp,
        "mcp_client_check.py",
        args,
        Duration::from_secs(90),
    )
    .await;
    let report: Value = stdout
        .lines()
        .last()
        .and_then(|line| serde_json::from_str(line).ok())
        .unwrap_or_else(|| panic!("no report from the client:\n{stdout}\n{stderr}"));
    assert!(ok, "the client failed: {report}\n{stderr}");
    report
}

/// What every transport must show.
fn check(report: &Value) {
    assert_eq!(report["errors"], json!([]), "{report:#}");
    // `auto` probed `server/discover`, got -32601 and fell back at once (a silent server
    // would have cost it a 10 s timeout).
    assert_eq!(report["protocol_version"], "2025-11-25");
    assert!(
        report["connect_seconds"].as_f64().unwrap() < 5.0,
        "{report}"
    );
    assert_eq!(report["list_changed_capability"], true);
    assert_eq!(
        report["tools"],
        json!(["add", "slow", "cancelled_count", "fail", "unlock"]),
        "active tools in registration order; `secret` is in a group that is off"
    );
    assert_eq!(report["add_output_schema"]["type"], "object");
    assert_eq!(report["add_output_schema"]["required"], json!(["sum"]));
    assert_eq!(
        report["add_annotations"],
        json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true})
    );
    // The SDK validated this structured content against the output schema.
    assert_eq!(
        report["add"],
        json!({"is_error": false, "structured": {"sum": 5}, "text": "{\"sum\":5}"})
    );
    assert_eq!(report["slow"]["text"], "counted to 3");
    assert_eq!(
        report["slow"]["progress"],
        json!([
            [1.0, 3.0, "step 1"],
            [2.0, 3.0, "step 2"],
            [3.0, 3.0, "step 3"]
        ])
    );
    assert_eq!(
        report["fail"],
        json!({"is_error": true, "text": "the tool failed on purpose"})
    );
    assert_eq!(report["bad_arguments"]["is_error"], true);
    let bad = report["bad_arguments"]["text"].as_str().unwrap();
    assert!(bad.contains("invalid arguments for tool `add`"), "{bad}");
    assert_eq!(report["call_nope"]["code"], -32602);
    assert!(
        report["call_nope"]["message"]
            .as_str()
            .unwrap()
            .contains("there is no tool named `nope`")
    );
    assert_eq!(report["call_secret"]["code"], -32602);
    assert!(
        report["call_secret"]["message"]
            .as_str()
            .unwrap()
            .contains("tool `secret` is not available")
    );
    assert!(report["cancelled_count"].as_u64().unwrap() >= 1, "{report}");
    assert_eq!(report["unlock"], "unlocked");
    assert_eq!(report["list_changed_received"], true, "{report}");
    assert_eq!(
        report["tools_after_unlock"],
        json!(["add", "slow", "cancelled_count", "fail", "unlock", "secret"])
    );
    assert_eq!(report["secret"], "swordfish");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_client_over_stdio() {
    let report = run_client(&["--stdio", crate::server_exe()]).await;
    check(&report);
    assert_eq!(report["server_name"], "agent-toolkit");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_client_over_streamable_http() {
    let toolkit = crate::fixture::toolkit();
    let url = crate::serve_http(&toolkit).await;
    let report = run_client(&["--url", &url]).await;
    check(&report);
    // The client's `unlock` switched the group in its session only.
    assert!(!toolkit.is_group_active("admin").unwrap());
}
