//! The tool contract: [`AgentTool`], what a tool declares ([`ToolSpec`], [`ParamSpec`]), what
//! the model sends ([`ToolCall`]) and what comes back ([`ToolResult`], [`ToolOutput`]).

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use schemars::{JsonSchema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::args::ToolArgs;
use crate::background::JobId;
use crate::error::{IntoToolError, ToolError};

/// The future a tool returns. Boxed: one allocation per call buys object safety, which lets
/// tools of every type sit in one registry.
pub type ToolFuture = Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send + 'static>>;

/// A tool: something with a [`ToolSpec`] that runs on resolved arguments.
///
/// `#[tool]` and `#[tools]` implement it for you. Implement it by hand for tools whose
/// parameters are only known at run time (imported or remote tools): declare
/// [`ToolSpec::input_schema`] and read the whole argument object with [`ToolArgs::raw`].
/// With the `validate` feature (on by default) the toolkit checks the arguments against that
/// schema before calling the tool, so `call` only sees arguments that fit it.
pub trait AgentTool: Send + Sync + 'static {
    /// What the tool is: name, description, parameters, options. Called once per registration.
    fn spec(&self) -> ToolSpec;

    /// Run one call. Argument errors should be returned as `Err` from the future (or, as the
    /// generated code does, as an immediately ready future) so that every call gets a result.
    fn call(&self, args: ToolArgs) -> ToolFuture;
}

/// How a parameter gets its value (see the precedence rule in the crate docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// Visible to the model and required.
    Required,
    /// Visible, `Option<T>`: absent means `None`.
    Optional,
    /// Visible, with an `#[arg(default = ..)]`: absent means the default.
    Defaulted,
    /// Hidden, bound at registration with `.preset(..)`.
    Preset,
    /// Hidden, injected by type through [`FromToolContext`](crate::FromToolContext).
    Context,
}

impl ParamKind {
    /// Whether the model may see and set the parameter (before registration presets).
    pub fn is_visible(self) -> bool {
        matches!(
            self,
            ParamKind::Required | ParamKind::Optional | ParamKind::Defaulted
        )
    }

    /// Whether the parameter is filled from JSON (visible or preset), as opposed to context.
    pub fn is_json(self) -> bool {
        self != ParamKind::Context
    }
}

/// Checks that a JSON text deserializes into the parameter's type; used to type-check presets
/// when the toolkit is built rather than when the model first calls.
pub type TypeCheck = fn(&str) -> Result<(), crate::args::TypeMismatch>;

/// One declared parameter of a tool.
#[derive(Clone, Debug)]
pub struct ParamSpec {
    /// The name on the wire (after `#[arg(rename)]`).
    pub name: Cow<'static, str>,
    /// How it is filled.
    pub kind: ParamKind,
    /// Description for the model.
    pub description: Option<Cow<'static, str>>,
    /// JSON Schema of the value (JSON parameters; `Value::Null` for context parameters).
    pub schema: Value,
    /// The Rust type, for error messages.
    pub rust_type: &'static str,
    /// Type check for values bound at registration and, in hand-written tools, for the
    /// model's values. Without one, the model's value is checked against
    /// [`schema`](Self::schema) instead (`validate` feature).
    pub check: Option<TypeCheck>,
}

/// Options given in `#[tool(...)]` or by hand. Stored for every tool; the execution engine and
/// the agent give them behaviour.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolOptions {
    /// Groups the tool belongs to; ungrouped tools are always active.
    pub groups: Vec<Cow<'static, str>>,
    /// Does not change its environment (safe to retry).
    pub read_only: bool,
    /// Repeating a call has no additional effect (safe to retry).
    pub idempotent: bool,
    /// May perform destructive updates.
    pub destructive: bool,
    /// Runs alone, in call order, as a barrier within a batch.
    pub sequential: bool,
    /// Runs in the background task queue; the call returns a pending result at once.
    pub background: bool,
    /// Pauses for approval before running.
    pub requires_approval: bool,
    /// Deadline per attempt.
    pub timeout: Option<Duration>,
    /// Retries allowed after the first attempt.
    pub retries: Option<u32>,
    /// A synchronous (non-`async`) function: the engine runs it on the blocking pool.
    pub blocking: bool,
}

