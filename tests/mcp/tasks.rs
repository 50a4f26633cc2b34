//! Background tools served as MCP tasks (revision 2025-11-25), with the official Python client
//! (mcp 2.x) as the peer: the `tasks` capability and `execution.taskSupport`, a task-augmented
//! call, `tasks/get`, `tasks/list`, `tasks/result`, `tasks/cancel`; a failing task, refusals,
//! and a plain call of a background tool. With the jobs in a SQLite file, the server is killed
//! (`kill -9`) while the task runs and started again: the task is still there, and its result
//! comes from the restarted server.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::process::Command;

use crate::peers::{self, Env};

/// Run the client's `phase` against `server`: `--url URL` or `--stdio EXE`.
async fn client(server: [&str; 2], phase: &str, task: Option<&str>) -> Value {
    let mut args = vec![server[0], server[1], "--phase", phase];
    if let Some(task) = task {
        args.extend(["--task", task]);
    }
    let (ok, stdout, stderr) = peers::run_script(
        Env::Mcp,
        "mcp_tasks_client.py",
        &args,
        Duration::from_secs(120),
    )
    .await;
    let report = peers::report(ok, &stdout, &stderr);
    assert_eq!(report["errors"], json!([]), "{report:#}\n{stderr}");
    assert_eq!(report["protocol_version"], "2025-11-25", "{report:#}");
    report
}

