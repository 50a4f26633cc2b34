//! The client-side tools loop against an agent on the official Python SDK 1.x:
//! tool definitions out, tool calls run locally in parallel, results (failures included) back on
//! the same task, the answer from the artifact; follow-up turns on the same context; the
//! round limit.

use std::sync::Arc;
use std::time::Duration;

use agent_toolkit::a2a::client::{
    A2aClientError, AgentConfig, ClientToolsSession, RemoteAgent, TranscriptEntry, WireVersion,
};
use agent_toolkit::a2a::types::TaskState;
use agent_toolkit::prelude::*;
use agent_toolkit::{Ctx, ToolError};
use tokio::sync::Barrier;

use crate::peers::Env;
use crate::support::start;

/// Add two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Wait until the other call of this tool arrives (proves the calls of a round run at once).
#[tool]
async fn rendezvous(#[ctx] barrier: Ctx<Barrier>) -> Result<String, ToolError> {
    tokio::time::timeout(Duration::from_secs(5), barrier.wait())
        .await
        .map_err(|_| ToolError::execution("the other call never came: calls ran one by one"))?;
    Ok("met".into())
}

/// Always fails.
#[tool]
fn explode() -> Result<String, ToolError> {
    Err(ToolError::execution("kaboom"))
}

fn local_toolkit() -> Toolkit {
    Toolkit::builder()
        .register(Add)
        .register(Rendezvous)
        .register(Explode)
        .context_shared(Arc::new(Barrier::new(2)))
        .build()
        .unwrap()
}

async fn flow(version: WireVersion) {
    let peer = start(Env::A2a1, "a2a_agent_peer.py", &[]).await;
    let agent = RemoteAgent::connect(AgentConfig::new(&peer.url).prefer_version(version))
        .await
        .unwrap();
    assert_eq!(agent.version(), version);
    let mut session = ClientToolsSession::new(agent, local_toolkit());

    // One round, three calls: two that must run at the same time, one that fails.
    let reply = session
        .send("call rendezvous with {} ; call rendezvous with {} ; call explode with {}")
        .await
        .unwrap();
    assert_eq!(reply.rounds, 1);
    assert_eq!(
        reply.answer,
        "turn 1: rendezvous -> met | rendezvous -> met | explode -> Error: kaboom (error)"
    );
    assert!(matches!(&reply.transcript[1], TranscriptEntry::ToolCalls(c) if c.len() == 3));
    match &reply.transcript[2] {
        TranscriptEntry::ToolResults(results) => {
            assert_eq!(results.iter().filter(|r| r.is_error).count(), 1);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(&reply.transcript[3], TranscriptEntry::Answer(_)));

    // A follow-up continues the same conversation (contextId kept), here over two rounds.
    let context = session.context_id().unwrap().to_string();
    let reply = session
        .send(r#"call add with {"a": 2, "b": 3} repeat 2"#)
        .await
        .unwrap();
    assert_eq!(reply.context_id, context);
    assert_eq!(reply.rounds, 2);
    assert_eq!(reply.answer, "turn 2: add -> 5 | add -> 5");
}

#[tokio::test]
async fn client_tools_flow_with_the_python_agent() {
    flow(WireVersion::V1).await;
}

#[tokio::test]
async fn client_tools_flow_with_the_python_agent_over_03() {
    flow(WireVersion::V03).await;
}

#[tokio::test]
async fn rounds_are_limited_and_refusals_reported() {
    let peer = start(Env::A2a1, "a2a_agent_peer.py", &[]).await;
    let agent = RemoteAgent::connect(&peer.url).await.unwrap();
    let mut session = ClientToolsSession::new(agent.clone(), local_toolkit()).max_rounds(3);
    let err = session
        .send(r#"call add with {"a": 1, "b": 1} forever"#)
        .await
        .unwrap_err();
    let A2aClientError::MaxRounds {
        max_rounds,
        task_id,
    } = &err
    else {
        panic!("{err}");
    };
    assert_eq!(*max_rounds, 3);
    assert!(err.to_string().contains("max_rounds"), "{err}");
    // The remote task was cancelled rather than left waiting.
    let task = agent.get_task(task_id).await.unwrap();
    assert_eq!(task.status.state, TaskState::Canceled);

    // A malformed tool-calls part: every problem listed, the task cancelled.
    let err = session.send("malformed").await.unwrap_err();
    match &err {
        A2aClientError::InvalidParts(invalid) => assert_eq!(
            invalid.problems,
            [
                "tool_calls[0].id: missing",
                "tool_calls[0].function.name: must be a string, found a number"
            ]
        ),
        other => panic!("{other}"),
    }

    // The agent asks for a tool this client did not offer: it fails the task, and the error
    // carries its message.
    let err = session.send(r#"call teleport with {}"#).await.unwrap_err();
    match &err {
        A2aClientError::TaskEnded { state, message, .. } => {
            assert_eq!(state, "TASK_STATE_FAILED");
            assert!(message.contains("teleport"), "{message}");
        }
        other => panic!("{other}"),
    }
}
