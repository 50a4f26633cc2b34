//! Work that goes on elsewhere is linked, not lost: a background job runs in a trace of its own
//! (`background_job <tool>`) linked to the span it was submitted from — in process, and on a
//! durable queue's worker, where the link travels in the stored job — and a paused run resumed
//! from its stored JSON (as in another process) links its `invoke_agent` span to the one that
//! paused. A code-mode program's calls are `execute_tool` spans inside `run_code`'s.

use std::time::Duration;

use agent_toolkit::ReActAgent;
use agent_toolkit::agent::{AgentError, PausedRun, RunOutcome};
use agent_toolkit::background::{JobQueue, Worker};
use agent_toolkit::code::{CODE_TOOL, CodeMode};
use agent_toolkit::prelude::*;
use agent_toolkit::testing::{ScriptedModel, ScriptedTurn};
use serde_json::{Value, json};
use tracing::Instrument;

use super::{flushed, global, one};

/// Send money: needs someone's approval.
#[tool(requires_approval)]
fn send_money(cents: i64) -> String {
    format!("sent {cents}")
}

/// Count to `n`, slowly.
#[tool(background, idempotent)]
async fn count_slowly(n: i64) -> i64 {
    tokio::time::sleep(Duration::from_millis(20)).await;
    n
}

/// Look up a city's height.
#[tool(read_only)]
fn height(city: String) -> i64 {
    city.len() as i64 * 100
}

/// The ids of the spans `span` links to, as (trace id, span id).
fn links(span: &Value) -> Vec<(String, String)> {
    span["links"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| (l["traceId"].to_string(), l["spanId"].to_string()))
        .collect()
}

fn id(span: &Value) -> (String, String) {
    (span["traceId"].to_string(), span["spanId"].to_string())
}

