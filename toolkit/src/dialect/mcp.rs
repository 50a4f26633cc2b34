//! MCP `tools/list` entries.
//!
//! MCP serves the canonical schema itself (it is JSON Schema 2020-12, MCP's default
//! dialect); the only guarantee added is the object root the specification requires.

use serde_json::{Map, Value, json};

use crate::schema::walk::object_root;
use crate::tool::ToolDefinition;

pub(super) fn parameters(canonical: &Value) -> Value {
    Value::Object(object_root(canonical))
}

pub(super) fn render(def: &ToolDefinition, name: &str) -> Value {
    let mut tool = Map::new();
    tool.insert("name".to_owned(), json!(name));
    tool.insert("description".to_owned(), json!(def.description()));
    tool.insert("inputSchema".to_owned(), parameters(def.parameters()));
    // Revision 2025-11-25 requires an object root for `outputSchema` and `structuredContent`
    // (2026-07-28 relaxes it). A tool returning, say, a bare array still works: clients
    // then rely on the text content, so omitting the schema beats sending an invalid one.
    if let Some(output) = def.output_schema()
        && output.get("type") == Some(&json!("object"))
    {
        tool.insert("outputSchema".to_owned(), output.clone());
    }
    // The hints are always sent: MCP's defaults (`destructiveHint: true`) differ from the
    // toolkit's (`destructive: false`), so leaving them out would change their meaning.
    let hints = def.annotations();
    let mut annotations = Map::new();
    if let Some(title) = &hints.title {
        annotations.insert("title".to_owned(), json!(title));
    }
    annotations.insert("readOnlyHint".to_owned(), json!(hints.read_only));
    annotations.insert("destructiveHint".to_owned(), json!(hints.destructive));
    annotations.insert("idempotentHint".to_owned(), json!(hints.idempotent));
    tool.insert("annotations".to_owned(), Value::Object(annotations));
    Value::Object(tool)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tool::ToolAnnotations;

    #[test]
    fn canonical_is_kept_and_root_forced_to_object() {
        let canonical = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "properties": {"a": {"oneOf": [{"const": 1}, {"const": 2}]}}
        });
        let mut expected = canonical.clone();
        expected["type"] = json!("object");
        assert_eq!(parameters(&canonical), expected);
        assert_eq!(parameters(&json!(true)), json!({"type": "object"}));
        assert_eq!(
            parameters(&json!({"type": "string"})),
            json!({"type": "object"})
        );
    }

    #[test]
    fn render_with_output_schema_and_annotations() {
        let def = ToolDefinition::new("t", "d", json!({"type": "object", "properties": {}}))
            .with_output_schema(json!({"type": "object", "properties": {"n": {"type": "integer"}}}))
            .with_annotations(ToolAnnotations {
                title: Some("T".into()),
                read_only: true,
                idempotent: true,
                destructive: false,
            });
        assert_eq!(
            render(&def, "t"),
            json!({
                "name": "t",
                "description": "d",
                "inputSchema": {"type": "object", "properties": {}},
                "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}},
                "annotations": {
                    "title": "T",
                    "readOnlyHint": true,
                    "destructiveHint": false,
                    "idempotentHint": true
                }
            })
        );
    }

    #[test]
    fn non_object_output_schema_is_omitted() {
        let def = ToolDefinition::new("t", "d", json!({"type": "object"}))
            .with_output_schema(json!({"type": "array", "items": {"type": "string"}}));
        let tool = render(&def, "t");
        assert!(tool.get("outputSchema").is_none());
        assert_eq!(
            tool["annotations"],
            json!({"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false})
        );
    }
}
