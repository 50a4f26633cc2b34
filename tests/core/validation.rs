//! Tools that do not parse their own arguments — hand-written `AgentTool`s (seeds/002's
//! `CalculatorTool`), hand-written parameters without a type check, tools of dynamic sets —
//! get only arguments that fit the schema the model was shown; every problem is listed in one
//! model-visible error.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_toolkit::prelude::*;
use agent_toolkit::{
    error::{ConfigError, ToolErrorKind},
    exec::ApprovalDecision,
    tool::{ParamKind, ParamSpec, ToolArgs, ToolFuture, ToolSpec},
    toolkit::DynamicTools,
};
use serde_json::{Value, json};

use super::calculator::CalculatorTool;
use super::{call, err, ok};

fn calculator() -> Toolkit {
    Toolkit::builder().register(CalculatorTool).build().unwrap()
}

#[tokio::test]
async fn the_calculator_of_002_refuses_every_problem_in_one_error() {
    let kit = calculator();
    let result = call(&kit, "calculator", r#"{"a": "ten", "operation": "pow"}"#).await;
    let error = err(&result);
    assert_eq!(error.kind(), ToolErrorKind::InvalidArguments);
    assert_eq!(
        error.message(),
        "invalid arguments for tool `calculator`: \
         missing required argument `b`; \
         argument `a`: \"ten\" is not of type \"number\"; \
         argument `operation`: \"pow\" is not one of \"add\", \"sub\", \"mul\" or \"div\"; \
         a valid call: {\"a\": 1, \"b\": 1, \"operation\": \"add\"}"
    );
    assert_eq!(result.attempts, 0, "the tool never ran");
}

#[tokio::test]
async fn the_calculator_of_002_runs_on_good_input() {
    let kit = calculator();
    let product = call(
        &kit,
        "calculator",
        r#"{"a": 15, "b": 23, "operation": "mul"}"#,
    )
    .await;
    assert_eq!(ok(&product), "345");
    assert_eq!(product.attempts, 1);
    // The tool's own errors are still its own.
    let by_zero = call(
        &kit,
        "calculator",
        r#"{"a": 1, "b": 0, "operation": "div"}"#,
    )
    .await;
    assert_eq!(err(&by_zero).kind(), ToolErrorKind::Execution);
    assert_eq!(err(&by_zero).message(), "Division by zero");
    // Keys the schema does not close off are the tool's business.
    let extra = call(
        &kit,
        "calculator",
        r#"{"a": 1, "b": 2, "operation": "add", "note": "hi"}"#,
    )
    .await;
    assert_eq!(ok(&extra), "3");
}

/// A hand-written tool with declared parameters that carry no type check (no type check): it
/// reads them as plain JSON, so their schemas are all that guards it.
struct Resize;

impl AgentTool for Resize {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("resize", "Resize an image").with_params([
            ParamSpec::new(
                "width",
                ParamKind::Required,
                json!({"type": "integer", "minimum": 1}),
            ),
            ParamSpec::new(
                "mode",
                ParamKind::Optional,
                json!({"type": "string", "enum": ["fit", "fill"]}),
            ),
        ])
    }

    fn call(&self, args: ToolArgs) -> ToolFuture {
        let width: Result<Value, ToolError> = args.required(0);
        let mode: Result<Option<Value>, ToolError> = args.value(1);
        Box::pin(async move {
            let mode = mode?.unwrap_or_else(|| json!("fit"));
            Ok(ToolOutput::text(format!("{} {mode}", width?)))
        })
    }
}