/// Everything a tool declares about itself.
#[derive(Clone, Debug)]
pub struct ToolSpec {
    /// The tool's name.
    pub name: Cow<'static, str>,
    /// What it does, for the model.
    pub description: Cow<'static, str>,
    /// Declared parameters, in signature order.
    pub params: Vec<ParamSpec>,
    /// Shared `$defs` referenced by the parameter schemas.
    pub defs: Map<String, Value>,
    /// For tools without declared parameters: the whole input schema, passed through as-is.
    /// The toolkit then hands the model's whole argument object to the tool, once it fits
    /// this schema (`validate` feature).
    pub input_schema: Option<Value>,
    /// JSON Schema of the structured output, if any.
    pub output_schema: Option<Value>,
    /// Options.
    pub options: ToolOptions,
    /// The tool parses its arguments itself with [`ToolArgs::fast`], falling back to
    /// [`ToolArgs::resolve_slots`]; the toolkit then does not resolve them up front, nor check
    /// them against the schema. Set by `#[tool]`; leave `false` in hand-written tools.
    pub self_parsing: bool,
}

impl ToolSpec {
    /// A spec with no parameters and default options.
    pub fn new(
        name: impl Into<Cow<'static, str>>,
        description: impl Into<Cow<'static, str>>,
    ) -> Self {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            params: Vec::new(),
            defs: Map::new(),
            input_schema: None,
            output_schema: None,
            options: ToolOptions::default(),
            self_parsing: false,
        }
    }

    /// Take a dynamic input schema: the model's argument object goes to the tool whole.
    pub fn with_input_schema(mut self, schema: Value) -> Self {
        self.input_schema = Some(schema);
        self
    }
}

/// One call the model asked for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Id chosen by the model (or provider); echoed in the result. Shared, because the result,
    /// the tool's [`CallInfo`](crate::CallInfo) and progress events all carry it.
    pub id: Arc<str>,
    /// The tool's name.
    pub name: String,
    /// The arguments as JSON text, exactly as the model produced them (possibly malformed).
    pub arguments: String,
}

impl ToolCall {
    /// A call with arguments given as JSON text.
    pub fn new(
        id: impl Into<Arc<str>>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    /// A call with arguments given as a JSON value.
    pub fn json(id: impl Into<Arc<str>>, name: impl Into<String>, arguments: Value) -> Self {
        Self::new(id, name, arguments.to_string())
    }
}

/// What a tool produced for the model.
#[derive(Clone, Debug)]
pub enum Content {
    /// Plain text.
    Text(String),
    /// A JSON document, kept as serialized text (the model reads text; MCP also gets it as
    /// `structuredContent`).
    Json(Box<RawValue>),
}

impl PartialEq for Content {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Content::Text(a), Content::Text(b)) => a == b,
            (Content::Json(a), Content::Json(b)) => a.get() == b.get(),
            _ => false,
        }
    }
}

/// A successful tool result: content for the model, plus metadata for the application that the
/// model never sees.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolOutput {
    /// What the model sees.
    pub content: Content,
    /// Application-side data (for hooks, UIs, logs); never sent to the model.
    pub metadata: Map<String, Value>,
}

impl ToolOutput {
    /// Text output.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            content: Content::Text(text.into()),
            metadata: Map::new(),
        }
    }

    /// JSON output from any serializable value.
    pub fn json<T: Serialize + ?Sized>(value: &T) -> Result<Self, ToolError> {
        let raw = serde_json::value::to_raw_value(value).map_err(|e| {
            ToolError::execution("the tool produced output that cannot be serialized as JSON")
                .with_source(e)
        })?;
        Ok(ToolOutput {
            content: Content::Json(raw),
            metadata: Map::new(),
        })
    }

    /// Attach an application-side metadata entry.
    pub fn with_metadata(mut self, key: impl Into<String>, value: Value) -> Self {
        self.metadata.insert(key.into(), value);
        self
    }

    /// The content as the text a model reads.
    pub fn as_text(&self) -> &str {
        match &self.content {
            Content::Text(t) => t,
            Content::Json(raw) => raw.get(),
        }
    }

    /// The structured (JSON) content, if the output is JSON.
    pub fn structured(&self) -> Option<&RawValue> {
        match &self.content {
            Content::Json(raw) => Some(raw),
            Content::Text(_) => None,
        }
    }
}

