//! The resolver's policies, set on the toolkit builder: what happens to a model value for a
//! hidden parameter ([`HiddenArgs`]), to an argument a tool does not declare
//! ([`UnknownArgs`]), how large an argument text may be, and whether quoted scalars are
//! coerced.

/// What happens when the model sends a value for a hidden (preset or context) parameter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HiddenArgs {
    /// Refuse the call with a model-visible [`HiddenArgument`](crate::error::ToolErrorKind::HiddenArgument)
    /// error. The default: a model must never be able to set a hidden value.
    #[default]
    Reject,
    /// Drop the value, log a `tracing` warning, and run with the bound value.
    Ignore,
}

/// What happens when the model sends an argument the tool does not declare.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UnknownArgs {
    /// Refuse the call with a model-visible error naming the unknown argument and the
    /// expected ones. The default: a hallucinated parameter usually means the model
    /// misunderstood the tool, and telling it is how it recovers.
    #[default]
    Reject,
    /// Drop unknown arguments silently.
    Ignore,
}

/// The resolver's policies, set on the toolkit builder.
#[derive(Clone, Copy, Debug)]
pub struct ArgPolicy {
    /// Model values for hidden parameters.
    pub hidden: HiddenArgs,
    /// Arguments the tool does not declare.
    pub unknown: UnknownArgs,
    /// Largest accepted argument text, in bytes (never more than `u32::MAX`).
    pub max_bytes: usize,
    /// Read a model's quoted integer, number or boolean as that value when its arguments
    /// failed and the schema asks for one unambiguously (see `ToolArgs::resolve_slots`).
    pub coerce: bool,
}

impl Default for ArgPolicy {
    fn default() -> Self {
        ArgPolicy {
            hidden: HiddenArgs::Reject,
            unknown: UnknownArgs::Reject,
            max_bytes: DEFAULT_MAX_ARGUMENT_BYTES,
            coerce: true,
        }
    }
}

/// Default limit on the size of one call's argument text: 4 MiB.
pub const DEFAULT_MAX_ARGUMENT_BYTES: usize = 4 << 20;
