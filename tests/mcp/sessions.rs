//! Group state per streamable-HTTP session, seen through our own client: a session's toggles
//! stay in it, a toggle of the served toolkit reaches every session it affects, and a replaced
//! dynamic set is announced too. In the stateless revision there are no sessions: changes of
//! the served toolkit reach clients on their `subscriptions/listen` streams, and a tool that
//! needs a session says why it cannot run.

use std::sync::Arc;
use std::time::Duration;

use agent_toolkit::mcp::{McpClient, McpClientOptions, McpEra, McpTarget};
use agent_toolkit::prelude::*;
use agent_toolkit::{AgentTool, toolkit::DynamicTools};
use serde_json::json;

/// The names of the tools `client`'s server lists, sorted.
pub(crate) async fn tool_names(client: &McpClient) -> Vec<String> {
    let mut names: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    names
}

/// Whether a `list_changed` arrives within a second.
async fn notified(changes: &mut tokio::sync::watch::Receiver<u64>) -> bool {
    tokio::time::timeout(Duration::from_secs(1), changes.changed())
        .await
        .is_ok_and(|r| r.is_ok())
}

/// `add` and `unlock`, `secret` in the `admin` group (off), and the `extra` dynamic set.
fn grouped_toolkit(extra: &DynamicTools) -> Toolkit {
    Toolkit::builder()
        .inactive_group("admin", "Administration")
        .group("extra", "Tools added at run time")
        .register(crate::fixture::Add)
        .register(crate::fixture::Unlock)
        .register(crate::fixture::Secret)
        .dynamic("extra", extra)
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_have_their_own_groups_and_hear_toolkit_changes() {
    let extra = DynamicTools::new();
    let toolkit = grouped_toolkit(&extra);
    let url = crate::serve_http(&toolkit).await;
    let handshake = McpClientOptions::new().era(McpEra::Handshake);
    let alice = McpClient::with_options(McpTarget::url(&url), handshake.clone());
    let bob = McpClient::with_options(McpTarget::url(&url), handshake);
    alice.connect().await.unwrap();
    bob.connect().await.unwrap();
    assert_eq!(alice.protocol_version().await.unwrap(), "2025-11-25");
    let mut alice_changes = alice.tool_list_changes();
    let mut bob_changes = bob.tool_list_changes();
    assert_eq!(tool_names(&alice).await, ["add", "unlock"]);

    // Alice unlocks admin for her session only.
    let unlocked = alice.call_tool("unlock", json!({})).await.unwrap();
    assert_eq!(unlocked.is_error, Some(false));
    assert!(notified(&mut alice_changes).await);
    assert!(
        !notified(&mut bob_changes).await,
        "bob's session did not change"
    );
    assert_eq!(tool_names(&alice).await, ["add", "secret", "unlock"]);
    assert_eq!(tool_names(&bob).await, ["add", "unlock"]);
    assert!(!toolkit.is_group_active("admin").unwrap());

    // A toggle of the served toolkit reaches the sessions that follow it: bob, not alice (her
    // session set `admin` itself).
    toolkit.set_group_active("admin", true).unwrap();
    assert!(notified(&mut bob_changes).await);
    assert!(
        !notified(&mut alice_changes).await,
        "alice's tools did not change"
    );
    assert_eq!(tool_names(&bob).await, ["add", "secret", "unlock"]);

    // A replaced dynamic set reaches everyone.
    let tool: Arc<dyn AgentTool> = Arc::new(crate::fixture::Fail);
    extra.replace([tool]).unwrap();
    assert!(notified(&mut alice_changes).await);
    assert!(notified(&mut bob_changes).await);
    assert_eq!(tool_names(&bob).await, ["add", "fail", "secret", "unlock"]);
    let failed = bob.call_tool("fail", json!({})).await.unwrap();
    assert_eq!(failed.is_error, Some(true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_clients_hear_toolkit_changes_and_have_no_session() {
    let extra = DynamicTools::new();
    let toolkit = grouped_toolkit(&extra);
    let url = crate::serve_http(&toolkit).await;
    // The default: the newest revision the server offers.
    let alice = McpClient::new(McpTarget::url(&url));
    let stateless = McpClientOptions::new().era(McpEra::Stateless);
    let bob = McpClient::with_options(McpTarget::url(&url), stateless);
    alice.connect().await.unwrap();
    bob.connect().await.unwrap();
    assert_eq!(alice.protocol_version().await.unwrap(), "2026-07-28");
    assert_eq!(bob.protocol_version().await.unwrap(), "2026-07-28");
    let mut alice_changes = alice.tool_list_changes();
    let mut bob_changes = bob.tool_list_changes();
    assert_eq!(tool_names(&alice).await, ["add", "unlock"]);

    let unlocked = alice.call_tool("unlock", json!({})).await.unwrap();
    assert_eq!(unlocked.is_error, Some(true));
    let text = format!("{:?}", unlocked.content);
    assert!(
        text.contains("stateless (2026-07-28) request has none"),
        "{text}"
    );
    assert!(!notified(&mut alice_changes).await);
    assert!(!toolkit.is_group_active("admin").unwrap());

    // Changes of the served toolkit reach both, on their listen streams.
    toolkit.set_group_active("admin", true).unwrap();
    assert!(notified(&mut alice_changes).await);
    assert!(notified(&mut bob_changes).await);
    assert_eq!(tool_names(&bob).await, ["add", "secret", "unlock"]);
    let tool: Arc<dyn AgentTool> = Arc::new(crate::fixture::Fail);
    extra.replace([tool]).unwrap();
    assert!(notified(&mut alice_changes).await);
    assert!(notified(&mut bob_changes).await);
    assert_eq!(
        tool_names(&alice).await,
        ["add", "fail", "secret", "unlock"]
    );
    let secret = alice.call_tool("secret", json!({})).await.unwrap();
    assert_eq!(secret.is_error, Some(false));
}

/// Calls of `busy` running now, and the most ever seen at once.
static RUNNING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static PEAK: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Hold a slot for a moment.
#[tool]
async fn busy() -> &'static str {
    use std::sync::atomic::Ordering::SeqCst;
    let now = RUNNING.fetch_add(1, SeqCst) + 1;
    PEAK.fetch_max(now, SeqCst);
    tokio::time::sleep(Duration::from_millis(100)).await;
    RUNNING.fetch_sub(1, SeqCst);
    "done"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_share_the_toolkit_concurrency_cap() {
    let toolkit = Toolkit::builder()
        .register(Busy)
        .max_concurrency(2)
        .build()
        .unwrap();
    let url = crate::serve_http(&toolkit).await;
    // Two sessions, three requests each, all at once.
    let clients = [
        McpClient::new(McpTarget::url(&url)),
        McpClient::new(McpTarget::url(&url)),
    ];
    let calls = clients
        .iter()
        .flat_map(|c| (0..3).map(move |_| c.call_tool("busy", json!({}))));
    let results = futures::future::join_all(calls).await;
    assert!(
        results
            .iter()
            .all(|r| r.as_ref().unwrap().is_error == Some(false))
    );
    // Without the cap all six would overlap.
    let peak = PEAK.load(std::sync::atomic::Ordering::SeqCst);
    assert!((1..=2).contains(&peak), "{peak} calls ran at once");
}
