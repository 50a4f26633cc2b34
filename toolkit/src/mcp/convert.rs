//! Between the toolkit's types and rmcp's MCP wire types, in both directions.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents, Tool};
use serde_json::{Map, Value, json};

use crate::dialect::Dialect;
use crate::error::{ToolError, ToolErrorKind};
use crate::tool::ToolDefinition;
use crate::tool::{Content, ToolOptions, ToolOutput, ToolResult};
use crate::toolkit::Toolkit;
use crate::util::{json_kind, prefix};

/// The dialect of every input schema the toolkit lists (what schemars generates, and MCP's
/// default); named in `tools/list` so that no client has to assume it (SEP-1613).
const SCHEMA_DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// The tools active in `toolkit`, as `tools/list` entries, in registration order, each input
/// schema naming its dialect (`$schema`) unless it names one already.
pub(super) fn listed_tools(toolkit: &Toolkit) -> Vec<Tool> {
    toolkit
        .definitions_for(Dialect::Mcp)
        .into_iter()
        .map(|mut entry| {
            if let Some(Value::Object(schema)) = entry.get_mut("inputSchema") {
                schema
                    .entry("$schema")
                    .or_insert_with(|| json!(SCHEMA_DIALECT));
            }
            entry
        })
        .filter_map(|entry| match serde_json::from_value::<Tool>(entry) {
            Ok(tool) => Some(tool),
            Err(e) => {
                // The MCP dialect always renders an object root, so this means a bug here.
                tracing::error!(error = %e, "a tool definition could not be listed over MCP");
                None
            }
        })
        .collect()
}

/// Whether `tools/list` declares an `outputSchema` for this tool (the MCP dialect lists only
/// object-rooted output schemas, which revision 2025-11-25 requires).
pub(super) fn declares_output(definition: &ToolDefinition) -> bool {
    definition
        .output_schema()
        .is_some_and(|s| s.get("type") == Some(&json!("object")))
}

/// The `tools/call` answer for one result: output as text (plus `structuredContent` for JSON
/// objects), errors as `isError: true` with the model-visible message.
pub(super) fn call_result(
    result: &ToolResult,
    declares_output: impl FnOnce() -> bool,
) -> CallToolResult {
    let output = match &result.outcome {
        Ok(output) => output,
        Err(error) => return error_result(error.message()),
    };
    let structured = match &output.content {
        Content::Json(raw) => match serde_json::from_str::<Value>(raw.get()) {
            Ok(value @ Value::Object(_)) => Some(value),
            _ => None,
        },
        Content::Text(_) => None,
    };
    match structured {
        Some(value) => {
            let mut answer = CallToolResult::success(vec![ContentBlock::text(output.as_text())]);
            answer.structured_content = Some(value);
            answer
        }
        // The client validates `structuredContent` against the declared schema and refuses a
        // success without it; say plainly why there is none instead.
        None if declares_output() => error_result(&format!(
            "the tool `{}` produced output that is not the JSON object its output schema declares (for example because it was longer than the server's output limit): {}",
            result.name,
            prefix(output.as_text(), 200)
        )),
        None => CallToolResult::success(vec![ContentBlock::text(output.as_text())]),
    }
}

/// The answer to a request cancelled before its tool started (rmcp does not send it: the
/// client stopped waiting).
pub(super) fn cancelled_result() -> CallToolResult {
    error_result("the call was cancelled before the tool started")
}

