//! The toolkit every MCP test serves: shared by the test binary (HTTP servers in-process) and
//! the `mcp-test-server` binary (the stdio server the peers start).
#![allow(dead_code)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use agent_toolkit::mcp::McpSession;
use agent_toolkit::prelude::*;
use schemars::JsonSchema;
use serde::Serialize;

/// `slow` calls that ended without finishing (cancelled, or their future dropped).
static CANCELLED: AtomicU64 = AtomicU64::new(0);

#[derive(Serialize, JsonSchema)]
pub struct Sum {
    /// a + b
    pub sum: i64,
}

/// Add two integers.
#[tool(read_only, idempotent)]
pub fn add(a: i64, b: i64) -> Json<Sum> {
    Json(Sum { sum: a + b })
}

/// Counts to `steps`, reporting progress after each step.
#[tool]
pub async fn slow(
    /// How many steps.
    steps: u32,
    /// Pause before each step, in milliseconds.
    #[arg(default = 40)]
    delay_ms: u64,
    #[ctx] progress: ToolEmitter,
) -> String {
    let mut unfinished = Unfinished(true);
    for step in 1..=steps {
        tokio::time::sleep(Duration::from_millis(delay_ms)).await;
        progress.progress(step, f64::from(steps), format!("step {step}"));
    }
    unfinished.0 = false;
    format!("counted to {steps}")
}

/// Counts a `slow` call whose future was dropped before it finished.
struct Unfinished(bool);

impl Drop for Unfinished {
    fn drop(&mut self) {
        if self.0 {
            CANCELLED.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// How many `slow` calls were stopped before they finished.
#[tool(read_only)]
pub fn cancelled_count() -> u64 {
    CANCELLED.load(Ordering::SeqCst)
}

/// Always fails.
#[tool]
pub fn fail() -> Result<String, ToolError> {
    Err(ToolError::execution("the tool failed on purpose"))
}

/// Switch the admin tools on for this session only.
#[tool]
pub fn unlock(#[ctx] session: Ctx<McpSession>) -> Result<&'static str, ToolError> {
    session
        .toolkit()
        .set_group_active("admin", true)
        .map_err(|e| ToolError::execution(e.to_string()))?;
    Ok("unlocked")
}

/// The admin secret.
#[tool(group = "admin", read_only)]
pub fn secret() -> &'static str {
    "swordfish"
}

/// The served toolkit: `add`, `slow`, `cancelled_count`, `fail`, `unlock`, and `secret` in
/// the `admin` group, which starts off.
pub fn toolkit() -> Toolkit {
    Toolkit::builder()
        .inactive_group("admin", "Administration")
        .register(Add)
        .register(Slow)
        .register(CancelledCount)
        .register(Fail)
        .register(Unlock)
        .register(Secret)
        .build()
        .expect("the fixture toolkit builds")
}
