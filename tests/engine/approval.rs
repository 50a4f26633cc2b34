//! The approval hook point: fail closed without a hook; approve, deny or edit with one;
//! validated arguments only; the call's own hook wins.

use std::sync::{Arc, Mutex};

use agent_toolkit::error::ToolErrorKind;
use agent_toolkit::exec::{ApprovalDecision, ApprovalRequest};

use super::call;
use super::tools::*;

#[tokio::test]
async fn without_a_hook_a_tool_needing_approval_is_denied() {
    let probe = Arc::new(Probe::default());
    let kit = kit(&probe).build().unwrap();
    let r = call(&kit, "delete", r#"{"path": "/tmp/x"}"#).await;
    let e = r.error().unwrap();
    assert_eq!(e.kind(), ToolErrorKind::Denied);
    assert!(e.message().contains("needs approval"));
    assert_eq!(r.attempts, 0);
}

#[tokio::test]
async fn the_hook_approves_denies_or_edits() {
    let seen: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let log = seen.clone();
    let probe = Arc::new(Probe::default());
    let kit = kit(&probe)
        .approval_hook(move |req: ApprovalRequest| {
            log.lock()
                .unwrap()
                .push((req.call_id.to_string(), req.arguments.clone()));
            async move {
                if req.arguments.contains("/etc") {
                    ApprovalDecision::Deny("system files are off limits".into())
                } else if req.arguments.contains("home") {
                    ApprovalDecision::Edit(r#"{"path": "/home/user/trash"}"#.into())
                } else {
                    ApprovalDecision::Approve
                }
            }
        })
        .build()
        .unwrap();
    assert_eq!(
        call(&kit, "delete", r#"{"path": "/tmp/x"}"#)
            .await
            .model_text(),
        "deleted /tmp/x"
    );
    let r = call(&kit, "delete", r#"{"path": "/etc/passwd"}"#).await;
    assert_eq!(r.error().unwrap().kind(), ToolErrorKind::Denied);
    assert_eq!(
        r.model_text(),
        "Error: the call of tool `delete` was not approved: system files are off limits"
    );
    let r = call(&kit, "delete", r#"{"path": "/home/user"}"#).await;
    assert_eq!(r.model_text(), "deleted /home/user/trash");
    // Invalid arguments never reach the approver.
    let r = call(&kit, "delete", r#"{"file": "x"}"#).await;
    assert_eq!(r.error().unwrap().kind(), ToolErrorKind::InvalidArguments);
    assert_eq!(seen.lock().unwrap().len(), 3);
    // Tools that do not need approval are not reviewed.
    call(&kit, "echo", r#"{"n": 1}"#).await;
    assert_eq!(seen.lock().unwrap().len(), 3);
}

#[tokio::test]
async fn an_edit_with_bad_arguments_is_refused_and_the_tool_does_not_run() {
    let probe = Arc::new(Probe::default());
    let kit = kit(&probe)
        .approval_hook(|_req: ApprovalRequest| async {
            ApprovalDecision::Edit(r#"{"path": 3}"#.into())
        })
        .build()
        .unwrap();
    let r = call(&kit, "delete", r#"{"path": "/tmp"}"#).await;
    assert_eq!(r.error().unwrap().kind(), ToolErrorKind::InvalidArguments);
    assert_eq!(r.attempts, 0);
}

#[tokio::test]
async fn a_handles_own_hook_wins_over_the_toolkits() {
    let probe = Arc::new(Probe::default());
    let kit = kit(&probe)
        .approval_hook(|_req: ApprovalRequest| async {
            ApprovalDecision::Deny("toolkit says no".into())
        })
        .build()
        .unwrap();
    let approving =
        kit.with_approval_hook(|_req: ApprovalRequest| async { ApprovalDecision::Approve });
    let r = call(&approving, "delete", r#"{"path": "/tmp"}"#).await;
    assert_eq!(r.model_text(), "deleted /tmp");
    // The toolkit itself, and its other handles, keep the toolkit's hook.
    let r = call(&kit, "delete", r#"{"path": "/tmp"}"#).await;
    assert!(r.model_text().contains("toolkit says no"));
    let r = call(&kit.view(), "delete", r#"{"path": "/tmp"}"#).await;
    assert!(r.model_text().contains("toolkit says no"));
    // A handle's hook stays with the views made from it.
    let r = call(&approving.view(), "delete", r#"{"path": "/tmp"}"#).await;
    assert_eq!(r.model_text(), "deleted /tmp");
}
