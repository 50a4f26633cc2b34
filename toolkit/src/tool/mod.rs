//! The tool contract: what a tool is, what it declares, what the model sends it and what comes
//! back.
//!
//! - A tool is an [`AgentTool`]: a [`ToolSpec`] (name, description, parameters, options) and a
//!   `call` that runs on resolved [`ToolArgs`]. `#[tool]` and `#[tools]` implement it;
//!   implement [`Tool`] for a typed hand-written tool, or `AgentTool` itself for a tool whose
//!   parameters are known only at run time (an imported or remote tool).
//! - What the model is shown is a [`ToolDefinition`]: the canonical JSON Schema of the visible
//!   parameters, made from the spec when the tool is registered (presets leave it, hidden
//!   parameters never enter it).
//! - The model sends a [`ToolCall`]; the toolkit answers each with exactly one [`ToolResult`],
//!   whose success is a [`ToolOutput`] (made from any [`IntoToolOutput`] return value), with
//!   any [`Attachment`]s (images, audio, documents) beside what the model reads.

mod agent_tool;
mod attachment;
mod call;
mod definition;
mod output;
pub(crate) mod result;
mod spec;
mod typed;

pub use crate::args::ToolArgs;
pub use crate::param::{ParamKind, ParamSpec};
pub use agent_tool::{AgentTool, ToolFuture};
pub use attachment::Attachment;
pub use call::ToolCall;
pub use definition::{ToolAnnotations, ToolDefinition};
pub use output::{Content, IntoToolOutput, Json, Suspension, ToolOutput};
pub use result::ToolResult;
pub use spec::{GroupInfo, ToolOptions, ToolSpec};
pub use typed::Tool;

/// A hand-written tool for the crate's own tests, like an imported one: it answers
/// `NAME:ARGUMENTS`.
#[cfg(test)]
pub(crate) struct Echo(pub(crate) &'static str);

#[cfg(test)]
impl AgentTool for Echo {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(self.0, "echo").with_input_schema(serde_json::json!({"type": "object"}))
    }

    fn call(&self, args: ToolArgs) -> ToolFuture {
        let text = format!("{}:{}", self.0, args.raw());
        Box::pin(async move { Ok(ToolOutput::text(text)) })
    }
}
