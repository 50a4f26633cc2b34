//! [`ToolDefinition`]: what a model is told about one tool.
//!
//! A definition is immutable once built and cheap to clone (one reference count), because
//! [`Toolkit::definitions`](crate::Toolkit::definitions) hands out a fresh `Vec` of them on
//! every model turn.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Behaviour hints of a tool, mirrored into MCP `annotations` and A2A cards, and used by the
/// engine (only `read_only` or `idempotent` tools are retried after a timeout). Declared once,
/// in [`ToolOptions::annotations`](super::ToolOptions::annotations) (set them with
/// [`ToolOptions::read_only`](super::ToolOptions::read_only) and its siblings); the
/// definition carries the same value.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// Human-readable display name, if different from the tool name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not change its environment.
    pub read_only: bool,
    /// Calling the tool twice with the same arguments has no additional effect.
    pub idempotent: bool,
    /// The tool may perform destructive updates.
    pub destructive: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct DefinitionData {
    name: Arc<str>,
    description: String,
    /// Shared with the argument plans, which read it only to explain or coerce a failed call.
    parameters: Arc<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    output_schema: Option<Value>,
    #[serde(default)]
    annotations: ToolAnnotations,
}

/// The model-facing description of a tool: name, description, the canonical JSON Schema
/// (2020-12) of its visible parameters, an optional output schema and behaviour hints.
///
/// The canonical schema is what MCP serves; provider dialects are derived from it with
/// [`Dialect`](crate::Dialect). Hidden parameters (presets and context) never appear in it.
///
/// Cloning is O(1): the data sits behind an [`Arc`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ToolDefinition(Arc<DefinitionData>);

impl ToolDefinition {
    /// A definition from its parts. `parameters` should be a JSON Schema whose root is
    /// `{"type": "object", ...}`.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        ToolDefinition(Arc::new(DefinitionData {
            name: Arc::from(name.into()),
            description: description.into(),
            parameters: Arc::new(parameters),
            output_schema: None,
            annotations: ToolAnnotations::default(),
        }))
    }

    /// The same definition with an output schema (the schema of `Json<T>` returns).
    pub fn with_output_schema(mut self, schema: Value) -> Self {
        Arc::make_mut(&mut self.0).output_schema = Some(schema);
        self
    }

    /// The same definition with these behaviour hints.
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        Arc::make_mut(&mut self.0).annotations = annotations;
        self
    }

    /// The tool's name, as the model must call it.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// The name, shared (no copy).
    pub(crate) fn shared_name(&self) -> Arc<str> {
        Arc::clone(&self.0.name)
    }

    /// What the tool does, for the model.
    pub fn description(&self) -> &str {
        &self.0.description
    }

    /// Canonical JSON Schema (2020-12) of the model-visible parameters; root is an object.
    pub fn parameters(&self) -> &Value {
        &self.0.parameters
    }

    /// The parameters' schema, shared (no copy).
    pub(crate) fn shared_parameters(&self) -> Arc<Value> {
        Arc::clone(&self.0.parameters)
    }

    /// JSON Schema of the structured output, when the tool declares one.
    pub fn output_schema(&self) -> Option<&Value> {
        self.0.output_schema.as_ref()
    }

    /// Behaviour hints.
    pub fn annotations(&self) -> &ToolAnnotations {
        &self.0.annotations
    }
}
