//! The toolkit of the durable-jobs tests, shared by the test binary and the child processes
//! (`tests/jobs/child.rs`): a repeatable tool, one that must not run twice, and one that waits.
//! Every run of a tool appends `start <tool> <n> <pid>` to the log file in the toolkit context,
//! so a test can count how many times each call really ran, across processes.
#![allow(dead_code)]

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use agent_toolkit::prelude::*;

/// Where the tools log their runs.
pub struct RunLog(pub PathBuf);

impl RunLog {
    fn append(&self, line: &str) {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.0)
            .expect("open the run log");
        // One write per line: O_APPEND keeps lines of concurrent writers whole.
        file.write_all(format!("{line}\n").as_bytes())
            .expect("write the run log");
    }
}

/// Record `n` (repeatable: safe to run again).
#[tool(background, idempotent)]
async fn record(#[ctx] log: Ctx<RunLog>, n: u32, ms: u64) -> String {
    log.append(&format!("start record {n} {}", std::process::id()));
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("recorded {n}")
}

/// Transfer `n` (must never run twice).
#[tool(background)]
async fn transfer(#[ctx] log: Ctx<RunLog>, n: u32, ms: u64) -> Result<String, ToolError> {
    log.append(&format!("start transfer {n} {}", std::process::id()));
    tokio::time::sleep(Duration::from_millis(ms)).await;
    if n == u32::MAX {
        return Err(ToolError::execution("no such account"));
    }
    Ok(format!("transferred {n}"))
}

/// Square `n` (a JSON result).
#[tool(background, read_only)]
async fn square(n: u64) -> u64 {
    n * n
}

/// A tool the workers of the tests do not have (submitters only).
#[tool(background)]
async fn audit(n: u32) -> String {
    format!("audited {n}")
}

/// A value some tests put in a call's context.
pub struct Tenant(pub String);

/// Uses a tenant from the context.
#[tool(background)]
async fn tenant_report(#[ctx] tenant: Ctx<Tenant>) -> String {
    let Tenant(name) = &*tenant;
    format!("report for {name}")
}

/// The toolkit of a worker (no `audit`).
pub fn worker_toolkit(log: PathBuf) -> Toolkit {
    Toolkit::builder()
        .register(Record)
        .register(Transfer)
        .register(TenantReport)
        .register(Square)
        .context(RunLog(log))
        .context(Tenant("acme".into()))
        .build()
        .expect("the worker toolkit")
}

/// The builder of a submitting toolkit: every tool, no run log (it does not run them).
pub fn submitter() -> agent_toolkit::toolkit::ToolkitBuilder {
    Toolkit::builder()
        .register(Record)
        .register(Transfer)
        .register(Audit)
        .register(TenantReport)
        .register(Square)
}

/// A call of `tool` with `n` and `ms`.
pub fn call(id: &str, tool: &str, n: u32, ms: u64) -> ToolCall {
    ToolCall::new(id, tool, format!(r#"{{"n": {n}, "ms": {ms}}}"#))
}

/// How many times each `(tool, n)` started, from the run log.
pub fn runs(log: &std::path::Path) -> std::collections::HashMap<(String, u32), Vec<u32>> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let mut runs: std::collections::HashMap<(String, u32), Vec<u32>> = Default::default();
    for line in text.lines() {
        let parts: Vec<&str> = line.split(' ').collect();
        if let ["start", tool, n, pid] = parts[..] {
            runs.entry((tool.to_string(), n.parse().unwrap()))
                .or_default()
                .push(pid.parse().unwrap());
        }
    }
    runs
}
