//! Discovery from agent cards of the official Python SDK peers, names keyed by agent, refresh,
//! bearer tokens.

use std::time::Duration;

use agent_toolkit::a2a::client::{A2aClientError, AgentConfig, RemoteToolRegistry, WireVersion};
use agent_toolkit::{ToolCall, ToolContext, Toolkit, error::ToolErrorKind};
use serde_json::json;

use crate::peers::Env;
use crate::support::{json_of, start};

fn toolkit_of(registry: &RemoteToolRegistry) -> Toolkit {
    Toolkit::builder()
        .group("remote", "Tools of other agents")
        .register(registry.tools())
        .in_group("remote")
        .build()
        .expect("toolkit")
}

#[tokio::test]
async fn discovers_and_calls_the_python_1x_peer() {
    let peer = start(Env::A2a1, "a2a_tool_peer.py", &[]).await;
    let registry = RemoteToolRegistry::new();
    let names = registry
        .add_agent("py", AgentConfig::new(&peer.url))
        .await
        .expect("discover");
    assert_eq!(
        names,
        [
            "py_add",
            "py_slow",
            "py_fail",
            "py_stats",
            "py_toggle_extra",
            "py_search"
        ]
    );
    assert_eq!(registry.agent("py").unwrap().version(), WireVersion::V1);

    let toolkit = toolkit_of(&registry);
    // Schemas and hints come from the tools extension of the card.
    let add = toolkit.definition("py_add").unwrap();
    assert_eq!(
        add.parameters()["properties"]["a"],
        json!({"type": "integer"})
    );
    assert_eq!(add.parameters()["required"], json!(["a", "b"]));
    let options = toolkit.options("py_add").unwrap();
    assert!(options.annotations.read_only && options.annotations.idempotent);

    let ctx = ToolContext::new();
    let result = toolkit
        .call(
            ToolCall::json("c1", "py_add", json!({"a": 2, "b": 3})),
            &ctx,
        )
        .await;
    // The 1.x peer sends 5.0 (protobuf Value); the output has the integer back.
    assert_eq!(result.output().unwrap().as_text(), r#"{"sum":5}"#);
    let metadata = &result.output().unwrap().metadata;
    assert!(
        metadata.contains_key("a2a_task_id"),
        "app-side metadata names the remote task"
    );
    // The artifact's metadata reaches the application; the 1.x SDK's `execution_time_ms`
    // (a protobuf double on the wire) is an integer again.
    assert_eq!(
        metadata["a2a_artifact_metadata"]["tool_name"], "add",
        "{metadata:?}"
    );
    assert!(metadata["execution_time_ms"].is_u64(), "{metadata:?}");

    // A tool that ran and failed: a model-visible execution error, not retryable.
    let result = toolkit
        .call(
            ToolCall::json("c2", "py_fail", json!({"reason": "disk full"})),
            &ctx,
        )
        .await;
    let error = result.error().expect("error result");
    assert_eq!(error.kind(), ToolErrorKind::Execution);
    assert_eq!(error.message(), "disk full");
    assert!(!error.is_retryable());

    // Remote tools follow their group like local ones: off means not callable.
    toolkit.set_group_active("remote", false).unwrap();
    assert!(toolkit.definitions().is_empty());
    let result = toolkit
        .call(
            ToolCall::json("c3", "py_add", json!({"a": 2, "b": 3})),
            &ctx,
        )
        .await;
    assert_eq!(result.error().unwrap().kind(), ToolErrorKind::Unavailable);
}

#[tokio::test]
async fn discovers_and_calls_the_python_03_peer() {
    let peer = start(Env::A2a03, "a2a03_tool_peer.py", &[]).await;
    let registry = RemoteToolRegistry::new();
    let names = registry
        .add_agent("old", AgentConfig::new(&peer.url))
        .await
        .expect("discover a 0.3 card");
    assert_eq!(names, ["old_add", "old_slow", "old_fail", "old_stats"]);
    assert_eq!(registry.agent("old").unwrap().version(), WireVersion::V03);
    let toolkit = toolkit_of(&registry);
    let ctx = ToolContext::new();
    let result = toolkit
        .call(
            ToolCall::json("c1", "old_add", json!({"a": 20, "b": 22})),
            &ctx,
        )
        .await;
    let output = result.output().unwrap();
    assert_eq!(json_of(output), json!({"sum": 42}));
    assert_eq!(output.metadata["a2a_artifact_metadata"]["tool_name"], "add");
    assert!(
        output.metadata["execution_time_ms"].is_u64(),
        "{:?}",
        output.metadata
    );
    let result = toolkit
        .call(
            ToolCall::json("c2", "old_fail", json!({"reason": "no"})),
            &ctx,
        )
        .await;
    assert_eq!(result.error().unwrap().message(), "no");
}

#[tokio::test]
async fn speaks_03_to_the_compat_layer_of_the_1x_sdk() {
    // The card lists only the 0.3 interface: the client must take the 0.3 path, and the 1.x
    // SDK's compatibility layer answers it.
    let peer = start(Env::A2a1, "a2a_tool_peer.py", &["--only-v03"]).await;
    let registry = RemoteToolRegistry::new();
    registry
        .add_agent("compat", AgentConfig::new(&peer.url))
        .await
        .expect("discover");
    assert_eq!(
        registry.agent("compat").unwrap().version(),
        WireVersion::V03
    );
    let toolkit = toolkit_of(&registry);
    let ctx = ToolContext::new();
    let result = toolkit
        .call(
            ToolCall::json("c1", "compat_add", json!({"a": 1, "b": 2})),
            &ctx,
        )
        .await;
    assert_eq!(json_of(result.output().unwrap()), json!({"sum": 3}));
    let (ctx, mut progress) = ToolContext::new().progress_channel(16);
    let result = toolkit
        .call(
            ToolCall::json("c2", "compat_slow", json!({"steps": 2, "delay_ms": 10})),
            &ctx,
        )
        .await;
    assert_eq!(json_of(result.output().unwrap()), json!({"done": 2}));
    assert!(progress.try_recv().is_ok(), "progress over the 0.3 stream");
}

#[tokio::test]
async fn two_agents_same_named_tools_do_not_collide() {
    let (alpha, beta) = tokio::join!(
        start(Env::A2a1, "a2a_tool_peer.py", &["--name", "alpha"]),
        start(Env::A2a1, "a2a_tool_peer.py", &["--name", "beta"]),
    );
    let registry = RemoteToolRegistry::new();
    registry
        .add_agent("alpha", AgentConfig::new(&alpha.url))
        .await
        .unwrap();
    registry
        .add_agent("beta", AgentConfig::new(&beta.url))
        .await
        .unwrap();
    let toolkit = toolkit_of(&registry);
    let ctx = ToolContext::new();
    for agent in ["alpha", "beta"] {
        let result = toolkit
            .call(
                ToolCall::json("c", format!("{agent}_search"), json!({"query": "q"})),
                &ctx,
            )
            .await;
        assert_eq!(
            json_of(result.output().unwrap()),
            json!({"agent": agent, "query": "q"})
        );
    }
    // Without a distinguishing prefix the registry refuses, naming both agents.
    let err = registry
        .add_agent("gamma", AgentConfig::new(&beta.url).prefix("alpha_"))
        .await
        .unwrap_err();
    assert!(matches!(err, A2aClientError::Config(_)), "{err}");
    assert!(err.to_string().contains("agent `alpha`"), "{err}");
    // Aliases are unique and checked.
    let err = registry
        .add_agent("alpha", AgentConfig::new(&beta.url))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("already registered"), "{err}");
    let err = registry
        .add_agent("bad alias", AgentConfig::new(&beta.url))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("invalid"), "{err}");
}

