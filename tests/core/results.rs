//! Results and errors: outputs of every supported return type, error kinds, panics, progress.

use agent_toolkit::prelude::*;
use agent_toolkit::{context::ProgressEvent, error::ToolErrorKind, tool::Content};
use serde_json::json;

use super::fixtures::*;
use super::{call, err, ok};

/// Returns text.
#[tool]
fn t_string() -> String {
    "s".into()
}
/// Returns unit.
#[tool]
async fn t_unit() {}
/// Returns a JSON value.
#[tool]
fn t_value() -> serde_json::Value {
    json!({"k": [1, 2]})
}
/// Returns a ToolOutput with app-side metadata.
#[tool]
fn t_output() -> ToolOutput {
    ToolOutput::text("shown").with_metadata("trace", json!("hidden"))
}
/// Fails with a retryable error.
#[tool]
fn t_retryable() -> Result<String, ToolError> {
    Err(ToolError::retryable("busy, try later"))
}
/// Fails through `?` on a std error.
#[tool]
fn t_question_mark(n: String) -> Result<i32, ToolError> {
    Ok(n.parse::<i32>()?)
}

fn kit() -> Toolkit {
    Toolkit::builder()
        .register(TString)
        .register(TUnit)
        .register(TValue)
        .register(TOutput)
        .register(TRetryable)
        .register(TQuestionMark)
        .register(FailIo)
        .register(Explode)
        .register(SlowCount)
        .register(SaveAddress)
        .build()
        .unwrap()
}

#[tokio::test]
async fn every_return_type_becomes_model_output() {
    let kit = kit();
    assert_eq!(ok(&call(&kit, "t_string", "{}").await), "s");
    assert_eq!(ok(&call(&kit, "t_unit", "{}").await), "");
    let v = call(&kit, "t_value", "{}").await;
    assert_eq!(ok(&v), r#"{"k":[1,2]}"#);
    assert!(matches!(v.output().unwrap().content, Content::Json(_)));
    assert_eq!(
        v.output().unwrap().structured().unwrap().get(),
        r#"{"k":[1,2]}"#
    );
    let o = call(&kit, "t_output", "{}").await;
    assert_eq!(o.model_text(), "shown");
    assert_eq!(o.output().unwrap().metadata["trace"], "hidden");
    assert_eq!(
        ok(&call(&kit, "t_question_mark", r#"{"n": "41"}"#).await),
        "41"
    );
}

#[tokio::test]
async fn tool_errors_keep_kind_message_source_and_retryability() {
    let kit = kit();
    let r = call(&kit, "t_retryable", "{}").await;
    let e = err(&r);
    assert_eq!(
        (e.kind(), e.is_retryable()),
        (ToolErrorKind::Execution, true)
    );
    assert_eq!(r.model_text(), "Error: busy, try later");

    let r = call(&kit, "fail_io", "{}").await;
    let e = err(&r);
    assert_eq!(e.kind(), ToolErrorKind::Execution);
    assert_eq!(e.message(), "disk on fire");
    assert!(
        e.source()
            .unwrap()
            .downcast_ref::<std::io::Error>()
            .is_some()
    );
    assert!(!e.is_retryable());

    let r = call(&kit, "t_question_mark", r#"{"n": "x"}"#).await;
    assert_eq!(err(&r).message(), "invalid digit found in string");
}

#[tokio::test]
async fn a_panicking_tool_yields_a_panicked_result() {
    let kit = kit();
    let r = call(&kit, "explode", "{}").await;
    let e = err(&r);
    assert_eq!(e.kind(), ToolErrorKind::Panicked);
    assert_eq!(e.message(), "tool `explode` failed unexpectedly");
    assert!(e.source().unwrap().to_string().contains("boom false"));
    // The toolkit carries on.
    assert_eq!(ok(&call(&kit, "t_string", "{}").await), "s");
}

#[tokio::test]
async fn argument_errors_name_the_parameter_and_the_path_inside_it() {
    let kit = kit();
    let r = call(
        &kit,
        "store_address",
        r#"{"address": {"street": "Main", "city": 5}, "tags": []}"#,
    )
    .await;
    assert_eq!(
        err(&r).message(),
        "invalid arguments for tool `store_address`: argument `address.city`: invalid type: integer `5`, expected a string; \
         a valid call: {\"address\": {\"street\": \"text\", \"city\": \"text\"}, \"tags\": []}"
    );
    let r = call(
        &kit,
        "store_address",
        r#"{"address": {"street": "Main", "city": "X"}, "tags": [1]}"#,
    )
    .await;
    assert!(
        err(&r)
            .message()
            .contains("argument `tags[0]`: invalid type: integer `1`, expected a string"),
        "{}",
        err(&r).message()
    );
    let r = call(
        &kit,
        "store_address",
        r#"{"address": {"street": "Main", "city": "X"}, "tags": ["a"]}"#,
    )
    .await;
    assert_eq!(ok(&r), "Main X None 1");
}

#[tokio::test]
async fn progress_is_delivered_tagged_with_call_and_tool() {
    let kit = kit();
    let (ctx, mut rx) = ToolContext::new().progress_channel(16);
    let r = kit
        .call(ToolCall::new("p1", "slow_count", r#"{"n": 2}"#), &ctx)
        .await;
    assert_eq!(ok(&r), "2");
    let events = progress_events(&mut rx);
    assert_eq!(events.len(), 3);
    assert!(
        events
            .iter()
            .all(|e| &*e.call_id == "p1" && &*e.tool_name == "slow_count")
    );
    assert_eq!(
        events[1].event,
        ProgressEvent::Progress {
            done: 2.0,
            total: Some(2.0),
            message: "step 2".into()
        }
    );
    assert_eq!(events[2].event, ProgressEvent::Chunk("done".into()));
}

#[tokio::test]
async fn a_full_progress_channel_drops_events_instead_of_blocking() {
    let kit = kit();
    let (ctx, mut rx) = ToolContext::new().progress_channel(1);
    let r = kit
        .call(ToolCall::new("p", "slow_count", r#"{"n": 50}"#), &ctx)
        .await;
    assert_eq!(ok(&r), "50", "the tool finished although nobody read");
    assert_eq!(progress_events(&mut rx).len(), 1);
    // Without a subscriber, progress is discarded.
    assert_eq!(ok(&call(&kit, "slow_count", r#"{"n": 3}"#).await), "3");
}
