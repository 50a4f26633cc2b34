//! [`ToolError`]: why a tool call produced no output, told twice — once for the model (short,
//! no internals) and once for the operator (the source error, kept for tracing and hooks).

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// Declares [`ToolErrorKind`] with each variant's string form written once, next to it: the
/// enum, [`as_str`](ToolErrorKind::as_str) and [`FromStr`](std::str::FromStr) all come from
/// this one list.
macro_rules! tool_error_kinds {
    ($($(#[$doc:meta])* $kind:ident => $name:literal,)*) => {
        /// What kind of failure a [`ToolError`] is. Callers branch on this, never on message
        /// text.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ToolErrorKind {
            $($(#[$doc])* $kind,)*
        }

        impl ToolErrorKind {
            /// Every kind, in declaration order.
            pub const ALL: &'static [ToolErrorKind] = &[$(ToolErrorKind::$kind,)*];

            /// A stable snake_case name, used in tracing fields and wire formats; read back
            /// with [`str::parse`].
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ToolErrorKind::$kind => $name,)*
                }
            }
        }
    };
}

tool_error_kinds! {
    /// The model's arguments were not valid JSON, not an object, of the wrong type, missing a
    /// required parameter or carrying an unknown one. Never retried by the engine: the model
    /// gets the message and may correct itself.
    InvalidArguments => "invalid_arguments",
    /// No tool of that name is registered.
    UnknownTool => "unknown_tool",
    /// The tool exists but none of its groups is active in this scope.
    Unavailable => "unavailable",
    /// The model tried to set a hidden (preset or context) parameter.
    HiddenArgument => "hidden_argument",
    /// A `#[ctx]` parameter found no value in the call, agent or toolkit context.
    MissingContext => "missing_context",
    /// The tool did not finish within its deadline.
    Timeout => "timeout",
    /// The tool ran and reported a failure.
    Execution => "execution",
    /// The tool panicked; the panic was contained.
    Panicked => "panicked",
    /// The call was cancelled before the tool finished.
    Cancelled => "cancelled",
    /// A human or policy refused to run the call.
    Denied => "denied",
    /// A background job of a tool that is neither idempotent nor read-only was running when its
    /// worker died: it may or may not have taken effect, and it is not run again.
    OutcomeUnknown => "outcome_unknown",
    /// The call repeats one of the model's previous step and was not run again (the loop
    /// guard): the message gives the earlier result, or the earlier refusal.
    Repeated => "repeated",
}

impl serde::Serialize for ToolErrorKind {
    /// As its [`as_str`](ToolErrorKind::as_str) name.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for ToolErrorKind {
    /// From its [`as_str`](ToolErrorKind::as_str) name; a name this version does not know is
    /// an error.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

impl std::str::FromStr for ToolErrorKind {
    type Err = UnknownErrorKind;

    /// The kind named by [`as_str`](ToolErrorKind::as_str).
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        ToolErrorKind::ALL
            .iter()
            .copied()
            .find(|k| k.as_str() == name)
            .ok_or_else(|| UnknownErrorKind(name.to_owned()))
    }
}

/// A string that names no [`ToolErrorKind`] (from a newer peer, say).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a tool error kind this version knows")]
pub struct UnknownErrorKind(pub String);

impl fmt::Display for ToolErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The operator-side cause of a [`ToolError`].
pub type ErrorSource = Arc<dyn std::error::Error + Send + Sync + 'static>;

/// The error beneath another, kept whole: the library's error types hold their cause as a
/// `Cause` and return it from [`source`](std::error::Error::source), so a caller can walk the
/// chain and [`downcast_ref`](Self::downcast_ref) to the original (a `reqwest::Error`, an
/// `std::io::Error`, …). It shows as a message saying what failed (the original's own, or one
/// the library wrote to explain it). Cheap to clone; two causes are equal when their messages
/// are.
#[derive(Clone)]
pub struct Cause(Arc<CauseInner>);

struct CauseInner {
    message: String,
    error: Option<ErrorSource>,
}

impl Cause {
    /// Keep `error` as a cause, shown as its own message.
    pub fn new(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Cause::explained(error.to_string(), error)
    }

    /// Keep `error` as a cause, shown as `message` (which says more than the error's own).
    pub fn explained(
        message: impl Into<String>,
        error: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Cause(Arc::new(CauseInner {
            message: message.into(),
            error: Some(Arc::new(error)),
        }))
    }

    /// A cause known only by its message (a peer's text, a scripted failure).
    pub fn message(message: impl Into<String>) -> Self {
        Cause(Arc::new(CauseInner {
            message: message.into(),
            error: None,
        }))
    }

