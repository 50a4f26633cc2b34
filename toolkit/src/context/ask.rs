//! Asking the caller during a call: [`Elicitor`] (a question for the user, answered in a form)
//! and [`Sampler`] (a completion from the caller's model), both over a [`Caller`] that whoever
//! runs the call puts into its context.

use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::{ContextRejection, FromToolContext, ToolContext};

/// Whoever a running call can ask: the MCP client of the session that made the call
/// ([`McpServer`](crate::mcp::McpServer) puts one into every call's context), or an
/// application's own (put one into a context with [`ToolContext::with`] as an
/// `Arc<dyn Caller>`, or on the toolkit with `context_shared`).
///
/// The same trait answers the other way round: an MCP client's options take one for the
/// questions an imported server asks ([`McpClientOptions::elicitation`] and
/// [`sampling`](crate::mcp::McpClientOptions::sampling)). Implement the one you answer; the
/// other says it is not supported.
///
/// [`McpClientOptions::elicitation`]: crate::mcp::McpClientOptions::elicitation
pub trait Caller: Send + Sync + 'static {
    /// Ask the user to fill in a form.
    fn elicit(&self, request: Elicitation) -> BoxFuture<'_, Result<Elicited<Value>, AskError>> {
        let _ = request;
        Box::pin(async {
            Err(AskError::Unsupported {
                capability: "elicitation",
                detail: "this caller answers no questions for the user".into(),
            })
        })
    }

    /// Ask the caller's model for a completion.
    fn sample(&self, request: Sampling) -> BoxFuture<'_, Result<Sampled, AskError>> {
        let _ = request;
        Box::pin(async {
            Err(AskError::Unsupported {
                capability: "sampling",
                detail: "this caller has no model to ask".into(),
            })
        })
    }
}

/// A question for the user: a message, and the form to answer it in (a JSON Schema object of
/// primitive properties — strings, numbers, integers, booleans, enums and arrays of enum
/// values — with `default`s the client fills in, as MCP's elicitation allows).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct Elicitation {
    /// What the user is asked.
    pub message: String,
    /// The form's JSON Schema (`{"type": "object", "properties": {…}}`).
    pub schema: Value,
}

impl Elicitation {
    /// A question with the form `schema`.
    pub fn new(message: impl Into<String>, schema: Value) -> Self {
        Elicitation {
            message: message.into(),
            schema,
        }
    }

    /// `answer` with the form's `default`s filled in where the user left a field out (what a
    /// client does for the fields it did not show, SEP-1034). Not an object: unchanged.
    pub fn with_defaults(&self, mut answer: Value) -> Value {
        let (Some(fields), Some(properties)) = (
            answer.as_object_mut(),
            self.schema.get("properties").and_then(Value::as_object),
        ) else {
            return answer;
        };
        for (name, property) in properties {
            if let Some(default) = property.get("default")
                && !fields.contains_key(name)
            {
                fields.insert(name.clone(), default.clone());
            }
        }
        answer
    }

    /// A question whose form is `T`'s schema, flattened as MCP wants it (enums and other
    /// definitions in place): doc comments become descriptions, and `#[serde(default)]`s
    /// become `default`s where the field's type implements `Serialize` (schemars writes them
    /// only then).
    pub fn of<T: JsonSchema>(message: impl Into<String>) -> Self {
        let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
        let mut schema = generator.into_root_schema_for::<T>().to_value();
        if let Some(object) = schema.as_object_mut() {
            object.remove("$schema");
            object.remove("title");
        }
        inline_definitions(&mut schema);
        Elicitation::new(message, schema)
    }
}

/// The user's answer to an [`Elicitation`]. Stored (in a [`PausedRun`]) as
/// `{"action": "accept", "content": {…}}`, `{"action": "decline"}` or `{"action": "cancel"}`,
/// MCP's words.
///
/// [`PausedRun`]: crate::agent::PausedRun
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "action", content = "content")]
pub enum Elicited<T> {
    /// The user filled in the form.
    #[serde(rename = "accept")]
    Accepted(T),
    /// The user said no.
    #[serde(rename = "decline")]
    Declined,
    /// The user dismissed the question without deciding.
    #[serde(rename = "cancel")]
    Cancelled,
}

/// A request for a completion from the caller's model.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct Sampling {
    /// The conversation so far: `(role, text)` pairs, the role `"user"` or `"assistant"`.
    pub messages: Vec<(String, String)>,
    /// A system prompt, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// The most tokens to generate.
    pub max_tokens: u32,
}

