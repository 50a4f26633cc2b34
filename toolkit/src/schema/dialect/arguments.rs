//! The way back: arguments a model sent for a dialect's schema, made acceptable to the
//! canonical schema.
//!
//! Only strict OpenAI needs it. Strict mode makes every optional property required and
//! nullable, so a model says "not given" with `null`. For an `Option<T>` that reads as
//! `None`, but for a parameter with a serde default (`#[serde(default)] limit: u32`) a
//! `null` fails to deserialize. Such nulls are removed, so the default applies.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::{MAX_DEPTH, Refs};

/// Most `$ref` hops followed to reach a schema; chains longer than this are cycles.
const MAX_HOPS: usize = 32;

/// Removes, at every level the canonical schema describes, object members that are `null`,
/// not required and whose canonical schema does not accept `null`.
pub(super) fn strip_absent_nulls(canonical: &Value, arguments: &mut Value) {
    let refs = Refs::new(canonical);
    strip(canonical, arguments, &refs, 0);
}

fn strip(schema: &Value, value: &mut Value, refs: &Refs<'_>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let Some(schema) = resolve(schema, refs).as_object() else {
        return;
    };
    match value {
        Value::Object(members) => strip_object(schema, members, refs, depth),
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items").filter(|s| s.is_object()) {
                for item in items {
                    strip(item_schema, item, refs, depth + 1);
                }
            }
        }
        _ => {}
    }
    // `Option<Struct>` is `anyOf: [Struct, null]`: the object can only match the non-null
    // branch. With several candidate branches the matching one is unknown; leave it alone.
    for keyword in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(keyword) {
            let mut candidates = branches.iter().filter(|b| !is_null_only(b, refs));
            if let (Some(branch), None) = (candidates.next(), candidates.next()) {
                strip(branch, value, refs, depth + 1);
            }
        }
    }
    if let Some(Value::Array(parts)) = schema.get("allOf") {
        for part in parts {
            strip(part, value, refs, depth + 1);
        }
    }
}

fn strip_object(
    schema: &Map<String, Value>,
    members: &mut Map<String, Value>,
    refs: &Refs<'_>,
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
                    .is_some_and(|property| !accepts_null(property, refs, depth));
            !absent
        });
    }
    let additional = schema.get("additionalProperties").filter(|s| s.is_object());
    for (name, value) in members.iter_mut() {
        let property = properties.and_then(|p| p.get(name)).or(additional);
        if let Some(property) = property {
            strip(property, value, refs, depth + 1);
        }
    }
}

/// The schema a `$ref` chain ends at; siblings of `$ref` are annotations in generated
/// schemas and are ignored here.
fn resolve<'a>(mut schema: &'a Value, refs: &Refs<'a>) -> &'a Value {
    for _ in 0..MAX_HOPS {
        match schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| refs.resolve(r))
        {
            Some(target) => schema = target,
            None => break,
        }
    }
    schema
}

/// Whether `null` is visibly valid for the schema: unconstrained, a `null` type, enum
/// member or const, or a union with such a branch.
fn accepts_null(schema: &Value, refs: &Refs<'_>, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return true;
    }
    let schema = resolve(schema, refs);
    let Some(map) = schema.as_object() else {
        return schema == &Value::Bool(true);
    };
    let typed = match map.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
        Some(_) => false,
        None => true,
    };
    let enumerated = match (map.get("enum"), map.get("const")) {
        (Some(Value::Array(values)), _) => values.contains(&Value::Null),
        (_, Some(value)) => value.is_null(),
        _ => true,
    };
    let branched = ["anyOf", "oneOf"]
        .iter()
        .all(|keyword| match map.get(*keyword) {
            Some(Value::Array(branches)) => {
                branches.iter().any(|b| accepts_null(b, refs, depth + 1))
            }
            _ => true,
        });
    let conjoined = match map.get("allOf") {
        Some(Value::Array(parts)) => parts.iter().all(|p| accepts_null(p, refs, depth + 1)),
        _ => true,
    };
    typed && enumerated && branched && conjoined
}

fn is_null_only(schema: &Value, refs: &Refs<'_>) -> bool {
    match resolve(schema, refs).get("type") {
        Some(Value::String(t)) => t == "null",
        _ => false,
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
