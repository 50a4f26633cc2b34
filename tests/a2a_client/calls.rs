//! `RemoteTool` inside a local `Toolkit`: retries of connection failures (and none of tool
//! errors), progress forwarded to the local emitter, cancellation and timeouts reaching the
//! remote task.

use std::time::Duration;

use agent_toolkit::a2a::client::{AgentConfig, RemoteToolRegistry};
use agent_toolkit::a2a::types::AgentCard;
use agent_toolkit::{
    CancellationToken, RetryPolicy, ToolCall, ToolContext, Toolkit, context::ProgressEvent,
    error::ToolErrorKind,
};
use serde_json::{Value, json};

use crate::peers::{self, Env};
use crate::support::{json_of, start, start_on, stats, wait_for_stats};

fn retrying_toolkit(registry: &RemoteToolRegistry, retries: u32) -> Toolkit {
    Toolkit::builder()
        .group("remote", "Tools of other agents")
        .register(registry.tools())
        .in_group("remote")
        .retry(RetryPolicy::exponential(retries, Duration::from_millis(150), 1.5).with_jitter(0.0))
        .build()
        .unwrap()
}

/// A card for a tool server at `port`, as an operator would register it by hand.
fn card_at(port: u16) -> AgentCard {
    serde_json::from_value(json!({
        "name": "explicit", "description": "registered by hand", "version": "1",
        "supportedInterfaces": [{"url": format!("http://127.0.0.1:{port}/a2a/jsonrpc"),
                                 "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true},
        "skills": [{"id": "tool-add", "name": "add", "description": "Add", "tags": ["tool"]}]
    }))
    .unwrap()
}

#[tokio::test]
async fn connection_failures_are_retried_tool_errors_are_not() {
    // Nothing listens on the port: every attempt is refused, and retried per the policy.
    let registry = RemoteToolRegistry::new();
    let names = registry
        .add_agent(
            "down",
            AgentConfig::new("http://127.0.0.1:1").card(card_at(peers::free_port())),
        )
        .await
        .unwrap();
    assert_eq!(names, ["down_add"]);
    // Without the extension, the schema is the permissive fallback.
    let toolkit = retrying_toolkit(&registry, 2);
    assert_eq!(
        toolkit.definition("down_add").unwrap().parameters(),
        &json!({"type": "object"})
    );
    let result = toolkit
        .call(
            ToolCall::json("c1", "down_add", json!({"a": 1})),
            &ToolContext::new(),
        )
        .await;
    let error = result.error().expect("unreachable");
    assert!(error.is_retryable(), "{error:?}");
    assert!(
        error.message().contains("could not reach agent `down`"),
        "{error}"
    );
    assert_eq!(result.attempts, 3);

    // A tool error is the tool's answer: one attempt, seen once by the peer.
    let peer = start(Env::A2a1, "a2a_tool_peer.py", &[]).await;
    let registry = RemoteToolRegistry::new();
    registry
        .add_agent("py", AgentConfig::new(&peer.url))
        .await
        .unwrap();
    let toolkit = retrying_toolkit(&registry, 3);
    let result = toolkit
        .call(
            ToolCall::json("c2", "py_fail", json!({"reason": "bad"})),
            &ToolContext::new(),
        )
        .await;
    assert_eq!(result.error().unwrap().message(), "bad");
    assert_eq!(result.attempts, 1);
    let s = stats(&registry.tool("py_stats").unwrap()).await;
    assert_eq!(s["calls"]["fail"], json!(1));
}

#[tokio::test]
async fn a_restarted_peer_is_reached_by_retries() {
    let port = peers::free_port();
    let first = start_on(Env::A2a1, "a2a_tool_peer.py", port, &[]).await;
    let registry = RemoteToolRegistry::new();
    registry
        .add_agent("py", AgentConfig::new(&first.url))
        .await
        .unwrap();
    let toolkit = retrying_toolkit(&registry, 12);
    let ctx = ToolContext::new();
    let ok = toolkit
        .call(
            ToolCall::json("c1", "py_add", json!({"a": 1, "b": 1})),
            &ctx,
        )
        .await;
    assert!(ok.output().is_some());

    // The peer dies; a new one comes up on the same port a little later.
    drop(first);
    let restart = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        start_on(Env::A2a1, "a2a_tool_peer.py", port, &[]).await
    });
    let result = toolkit
        .call(
            ToolCall::json("c2", "py_add", json!({"a": 2, "b": 2})),
            &ctx,
        )
        .await;
    let _second = restart.await.unwrap();
    assert_eq!(
        json_of(result.output().expect("retried until the peer was back")),
        json!({"sum": 4})
    );
    assert!(result.attempts > 1, "attempts: {}", result.attempts);
}

async fn progress_and_cancellation(env: Env, script: &str) {
    let peer = start(env, script, &[]).await;
    let registry = RemoteToolRegistry::new();
    registry
        .add_agent(
            "py",
            AgentConfig::new(&peer.url).tool_timeout(Duration::from_millis(1500)),
        )
        .await
        .unwrap();
    let toolkit = Toolkit::builder()
        .register(registry.tools())
        .build()
        .unwrap();
    let stats_tool = registry.tool("py_stats").unwrap();

    // Progress of the remote tool reaches the local emitter, in order.
    let (ctx, mut progress) = ToolContext::new().progress_channel(16);
    let result = toolkit
        .call(
            ToolCall::json("p1", "py_slow", json!({"steps": 3, "delay_ms": 20})),
            &ctx,
        )
        .await;
    assert_eq!(json_of(result.output().unwrap()), json!({"done": 3}));
    let mut seen = Vec::new();
    while let Ok(event) = progress.try_recv() {
        assert_eq!(&*event.call_id, "p1");
        seen.push(event.event);
    }
    let expected: Vec<ProgressEvent> = (1..=3)
        .map(|i| ProgressEvent::Progress {
            done: f64::from(i),
            total: Some(3.0),
            message: format!("step {i} of 3"),
        })
        .collect();
    assert_eq!(seen, expected);

    // The per-attempt timeout drops the call: the remote task is cancelled.
    let result = toolkit
        .call(
            ToolCall::json("t1", "py_slow", json!({"steps": 50, "delay_ms": 100})),
            &ToolContext::new(),
        )
        .await;
    assert_eq!(result.error().unwrap().kind(), ToolErrorKind::Timeout);
    let s = wait_for_stats(&stats_tool, |s| cancelled(s) == 1).await;
    assert_eq!(cancelled(&s), 1);

    // So does the call's cancellation token.
    let token = CancellationToken::new();
    let ctx = ToolContext::new().with_cancellation(token.clone());
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        token.cancel();
    });
    let result = toolkit
        .call(
            ToolCall::json("t2", "py_slow", json!({"steps": 50, "delay_ms": 100})),
            &ctx,
        )
        .await;
    canceller.await.unwrap();
    assert_eq!(result.error().unwrap().kind(), ToolErrorKind::Cancelled);
    wait_for_stats(&stats_tool, |s| cancelled(s) == 2).await;
}

fn cancelled(stats: &Value) -> usize {
    stats["cancelled"].as_array().map_or(0, Vec::len)
}

#[tokio::test]
async fn progress_and_cancellation_with_the_1x_peer() {
    progress_and_cancellation(Env::A2a1, "a2a_tool_peer.py").await;
}

#[tokio::test]
async fn progress_and_cancellation_with_the_03_peer() {
    progress_and_cancellation(Env::A2a03, "a2a03_tool_peer.py").await;
}
