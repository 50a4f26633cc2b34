//! A run that fails at a model request keeps its place: nothing of the failed turn is in the
//! conversation, and the stored state resumes in another agent, asking the model again without
//! running the calls that finished. And a call that names no tool (a text call that could not be
//! read) gets a result saying how to write one.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_toolkit::agent::{AgentError, PausedRun, RunOutcome};
use agent_toolkit::model::{ChatRequest, ChatResponse, Message, ModelError, Role};
use agent_toolkit::prelude::*;
use agent_toolkit::{
    ChatModel, ReActAgent,
    testing::{ScriptedModel, ScriptedTurn},
};
use futures::future::BoxFuture;
use serde_json::json;

/// Counts its runs.
#[tool(read_only)]
async fn count(#[ctx] runs: Ctx<AtomicUsize>) -> String {
    format!("run {}", runs.fetch_add(1, Ordering::SeqCst) + 1)
}

/// Fails its `fail_at`-th request (1-based) with a transport error.
struct FailsOnce {
    script: Arc<ScriptedModel>,
    fail_at: usize,
    seen: AtomicUsize,
}

impl ChatModel for FailsOnce {
    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            if self.seen.fetch_add(1, Ordering::SeqCst) + 1 == self.fail_at {
                return Err(ModelError::Transport("connection reset".into()));
            }
            self.script.chat(request).await
        })
    }
}

#[tokio::test]
async fn a_failed_run_resumes_in_another_agent_without_running_finished_calls() {
    let runs = Arc::new(AtomicUsize::new(0));
    let kit = Toolkit::builder()
        .register(Count)
        .context_shared(runs.clone())
        .build()
        .unwrap();
    let script = Arc::new(ScriptedModel::new([ScriptedTurn::call("count", json!({}))]));
    let model = FailsOnce {
        script,
        fail_at: 2,
        seen: AtomicUsize::new(0),
    };
    let mut agent = ReActAgent::builder(model).toolkit(&kit).build().unwrap();
    match agent.run("count once").await {
        Err(AgentError::Model(ModelError::Transport(why))) => {
            assert_eq!(why.to_string(), "connection reset")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    // The conversation holds the finished call and its result, nothing of the failed turn.
    let roles: Vec<Role> = agent.memory().iter().map(|m| m.role()).collect();
    assert_eq!(roles, [Role::User, Role::Assistant, Role::Tool]);

    let stored = serde_json::to_string(&agent.paused_run().expect("the failed run")).unwrap();
    let run = PausedRun::from_json(&stored).unwrap();
    assert!(
        run.failure().unwrap().contains("connection reset"),
        "{:?}",
        run.failure()
    );
    assert!(run.pending_approvals().is_empty() && run.pending_external_calls().is_empty());

    let script = Arc::new(ScriptedModel::new([]).then_expect(
        |r| {
            let last = r.messages.last().map(|m| m.content());
            (last == Some("run 1"))
                .then_some(())
                .ok_or(format!("{last:?}"))
        },
        ScriptedTurn::text("Counted once."),
    ));
    let mut other = ReActAgent::builder(script.clone())
        .toolkit(&kit)
        .build()
        .unwrap();
    assert_eq!(
        other.resume(run).await.unwrap(),
        RunOutcome::Final("Counted once.".into())
    );
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "the finished call did not run again"
    );
    assert_eq!(script.remaining(), 0);
    // The iteration count went on from the failed turn (the second).
    assert_eq!(other.memory().len(), 4);
}

#[tokio::test]
async fn a_run_that_fails_at_its_first_request_resumes_too() {
    let kit = Toolkit::builder()
        .register(Count)
        .context(AtomicUsize::new(0))
        .build()
        .unwrap();
    let script = Arc::new(ScriptedModel::new([]));
    let model = FailsOnce {
        script,
        fail_at: 1,
        seen: AtomicUsize::new(0),
    };
    let mut agent = ReActAgent::builder(model).toolkit(&kit).build().unwrap();
    assert!(matches!(
        agent.run("hello").await,
        Err(AgentError::Model(_))
    ));
    let run = agent.paused_run().expect("the failed run");
    let script = Arc::new(ScriptedModel::new([ScriptedTurn::text("Hello!")]));
    let mut other = ReActAgent::builder(script).toolkit(&kit).build().unwrap();
    assert_eq!(
        other.resume(run).await.unwrap(),
        RunOutcome::Final("Hello!".into())
    );
    // A new run in the failed agent drops the failed one.
    let script = Arc::new(ScriptedModel::new([ScriptedTurn::text("Hi again.")]));
    let mut agent = ReActAgent::builder(script).toolkit(&kit).build().unwrap();
    agent.run("hi").await.unwrap();
    assert!(agent.paused_run().is_none());
}

#[tokio::test]
async fn a_call_without_a_name_is_answered_with_how_to_write_one() {
    let kit = Toolkit::builder()
        .register(Count)
        .context(AtomicUsize::new(0))
        .build()
        .unwrap();
    let script = Arc::new(ScriptedModel::new([
        ScriptedTurn::raw_call("", "{}"),
        ScriptedTurn::text("Sorry."),
    ]));
    let mut agent = ReActAgent::builder(script).toolkit(&kit).build().unwrap();
    agent.run("count").await.unwrap();
    let result = agent.memory().iter().find_map(Message::as_tool).unwrap();
    assert!(result.is_error);
    assert!(
        result.content.contains("could not be read"),
        "{}",
        result.content
    );
    assert!(
        result.content.contains("available tools: count"),
        "{}",
        result.content
    );
}