/// Spans until `present` holds, or five seconds.
async fn spans_with(received: &super::Received, present: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    for _ in 0..50 {
        let spans = flushed(received).await;
        if present(&spans) {
            return spans;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    flushed(received).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_run_links_to_the_run_that_paused() {
    let received = global();
    let kit = Toolkit::builder().register(SendMoney).build().unwrap();
    let mut pausing = ReActAgent::builder(ScriptedModel::new([ScriptedTurn::call(
        "send_money",
        json!({"cents": 5}),
    )]))
    .toolkit(&kit)
    .name("payer")
    .pause_at_approvals()
    .build()
    .unwrap();
    let stored = match pausing.run("pay 5").await {
        Err(AgentError::Paused(run)) => run.to_json(),
        other => panic!("expected a pause, got {other:?}"),
    };
    // Resumed from the stored text by another agent, as another process would.
    let mut run = PausedRun::from_json(&stored).unwrap();
    let waiting = run.pending_approvals()[0].call().id.to_string();
    run.approve(&waiting).unwrap();
    let mut resuming = ReActAgent::builder(ScriptedModel::new([ScriptedTurn::text("Paid.")]))
        .toolkit(&kit)
        .name("payer")
        .pause_at_approvals()
        .build()
        .unwrap();
    match resuming.resume(run).await.unwrap() {
        RunOutcome::Final(answer) => assert_eq!(answer, "Paid."),
        other => panic!("expected the answer, got {other:?}"),
    }

    let spans = spans_with(received, |spans| {
        spans
            .iter()
            .filter(|s| s["name"] == "invoke_agent payer")
            .count()
            == 2
    })
    .await;
    let runs: Vec<&Value> = spans
        .iter()
        .filter(|s| s["name"] == "invoke_agent payer")
        .collect();
    assert_eq!(runs.len(), 2, "{spans:#?}");
    let (paused, resumed) = if links(runs[0]).is_empty() {
        (runs[0], runs[1])
    } else {
        (runs[1], runs[0])
    };
    assert_ne!(paused["traceId"], resumed["traceId"], "a trace each");
    assert_eq!(
        links(resumed),
        [id(paused)],
        "the resumed run links to the paused one"
    );
    let tool = one(&spans, &resumed["traceId"], "execute_tool send_money");
    assert_eq!(tool["parentSpanId"], resumed["spanId"]);
}

/// A background call's job runs in a trace of its own, linked to the span it was submitted
/// from (`submitted_from`); the job's `execute_tool` span is inside its `background_job` span.
fn assert_job_linked(spans: &[Value], submitted_from: &str) {
    let from = one(spans, &Value::Null, submitted_from);
    // The other test's job has the same name: this one is found by its link.
    let jobs: Vec<&Value> = spans
        .iter()
        .filter(|s| s["name"] == "background_job count_slowly" && links(s) == [id(&from)])
        .collect();
    assert_eq!(
        jobs.len(),
        1,
        "the job's span links to the submission: {spans:#?}"
    );
    let job = jobs[0];
    assert!(
        job["parentSpanId"].as_str().unwrap_or("").is_empty(),
        "a root: {job:#}"
    );
    assert_ne!(job["traceId"], from["traceId"], "a trace of its own");
    let tool = one(spans, &job["traceId"], "execute_tool count_slowly");
    assert_eq!(tool["parentSpanId"], job["spanId"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_in_process_job_is_linked_to_its_submission() {
    let received = global();
    let kit = Toolkit::builder().register(CountSlowly).build().unwrap();
    let call = ToolCall::new("c1", "count_slowly", r#"{"n": 3}"#);
    let pending = kit
        .call(call, &ToolContext::new())
        .instrument(tracing::info_span!("submit in process"))
        .await;
    assert!(pending.is_pending(), "{pending}");
    kit.background().drain().await.unwrap();
    let spans = spans_with(received, |spans| {
        spans
            .iter()
            .any(|s| s["name"] == "background_job count_slowly")
    })
    .await;
    assert_job_linked(&spans, "submit in process");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_durable_job_run_by_a_worker_is_linked_to_its_submission() {
    let received = global();
    let file = std::env::temp_dir().join(format!("agent-toolkit-otel-{}.db", std::process::id()));
    let queue = JobQueue::sqlite(&file)
        .await
        .unwrap()
        .name("otel")
        .poll_interval(Duration::from_millis(20));
    let kit = Toolkit::builder()
        .register(CountSlowly)
        .job_queue(queue.clone())
        .build()
        .unwrap();
    let worker_kit = Toolkit::builder().register(CountSlowly).build().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let worker = tokio::spawn(Worker::new(&worker_kit, &queue).run_until(async move {
        let _ = stopped.await;
    }));
    let call = ToolCall::new("c1", "count_slowly", r#"{"n": 4}"#);
    let pending = kit
        .call(call, &ToolContext::new())
        .instrument(tracing::info_span!("submit to the queue"))
        .await;
    assert!(pending.is_pending(), "{pending}");
    tokio::time::timeout(Duration::from_secs(30), kit.background().drain())
        .await
        .expect("the job finishes")
        .unwrap();
    stop.send(()).unwrap();
    worker.await.unwrap().unwrap();
    let spans = spans_with(received, |spans| {
        spans.iter().any(|s| s["name"] == "submit to the queue")
    })
    .await;
    assert_job_linked(&spans, "submit to the queue");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_programs_calls_are_spans_inside_run_code() {
    let received = global();
    let kit = Toolkit::builder().register(Height).build().unwrap();
    let program = r#"
        const heights = await Promise.all(["Oslo", "Lima"].map(city => tools.height({ city })));
        return heights[0] + heights[1];
    "#;
    let model = ScriptedModel::new([
        ScriptedTurn::call(CODE_TOOL, json!({ "code": program })),
        ScriptedTurn::text("800"),
    ]);
    let mut agent = ReActAgent::builder(model)
        .toolkit(&kit)
        .name("coder")
        .code_mode(CodeMode::new())
        .build()
        .unwrap();
    assert_eq!(agent.run("sum the heights").await.unwrap(), "800");
    let spans = spans_with(received, |spans| {
        spans.iter().any(|s| s["name"] == "invoke_agent coder")
    })
    .await;
    let run = one(&spans, &Value::Null, "invoke_agent coder");
    let trace = &run["traceId"];
    let code = one(&spans, trace, &format!("execute_tool {CODE_TOOL}"));
    assert_eq!(code["parentSpanId"], run["spanId"]);
    let calls: Vec<&Value> = spans
        .iter()
        .filter(|s| s["name"] == "execute_tool height")
        .collect();
    assert_eq!(calls.len(), 2, "{spans:#?}");
    for call in calls {
        assert_eq!(&call["traceId"], trace, "in the run's trace: {call:#}");
        let mut parent = call["parentSpanId"].clone();
        // Inside run_code's span, perhaps under a span of the program's own.
        let mut depth = 0;
        while parent != code["spanId"] {
            let up = spans
                .iter()
                .find(|s| s["spanId"] == parent)
                .unwrap_or_else(|| panic!("{call:#} is not inside run_code: {spans:#?}"));
            parent = up["parentSpanId"].clone();
            depth += 1;
            assert!(depth < 5, "{call:#}");
        }
    }
}
