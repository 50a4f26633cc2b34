//! [`FromToolContext`]: how a `#[ctx]` parameter is filled, and the built-in extractors.

use std::any::type_name;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use super::{CancellationToken, ToolContext};

/// Why a `#[ctx]` parameter could not be filled.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ContextRejection {
    /// What was missing, e.g. the type name.
    pub missing: String,
    /// How to fix it, for the operator.
    pub hint: String,
}

impl ContextRejection {
    /// A rejection saying what is `missing` and how to fix it (`hint`, for the operator).
    pub fn new(missing: impl Into<String>, hint: impl Into<String>) -> Self {
        ContextRejection {
            missing: missing.into(),
            hint: hint.into(),
        }
    }

    /// A rejection for a missing value of type `T`.
    pub fn missing<T: ?Sized>() -> Self {
        ContextRejection {
            missing: type_name::<T>().to_string(),
            hint: format!(
                "put a `{}` in the call context (`ToolContext::with`), the agent's context or the toolkit's (`ToolkitBuilder::context`)",
                type_name::<T>()
            ),
        }
    }
}

/// Build a value from the [`ToolContext`] of a call. Implement it for your own extractors.
///
/// ```
/// use agent_toolkit::{context::ContextRejection, FromToolContext, ToolContext};
///
/// struct TenantId(String);
/// struct Session { tenant: String }
///
/// impl FromToolContext for TenantId {
///     fn from_tool_context(ctx: &ToolContext) -> Result<Self, ContextRejection> {
///         ctx.get::<Session>()
///             .map(|s| TenantId(s.tenant.clone()))
///             .ok_or_else(ContextRejection::missing::<Session>)
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be injected into a tool as a `#[ctx]` parameter",
    label = "not a context extractor",
    note = "use `Ctx<{Self}>` to inject a value put into the context, or implement `FromToolContext` for `{Self}`",
    note = "built-in extractors: `Ctx<T>`, `ToolEmitter`, `CallInfo`, `AgentInfo`, `CancellationToken`, `ToolContext`, and `Option<E>` of any extractor"
)]
pub trait FromToolContext: Sized {
    /// Extract the value, or say what is missing.
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ContextRejection>;

    /// The types of the context values this extractor reads ([`ContextReads`]), for the checks
    /// that must know before a call runs: a durable background job carries only the
    /// toolkit-level values, so a call whose call- or agent-level context holds a value its tool
    /// reads is refused when submitted. The built-in extractors say what they read; an
    /// extractor of your own that reads values put in the context (as `TenantId` above reads a
    /// `Session`) should say so too. The default is [`ContextReads::Nothing`].
    fn context_reads() -> ContextReads {
        ContextReads::Nothing
    }
}

/// What an extractor reads from the [`ToolContext`] (see [`FromToolContext::context_reads`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContextReads {
    /// No value put in the context (the call's own information, its emitter, its token).
    Nothing,
    /// Values of these types.
    Types(Vec<std::any::TypeId>),
    /// Any value (the whole [`ToolContext`]).
    Anything,
}

impl ContextReads {
    /// The values of type `T`.
    pub fn of<T: 'static>() -> Self {
        ContextReads::Types(vec![std::any::TypeId::of::<T>()])
    }
}

/// A value of type `T` taken from the context, shared (no clone of `T`).
pub struct Ctx<T>(pub Arc<T>);

impl<T> Deref for Ctx<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> Clone for Ctx<T> {
    fn clone(&self) -> Self {
        Ctx(self.0.clone())
    }
}

impl<T: fmt::Debug> fmt::Debug for Ctx<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<T: Send + Sync + 'static> FromToolContext for Ctx<T> {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ContextRejection> {
        ctx.get::<T>()
            .map(Ctx)
            .ok_or_else(ContextRejection::missing::<T>)
    }

    fn context_reads() -> ContextReads {
        ContextReads::of::<T>()
    }
}

impl<E: FromToolContext> FromToolContext for Option<E> {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ContextRejection> {
        Ok(E::from_tool_context(ctx).ok())
    }

    fn context_reads() -> ContextReads {
        E::context_reads()
    }
}

impl FromToolContext for ToolContext {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ContextRejection> {
        Ok(ctx.clone())
    }

    fn context_reads() -> ContextReads {
        ContextReads::Anything
    }
}

impl FromToolContext for CancellationToken {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ContextRejection> {
        Ok(ctx.cancellation().cloned().unwrap_or_default())
    }
}

/// Which call a tool is serving.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallInfo {
    /// The call id the model gave.
    pub call_id: Arc<str>,
    /// The tool's registered name.
    pub tool_name: Arc<str>,
}

impl FromToolContext for CallInfo {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ContextRejection> {
        ctx.call_info().cloned().ok_or_else(|| ContextRejection {
            missing: "CallInfo".into(),
            hint: "CallInfo exists only while the toolkit runs a call".into(),
        })
    }
}
