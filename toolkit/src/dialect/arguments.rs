//! The way back: arguments a model sent for a dialect's schema, made acceptable to the
//! canonical schema.
//!
//! Only strict OpenAI needs it. Strict mode makes every optional property required and
//! nullable, so a model says "not given" with `null`. For an `Option<T>` that reads as
//! `None`, but for a field with a serde default (`#[serde(default)] limit: u32`) a `null`
//! fails to deserialize. Such nulls are removed, so the default applies.
//!
//! The walk follows the value through the canonical schema: object properties, array items,
//! `allOf` parts, and for an `anyOf`/`oneOf` (a Rust enum, whatever its serde tagging, or an
//! `Option`) the branch the value belongs to, found by [`branch_of`].

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::schema::instance::Schemas;

/// Removes, at every level the canonical schema describes, object members that are `null`,
/// not required and whose canonical schema does not accept `null`.
pub(super) fn strip_absent_nulls(canonical: &Value, arguments: &mut Value) {
    let schemas = Schemas::new(canonical);
    strip(canonical, arguments, &schemas, 0);
}

fn strip<'a>(schema: &'a Value, value: &mut Value, schemas: &Schemas<'a>, depth: usize) {
    let Some(schema) = schemas.walk(schema, depth) else {
        return;
    };
    // Branches are chosen before this level's nulls go: a strict-mode value's nulls are part
    // of what tells its variant apart from the others.
    let mut conjuncts: Vec<&Value> = Vec::new();
    for keyword in ["anyOf", "oneOf"] {
        if let Some(Value::Array(list)) = schema.get(keyword)
            && let Some(branch) = schemas.branch_of(list, value, depth)
        {
            conjuncts.push(branch);
        }
    }
    if let Some(Value::Array(parts)) = schema.get("allOf") {
        conjuncts.extend(parts);
    }
    // Keywords next to a `$ref` apply together with its target (schemars writes a newtype
    // variant of an internally tagged enum that way).
    conjuncts.extend(schemas.target(schema));
    match value {
        Value::Object(members) => strip_object(schema, members, schemas, depth),
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items").filter(|s| s.is_object()) {
                for item in items {
                    strip(item_schema, item, schemas, depth + 1);
                }
            }
        }
        _ => {}
    }
    for conjunct in conjuncts {
        strip(conjunct, value, schemas, depth + 1);
    }
}

fn strip_object<'a>(
    schema: &'a Map<String, Value>,
    members: &mut Map<String, Value>,
    schemas: &Schemas<'a>,
    depth: usize,
) {
    let properties = schema.get("properties").and_then(Value::as_object);
    let required: HashSet<&str> = match schema.get("required") {
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => HashSet::new(),
    };
    if let Some(properties) = properties {
        members.retain(|name, value| {
            let absent = value.is_null()
                && !required.contains(name.as_str())
                && properties
                    .get(name)
                    .is_some_and(|property| !schemas.accepts_null(property, depth + 1));
            !absent
        });
    }
    let additional = schema.get("additionalProperties").filter(|s| s.is_object());
    for (name, value) in members.iter_mut() {
        let property = properties.and_then(|p| p.get(name)).or(additional);
        if let Some(property) = property {
            strip(property, value, schemas, depth + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn canonical() -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "limit": {"type": "integer", "default": 10},
                "note": {"type": ["string", "null"]},
                "kind": {"anyOf": [{"$ref": "#/$defs/Kind"}, {"type": "null"}]},
                "billing": {"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}]},
                "items": {"type": "array", "items": {"$ref": "#/$defs/Address"}},
                "any": true
            },
            "required": ["name", "items"],
            "$defs": {
                "Kind": {"type": "string", "enum": ["a", "b"]},
                "Address": {
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "floor": {"type": "integer"}},
                    "required": ["street"]
                }
            }
        })
    }

    #[test]
    fn nulls_for_defaulted_parameters_are_removed_nullable_ones_kept() {
        let mut args = json!({
            "name": "x", "limit": null, "note": null, "kind": null, "any": null,
            "billing": {"street": "s", "floor": null},
            "items": [{"street": "a", "floor": null}, {"street": "b", "floor": 2}]
        });
        strip_absent_nulls(&canonical(), &mut args);
        assert_eq!(
            args,
            json!({
                "name": "x", "note": null, "kind": null, "any": null,
                "billing": {"street": "s"},
                "items": [{"street": "a"}, {"street": "b", "floor": 2}]
            })
        );
    }

    #[test]
    fn required_nulls_and_unknown_keys_are_left_for_validation() {
        let mut args = json!({"name": null, "extra": null, "items": null});
        strip_absent_nulls(&canonical(), &mut args);
        assert_eq!(args, json!({"name": null, "extra": null, "items": null}));
    }

    #[test]
    fn cyclic_refs_and_odd_schemas_terminate() {
        let schema = json!({"$ref": "#/$defs/A", "$defs": {"A": {"$ref": "#/$defs/A"}}});
        let mut args = json!({"a": null});
        strip_absent_nulls(&schema, &mut args);
        assert_eq!(args, json!({"a": null}));
        strip_absent_nulls(&json!(false), &mut args);
        strip_absent_nulls(&json!({"properties": 3, "required": "x"}), &mut args);
        assert_eq!(args, json!({"a": null}));
    }
}
