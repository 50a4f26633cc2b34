//! The parameter model: what a tool declares about each parameter ([`ParamSpec`],
//! [`ParamKind`]), and how a JSON value is checked against a parameter's Rust type
//! ([`TypeMismatch`]). A leaf: the resolver (`args`), the schema generator (`schema`) and the
//! tool contract (`tool`) all build on it, and it depends on none of them.

use std::borrow::Cow;
use std::fmt;

use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

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

/// One parameter as a registration sees it: the declaration plus what the builder bound.
#[derive(Clone, Debug)]
pub(crate) struct PlannedParam {
    pub(crate) name: Cow<'static, str>,
    pub(crate) kind: ParamKind,
    pub(crate) rust_type: &'static str,
    pub(crate) check: Option<TypeCheck>,
    /// What a context parameter's extractor reads (`None`: not a context parameter, or a
    /// hand-written one that did not say).
    pub(crate) reads: Option<fn() -> crate::context::ContextReads>,
    /// Hidden from the model: `#[preset]`, `#[ctx]`, or a visible parameter bound by `.preset`.
    pub(crate) hidden: bool,
    /// JSON text bound by `.preset` or `.default_arg`.
    pub(crate) binding: Option<Box<RawValue>>,
}

/// Checks that a JSON text deserializes into the parameter's type; used to type-check presets
/// when the toolkit is built rather than when the model first calls.
pub type TypeCheck = fn(&str) -> Result<(), TypeMismatch>;

/// One declared parameter of a tool: what `#[tool]` generates for each function parameter, and
/// what a hand-written [`AgentTool`](crate::AgentTool) lists in its
/// [`ToolSpec`](crate::tool::ToolSpec).
///
/// ```
/// use agent_toolkit::tool::{ParamKind, ParamSpec};
/// use serde_json::json;
///
/// let city = ParamSpec::new("city", ParamKind::Required, json!({"type": "string"}))
///     .with_description("City name, e.g. \"Paris\"");
/// assert_eq!(city.name, "city");
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
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
    /// Type check for values bound at registration and for the model's values; set by
    /// `#[tool]`. Without one, the model's value is checked against [`schema`](Self::schema)
    /// instead (`validate` feature).
    pub(crate) check: Option<TypeCheck>,
    /// What a context parameter's extractor reads from the context; set by `#[tool]`.
    pub(crate) reads: Option<fn() -> crate::context::ContextReads>,
}

impl ParamSpec {
    /// A parameter named `name`, filled as `kind` says, whose values fit `schema` (a JSON
    /// Schema; `Value::Null` for a [`Context`](ParamKind::Context) parameter).
    pub fn new(name: impl Into<Cow<'static, str>>, kind: ParamKind, schema: Value) -> Self {
        ParamSpec {
            name: name.into(),
            kind,
            description: None,
            schema,
            rust_type: "serde_json::Value",
            check: None,
            reads: None,
        }
    }

    /// The same parameter with a description for the model.
    pub fn with_description(mut self, description: impl Into<Cow<'static, str>>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// Why a JSON value does not fit a parameter's type: where inside the value, and what serde said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeMismatch {
    /// Path inside the value (`.` for the value itself), as serde_path_to_error prints it.
    pub path: String,
    /// What was wrong and what was expected, in serde's words.
    pub message: String,
}

impl TypeMismatch {
    /// "argument `days`: invalid type: string \"x\", expected u32", with the path inside
    /// the value appended to the name for nested values.
    pub fn describe(&self, param: &str) -> String {
        if self.path == "." {
            format!("argument `{param}`: {}", self.message)
        } else {
            let path = self.path.trim_start_matches('.');
            let dot = if path.starts_with('[') { "" } else { "." };
            format!("argument `{param}{dot}{path}`: {}", self.message)
        }
    }
}

impl TypeMismatch {
    /// The same for a mismatch in a whole argument object (a typed tool's arguments): the
    /// path names the argument, or the message stands alone when the object itself is wrong.
    pub(crate) fn describe_whole(&self) -> String {
        match self.path.trim_start_matches('.') {
            "" => self.message.clone(),
            path => format!("argument `{path}`: {}", self.message),
        }
    }
}

impl fmt::Display for TypeMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path == "." {
            f.write_str(&self.message)
        } else {
            write!(f, "at `{}`: {}", self.path, self.message)
        }
    }
}

/// Deserialize one parameter value, reporting where inside it a mismatch is.
pub(crate) fn deserialize<T: DeserializeOwned>(text: &str) -> Result<T, TypeMismatch> {
    // Fast path without path tracking; on failure, parse again to say where it failed.
    if let Ok(value) = serde_json::from_str(text) {
        return Ok(value);
    }
    let mut de = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let inner = e.inner();
        // The position is inside one argument's slice, which means nothing to the model.
        let position = format!(" at line {} column {}", inner.line(), inner.column());
        let message = inner.to_string();
        TypeMismatch {
            path: e.path().to_string(),
            message: message
                .strip_suffix(&position)
                .unwrap_or(&message)
                .to_string(),
        }
    })
}
