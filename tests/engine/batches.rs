//! Batches: concurrency cap, order, sequential barriers, streaming, duplicate ids, progress.

use std::collections::HashSet;
use std::sync::Arc;

use agent_toolkit::error::ToolErrorKind;
use agent_toolkit::prelude::*;
use futures::StreamExt;

use super::numbered;
use super::tools::*;

#[tokio::test]
async fn results_come_back_in_call_order_within_the_cap() {
    let probe = Arc::new(Probe::default());
    let kit = kit(&probe).max_concurrency(4).build().unwrap();
    // Later calls are shorter, so completion order is the reverse of call order.
    let calls: Vec<_> = (0..12)
        .map(|i| numbered(i, "nap", &format!(r#"{{"ms": {}}}"#, 60 - i * 5)))
        .collect();
    let results = kit.call_all(calls, &ToolContext::new()).await;
    let ids: Vec<_> = results.iter().map(|r| r.call_id.to_string()).collect();
    let expected: Vec<_> = (0..12).map(|i| format!("call-{i}")).collect();
    assert_eq!(ids, expected);
    assert_eq!(probe.get(&probe.max_running), 4);
    assert!(results.iter().all(|r| !r.is_error()));
}

#[tokio::test]
async fn a_sequential_tool_waits_for_earlier_calls_and_runs_alone() {
    let probe = Arc::new(Probe::default());
    let kit = kit(&probe).build().unwrap();
    let calls = vec![
        numbered(0, "nap", r#"{"ms": 30}"#),
        numbered(1, "nap", r#"{"ms": 30}"#),
        numbered(2, "barrier", "{}"),
        numbered(3, "nap", r#"{"ms": 5}"#),
    ];
    let ctx = ToolContext::new();
    let order: Vec<(String, String)> = kit
        .call_stream(calls, &ctx)
        .map(|r| (r.call_id.to_string(), r.model_text().into_owned()))
        .collect()
        .await;
    let ids: Vec<_> = order.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(
        &ids[2..],
        ["call-2", "call-3"],
        "the barrier runs after 0 and 1, before 3"
    );
    assert_eq!(order[2].1, "alone=true");
}

#[tokio::test]
async fn the_stream_yields_results_as_they_finish_tagged_with_their_ids() {
    let probe = Arc::new(Probe::default());
    let kit = kit(&probe).build().unwrap();
    let calls = vec![
        numbered(0, "nap", r#"{"ms": 80}"#),
        numbered(1, "nap", r#"{"ms": 1}"#),
        numbered(2, "nap", r#"{"ms": 40}"#),
    ];
    let ctx = ToolContext::new();
    let ids: Vec<String> = kit
        .call_stream(calls, &ctx)
        .map(|r| r.call_id.to_string())
        .collect()
        .await;
    assert_eq!(ids, ["call-1", "call-2", "call-0"]);
}

#[tokio::test]
async fn a_duplicate_call_id_gets_an_error_result_and_the_rest_run() {
    let probe = Arc::new(Probe::default());
    let kit = kit(&probe).build().unwrap();
    let calls = vec![
        ToolCall::new("same", "echo", r#"{"n": 1}"#),
        ToolCall::new("same", "echo", r#"{"n": 2}"#),
        ToolCall::new("other", "echo", r#"{"n": 3}"#),
    ];
    let results = kit.call_all(calls, &ToolContext::new()).await;
    assert_eq!(results.len(), 3);
    assert_eq!(results[0].model_text(), "1");
    let e = results[1].error().unwrap();
    assert_eq!(e.kind(), ToolErrorKind::InvalidArguments);
    assert!(e.message().contains("call id `same` was already used"));
    assert_eq!(results[2].model_text(), "3");
}

#[tokio::test]
async fn a_panicking_tool_does_not_take_the_batch_down() {
    let probe = Arc::new(Probe::default());
    let kit = kit(&probe).build().unwrap();
    let calls = vec![
        numbered(0, "echo", r#"{"n": 1}"#),
        numbered(1, "boom", "{}"),
        numbered(2, "echo", r#"{"n": 3}"#),
    ];
    let results = kit.call_all(calls, &ToolContext::new()).await;
    assert_eq!(results[0].model_text(), "1");
    assert_eq!(results[1].error().unwrap().kind(), ToolErrorKind::Panicked);
    assert_eq!(results[2].model_text(), "3");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_of_one_batch_never_reaches_another() {
    let probe = Arc::new(Probe::default());
    let kit = kit(&probe).build().unwrap();
    let (ctx_a, mut rx_a) = ToolContext::new().progress_channel(1024);
    let (ctx_b, mut rx_b) = ToolContext::new().progress_channel(1024);
    let batch = |prefix: &'static str, n: usize| -> Vec<ToolCall> {
        (0..n)
            .map(|i| ToolCall::new(format!("{prefix}-{i}"), "report", r#"{"steps": 20}"#))
            .collect()
    };
    let (ra, rb) = tokio::join!(
        kit.call_all(batch("a", 8), &ctx_a),
        kit.call_all(batch("b", 8), &ctx_b)
    );
    assert!(ra.iter().chain(&rb).all(|r| r.model_text() == "20"));
    drop((ctx_a, ctx_b));
    let mut seen_a = HashSet::new();
    let mut count_a = 0;
    while let Some(p) = rx_a.recv().await {
        assert!(
            p.call_id.starts_with("a-"),
            "batch b's progress leaked into a: {p:?}"
        );
        seen_a.insert(p.call_id.clone());
        count_a += 1;
    }
    let mut count_b = 0;
    while let Some(p) = rx_b.recv().await {
        assert!(
            p.call_id.starts_with("b-"),
            "batch a's progress leaked into b: {p:?}"
        );
        count_b += 1;
    }
    assert_eq!((count_a, count_b, seen_a.len()), (160, 160, 8));
}

#[tokio::test]
async fn ten_thousand_calls_with_a_cap_of_64_all_answered_in_order() {
    let probe = Arc::new(Probe::default());
    let kit = kit(&probe).max_concurrency(64).build().unwrap();
    let calls: Vec<_> = (0..10_000)
        .map(|i| numbered(i, "echo", &format!(r#"{{"n": {i}}}"#)))
        .collect();
    let results = kit.call_all(calls, &ToolContext::new()).await;
    assert_eq!(results.len(), 10_000);
    for (i, r) in results.iter().enumerate() {
        assert_eq!(r.model_text(), i.to_string());
        assert_eq!(&*r.call_id, format!("call-{i}"));
    }
}