    /// The original error, if there is one and it is a `T`.
    pub fn downcast_ref<T: std::error::Error + 'static>(&self) -> Option<&T> {
        self.0.error.as_ref()?.downcast_ref::<T>()
    }

    /// Whether the message contains `text`.
    pub fn contains(&self, text: &str) -> bool {
        self.0.message.contains(text)
    }

    /// The original error, if there is one.
    pub(crate) fn error(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        self.0.error.as_deref()
    }

    /// The original error, or for a cause known only by its message, the cause itself: what an
    /// error type that hands out its cause's original returns as its source.
    pub(crate) fn original(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        match self.error() {
            Some(error) => error,
            None => self,
        }
    }
}

impl fmt::Debug for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0.error {
            Some(error) => fmt::Debug::fmt(&**error, f),
            None => fmt::Debug::fmt(&self.0.message, f),
        }
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl std::error::Error for Cause {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        let error: &(dyn std::error::Error + 'static) = &**self.0.error.as_ref()?;
        Some(error)
    }
}

impl PartialEq for Cause {
    fn eq(&self, other: &Cause) -> bool {
        self.to_string() == other.to_string()
    }
}

impl Eq for Cause {}

impl From<&str> for Cause {
    fn from(message: &str) -> Self {
        Cause::message(message)
    }
}

impl From<String> for Cause {
    fn from(message: String) -> Self {
        Cause::message(message)
    }
}

/// Why a tool call failed.
///
/// `ToolError` deliberately does **not** implement [`std::error::Error`]: like `anyhow::Error`,
/// it converts from every error type instead (`impl<E: Error> From<E> for ToolError`), so a
/// tool returning `Result<T, ToolError>` can use `?` on any error, and a tool returning
/// `Result<T, MyError>` works too. The conversion makes an [`Execution`](ToolErrorKind::Execution)
/// error whose model message is the error's `Display` text.
///
/// Cloning is cheap (the source is shared).
#[derive(Clone)]
pub struct ToolError {
    kind: ToolErrorKind,
    message: Cow<'static, str>,
    source: Option<Cause>,
    retryable: bool,
}

impl ToolError {
    /// An error of `kind` with a model-visible `message`.
    pub fn new(kind: ToolErrorKind, message: impl Into<Cow<'static, str>>) -> Self {
        ToolError {
            kind,
            message: message.into(),
            source: None,
            retryable: false,
        }
    }

    /// A failure reported by the tool itself.
    pub fn execution(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ToolErrorKind::Execution, message)
    }

    /// A transient failure reported by the tool: the engine may retry it.
    pub fn retryable(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ToolErrorKind::Execution, message).with_retryable(true)
    }

    /// The model's arguments were wrong; `message` says which and how.
    pub fn invalid_arguments(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ToolErrorKind::InvalidArguments, message)
    }

    crate::util::setters! {
        /// Attach the operator-side cause (not shown to the model).
        pub fn with_source(source: impl std::error::Error + Send + Sync + 'static)
            => source = Some(Cause::new(source));

        /// Attach an operator-side detail given as text (not shown to the model).
        pub fn with_detail(detail: impl Into<String>) => source = Some(Cause::message(detail));

        /// Mark whether the engine may retry this failure.
        pub fn with_retryable(retryable: bool) => retryable = retryable;
    }

    /// The same error with `tail` added to the model's message.
    pub(crate) fn append_message(mut self, tail: &str) -> Self {
        self.message.to_mut().push_str(tail);
        self
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ToolErrorKind {
        self.kind
    }

    /// The text the model sees.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The operator-side cause, if any. Never shown to the model.
    pub fn source(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        self.source.as_ref().map(Cause::original)
    }

    /// Whether the engine may retry this failure.
    pub fn is_retryable(&self) -> bool {
        self.retryable
    }
}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("ToolError");
        d.field("kind", &self.kind).field("message", &self.message);
        if let Some(source) = &self.source {
            d.field("source", &format_args!("{source}"));
        }
        d.field("retryable", &self.retryable).finish()
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)?;
        if let Some(source) = &self.source {
            write!(f, " ({source})")?;
        }
        Ok(())
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for ToolError {
    fn from(error: E) -> Self {
        ToolError::execution(error.to_string()).with_source(error)
    }
}