#[tokio::test]
async fn unchecked_hand_written_parameters_are_checked_against_their_schemas() {
    let kit = Toolkit::builder().register(Resize).build().unwrap();
    assert_eq!(
        ok(&call(&kit, "resize", r#"{"width": 640}"#).await),
        "640 \"fit\""
    );

    let bad = call(&kit, "resize", r#"{"width": 0, "mode": "stretch"}"#).await;
    assert_eq!(
        err(&bad).message(),
        "invalid arguments for tool `resize`: \
         argument `width`: 0 is less than the minimum of 1; \
         argument `mode`: \"stretch\" is not one of \"fit\" or \"fill\"; \
         a valid call: {\"width\": 1}"
    );
    // With an argument missing too, the resolver's problems and the schema's come together,
    // each once.
    let worse = call(&kit, "resize", r#"{"mode": "stretch", "depth": 3}"#).await;
    assert_eq!(
        err(&worse).message(),
        "invalid arguments for tool `resize`: unknown argument `depth`; \
         missing required argument `width`; \
         argument `mode`: \"stretch\" is not one of \"fit\" or \"fill\"; \
         the parameters are: `width` (required), `mode`; \
         a valid call: {\"width\": 1}"
    );
    // A registration default stands in for a missing value, and `null` for an optional
    // parameter means "not given" (OpenAI strict mode), as for generated tools.
    let kit = Toolkit::builder()
        .register(Resize)
        .default_arg("width", 100)
        .build()
        .unwrap();
    assert_eq!(
        ok(&call(&kit, "resize", r#"{"mode": null}"#).await),
        "100 \"fit\""
    );
}

/// A tool of a dynamic set, like an imported MCP tool: schema given whole, arguments passed on.
struct Remote {
    name: &'static str,
    schema: Value,
    runs: Arc<AtomicUsize>,
}

impl AgentTool for Remote {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(self.name, "a remote tool").with_input_schema(self.schema.clone())
    }

    fn call(&self, args: ToolArgs) -> ToolFuture {
        self.runs.fetch_add(1, Ordering::SeqCst);
        let text = args.raw().to_string();
        Box::pin(async move { Ok(ToolOutput::text(text)) })
    }
}

fn search_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1},
            "filter": {
                "type": "object",
                "properties": {"limit": {"type": "integer", "minimum": 1}},
                "additionalProperties": false
            },
            "cursor": {"type": ["string", "null"]}
        },
        "required": ["query", "cursor"],
        "additionalProperties": false
    })
}

