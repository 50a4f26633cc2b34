//! Between the toolkit's types and rmcp's MCP wire types, in both directions.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents, Tool};
use serde_json::{Map, Value, json};

use crate::dialect::Dialect;
use crate::error::{ToolError, ToolErrorKind};
use crate::tool::ToolDefinition;
use crate::tool::{Attachment, Content, ToolOptions, ToolOutput, ToolResult};
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
    // The text block, then one block per attachment (no empty text block before media).
    let attachments = output.attachments();
    let content = || {
        let text = output.as_text();
        let mut blocks = Vec::with_capacity(1 + attachments.len());
        if !text.is_empty() || attachments.is_empty() {
            blocks.push(ContentBlock::text(text));
        }
        blocks.extend(attachments.iter().map(attachment_block));
        blocks
    };
    match structured {
        Some(value) => {
            let mut answer = CallToolResult::success(content());
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
        None => CallToolResult::success(content()),
    }
}

/// An attachment as an MCP content block: `image`, `audio`, or an embedded `resource`.
fn attachment_block(attachment: &Attachment) -> ContentBlock {
    let with_type = |mut contents: ResourceContents, media: &str| {
        match &mut contents {
            ResourceContents::TextResourceContents { mime_type, .. }
            | ResourceContents::BlobResourceContents { mime_type, .. } => {
                *mime_type = Some(media.to_owned());
            }
            _ => {}
        }
        contents
    };
    match attachment {
        Attachment::Image { data, mime_type } => ContentBlock::image(data, mime_type),
        Attachment::Audio { data, mime_type } => ContentBlock::audio(data, mime_type),
        Attachment::Text {
            uri,
            mime_type,
            text,
        } => ContentBlock::resource(with_type(ResourceContents::text(text, uri), mime_type)),
        Attachment::Blob {
            uri,
            mime_type,
            data,
        } => ContentBlock::resource(with_type(ResourceContents::blob(data, uri), mime_type)),
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
/// errors, `structuredContent` becomes JSON output, anything else text. Images, audio and
/// embedded resources become the output's [`Attachment`]s, each described in the text
/// (`[image: image/png]`; a text resource's text is given whole); content of kinds this
/// library does not know is described as `[content]` and kept in the metadata under
/// `mcp_content`.
pub(super) fn tool_output(result: CallToolResult) -> Result<ToolOutput, ToolError> {
    let mut texts = Vec::new();
    let mut attachments = Vec::new();
    let mut unknown = Vec::new();
    for block in &result.content {
        let attachment = match block {
            ContentBlock::Text(t) => {
                texts.push(t.text.clone());
                continue;
            }
            ContentBlock::Image(i) => Attachment::Image {
                data: i.data.clone(),
                mime_type: i.mime_type.clone(),
            },
            ContentBlock::Audio(a) => Attachment::Audio {
                data: a.data.clone(),
                mime_type: a.mime_type.clone(),
            },
            ContentBlock::ResourceLink(r) => {
                texts.push(format!("[resource: {}]", r.uri));
                continue;
            }
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::TextResourceContents {
                    uri,
                    mime_type,
                    text,
                    ..
                } => {
                    // The model reads the document itself.
                    texts.push(text.clone());
                    attachments.push(Attachment::Text {
                        uri: uri.clone(),
                        mime_type: mime_type.clone().unwrap_or_else(|| "text/plain".into()),
                        text: text.clone(),
                    });
                    continue;
                }
                ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => Attachment::Blob {
                    uri: uri.clone(),
                    mime_type: mime_type
                        .clone()
                        .unwrap_or_else(|| "application/octet-stream".into()),
                    data: blob.clone(),
                },
                _ => {
                    texts.push("[resource]".into());
                    unknown.push(block);
                    continue;
                }
            },
            _ => {
                texts.push("[content]".into());
                unknown.push(block);
                continue;
            }
        };
        texts.push(attachment.describe());
        attachments.push(attachment);
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
    for attachment in attachments {
        output = output.with_attachment(attachment);
    }
    if !unknown.is_empty() {
        let blocks: Vec<Value> = unknown
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

    /// Served: the text block, then one block per attachment; imported back: the same
    /// attachments, each described in the text the model reads.
    #[test]
    fn attachments_become_content_blocks_and_back() {
        let output = ToolOutput::text("see attached")
            .with_attachment(Attachment::image([1u8, 2, 3], "image/png"))
            .with_attachment(Attachment::audio([4u8], "audio/wav"))
            .with_attachment(Attachment::text("test://doc", "text/markdown", "# Doc"))
            .with_attachment(Attachment::blob("test://bin", "application/pdf", [5u8]));
        let served = call_result(&result(Ok(output.clone())), || false);
        assert_eq!(
            serde_json::to_value(&served.content).unwrap(),
            json!([
                {"type": "text", "text": "see attached"},
                {"type": "image", "data": "AQID", "mimeType": "image/png"},
                {"type": "audio", "data": "BA==", "mimeType": "audio/wav"},
                {"type": "resource", "resource":
                    {"uri": "test://doc", "mimeType": "text/markdown", "text": "# Doc"}},
                {"type": "resource", "resource":
                    {"uri": "test://bin", "mimeType": "application/pdf", "blob": "BQ=="}}
            ])
        );
        let imported = tool_output(served).unwrap();
        assert_eq!(imported.attachments(), output.attachments());
        assert_eq!(
            imported.as_text(),
            "see attached\n[image: image/png]\n[audio: audio/wav]\n# Doc\n\
             [resource: test://bin (application/pdf)]"
        );
        assert!(imported.metadata.get("mcp_content").is_none());

        // Media alone: no empty text block before it.
        let alone = ToolOutput::text("").with_attachment(Attachment::image([1u8], "image/png"));
        let served = call_result(&result(Ok(alone)), || false);
        assert_eq!(served.content.len(), 1);
        assert_eq!(
            serde_json::to_value(&served.content[0]).unwrap()["type"],
            "image"
        );
    }
}