/// Conversion of a tool's error type into a [`ToolError`].
///
/// Implemented for [`ToolError`] and for every `std::error::Error + Send + Sync + 'static`
/// (an [`Execution`](ToolErrorKind::Execution) error whose model message is its `Display`).
/// For a plain message, return `Err(ToolError::execution("..."))`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be turned into a tool error",
    note = "a tool may return `Result<T, E>` where `E` is `ToolError` or implements `std::error::Error + Send + Sync + 'static`"
)]
pub trait IntoToolError {
    /// Convert.
    fn into_tool_error(self) -> ToolError;
}

impl<E: Into<ToolError>> IntoToolError for E {
    fn into_tool_error(self) -> ToolError {
        self.into()
    }
}

/// A configuration mistake found by [`ToolkitBuilder::build`](crate::toolkit::ToolkitBuilder::build).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A `#[preset]` parameter has no value bound with `.preset(..)`.
    #[error(
        "tool `{tool}`: the #[preset] parameter `{param}` ({ty}) is not bound; add `.preset(\"{param}\", value)` after registering it"
    )]
    UnboundPreset {
        /// Tool name.
        tool: String,
        /// Parameter name.
        param: String,
        /// Rust type of the parameter.
        ty: String,
    },
    /// Two tools have the same name.
    #[error(
        "two tools are named `{0}`; give one another name with `.register_as(\"other_name\", tool)`"
    )]
    DuplicateTool(String),
    /// A group was declared twice.
    #[error("the group `{0}` is declared twice")]
    DuplicateGroup(String),
    /// A tool names a group that was never declared.
    #[error(
        "tool `{tool}` is in group `{group}`, which is not declared; add `.group(\"{group}\", \"description\")` or `.inactive_group(..)` to the builder"
    )]
    UnknownGroup {
        /// Tool name.
        tool: String,
        /// The undeclared group.
        group: String,
    },
    /// `.preset` / `.default_arg` named a parameter the tool does not have.
    #[error(
        "{what}(\"{param}\", ..): no tool of this registration ({tools}) has a parameter `{param}`{hint}"
    )]
    UnknownParameter {
        /// `preset` or `default_arg`.
        what: &'static str,
        /// The parameter named.
        param: String,
        /// Tools of the registration.
        tools: String,
        /// Extra help (the parameters that exist).
        hint: String,
    },
    /// `.preset` / `.default_arg` targeted a parameter that cannot take a JSON value.
    #[error("{what}(\"{param}\", ..) on tool `{tool}`: {reason}")]
    InvalidBinding {
        /// `preset` or `default_arg`.
        what: &'static str,
        /// Tool name.
        tool: String,
        /// Parameter name.
        param: String,
        /// Why it is refused.
        reason: String,
    },
    /// A hand-written tool declares an input schema that does not compile, so its arguments
    /// could not be checked.
    #[error(
        "tool `{tool}`: the input schema is not a valid JSON Schema ({reason}); fix the schema the tool declares"
    )]
    InvalidInputSchema {
        /// Tool name.
        tool: String,
        /// What the schema compiler said.
        reason: String,
    },
    /// A registration option was used before any tool was registered.
    #[error(
        "{0}(..) was called before any `.register(..)`; it applies to the tools registered just before it"
    )]
    NothingRegistered(&'static str),
    /// An agent was asked to use its model's own tool search, which the model does not have.
    #[error(
        "the model `{model}` has no tool search of its own; use `ToolSearch::Auto` (its own where it has one, `search_tools` elsewhere) or `ToolSearch::Local`"
    )]
    NoNativeToolSearch {
        /// The model's name.
        model: String,
    },
    /// An agent was asked to run its model's programs on the provider's side
    /// (`CodeExecution::Hosted`) and the model has no code execution of its own.
    #[error(
        "the model `{model}` runs no programs on its provider's side; use `CodeExecution::Auto` (the provider's where it has one, the local sandbox elsewhere) or `CodeExecution::Local`"
    )]
    NoHostedCode {
        /// The model's name.
        model: String,
    },
    /// An unknown group was named at runtime.
    #[error("there is no tool group named `{name}`; groups: {known}")]
    NoSuchGroup {
        /// The name asked for.
        name: String,
        /// The groups that exist.
        known: String,
    },
}

/// Everything wrong with a builder, reported at once by
/// [`ToolkitBuilder::build`](crate::toolkit::ToolkitBuilder::build).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the toolkit configuration has {} error(s):\n{}", .errors.len(), list(.errors))]
pub struct BuildError {
    /// Every problem found.
    pub errors: Vec<ConfigError>,
}

fn list(errors: &[ConfigError]) -> String {
    errors
        .iter()
        .map(|e| format!("  - {e}"))
        .collect::<Vec<_>>()
        .join("\n")
}
