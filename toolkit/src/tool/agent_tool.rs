//! [`AgentTool`]: the object-safe trait every registered tool implements.

use std::future::Future;
use std::pin::Pin;

use super::{ToolOutput, ToolSpec};
use crate::args::ToolArgs;
use crate::error::ToolError;

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
