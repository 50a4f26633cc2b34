//! Background results reach the model even when it reuses call ids, as local model servers do
//! (`call_0` every turn).

use std::sync::Arc;
use std::time::Duration;

use agent_toolkit::model::Role;
use agent_toolkit::model::{ChatRequest, ChatResponse, ModelError};
use agent_toolkit::prelude::*;
use agent_toolkit::{
    ChatModel, ReActAgent,
    testing::{ScriptedModel, ScriptedTurn},
};
use futures::future::BoxFuture;
use serde_json::json;

/// Echo a label after a while, in the background.
#[tool(background)]
async fn slow_echo(label: String, ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("{label} done")
}

/// Wait a while.
#[tool]
async fn pause(ms: u64) -> &'static str {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    "paused"
}

/// A scripted model whose every tool call has the id `call_0`.
struct SameIds(Arc<ScriptedModel>);

impl ChatModel for SameIds {
    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            let mut response = self.0.chat(request).await?;
            for call in &mut response.message.tool_calls {
                call.id = "call_0".into();
            }
            Ok(response)
        })
    }
}

/// Every line of the `[background tools]` notes the model was sent that reports a finished job.
fn reported(req: &ChatRequest) -> Vec<String> {
    req.messages
        .iter()
        .filter(|m| m.role() == Role::User && m.content().starts_with("[background tools]"))
        .flat_map(|m| m.content().lines().map(str::to_string).collect::<Vec<_>>())
        .filter(|line| line.contains(" finished: "))
        .collect()
}

#[tokio::test]
async fn jobs_with_one_call_id_are_each_reported_to_the_model() {
    let kit = Toolkit::builder()
        .register(SlowEcho)
        .register_as("slow_echo_too", SlowEcho)
        .register(Pause)
        .build()
        .unwrap();
    let script = Arc::new(
        ScriptedModel::new([
            ScriptedTurn::call("slow_echo", json!({"label": "A", "ms": 40})),
            ScriptedTurn::call("slow_echo_too", json!({"label": "B", "ms": 5})),
            ScriptedTurn::call("slow_echo", json!({"label": "C", "ms": 20})),
            ScriptedTurn::call("pause", json!({"ms": 200})),
        ])
        .then_expect(
            |req| {
                let mut lines = reported(req);
                lines.sort();
                let expected = [
                    "- call call_0 (slow_echo, job 1) finished: A done",
                    "- call call_0 (slow_echo, job 3) finished: C done",
                    "- call call_0 (slow_echo_too, job 2) finished: B done",
                ];
                (lines == expected)
                    .then_some(())
                    .ok_or(format!("each job once, with its result: {lines:#?}"))
            },
            ScriptedTurn::text("A, B and C are done."),
        ),
    );
    let mut agent = ReActAgent::builder(SameIds(script.clone()))
        .toolkit(&kit)
        .build()
        .unwrap();
    assert_eq!(
        agent.run("run A, B, C").await.unwrap(),
        "A, B and C are done."
    );
    assert_eq!(script.remaining(), 0);

    let pending: Vec<&str> = agent
        .memory()
        .iter()
        .filter(|m| m.role() == Role::Tool && m.content().contains("in the background"))
        .map(|m| m.content())
        .collect();
    assert_eq!(pending.len(), 3);
    assert!(
        pending[2].contains("(call id call_0, job 3)"),
        "{}",
        pending[2]
    );
    assert_eq!(
        kit.background().by_call_id("call_0").await.unwrap().len(),
        3
    );
}
