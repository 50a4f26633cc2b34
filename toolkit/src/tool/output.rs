//! What a tool returns: [`ToolOutput`] and its [`Content`], and the return types that become one
//! ([`IntoToolOutput`], [`Json`]).

use std::borrow::Cow;

use schemars::{JsonSchema, SchemaGenerator};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::Attachment;
use crate::error::{IntoToolError, ToolError};

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
#[non_exhaustive]
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

    /// Attach media (an image, audio, a document) beside what the model reads; see
    /// [`Attachment`] for where it goes. Kept in order, in the metadata under
    /// `agent_toolkit.attachments` (so every store that keeps an output keeps them).
    pub fn with_attachment(mut self, attachment: Attachment) -> Self {
        let value = serde_json::to_value(&attachment).unwrap_or(Value::Null);
        match self.metadata.get_mut(ATTACHMENTS_KEY) {
            Some(Value::Array(all)) => all.push(value),
            _ => {
                self.metadata
                    .insert(ATTACHMENTS_KEY.to_owned(), Value::Array(vec![value]));
            }
        }
        self
    }

    /// The attached media, in the order attached ([`with_attachment`](Self::with_attachment));
    /// entries that are not attachments (written into the metadata by hand) are skipped.
    pub fn attachments(&self) -> Vec<Attachment> {
        match self.metadata.get(ATTACHMENTS_KEY) {
            Some(Value::Array(all)) => all
                .iter()
                .filter_map(|value| serde_json::from_value(value.clone()).ok())
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The content as the text a model reads.
    pub fn as_text(&self) -> &str {
        match &self.content {
            Content::Text(t) => t,
            Content::Json(raw) => raw.get(),
        }
    }

    /// The output of a call that suspended itself: it made a call of its own that waits for a
    /// decision (a program's call of a `requires_approval` tool, in a turn that holds such calls).
    /// `text` is what a reader that knows nothing of suspension sees; a [`Turn`] answers the call
    /// with [`CallAnswer::Suspended`], and the call resumes when made again with a
    /// [`Resumption`] in its context.
    ///
    /// [`Turn`]: crate::toolkit::Turn
    /// [`CallAnswer::Suspended`]: crate::toolkit::CallAnswer::Suspended
    /// [`Resumption`]: crate::toolkit::Resumption
    pub fn suspended(text: impl Into<String>, suspension: Suspension) -> Self {
        let value = serde_json::to_value(&suspension).unwrap_or(Value::Null);
        ToolOutput::text(text).with_metadata(SUSPENSION_KEY, value)
    }

    /// The suspension this output carries ([`suspended`](Self::suspended)), if any.
    pub fn suspension(&self) -> Option<Suspension> {
        let value = self.metadata.get(SUSPENSION_KEY)?;
        serde_json::from_value(value.clone()).ok()
    }

    /// The structured (JSON) content, if the output is JSON.
    pub fn structured(&self) -> Option<&RawValue> {
        match &self.content {
            Content::Json(raw) => Some(raw),
            Content::Text(_) => None,
        }
    }
}

/// Where attachments ride in an output's metadata.
const ATTACHMENTS_KEY: &str = "agent_toolkit.attachments";

/// Where a suspension rides in an output's metadata.
const SUSPENSION_KEY: &str = "agent_toolkit.suspension";

/// A call that waits inside a suspended call ([`ToolOutput::suspended`]): the inner call, the
/// tool it reaches, and the state the suspended tool resumes from (its own, opaque to others).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct Suspension {
    /// The inner call that waits for a decision.
    pub call: crate::tool::ToolCall,
    /// The registered name of the tool it reaches.
    pub tool: String,
    /// What the suspended tool needs to resume.
    pub state: serde_json::Map<String, Value>,
}

impl Suspension {
    /// A suspension at `call` (of `tool`), resuming from `state`.
    pub fn new(
        call: crate::tool::ToolCall,
        tool: impl Into<String>,
        state: serde_json::Map<String, Value>,
    ) -> Self {
        Suspension {
            call,
            tool: tool.into(),
            state,
        }
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
