//! Hand-written tools through the typed `Tool` trait: the arguments' type is the schema the
//! model sees and what the model's arguments are parsed into; options, structured output,
//! context and errors work as for `#[tool]` tools.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_toolkit::error::ToolErrorKind;
use agent_toolkit::prelude::*;
use agent_toolkit::tool::ToolOptions;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{call, err, ok};

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Operation {
    Add,
    Div,
}

/// Two numbers and what to do with them.
#[derive(Deserialize, JsonSchema)]
struct Arithmetic {
    /// The left operand.
    a: f64,
    /// The right operand.
    b: f64,
    operation: Operation,
}

#[derive(Serialize, JsonSchema)]
struct Answer {
    value: f64,
}

/// Counts the calls it serves, through an `Arc` its clones share.
#[derive(Clone, Default)]
struct Calculator {
    calls: Arc<AtomicUsize>,
}

impl Tool for Calculator {
    const NAME: &'static str = "calculator";
    const DESCRIPTION: &'static str = "Perform arithmetic operations";
    type Args = Arithmetic;
    type Output = Json<Answer>;
    type Error = ToolError;

    fn options(&self) -> ToolOptions {
        ToolOptions::default()
            .read_only()
            .group("math")
            .timeout(Duration::from_secs(1))
    }

    async fn call(&self, args: Arithmetic, ctx: ToolContext) -> Result<Json<Answer>, ToolError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        assert!(
            ctx.call_info().is_some(),
            "the call's context reaches the tool"
        );
        let value = match args.operation {
            Operation::Add => args.a + args.b,
            Operation::Div if args.b == 0.0 => {
                return Err(ToolError::execution("division by zero"));
            }
            Operation::Div => args.a / args.b,
        };
        Ok(Json(Answer { value }))
    }
}

fn kit(tool: Calculator) -> Toolkit {
    Toolkit::builder()
        .group("math", "Arithmetic")
        .register(tool)
        .build()
        .unwrap()
}

#[test]
fn the_arguments_type_is_the_schema_and_the_options_are_the_tools() {
    let kit = kit(Calculator::default());
    let def = kit.definition("calculator").unwrap();
    assert_eq!(def.description(), "Perform arithmetic operations");
    let params = def.parameters();
    assert_eq!(params["type"], "object");
    assert_eq!(params["required"], json!(["a", "b", "operation"]));
    assert_eq!(
        params["properties"]["a"]["description"],
        "The left operand."
    );
    assert!(
        def.output_schema().is_some(),
        "Json<T> declares its output schema"
    );
    assert!(def.annotations().read_only);
    let options = kit.options("calculator").unwrap();
    assert_eq!(options.groups, ["math"]);
    assert_eq!(options.timeout, Some(Duration::from_secs(1)));
    // In a group: switched off, it is not callable.
    kit.set_group_active("math", false).unwrap();
    assert!(kit.definitions().is_empty());
}

#[tokio::test]
async fn good_arguments_run_on_a_clone_that_shares_the_tools_state() {
    let calculator = Calculator::default();
    let kit = kit(calculator.clone());
    let r = call(
        &kit,
        "calculator",
        r#"{"a": 1, "b": 2, "operation": "add"}"#,
    )
    .await;
    assert_eq!(ok(&r), r#"{"value":3.0}"#);
    let r = call(
        &kit,
        "calculator",
        r#"{"a": 1, "b": 0, "operation": "div"}"#,
    )
    .await;
    assert_eq!(err(&r).kind(), ToolErrorKind::Execution);
    assert_eq!(err(&r).message(), "division by zero");
    assert_eq!(calculator.calls.load(Ordering::Relaxed), 2);
}

#[tokio::test]
async fn arguments_that_do_not_fit_are_refused_before_the_tool_runs() {
    let calculator = Calculator::default();
    let kit = kit(calculator.clone());
    for (args, says) in [
        (r#"{"a": 1, "operation": "add"}"#, "missing field `b`"),
        (
            r#"{"a": "one", "b": 2, "operation": "add"}"#,
            "argument `a`",
        ),
        (
            r#"{"a": 1, "b": 2, "operation": "pow"}"#,
            "argument `operation`",
        ),
        (r#"[1, 2, "add"]"#, "must be a JSON object"),
        (
            r#"{"a": "1e3", "b": 2, "operation": "add"}"#,
            r#"a valid call: {"a": 1, "b": 1, "operation": "add"}"#,
        ),
        ("not json", "must be a JSON object"),
    ] {
        let r = call(&kit, "calculator", args).await;
        let e = err(&r);
        assert_eq!(e.kind(), ToolErrorKind::InvalidArguments, "{args}: {e:?}");
        assert!(e.message().contains(says), "{args}: {}", e.message());
    }
    assert_eq!(calculator.calls.load(Ordering::Relaxed), 0);
}

#[tokio::test]
async fn quoted_numbers_are_read_as_numbers_unless_switched_off() {
    let args = r#"{"a": "2.5", "b": "4", "operation": "add"}"#;
    let r = call(&kit(Calculator::default()), "calculator", args).await;
    assert_eq!(ok(&r), r#"{"value":6.5}"#);
    let kit = Toolkit::builder()
        .coerce_arguments(false)
        .group("math", "Arithmetic")
        .register(Calculator::default())
        .build()
        .unwrap();
    let r = call(&kit, "calculator", args).await;
    assert_eq!(err(&r).kind(), ToolErrorKind::InvalidArguments);
}