fn error_result(message: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// Toolkit options from an imported tool's annotations. MCP's defaults differ from the
/// toolkit's: a tool that says nothing may be destructive.
pub(super) fn options_from(tool: &Tool) -> ToolOptions {
    let hints = tool.annotations.clone().unwrap_or_default();
    let read_only = hints.read_only_hint.unwrap_or(false);
    let mut options = ToolOptions::default();
    options.annotations.read_only = read_only;
    options.annotations.idempotent = hints.is_idempotent();
    options.annotations.destructive = !read_only && hints.is_destructive();
    options
}

/// What an imported tool's answer means for the model: `isError` results become execution
/// errors, `structuredContent` becomes JSON output, anything else text. Content the model
/// cannot read as text (images, audio, embedded binaries) is described in the text and kept
/// whole in the output's metadata under `mcp_content`.
pub(super) fn tool_output(result: CallToolResult) -> Result<ToolOutput, ToolError> {
    let mut texts = Vec::new();
    let mut other = Vec::new();
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => texts.push(t.text.clone()),
            ContentBlock::Image(i) => {
                texts.push(format!("[image: {}]", i.mime_type));
                other.push(block);
            }
            ContentBlock::Audio(a) => {
                texts.push(format!("[audio: {}]", a.mime_type));
                other.push(block);
            }
            ContentBlock::ResourceLink(r) => texts.push(format!("[resource: {}]", r.uri)),
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::TextResourceContents { text, .. } => texts.push(text.clone()),
                ResourceContents::BlobResourceContents { uri, .. } => {
                    texts.push(format!("[resource: {uri}]"));
                    other.push(block);
                }
                _ => texts.push("[resource]".into()),
            },
            _ => {
                texts.push("[content]".into());
                other.push(block);
            }
        }
    }
    let text = texts.join("\n");
    if result.is_error == Some(true) {
        let message = match (&result.structured_content, text.is_empty()) {
            (_, false) => text,
            (Some(value), true) => value.to_string(),
            (None, true) => "the tool failed without saying why".to_string(),
        };
        return Err(ToolError::new(ToolErrorKind::Execution, message));
    }
    let mut output = match result.structured_content {
        Some(value) => ToolOutput::json(&value)?,
        None => ToolOutput::text(text),
    };
    if !other.is_empty() {
        let blocks: Vec<Value> = other
            .iter()
            .filter_map(|b| serde_json::to_value(b).ok())
            .collect();
        output = output.with_metadata("mcp_content", Value::Array(blocks));
    }
    Ok(output)
}

/// The JSON object of arguments sent to an imported tool.
pub(super) fn arguments_object(raw: &str) -> Result<Option<Map<String, Value>>, String> {
    if raw.trim().is_empty() {
        return Ok(None);
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(map)) => Ok(Some(map)),
        Ok(Value::Null) => Ok(None),
        Ok(other) => Err(json_kind(&other).to_string()),
        Err(e) => Err(format!("text that is not JSON ({e})")),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn result(outcome: Result<ToolOutput, ToolError>) -> ToolResult {
        ToolResult::new(Arc::from("1"), "t", outcome, 1)
    }

    #[test]
    fn json_objects_are_structured_and_errors_flagged() {
        let ok = call_result(&result(ToolOutput::json(&json!({"n": 1}))), || true);
        assert_eq!(ok.structured_content, Some(json!({"n": 1})));
        assert_eq!(ok.is_error, Some(false));
        let text = call_result(&result(Ok(ToolOutput::text("hi"))), || false);
        assert_eq!(text.structured_content, None);
        let missing = call_result(&result(Ok(ToolOutput::text("cut"))), || true);
        assert_eq!(missing.is_error, Some(true));
        let failed = call_result(&result(Err(ToolError::execution("boom"))), || true);
        assert_eq!(failed.is_error, Some(true));
        assert_eq!(
            serde_json::to_value(&failed.content).unwrap(),
            json!([{"type": "text", "text": "boom"}])
        );
    }

    #[test]
    fn imported_results_map_to_outputs_and_errors() {
        let mut structured = CallToolResult::success(vec![ContentBlock::text("{\"a\":1}")]);
        structured.structured_content = Some(json!({"a": 1}));
        let out = tool_output(structured).unwrap();
        assert_eq!(out.as_text(), "{\"a\":1}");
        assert!(out.structured().is_some());
        let err = tool_output(CallToolResult::error(vec![ContentBlock::text("no")])).unwrap_err();
        assert_eq!(err.message(), "no");
        assert_eq!(
            arguments_object("[1]").unwrap_err(),
            "an array",
            "arguments must be an object"
        );
        assert_eq!(arguments_object("").unwrap(), None);
    }
}