#[tokio::test]
async fn refresh_picks_up_card_changes() {
    let peer = start(Env::A2a1, "a2a_tool_peer.py", &[]).await;
    let registry = RemoteToolRegistry::new();
    registry
        .add_agent("py", AgentConfig::new(&peer.url))
        .await
        .unwrap();
    let old_toolkit = toolkit_of(&registry);
    // A toolkit that follows the registry's dynamic set needs no rebuild.
    let live = Toolkit::builder()
        .group("remote", "Tools of other agents")
        .dynamic("remote", &registry.dynamic_tools())
        .build()
        .unwrap();
    assert_eq!(live.definitions().len(), 6);
    let toggle = registry.tool("py_toggle_extra").unwrap();
    let ctx = ToolContext::new();
    toggle.invoke(json!({}), &ctx).await.unwrap();

    let report = registry.refresh().await;
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(report.changes[0].1.added, ["py_echo"]);
    let toolkit = toolkit_of(&registry);
    let result = toolkit
        .call(ToolCall::json("c", "py_echo", json!({"text": "hi"})), &ctx)
        .await;
    assert_eq!(json_of(result.output().unwrap()), json!({"echo": "hi"}));
    let result = live
        .call(
            ToolCall::json("c", "py_echo", json!({"text": "live"})),
            &ctx,
        )
        .await;
    assert_eq!(json_of(result.output().unwrap()), json!({"echo": "live"}));

    // Gone from the card: toolkits that still hold it get a model-visible error at once.
    toggle.invoke(json!({}), &ctx).await.unwrap();
    let report = registry.refresh().await;
    assert_eq!(report.changes[0].1.removed, ["py_echo"]);
    let result = toolkit
        .call(ToolCall::json("c", "py_echo", json!({"text": "hi"})), &ctx)
        .await;
    let error = result.error().unwrap();
    assert_eq!(error.kind(), ToolErrorKind::Unavailable);
    assert!(error.message().contains("no longer offered"), "{error}");
    assert!(old_toolkit.definition("py_echo").is_none());
    assert!(!live.definitions().iter().any(|d| d.name() == "py_echo"));
    let result = live
        .call(ToolCall::json("c", "py_echo", json!({"text": "hi"})), &ctx)
        .await;
    assert_eq!(result.error().unwrap().kind(), ToolErrorKind::UnknownTool);

    // On an interval, in the background; `changes` says when to rebuild.
    let mut changes = registry.changes();
    changes.borrow_and_update();
    registry.refresh_every(Duration::from_millis(100)).unwrap();
    toggle.invoke(json!({}), &ctx).await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), changes.changed())
        .await
        .expect("the background refresh noticed the change")
        .unwrap();
    assert!(registry.tool("py_echo").is_some());

    // An agent removed: gone from the registry and the live toolkit, refused in old toolkits.
    assert!(registry.remove_agent("py"));
    assert!(registry.tools().is_empty());
    assert!(live.definitions().is_empty());
    let result = old_toolkit
        .call(ToolCall::json("c", "py_add", json!({"a": 1, "b": 1})), &ctx)
        .await;
    assert_eq!(result.error().unwrap().kind(), ToolErrorKind::Unavailable);
    assert!(!registry.remove_agent("py"));
}

#[tokio::test]
async fn bearer_tokens_are_per_agent() {
    let peer = start(Env::A2a1, "a2a_tool_peer.py", &["--token", "s3cret"]).await;
    let registry = RemoteToolRegistry::new();
    // The card is public; the calls need the token.
    registry
        .add_agent("open", AgentConfig::new(&peer.url))
        .await
        .unwrap();
    registry
        .add_agent("auth", AgentConfig::new(&peer.url).bearer_token("s3cret"))
        .await
        .unwrap();
    registry
        .add_agent(
            "old",
            AgentConfig::new(&peer.url).prefer_version(WireVersion::V03),
        )
        .await
        .unwrap();
    let toolkit = toolkit_of(&registry);
    let ctx = ToolContext::new();
    let denied = toolkit
        .call(
            ToolCall::json("c1", "open_add", json!({"a": 1, "b": 1})),
            &ctx,
        )
        .await;
    assert!(denied.is_error(), "a call without the token must fail");
    let allowed = toolkit
        .call(
            ToolCall::json("c2", "auth_add", json!({"a": 1, "b": 1})),
            &ctx,
        )
        .await;
    assert_eq!(json_of(allowed.output().unwrap()), json!({"sum": 2}));
}
