//! Malformed model output: every case yields exactly one result with a model-visible error,
//! and nothing panics.

use agent_toolkit::error::ToolErrorKind;
use agent_toolkit::prelude::*;
use agent_toolkit::toolkit::UnknownArgs;

use super::fixtures::*;
use super::{call, err, ok};

fn kit() -> Toolkit {
    Toolkit::builder()
        .register(Echo)
        .preset("secret", "s")
        .register(AnyJson)
        .register(Ping)
        .build()
        .unwrap()
}

fn assert_invalid(r: &ToolResult, needle: &str) {
    let e = err(r);
    assert_eq!(e.kind(), ToolErrorKind::InvalidArguments, "{}", e.message());
    assert!(
        e.message().contains(needle),
        "{:?} not in {:?}",
        needle,
        e.message()
    );
}

#[tokio::test]
async fn arguments_that_are_not_json() {
    let r = call(&kit(), "echo", r#"{"a": "x""#).await;
    assert_invalid(&r, "must be a JSON object: EOF while parsing");
    let r = call(&kit(), "echo", "a=x").await;
    assert_invalid(&r, "must be a JSON object: expected value");
    let r = call(&kit(), "echo", r#"{"a": "x"} trailing"#).await;
    assert_invalid(&r, "trailing characters");
}

#[tokio::test]
async fn arguments_that_are_not_an_object() {
    for (args, what) in [
        ("[1]", "sequence"),
        (r#""x""#, "string"),
        ("5", "integer"),
        ("null", "null"),
    ] {
        let r = call(&kit(), "echo", args).await;
        assert_invalid(&r, &format!("invalid type: {what}"));
    }
}

#[tokio::test]
async fn wrong_types_and_missing_required_are_reported_together() {
    let r = call(&kit(), "echo", r#"{"bee": "five", "c": 1.5}"#).await;
    let msg = err(&r).message();
    for want in [
        "missing required argument `a`",
        "argument `bee`: invalid type: string \"five\", expected i64",
        "argument `c`: invalid type: floating point `1.5`, expected i64",
        "the parameters are: `a` (required), `bee`, `c`, `d`",
    ] {
        assert!(msg.contains(want), "{want:?} not in {msg:?}");
    }
}

#[tokio::test]
async fn unknown_extra_fields_are_refused_by_default() {
    let r = call(&kit(), "echo", r#"{"a": "x", "b": 1, "verbose": true}"#).await;
    assert_invalid(&r, "unknown argument `b`; unknown argument `verbose`");
    let r = call(&kit(), "ping", r#"{"x": 1}"#).await;
    assert_invalid(&r, "this tool takes no arguments");
}

#[tokio::test]
async fn unknown_extra_fields_can_be_ignored() {
    let kit = Toolkit::builder()
        .unknown_args(UnknownArgs::Ignore)
        .register(Echo)
        .preset("secret", "s")
        .build()
        .unwrap();
    let r = call(&kit, "echo", r#"{"a": "x", "verbose": true}"#).await;
    assert_eq!(ok(&r), "a=x b=None c=7 d=false secret=s");
}

#[tokio::test]
async fn duplicate_keys_are_refused() {
    let r = call(&kit(), "echo", r#"{"a": "x", "a": "y"}"#).await;
    assert_invalid(&r, "argument `a` is given twice");
}

#[tokio::test]
async fn a_value_for_a_hidden_parameter() {
    let r = call(&kit(), "echo", r#"{"a": "x", "secret": "mine"}"#).await;
    assert_eq!(err(&r).kind(), ToolErrorKind::HiddenArgument);
}

#[tokio::test]
async fn unknown_tool_and_switched_off_tool() {
    let r = call(&kit(), "nope", "{}").await;
    assert_eq!(err(&r).kind(), ToolErrorKind::UnknownTool);
    let kit = toolkit();
    let r = call(&kit, "read", "{}").await; // the "counter" group is off
    assert_eq!(err(&r).kind(), ToolErrorKind::Unavailable);
}

#[tokio::test]
async fn a_10_mb_string_argument_is_refused_by_the_size_limit() {
    let big = format!(r#"{{"a": "{}"}}"#, "x".repeat(10 << 20));
    let r = call(&kit(), "echo", &big).await;
    assert_invalid(&r, "the limit is 4194304 bytes");
    // A larger limit admits it, and the tool gets all of it.
    let kit = Toolkit::builder()
        .max_argument_bytes(16 << 20)
        .max_output_bytes(16 << 20)
        .register(AnyJson)
        .build()
        .unwrap();
    let big = format!(r#"{{"value": "{}"}}"#, "x".repeat(10 << 20));
    let r = call(&kit, "any_json", &big).await;
    assert_eq!(ok(&r).len(), (10 << 20) + 2);
}

#[tokio::test]
async fn a_10000_deep_nested_value_is_refused_without_overflowing_the_stack() {
    let deep = format!(
        r#"{{"value": {}{}}}"#,
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let r = call(&kit(), "any_json", &deep).await;
    assert_invalid(&r, "recursion limit exceeded");
    let deep_obj = format!(
        r#"{{"value": {}1{}}}"#,
        r#"{"k":"#.repeat(10_000),
        "}".repeat(10_000)
    );
    let r = call(&kit(), "any_json", &deep_obj).await;
    assert_invalid(&r, "recursion limit exceeded");
    // The same depth at the top level is caught by the parser itself.
    let r = call(
        &kit(),
        "echo",
        &format!("{}{}", "[".repeat(10_000), "]".repeat(10_000)),
    )
    .await;
    assert_invalid(&r, "must be a JSON object");
}