#[tokio::test]
async fn a_tool_of_a_dynamic_set_refuses_bad_input() {
    let runs = Arc::new(AtomicUsize::new(0));
    let tools = DynamicTools::new();
    let kit = Toolkit::builder()
        .group("remote", "Tools of another server")
        .dynamic("remote", &tools)
        .build()
        .unwrap();
    tools
        .replace(vec![Arc::new(Remote {
            name: "search",
            schema: search_schema(),
            runs: runs.clone(),
        }) as Arc<dyn AgentTool>])
        .unwrap();

    let bad = call(
        &kit,
        "search",
        r#"{"query": "", "filter": {"limit": 0, "sort": "asc"}, "page": 2}"#,
    )
    .await;
    assert_eq!(
        err(&bad).message(),
        "invalid arguments for tool `search`: \
         missing required argument `cursor`; \
         argument `query`: \"\" is shorter than 1 character; \
         argument `filter.limit`: 0 is less than the minimum of 1; \
         argument `filter`: unknown property `sort`; \
         unknown argument `page`; \
         a valid call: {\"query\": \"text\", \"cursor\": \"text\"}"
    );
    assert_eq!(
        runs.load(Ordering::SeqCst),
        0,
        "the remote tool was not called"
    );

    // `null` for an optional property is "not given" (OpenAI strict mode sends it); a nullable
    // required property takes it as a value. The tool gets the text as the model sent it.
    let args = r#"{"query": "rust", "filter": null, "cursor": null}"#;
    assert_eq!(ok(&call(&kit, "search", args).await), args);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let null_query = call(&kit, "search", r#"{"query": null, "cursor": null}"#).await;
    assert_eq!(
        err(&null_query).message(),
        "invalid arguments for tool `search`: missing required argument `query`; \
         a valid call: {\"query\": \"text\", \"cursor\": \"text\"}"
    );
}

#[tokio::test]
async fn a_schema_that_does_not_compile_is_a_build_error_or_an_unusable_dynamic_tool() {
    let broken = json!({"type": "object", "properties": {"x": {"type": "strng"}}});
    let runs = Arc::new(AtomicUsize::new(0));
    let tool = || Remote {
        name: "broken",
        schema: broken.clone(),
        runs: runs.clone(),
    };

    let error = Toolkit::builder().register(tool()).build().unwrap_err();
    assert_eq!(error.errors.len(), 1);
    assert!(
        matches!(&error.errors[0], ConfigError::InvalidInputSchema { tool, .. } if tool == "broken"),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .contains("the input schema is not a valid JSON Schema"),
        "{error}"
    );

    // In a dynamic set (a peer's tools, found at run time) the others stay usable.
    let tools = DynamicTools::new();
    let kit = Toolkit::builder()
        .group("remote", "Tools of another server")
        .dynamic("remote", &tools)
        .build()
        .unwrap();
    tools
        .replace(vec![
            Arc::new(tool()) as Arc<dyn AgentTool>,
            Arc::new(Remote {
                name: "search",
                schema: search_schema(),
                runs: runs.clone(),
            }),
        ])
        .unwrap();
    let refused = call(&kit, "broken", r#"{"x": 1}"#).await;
    let error = err(&refused);
    assert_eq!(error.kind(), ToolErrorKind::Execution);
    assert_eq!(
        error.message(),
        "tool `broken` cannot be used: its declared input schema is not valid, so its arguments cannot be checked"
    );
    assert!(
        error
            .source()
            .unwrap()
            .to_string()
            .contains("does not compile")
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    let fine = call(&kit, "search", r#"{"query": "q", "cursor": null}"#).await;
    assert!(!fine.is_error(), "{}", fine.model_text());
}

/// The calculator again, as a background tool and as one that needs approval.
struct Flagged {
    background: bool,
    approval: bool,
}

impl AgentTool for Flagged {
    fn spec(&self) -> ToolSpec {
        let mut spec = CalculatorTool.spec();
        spec.options.background = self.background;
        spec.options.requires_approval = self.approval;
        spec
    }

    fn call(&self, args: ToolArgs) -> ToolFuture {
        CalculatorTool.call(args)
    }
}

#[tokio::test]
async fn bad_input_is_refused_before_background_submission_and_before_approval() {
    let kit = Toolkit::builder()
        .register(Flagged {
            background: true,
            approval: false,
        })
        .build()
        .unwrap();
    let refused = call(
        &kit,
        "calculator",
        r#"{"a": 1, "b": 2, "operation": "pow"}"#,
    )
    .await;
    assert_eq!(err(&refused).kind(), ToolErrorKind::InvalidArguments);
    assert!(
        kit.background()
            .by_call_id("call-1")
            .await
            .unwrap()
            .is_empty(),
        "nothing queued"
    );
    let queued = call(
        &kit,
        "calculator",
        r#"{"a": 1, "b": 2, "operation": "add"}"#,
    )
    .await;
    assert!(queued.is_pending(), "{}", queued.model_text());

    let asked = Arc::new(AtomicUsize::new(0));
    let counter = asked.clone();
    let kit = Toolkit::builder()
        .register(Flagged {
            background: false,
            approval: true,
        })
        .approval_hook(move |req: agent_toolkit::exec::ApprovalRequest| {
            counter.fetch_add(1, Ordering::SeqCst);
            // The approver "fixes" the call into another bad one: checked again.
            let edited = req.arguments.replace("\"add\"", "\"pow\"");
            async move { ApprovalDecision::Edit(edited) }
        })
        .build()
        .unwrap();
    let refused = call(&kit, "calculator", r#"{"a": 1, "operation": "add"}"#).await;
    assert_eq!(
        err(&refused).message(),
        "invalid arguments for tool `calculator`: missing required argument `b`; \
         a valid call: {\"a\": 1, \"b\": 1, \"operation\": \"add\"}"
    );
    assert_eq!(
        asked.load(Ordering::SeqCst),
        0,
        "nobody is asked about bad arguments"
    );
    let edited = call(
        &kit,
        "calculator",
        r#"{"a": 1, "b": 2, "operation": "add"}"#,
    )
    .await;
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert!(
        err(&edited)
            .message()
            .contains("argument `operation`: \"pow\" is not one of"),
        "{}",
        edited.model_text()
    );
}
