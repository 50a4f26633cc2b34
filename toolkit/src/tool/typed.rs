//! [`Tool`]: a hand-written tool with typed arguments, output and error, turned into an
//! [`AgentTool`] by a blanket implementation.

use std::future::Future;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use super::{AgentTool, IntoToolOutput, ToolFuture, ToolOptions, ToolSpec};
use crate::args::ToolArgs;
use crate::context::ToolContext;
use crate::error::{IntoToolError, ToolError};
use crate::param;
use crate::schema;

/// A tool written by hand with typed arguments: the arguments are one
/// `Deserialize + JsonSchema` type, whose schema is what the model is shown and into which
/// the model's arguments are parsed (a mismatch is a model-visible argument error naming the
/// path, and the tool does not run).
///
/// Every `Tool` is an [`AgentTool`], so it is registered like any other:
/// `Toolkit::builder().register(Calculator)`. Prefer `#[tool]` on a function; implement
/// `Tool` when a tool is a type of its own (state, configuration) or its arguments are
/// already a struct. `call` runs on a clone of the tool, so the returned future owns what it
/// uses: keep shared state behind an `Arc`.
///
/// ```
/// use agent_toolkit::{Tool, ToolContext, ToolError, Toolkit};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// #[serde(rename_all = "lowercase")]
/// enum Operation { Add, Sub, Mul, Div }
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Arithmetic { a: f64, b: f64, operation: Operation }
///
/// #[derive(Clone)]
/// struct Calculator;
///
/// impl Tool for Calculator {
///     const NAME: &'static str = "calculator";
///     const DESCRIPTION: &'static str = "Perform arithmetic operations";
///     type Args = Arithmetic;
///     type Output = f64;
///     type Error = ToolError;
///
///     async fn call(&self, args: Arithmetic, _ctx: ToolContext) -> Result<f64, ToolError> {
///         let Arithmetic { a, b, operation } = args;
///         Ok(match operation {
///             Operation::Add => a + b,
///             Operation::Sub => a - b,
///             Operation::Mul => a * b,
///             Operation::Div if b == 0.0 => return Err(ToolError::execution("division by zero")),
///             Operation::Div => a / b,
///         })
///     }
/// }
///
/// let toolkit = Toolkit::builder().register(Calculator).build().unwrap();
/// let schema = toolkit.definitions()[0].parameters().clone();
/// assert_eq!(schema["required"], serde_json::json!(["a", "b", "operation"]));
/// ```
#[diagnostic::on_unimplemented(
    note = "a `Tool` is cloned for every call: derive or implement `Clone` (keep shared state behind an `Arc`)"
)]
pub trait Tool: Clone + Send + Sync + 'static {
    /// The tool's name, as the model calls it.
    const NAME: &'static str;
    /// What the tool does, for the model.
    const DESCRIPTION: &'static str;
    /// The arguments: their JSON Schema is the tool's input schema, and the model's argument
    /// object is parsed into them.
    type Args: DeserializeOwned + JsonSchema + Send + 'static;
    /// What a successful call returns (`String`, `serde_json::Value`, `Json<T>`, …).
    type Output: IntoToolOutput + Send + 'static;
    /// What a failed call returns: [`ToolError`], or any `std::error::Error`.
    type Error: IntoToolError + Send + 'static;

    /// Groups, behaviour hints, timeout and retries; none by default.
    fn options(&self) -> ToolOptions {
        ToolOptions::default()
    }

    /// Run one call with its arguments and the call's context (values put in the context,
    /// cancellation, call info).
    fn call(
        &self,
        args: Self::Args,
        ctx: ToolContext,
    ) -> impl Future<Output = Result<Self::Output, Self::Error>> + Send;
}

impl<T: Tool> AgentTool for T {
    fn spec(&self) -> ToolSpec {
        let mut generator = schema::schema_generator();
        let mut spec = ToolSpec::new(T::NAME, T::DESCRIPTION)
            .with_input_schema(schema::standalone_schema::<T::Args>(&mut generator));
        spec.output_schema = T::Output::output_schema(&mut generator);
        spec.options = self.options();
        // The arguments are parsed into `T::Args` by serde, which checks them completely.
        spec.self_parsing = true;
        spec
    }

    fn call(&self, args: ToolArgs) -> ToolFuture {
        // serde would also read a struct from a JSON array; tool arguments are an object.
        let parse = |text: &str| {
            if !text.trim_start().starts_with('{') {
                Err(ToolError::invalid_arguments(format!(
                    "the arguments for tool `{}` must be a JSON object of named arguments",
                    T::NAME
                )))
            } else {
                param::deserialize::<T::Args>(text).map_err(|mismatch| {
                    ToolError::invalid_arguments(format!(
                        "invalid arguments for tool `{}`: {}",
                        T::NAME,
                        mismatch.describe_whole()
                    ))
                })
            }
        };
        // As on the toolkit's own path: quoted scalars are coerced only once the model's text
        // failed, and the error, if one remains, is about the model's text.
        let parsed = parse(args.raw()).or_else(|error| {
            args.coerced()
                .and_then(|coerced| {
                    let parsed = parse(&coerced.text).ok()?;
                    args.trace_coercion(&coerced.changed);
                    Some(parsed)
                })
                .ok_or_else(|| args.explain(error))
        });
        let ctx = args.context().clone();
        let tool = self.clone();
        Box::pin(async move {
            let args = parsed?;
            Tool::call(&tool, args, ctx).await.into_tool_output()
        })
    }
}
