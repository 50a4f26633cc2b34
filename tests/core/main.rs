//! Integration tests of the core: macros, schemas, the Toolkit, the precedence rule, groups,
//! results and errors, bad input, and schema checks of tools that do not parse their own
//! arguments. One test binary, one module per concern. The schema checks (JSON Schema
//! validation, of generated schemas and of arguments) need the `validate` feature.

mod bad_input;
#[cfg(feature = "validate")]
mod calculator;
mod deferred;
mod fast_path;
mod fixtures;
mod groups;
mod macros;
mod precedence;
mod results;
#[cfg(feature = "validate")]
mod schemas;
mod toolkit;
mod typed;
#[cfg(feature = "validate")]
mod validation;

use agent_toolkit::prelude::*;

/// Run one call with an empty call context.
pub async fn call(toolkit: &Toolkit, name: &str, args: &str) -> ToolResult {
    toolkit
        .call(ToolCall::new("call-1", name, args), &ToolContext::new())
        .await
}

/// The error of a result that must have failed.
pub fn err(result: &ToolResult) -> &ToolError {
    result
        .error()
        .unwrap_or_else(|| panic!("expected an error, got {}", result.model_text()))
}

/// The text of a result that must have succeeded.
pub fn ok(result: &ToolResult) -> String {
    match &result.outcome {
        Ok(out) => out.as_text().to_string(),
        Err(e) => panic!("expected success, got {e:?}"),
    }
}