/// The one result of one [`ToolCall`].
#[derive(Clone, Debug)]
pub struct ToolResult {
    /// The call's id.
    pub call_id: Arc<str>,
    /// The tool name the call used.
    pub name: String,
    /// Output, or why there is none.
    pub outcome: Result<ToolOutput, ToolError>,
    /// How many times the tool was started (retries included); 0 when the call was refused
    /// before the tool ran (unknown tool, bad arguments, denied) or is still pending.
    pub attempts: u32,
}

impl ToolResult {
    /// Whether the call failed.
    pub fn is_error(&self) -> bool {
        self.outcome.is_err()
    }

    /// The output, if the call succeeded.
    pub fn output(&self) -> Option<&ToolOutput> {
        self.outcome.as_ref().ok()
    }

    /// The error, if the call failed.
    pub fn error(&self) -> Option<&ToolError> {
        self.outcome.as_ref().err()
    }

    /// Whether this is the placeholder of a background call that is still running.
    pub fn is_pending(&self) -> bool {
        self.output()
            .is_some_and(|o| o.metadata.get("background").is_some_and(|v| v == "pending"))
    }

    /// The background job this result belongs to: set on a background call's pending result
    /// and on its successful final result (an error result carries no metadata; find its
    /// record with [`BackgroundJobs::by_call_id`](crate::BackgroundJobs::by_call_id)). Look
    /// the job up with [`BackgroundJobs::get`](crate::BackgroundJobs::get).
    pub fn job_id(&self) -> Option<JobId> {
        self.output()
            .and_then(|o| JobId::from_metadata(&o.metadata))
    }

    /// The text the model should see: the output, or `Error: <message>`.
    pub fn model_text(&self) -> Cow<'_, str> {
        match &self.outcome {
            Ok(out) => Cow::Borrowed(out.as_text()),
            Err(e) => Cow::Owned(format!("Error: {}", e.message())),
        }
    }
}

impl fmt::Display for ToolResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{} {}] {}", self.name, self.call_id, self.model_text())
    }
}

/// A return value a tool can produce.
///
/// Implemented for `String`, `&'static str`, `()`, `bool`, the integer and float types,
/// `serde_json::Value`, [`Json<T>`], [`ToolOutput`] and `Result<T, E>` with `T: IntoToolOutput`
/// and `E: Into<ToolError>` (every `std::error::Error` qualifies).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool",
    label = "not a tool output",
    note = "return `String`, `()`, `serde_json::Value`, `Json<T>` (T: Serialize + JsonSchema), `ToolOutput`, or `Result<T, E>` of one of these with `E: std::error::Error` or `ToolError`"
)]
pub trait IntoToolOutput {
    /// Convert into the model-visible output.
    fn into_tool_output(self) -> Result<ToolOutput, ToolError>;

    /// JSON Schema of the structured output, if this type declares one.
    fn output_schema(_generator: &mut SchemaGenerator) -> Option<Value> {
        None
    }
}

impl IntoToolOutput for ToolOutput {
    fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
        Ok(self)
    }
}

impl IntoToolOutput for String {
    fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(self))
    }
}

impl IntoToolOutput for &'static str {
    fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(self))
    }
}

impl IntoToolOutput for Cow<'static, str> {
    fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(self.into_owned()))
    }
}

impl IntoToolOutput for () {
    fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(String::new()))
    }
}

impl IntoToolOutput for Value {
    fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
        ToolOutput::json(&self)
    }
}

macro_rules! scalar_output {
    ($($t:ty)*) => {$(
        impl IntoToolOutput for $t {
            fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
                ToolOutput::json(&self)
            }
        }
    )*};
}
scalar_output!(bool i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64);

impl<T: IntoToolOutput, E: IntoToolError> IntoToolOutput for Result<T, E> {
    fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
        self.map_err(IntoToolError::into_tool_error)?
            .into_tool_output()
    }

    fn output_schema(generator: &mut SchemaGenerator) -> Option<Value> {
        T::output_schema(generator)
    }
}

/// A JSON return value that also declares its output schema (MCP `outputSchema`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

impl<T: Serialize + JsonSchema> IntoToolOutput for Json<T> {
    fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
        ToolOutput::json(&self.0)
    }

    fn output_schema(generator: &mut SchemaGenerator) -> Option<Value> {
        Some(crate::schema::standalone_schema::<T>(generator))
    }
}