impl Sampling {
    /// One user message, at most `max_tokens` tokens back.
    pub fn prompt(text: impl Into<String>, max_tokens: u32) -> Self {
        Sampling {
            messages: vec![("user".to_owned(), text.into())],
            system_prompt: None,
            max_tokens,
        }
    }

    /// With a system prompt.
    pub fn system(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }
}

/// The caller's model's answer to a [`Sampling`].
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct Sampled {
    /// What the model wrote.
    pub text: String,
    /// The model that wrote it, as the caller names it.
    pub model: String,
    /// Why it stopped (`"endTurn"`, `"maxTokens"`, …), when said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

impl Sampled {
    /// An answer `text` from `model`.
    pub fn new(text: impl Into<String>, model: impl Into<String>) -> Self {
        Sampled {
            text: text.into(),
            model: model.into(),
            stop_reason: None,
        }
    }
}

/// Why a question could not be asked or answered. A tool that returns it with `?` fails with
/// its message, which says what to do.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AskError {
    /// Nobody to ask: the call runs where no [`Caller`] was put into the context.
    #[error(
        "this tool asks its caller ({what}), and nobody can be asked here: serve it over MCP, run it in an agent built with `pause_at_approvals` (the run pauses at the question), or put an `Arc<dyn Caller>` into the call's context"
    )]
    NoCaller {
        /// `"elicitation"` or `"sampling"`.
        what: &'static str,
    },
    /// The caller does not offer it (an MCP client that did not declare the capability).
    #[error("the caller does not support {capability}: {detail}")]
    Unsupported {
        /// The capability, e.g. `"elicitation"`.
        capability: &'static str,
        /// What the caller said or lacks.
        detail: String,
    },
    /// The question was asked and failed (the connection dropped, the caller refused it).
    #[error("asking the caller ({what}) failed: {message}")]
    Failed {
        /// `"elicitation"` or `"sampling"`.
        what: &'static str,
        /// What went wrong.
        message: String,
    },
    /// The user's answer does not fit the form.
    #[error("the user's answer does not fit the form: {0}")]
    InvalidAnswer(String),
    /// The question is held: the agent run pauses at it
    /// ([`ReActAgentBuilder::pause_at_approvals`]), and the call runs again from its start with
    /// the answer when the run resumes. Nothing the tool does after this is kept.
    ///
    /// [`ReActAgentBuilder::pause_at_approvals`]: crate::agent::ReActAgentBuilder::pause_at_approvals
    #[error(
        "the run pauses for the answer to this question; the call runs again with it when the run resumes"
    )]
    Paused,
}

/// Ask the user a question from inside a tool: `#[ctx] ask: Elicitor`.
///
/// ```
/// use agent_toolkit::context::{Elicited, Elicitor};
/// use agent_toolkit::prelude::*;
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// /// How the user wants the report.
/// #[derive(Deserialize, JsonSchema)]
/// struct Choice {
///     /// Include the appendix?
///     #[serde(default)]
///     appendix: bool,
/// }
///
/// /// Write the report, asking how.
/// #[tool]
/// async fn report(#[ctx] ask: Elicitor) -> Result<String, ToolError> {
///     match ask.elicit::<Choice>("How should the report look?").await? {
///         Elicited::Accepted(choice) => Ok(format!("report, appendix: {}", choice.appendix)),
///         Elicited::Declined | Elicited::Cancelled => Ok("no report".into()),
///     }
/// }
/// ```
#[derive(Clone)]
pub struct Elicitor {
    caller: Option<Arc<dyn Caller>>,
}

impl Elicitor {
    /// Ask with `T`'s schema as the form, and read the answer as a `T`.
    pub async fn elicit<T: JsonSchema + DeserializeOwned>(
        &self,
        message: impl Into<String>,
    ) -> Result<Elicited<T>, AskError> {
        match self.ask(Elicitation::of::<T>(message)).await? {
            Elicited::Accepted(value) => serde_json::from_value(value)
                .map(Elicited::Accepted)
                .map_err(|e| AskError::InvalidAnswer(e.to_string())),
            Elicited::Declined => Ok(Elicited::Declined),
            Elicited::Cancelled => Ok(Elicited::Cancelled),
        }
    }

    /// Ask with a form of your own; the answer is the JSON object the user filled in.
    pub async fn ask(&self, request: Elicitation) -> Result<Elicited<Value>, AskError> {
        match &self.caller {
            Some(caller) => caller.elicit(request).await,
            None => Err(AskError::NoCaller {
                what: "elicitation",
            }),
        }
    }

    /// Whether anybody can be asked (the call runs where a [`Caller`] is set).
    pub fn is_connected(&self) -> bool {
        self.caller.is_some()
    }
}

