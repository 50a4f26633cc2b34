//! Malformed model output: every case yields exactly one result with a model-visible error,
//! and nothing panics — except a quoted scalar the schema asks for unambiguously (`"7"` for an
//! integer), which small models write often and which runs coerced unless switched off.

use agent_toolkit::error::ToolErrorKind;
use agent_toolkit::prelude::*;
use agent_toolkit::toolkit::UnknownArgs;
#[cfg(feature = "validate")]
use serde_json::json;

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

/// Fetch one record.
#[tool]
async fn get(id: i64, verbose: bool, #[preset] account: i64) -> String {
    format!("id={id} verbose={verbose} account={account}")
}

fn get_kit(coerce: bool) -> Toolkit {
    Toolkit::builder()
        .coerce_arguments(coerce)
        .register(Get)
        .preset("account", 5)
        .build()
        .unwrap()
}

#[tokio::test]
async fn quoted_scalars_run_coerced_by_default_and_are_refused_when_switched_off() {
    let quoted = r#"{"id": "7", "verbose": "true"}"#;
    let r = call(&get_kit(true), "get", quoted).await;
    assert_eq!(ok(&r), "id=7 verbose=true account=5");
    let r = call(&get_kit(true), "get", r#"{"id": "-3", "verbose": false}"#).await;
    assert_eq!(ok(&r), "id=-3 verbose=false account=5");

    let r = call(&get_kit(false), "get", quoted).await;
    assert_invalid(
        &r,
        "argument `id`: invalid type: string \"7\", expected i64",
    );
    assert_invalid(
        &r,
        "argument `verbose`: invalid type: string \"true\", expected a boolean",
    );
}

#[tokio::test]
async fn lossy_texts_are_refused_with_a_valid_example_call() {
    for args in [
        r#"{"id": "7.0", "verbose": true}"#,
        r#"{"id": "1e3", "verbose": true}"#,
        r#"{"id": " 7", "verbose": true}"#,
        r#"{"id": 7, "verbose": "yes"}"#,
        r#"{"id": "9223372036854775808", "verbose": true}"#,
        // One coercible value does not carry another problem through.
        r#"{"id": "7", "verbose": "yes"}"#,
    ] {
        let r = call(&get_kit(true), "get", args).await;
        let message = err(&r).message();
        assert_eq!(err(&r).kind(), ToolErrorKind::InvalidArguments, "{args}");
        let example = message
            .split_once("; a valid call: ")
            .unwrap_or_else(|| panic!("no example in {message:?}"))
            .1;
        assert_eq!(example, r#"{"id": 1, "verbose": true}"#);
        // The example is a call that runs.
        let r = call(&get_kit(true), "get", example).await;
        assert_eq!(ok(&r), "id=1 verbose=true account=5");
    }
}

#[tokio::test]
async fn a_hidden_parameter_sent_as_a_string_is_still_refused() {
    for args in [
        r#"{"id": 7, "verbose": true, "account": "9"}"#,
        r#"{"id": "7", "verbose": "true", "account": "9"}"#,
    ] {
        let r = call(&get_kit(true), "get", args).await;
        assert_eq!(err(&r).kind(), ToolErrorKind::HiddenArgument, "{args}");
    }
    // A visible parameter hidden by `.preset` at registration is hidden too.
    let kit = Toolkit::builder()
        .register(Get)
        .preset("account", 5)
        .preset("verbose", false)
        .build()
        .unwrap();
    let r = call(&kit, "get", r#"{"id": "7", "verbose": "true"}"#).await;
    assert_eq!(err(&r).kind(), ToolErrorKind::HiddenArgument);
    let r = call(&kit, "get", r#"{"id": "7"}"#).await;
    assert_eq!(ok(&r), "id=7 verbose=false account=5");
}

/// Tools with a whole input schema are checked against it with the `validate` feature only;
/// without it they get the model's text unchecked, so never coerced.
#[cfg(feature = "validate")]
#[tokio::test]
async fn a_tool_with_a_whole_input_schema_gets_the_coerced_text() {
    /// Echoes the argument text it receives.
    struct Raw;
    impl agent_toolkit::AgentTool for Raw {
        fn spec(&self) -> agent_toolkit::tool::ToolSpec {
            agent_toolkit::tool::ToolSpec::new("raw", "echo").with_input_schema(json!({
                "type": "object",
                "properties": {
                    "n": {"type": "integer"},
                    "flags": {"type": "array", "items": {"type": "boolean"}},
                    "label": {"type": "string"}
                },
                "required": ["n"]
            }))
        }
        fn call(&self, args: agent_toolkit::tool::ToolArgs) -> agent_toolkit::tool::ToolFuture {
            let text = args.raw().to_string();
            Box::pin(async move { Ok(ToolOutput::text(text)) })
        }
    }
    let kit = Toolkit::builder().register(Raw).build().unwrap();
    let r = call(
        &kit,
        "raw",
        r#"{"n": "7", "flags": ["true", false], "label": "8"}"#,
    )
    .await;
    assert_eq!(ok(&r), r#"{"n": 7, "flags": [true, false], "label": "8"}"#);
    let r = call(&kit, "raw", r#"{"n": "7.5"}"#).await;
    let message = err(&r).message();
    assert!(
        message.ends_with(r#"; a valid call: {"n": 1}"#),
        "{message}"
    );
}
