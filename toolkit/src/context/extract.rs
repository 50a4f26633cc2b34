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
    /// The value is there but cannot be used (not merely absent): `Option<E>` reports it
    /// instead of reading it as `None`.
    invalid: bool,
}

impl ContextRejection {
    /// A rejection saying what is `missing` and how to fix it (`hint`, for the operator). An
    /// `Option<E>` parameter reads this rejection as `None`.
    pub fn new(missing: impl Into<String>, hint: impl Into<String>) -> Self {
        ContextRejection {
            missing: missing.into(),
            hint: hint.into(),
            invalid: false,
        }
    }

    /// A rejection of a value that is present but cannot be used (malformed, expired, of the
    /// wrong tenant…): `what` names it, `hint` says how to fix it. Unlike [`new`](Self::new)
    /// and [`missing`](Self::missing), an `Option<E>` parameter does not turn it into `None`:
    /// the call fails with it, so a present-but-invalid value is never taken for an absent one.
    pub fn invalid(what: impl Into<String>, hint: impl Into<String>) -> Self {
        ContextRejection {
            invalid: true,
            ..Self::new(what, hint)
        }
    }

    /// Whether this rejects a value that is present but unusable ([`invalid`](Self::invalid)),
    /// rather than one that is absent.
    pub fn is_invalid(&self) -> bool {
        self.invalid
    }

    /// A rejection for a missing value of type `T`.
    pub fn missing<T: ?Sized>() -> Self {
        ContextRejection {
            invalid: false,
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
    note = "built-in extractors: `Ctx<T>`, `ToolEmitter`, `CallInfo`, `AgentInfo`, `CancellationToken`, `ToolContext`, `Toolkit` (the calling view), `Elicitor` and `Sampler` (asking the caller), and `Option<E>` of any extractor"
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

/// `None` when the extractor finds its value absent; a value that is present but invalid
/// ([`ContextRejection::invalid`]) is still a rejection, reported like any other.
impl<E: FromToolContext> FromToolContext for Option<E> {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ContextRejection> {
        match E::from_tool_context(ctx) {
            Ok(value) => Ok(Some(value)),
            Err(rejection) if rejection.is_invalid() => Err(rejection),
            Err(_) => Ok(None),
        }
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
        ctx.call_info().cloned().ok_or_else(|| {
            ContextRejection::new(
                "CallInfo",
                "CallInfo exists only while the toolkit runs a call",
            )
        })
    }
}

#[cfg(test)]
mod option_tests {
    use super::{ContextRejection, FromToolContext};
    use crate::context::ToolContext;

    /// A tenant read from a header value, which may be absent or malformed.
    struct Tenant(String);
    struct Header(&'static str);

    impl FromToolContext for Tenant {
        fn from_tool_context(ctx: &ToolContext) -> Result<Self, ContextRejection> {
            let header = ctx
                .get::<Header>()
                .ok_or_else(ContextRejection::missing::<Header>)?;
            match header.0.strip_prefix("tenant=") {
                Some(t) => Ok(Tenant(t.to_string())),
                None => Err(ContextRejection::invalid(
                    "Tenant",
                    format!("the header `{}` does not name a tenant", header.0),
                )),
            }
        }
    }

    #[test]
    fn option_is_none_when_absent_and_a_rejection_when_invalid() {
        let absent = Option::<Tenant>::from_tool_context(&ToolContext::new());
        assert!(matches!(absent, Ok(None)));
        let good = ToolContext::new().with(Header("tenant=acme"));
        let read = Option::<Tenant>::from_tool_context(&good).unwrap();
        assert_eq!(read.map(|t| t.0).as_deref(), Some("acme"));
        let bad = ToolContext::new().with(Header("garbage"));
        let rejection = Option::<Tenant>::from_tool_context(&bad)
            .err()
            .expect("a present but invalid value is reported, not read as None");
        assert!(rejection.is_invalid());
        assert!(rejection.hint.contains("garbage"), "{}", rejection.hint);
    }
}