/// Start `mcp-task-server` on `port` (0: any), with its jobs in `db` if given.
async fn server(port: u16, db: Option<&std::path::Path>) -> (peers::Peer, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-task-server"));
    command.arg(port.to_string());
    if let Some(db) = db {
        command.arg(db);
    }
    let peer = peers::spawn_command_ready(command, "mcp-task-server").await;
    let url = format!("http://127.0.0.1:{}/mcp", peer.ready);
    (peer, url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_survives_the_server_killed_and_started_again() {
    let dir = std::env::temp_dir().join(format!("mcp-tasks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("jobs.db");
    let (mut first, url) = server(0, Some(&db)).await;
    let port: u16 = first.ready.parse().unwrap();

    let started = client(["--url", &url], "start", None).await;
    check_announced(&started);
    let created = &started["created"];
    let task = created["id"].as_str().unwrap().to_string();
    assert!(
        task.starts_with("mcp-task-") && task.len() > 30,
        "{created}"
    );
    assert_eq!(created["status"], "working");
    // Kept as long as the queue keeps finished jobs (7 days by default).
    assert_eq!(created["ttl"], 7 * 24 * 3600 * 1000);
    assert_eq!(created["poll_interval"], 1000);
    assert_eq!(started["first_get"]["id"], task.as_str());
    assert_eq!(started["first_get"]["status"], "working");

    // The task is running in the server's worker (3 s): kill -9, then start again.
    tokio::time::sleep(Duration::from_millis(500)).await;
    first.child.start_kill().unwrap();
    first.child.wait().await.unwrap();
    let (_second, url) = server(port, Some(&db)).await;

    let finished = client(["--url", &url], "finish", Some(&task)).await;
    assert_eq!(finished["get"]["id"], task.as_str(), "{finished:#}");
    assert_eq!(finished["get"]["created_at"], created["created_at"]);
    assert!(
        finished["listed"]
            .as_array()
            .unwrap()
            .contains(&json!(task)),
        "{finished:#}"
    );
    assert_eq!(
        finished["result"],
        json!({"text": "report on Q3", "is_error": false, "related_task": {"taskId": task}}),
        "{finished:#}"
    );
    assert_eq!(finished["after"]["status"], "completed");
    assert_ne!(
        finished["after"]["last_updated_at"], finished["after"]["created_at"],
        "{finished:#}"
    );
    assert_eq!(finished["cancel_ended"]["code"], -32602, "{finished:#}");
    let message = finished["cancel_ended"]["message"].as_str().unwrap();
    assert!(message.contains("terminal status 'completed'"), "{message}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_in_memory_cancel_fail_and_refuse_over_http() {
    let (_server, url) = server(0, None).await;
    in_memory(client(["--url", &url], "in-process", None).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_in_memory_cancel_fail_and_refuse_over_stdio() {
    let exe = env!("CARGO_BIN_EXE_mcp-task-server");
    in_memory(client(["--stdio", exe], "in-process", None).await);
}

/// The `tasks` capability in the `initialize` answer, and which tools run as tasks.
fn check_announced(report: &Value) {
    assert_eq!(
        report["tasks_capability"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
        "{report:#}"
    );
    assert_eq!(
        report["task_support"],
        json!({"slow_report": "optional", "failing_job": "optional", "add": null}),
        "{report:#}"
    );
}

fn in_memory(report: Value) {
    check_announced(&report);
    // Kept as long as the server runs.
    assert_eq!(report["cancelled"]["ttl"], Value::Null);
    assert_eq!(report["cancelled"]["status"], "cancelled", "{report:#}");
    assert_eq!(report["cancelled_get"]["status"], "cancelled");
    let message = report["cancelled"]["message"].as_str().unwrap();
    assert!(message.contains("was cancelled"), "{message}");
    assert_eq!(report["cancelled_result"]["is_error"], true);

    assert_eq!(report["failed"]["status"], "failed", "{report:#}");
    assert_eq!(report["failed"]["message"], "the job failed on purpose");
    assert_eq!(
        report["failed_result"],
        json!({"text": "the job failed on purpose", "is_error": true})
    );

    assert_eq!(report["not_a_task_tool"]["code"], -32601, "{report:#}");
    let message = report["not_a_task_tool"]["message"].as_str().unwrap();
    assert!(message.contains("#[tool(background)]"), "{message}");
    assert_eq!(report["unknown_tool"]["code"], -32602, "{report:#}");
    assert_eq!(report["bad_arguments"]["code"], -32602, "{report:#}");
    let message = report["bad_arguments"]["message"].as_str().unwrap();
    assert!(message.contains("slow_report"), "{message}");
    assert_eq!(report["unknown_task"]["code"], -32602, "{report:#}");

    // Without `task`, a background tool answers when its job ends.
    assert_eq!(
        report["plain_call"],
        json!({"text": "report on now", "is_error": false})
    );
    // The plain call ran as a job too, and is no task.
    let listed = report["listed"].as_array().unwrap();
    assert_eq!(listed.len(), 2, "{report:#}");
    for id in report["created_ids"].as_array().unwrap() {
        assert!(listed.contains(id), "{report:#}");
    }
    // The session was told when its two tasks ended (`notifications/tasks/status`).
    let created = &report["created_ids"];
    let mut notified = report["status_notifications"].as_array().unwrap().clone();
    notified.sort_by_key(|n| n["status"].to_string());
    assert_eq!(
        Value::Array(notified),
        json!([
            {"id": created[0], "status": "cancelled"},
            {"id": created[1], "status": "failed"},
        ]),
        "{report:#}"
    );
}

/// The official TypeScript SDK's experimental tasks client: it learns from the listing that
/// `slow_report` runs as a task, and its `callToolStream` creates the task, polls it and fetches
/// its result; `cancelTask`, `listTasks`, and a plain `callTool` of the background tool.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_runs_tasks() {
    let (_server, url) = server(0, None).await;
    let (ok, stdout, stderr) = peers::run_node(
        "mcp_tasks_client.cjs",
        &["--url", &url],
        Duration::from_secs(90),
    )
    .await;
    let report = peers::report(ok, &stdout, &stderr);
    assert_eq!(report["errors"], json!([]), "{report:#}");
    assert_eq!(
        report["server_tasks"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
        "{report:#}"
    );
    assert_eq!(report["task_support"]["slow_report"], "optional");
    assert_eq!(report["task_support"]["add"], Value::Null);
    let stream = report["stream"].as_array().unwrap();
    assert_eq!(
        stream.first(),
        Some(&json!(["taskCreated", "working"])),
        "{report:#}"
    );
    assert_eq!(
        stream.last(),
        Some(&json!(["result", "report on js", false])),
        "{report:#}"
    );
    assert!(
        stream.contains(&json!(["taskStatus", "completed"])),
        "{report:#}"
    );
    assert_eq!(report["cancelled"], "cancelled", "{report:#}");
    assert_eq!(report["cancelled_get"], "cancelled");
    let listed = report["listed"].as_array().unwrap();
    assert!(
        listed.contains(&report["task_id"]) && listed.contains(&report["long_id"]),
        "{report:#}"
    );
    assert_eq!(report["plain"], json!(["report on plain", false]));
}

/// The TypeScript SDK's server with tools that run only as tasks (`taskSupport: "required"`),
/// imported with `run_as_tasks`: its task tools become background tools of the toolkit (the
/// model's call answers pending at once), called as tasks — created, polled, their result
/// fetched — and reported when the task ends; its ordinary tool stays an ordinary one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_imported_servers_task_tools_are_background_tools() {
    use agent_toolkit::mcp::{McpClient, McpClientOptions, McpImport};
    use agent_toolkit::prelude::*;

    let target = crate::node_target("mcp_task_server.cjs");
    let options = McpClientOptions::new().run_as_tasks(["brew", "burn"]);
    let import = McpImport::from_client(McpClient::with_options(target, options), "js")
        .await
        .unwrap();
    let toolkit = Toolkit::builder()
        .group("js", "the TypeScript server's tools")
        .dynamic("js", import.tools())
        .build()
        .unwrap();
    let ctx = ToolContext::new();
    let brew = toolkit
        .call(
            ToolCall::new("c1", "js__brew", r#"{"kind": "tea", "ms": 300}"#),
            &ctx,
        )
        .await;
    assert!(brew.is_pending(), "a background tool: {brew}");
    let burn = toolkit
        .call(ToolCall::new("c2", "js__burn", "{}"), &ctx)
        .await;
    assert!(burn.is_pending(), "{burn}");
    let add = toolkit
        .call(ToolCall::new("c3", "js__add", r#"{"a": 1, "b": 2}"#), &ctx)
        .await;
    assert_eq!(add.model_text(), "3", "an ordinary tool answers at once");

    tokio::time::timeout(Duration::from_secs(30), toolkit.background().drain())
        .await
        .expect("the tasks end")
        .unwrap();
    let mut results = toolkit.background().take_finished().await.unwrap();
    results.sort_by(|a, b| a.call_id.cmp(&b.call_id));
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[0].model_text(), "tea is ready", "{results:?}");
    let error = results[1].error().expect("the failed task is an error");
    assert!(error.message().contains("burnt"), "{error}");
}
