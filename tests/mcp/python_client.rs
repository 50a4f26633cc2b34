//! The official Python MCP client (mcp 2.x) against our stdio and streamable-HTTP servers, in
//! each of its modes — `2026-07-28` (stateless, no handshake), `auto` (probes
//! `server/discover`, which our dual-era server answers) and `legacy` (the 2025-11-25
//! `initialize` handshake): `tools/list` with output schemas and annotations, calls, progress,
//! tool errors, refused calls, cancellation and tool-list changes (pushed in the handshake era,
//! on a `subscriptions/listen` stream in the stateless one).

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
    peers::report(ok, &stdout, &stderr)
}

/// Which revision the client ended up speaking, and whether it had a session.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Era {
    /// 2025-11-25: `initialize`, a session (over HTTP, a view of the toolkit per session).
    Handshake,
    /// 2026-07-28 over stdio: no handshake; the process serves one client, whose `unlock`
    /// switches the served toolkit (there is no other).
    StatelessStdio,
    /// 2026-07-28 over HTTP: every request stands alone, so there is no session to unlock.
    StatelessHttp,
}

/// What every transport and mode must show.
fn check(report: &Value, era: Era, mode: &str) {
    assert_eq!(report["errors"], json!([]), "{report:#}");
    let version = match era {
        Era::Handshake => "2025-11-25",
        Era::StatelessStdio | Era::StatelessHttp => "2026-07-28",
    };
    assert_eq!(report["protocol_version"], version, "{report:#}");
    // No fallback waited for a timeout.
    assert!(
        report["connect_seconds"].as_f64().unwrap() < 5.0,
        "{report}"
    );
    if mode != "2026-07-28" {
        // Announced in `initialize` or `server/discover` (a client that adopts the revision
        // without probing has not asked).
        assert_eq!(report["list_changed_capability"], true);
    }
    crate::check_listed_fixture(report);
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
    if era != Era::Handshake {
        assert_eq!(report["listen_honored"], true, "{report:#}");
    }
    if era == Era::StatelessHttp {
        // No session: the tool that switches the session's groups says why it cannot.
        assert_eq!(report["unlock_is_error"], true, "{report:#}");
        let text = report["unlock"].as_str().unwrap();
        assert!(
            text.contains("stateless (2026-07-28) request has none")
                && text.contains("`initialize` handshake"),
            "{text}"
        );
        assert_eq!(
            report["tools_after_unlock"],
            json!(["add", "slow", "cancelled_count", "fail", "unlock"])
        );
        return;
    }
    assert_eq!(report["unlock"], "unlocked");
    assert_eq!(report["list_changed_received"], true, "{report:#}");
    if era == Era::StatelessStdio {
        assert_eq!(report["listen_event"], "ToolsListChanged", "{report:#}");
    }
    assert_eq!(
        report["tools_after_unlock"],
        json!(["add", "slow", "cancelled_count", "fail", "unlock", "secret"])
    );
    assert_eq!(report["secret"], "swordfish");
}

async fn over_stdio(mode: &str, era: Era) {
    let report = run_client(&["--stdio", crate::server_exe(), "--mode", mode]).await;
    check(&report, era, mode);
    if mode != "2026-07-28" {
        assert_eq!(report["server_name"], "agent-toolkit");
    }
}

async fn over_http(mode: &str, era: Era) {
    let toolkit = crate::fixture::toolkit();
    let url = crate::serve_http(&toolkit).await;
    let report = run_client(&["--url", &url, "--mode", mode]).await;
    check(&report, era, mode);
    if mode != "2026-07-28" {
        assert_eq!(report["server_name"], "agent-toolkit");
    }
    // Whatever the client did, the served toolkit's groups did not change.
    assert!(!toolkit.is_group_active("admin").unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_client_over_stdio_stateless() {
    over_stdio("2026-07-28", Era::StatelessStdio).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_client_over_stdio_auto_picks_the_newest_revision() {
    over_stdio("auto", Era::StatelessStdio).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_client_over_stdio_handshake() {
    over_stdio("legacy", Era::Handshake).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_client_over_streamable_http_stateless() {
    over_http("2026-07-28", Era::StatelessHttp).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_client_over_streamable_http_auto_picks_the_newest_revision() {
    over_http("auto", Era::StatelessHttp).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_client_over_streamable_http_handshake() {
    over_http("legacy", Era::Handshake).await;
}