/// Ask the caller's model from inside a tool: `#[ctx] sampler: Sampler`.
#[derive(Clone)]
pub struct Sampler {
    caller: Option<Arc<dyn Caller>>,
}

impl Sampler {
    /// Ask for a completion.
    pub async fn sample(&self, request: Sampling) -> Result<Sampled, AskError> {
        match &self.caller {
            Some(caller) => caller.sample(request).await,
            None => Err(AskError::NoCaller { what: "sampling" }),
        }
    }

    /// Whether anybody can be asked.
    pub fn is_connected(&self) -> bool {
        self.caller.is_some()
    }
}

/// Where a call's [`Caller`] comes from when its context names none, put into the context as an
/// `Arc<dyn CallerSource>`: a turn that holds its calls' questions (an agent run that pauses).
pub(crate) trait CallerSource: Send + Sync {
    /// The caller of the call `ctx` serves, if this source has one for it.
    fn caller_for(&self, ctx: &ToolContext) -> Option<Arc<dyn Caller>>;
}

/// Who a call asks: a [`Caller`] in its context; else the [`CallerSource`]'s for the call.
pub(crate) fn caller_of(ctx: &ToolContext) -> Option<Arc<dyn Caller>> {
    if let Some(caller) = ctx.get::<Arc<dyn Caller>>() {
        return Some((*caller).clone());
    }
    ctx.get::<Arc<dyn CallerSource>>()?.caller_for(ctx)
}

impl FromToolContext for Elicitor {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ContextRejection> {
        Ok(Elicitor {
            caller: caller_of(ctx),
        })
    }
}

impl FromToolContext for Sampler {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ContextRejection> {
        Ok(Sampler {
            caller: caller_of(ctx),
        })
    }
}

impl fmt::Debug for Elicitor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Elicitor")
            .field("connected", &self.is_connected())
            .finish()
    }
}

impl fmt::Debug for Sampler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sampler")
            .field("connected", &self.is_connected())
            .finish()
    }
}

/// A form is flat: the properties that refer to definitions (a Rust enum, a nested type) get
/// the definition in place, and `$defs` goes.
fn inline_definitions(schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    let defs = object.remove("$defs").and_then(|d| match d {
        Value::Object(map) => Some(map),
        _ => None,
    });
    let Some(defs) = defs else {
        return;
    };
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        for property in properties.values_mut() {
            resolve(property, &defs, 0);
        }
    }
}

fn resolve(schema: &mut Value, defs: &Map<String, Value>, depth: usize) {
    if depth > 8 {
        return;
    }
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    if let Some(Value::String(reference)) = object.get("$ref").cloned()
        && let Some(Value::Object(found)) = reference
            .strip_prefix("#/$defs/")
            .and_then(|name| defs.get(name))
    {
        object.remove("$ref");
        for (key, value) in found {
            object.entry(key.clone()).or_insert_with(|| value.clone());
        }
    }
    if let Some(items) = object.get_mut("items") {
        resolve(items, defs, depth + 1);
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};
    use serde_json::json;

    use super::*;

    /// (`Serialize` lets schemars write the defaults of fields of this type.)
    #[derive(Deserialize, Serialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    #[allow(dead_code)]
    enum Size {
        Small,
        Large,
    }

    /// An order.
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Order {
        /// How big.
        size: Size,
        /// Extras.
        #[serde(default)]
        extras: Vec<Size>,
        #[serde(default = "Order::count")]
        count: u8,
    }

    impl Order {
        fn count() -> u8 {
            2
        }
    }

    /// A typed form is flat (enums in place, no `$defs`), keeps its defaults, and an answer
    /// that leaves fields out gets them.
    #[test]
    fn typed_forms_are_flat_and_answers_get_their_defaults() {
        let form = Elicitation::of::<Order>("Order?");
        let schema = &form.schema;
        assert!(schema.get("$defs").is_none(), "{schema}");
        assert!(schema.get("$schema").is_none(), "{schema}");
        assert_eq!(
            schema["properties"]["size"]["enum"],
            json!(["small", "large"])
        );
        assert_eq!(
            schema["properties"]["extras"]["items"]["enum"],
            json!(["small", "large"])
        );
        assert_eq!(schema["properties"]["count"]["default"], json!(2));
        assert_eq!(schema["required"], json!(["size"]));

        let answer = form.with_defaults(json!({"size": "large"}));
        assert_eq!(answer, json!({"size": "large", "extras": [], "count": 2}));
        // A field the user gave is kept, even where a default exists.
        let answer = form.with_defaults(json!({"size": "small", "count": 7}));
        assert_eq!(answer["count"], 7);
    }
}
