//! Starting the Python peers and small helpers shared by the tests.

use std::time::Duration;

use agent_toolkit::a2a::client::RemoteTool;
use agent_toolkit::{ToolContext, ToolOutput};
use serde_json::{Value, json};

use crate::peers::{self, Env, Peer};

/// A running peer (killed when dropped) and its base URL.
pub struct Running {
    #[allow(dead_code)]
    pub peer: Peer,
    pub url: String,
}

/// Start `tests/peers/<script>` on a free port with extra arguments.
pub async fn start(env: Env, script: &str, extra: &[&str]) -> Running {
    let port = peers::free_port();
    start_on(env, script, port, extra).await
}

/// Start `tests/peers/<script>` on `port`.
pub async fn start_on(env: Env, script: &str, port: u16, extra: &[&str]) -> Running {
    let port_text = port.to_string();
    let mut args = vec![port_text.as_str()];
    args.extend_from_slice(extra);
    let peer = peers::spawn_ready(env, script, &args).await;
    Running {
        peer,
        url: format!("http://127.0.0.1:{port}"),
    }
}

/// The JSON of a tool output.
pub fn json_of(output: &ToolOutput) -> Value {
    serde_json::from_str(output.as_text()).expect("JSON output")
}

/// The peer's `stats` tool: calls per tool and cancelled task ids.
pub async fn stats(tool: &RemoteTool) -> Value {
    let out = tool
        .invoke(json!({}), &ToolContext::new())
        .await
        .expect("stats");
    json_of(&out)
}

/// Poll the peer's `stats` until `check` holds (the peer records cancellations asynchronously).
pub async fn wait_for_stats(tool: &RemoteTool, check: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let s = stats(tool).await;
        if check(&s) {
            return s;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "condition never held; last stats: {s}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
