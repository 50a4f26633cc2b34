//! Approval in an agent: an approver in `run`, the consumer in `run_stream`.

use std::sync::{Arc, Mutex};

use agent_toolkit::{
    AgentEvent, ReActAgent,
    exec::{ApprovalDecision, ApprovalRequest},
    testing::{ScriptedModel, ScriptedTurn},
};
use futures::StreamExt;
use serde_json::json;

use super::tools::toolkit;

#[tokio::test]
async fn the_approver_decides_and_a_denial_reaches_the_model() {
    let kit = toolkit();
    let asked: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = asked.clone();
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::calls([
            ("delete", json!({"path": "/tmp/a"})),
            ("delete", json!({"path": "/etc/passwd"})),
        ]),
        ScriptedTurn::text("Deleted /tmp/a; /etc/passwd was refused."),
    ]));
    let mut agent = ReActAgent::builder(model.clone())
        .toolkit(&kit)
        .approver(move |req: ApprovalRequest| {
            log.lock()
                .unwrap()
                .push(format!("{} {}", req.call_id, req.arguments));
            async move {
                if req.arguments.contains("/etc") {
                    ApprovalDecision::Deny("never touch /etc".into())
                } else {
                    ApprovalDecision::Approve
                }
            }
        })
        .build()
        .unwrap();
    agent.run("clean up").await.unwrap();
    let results: Vec<String> = model.requests()[1]
        .messages
        .iter()
        .filter(|m| m.role() == agent_toolkit::model::Role::Tool)
        .map(|m| m.content().to_string())
        .collect();
    assert_eq!(
        results,
        [
            "deleted /tmp/a",
            "Error: the call of tool `delete` was not approved: never touch /etc"
        ]
    );
    let mut asked = asked.lock().unwrap().clone();
    asked.sort();
    assert_eq!(
        asked,
        [
            r#"call_1_0 {"path":"/tmp/a"}"#,
            r#"call_1_1 {"path":"/etc/passwd"}"#
        ]
    );
}

#[tokio::test]
async fn in_a_stream_the_consumer_decides_per_call() {
    let kit = toolkit();
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::call("delete", json!({"path": "/tmp/a"})),
        ScriptedTurn::call("delete", json!({"path": "/tmp/b"})),
        ScriptedTurn::text("done"),
    ]));
    let mut agent = ReActAgent::builder(model.clone())
        .toolkit(&kit)
        .build()
        .unwrap();
    let mut stream = Box::pin(agent.run_stream("delete a and b"));
    let mut decided = Vec::new();
    while let Some(event) = stream.next().await {
        if let AgentEvent::ApprovalRequested(req, responder) = event {
            decided.push(req.call_id.to_string());
            if req.arguments.contains("/tmp/a") {
                responder.approve();
            } else {
                responder.deny("keep b");
            }
        }
    }
    drop(stream);
    assert_eq!(
        decided,
        ["call_1_0", "call_2_0"],
        "each decision is bound to its call id"
    );
    let results: Vec<String> = model.requests()[2]
        .messages
        .iter()
        .filter(|m| m.role() == agent_toolkit::model::Role::Tool)
        .map(|m| m.content().to_string())
        .collect();
    assert_eq!(
        results,
        [
            "deleted /tmp/a",
            "Error: the call of tool `delete` was not approved: keep b"
        ]
    );
}
