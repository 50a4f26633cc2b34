//! Anthropic Messages API tools, non-strict.
//!
//! Without `strict`, Anthropic passes any draft 2020-12 keyword through as guidance, so the
//! canonical schema goes out almost verbatim. Optional properties stay optional: Anthropic's
//! strict budget counts unions, and "required but nullable" would only spend it for nothing.

use serde_json::{Value, json};

use crate::schema::walk::loose;
use crate::tool::ToolDefinition;

pub(super) fn parameters(canonical: &Value) -> Value {
    loose(canonical)
}

pub(super) fn render(def: &ToolDefinition, name: &str) -> Value {
    json!({
        "name": name,
        "description": def.description(),
        "input_schema": parameters(def.parameters()),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keeps_optionals_and_refs_and_drops_schema_uri() {
        let canonical = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "a": {"type": ["string", "null"]},
                "b": {"$ref": "#/$defs/B", "description": "b"},
                "c": {"oneOf": [{"const": "x"}, {"const": "y"}]}
            },
            "required": ["b"],
            "$defs": {"B": {"type": "integer", "default": 3}}
        });
        let out = parameters(&canonical);
        assert_eq!(
            out,
            json!({
                "type": "object",
                "properties": {
                    "a": {"type": ["string", "null"]},
                    "b": {"$ref": "#/$defs/B", "description": "b"},
                    "c": {"anyOf": [{"const": "x"}, {"const": "y"}]}
                },
                "required": ["b"],
                "$defs": {"B": {"type": "integer", "default": 3}}
            })
        );
    }

    #[test]
    fn render_shape() {
        let def = ToolDefinition::new("t", "does t", json!({"type": "object"}));
        assert_eq!(
            render(&def, "t_wire"),
            json!({"name": "t_wire", "description": "does t", "input_schema": {"type": "object"}})
        );
    }
}
