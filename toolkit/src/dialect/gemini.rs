//! Gemini function declarations with `parameters`, the "select subset of OpenAPI 3.0".
//!
//! Gemini answers any field outside its `Schema` message with HTTP 400 ("Unknown name"), so
//! this pass rewrites what it can (`$ref` inlined, `const` to `enum`, type arrays to
//! `nullable`, `oneOf` to `anyOf`, `allOf` merged) and then keeps only the fields Gemini
//! lists. What cannot be expressed (maps, recursion, exclusive bounds) is loosened, never
//! tightened: the canonical schema still validates the arguments that come back.

use serde_json::{Map, Value, json};

use crate::schema::integers;
use crate::schema::walk::{
    MAX_DEPTH, Refs, Unexpandable, append_description, flatten_all_of, into_map, merge_into,
    object_root, one_of_to_any_of, subschemas_mut,
};
use crate::tool::ToolDefinition;

/// How many times one definition may be unrolled inside itself before the rest of a
/// recursive structure is replaced by a plain object. Two levels let a model build a small
/// tree; each level multiplies the schema size.
const RECURSION_DEPTH: usize = 2;

/// The fields of Gemini's `Schema` message that this pass emits.
const ALLOWED: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

/// The only string formats the Gemini Developer API accepts.
const FORMATS: &[&str] = &["enum", "date-time"];

pub(super) fn parameters(canonical: &Value) -> Value {
    let mut root = Value::Object(object_root(canonical));
    let mut refs = Refs::new(canonical);
    geminify(&mut root, &mut refs, 0);
    if let Value::Object(map) = &mut root {
        // Merging a root `allOf`/`$ref` may have replaced the type; the root must be OBJECT.
        map.insert("type".to_owned(), json!("object"));
        map.remove("nullable");
    }
    root
}

pub(super) fn render(def: &ToolDefinition, name: &str) -> Value {
    let mut declaration = Map::new();
    declaration.insert("name".to_owned(), json!(name));
    declaration.insert("description".to_owned(), json!(def.description()));
    let parameters = parameters(def.parameters());
    // Gemini rejects an OBJECT whose `properties` is empty; a tool without parameters is
    // declared without `parameters` instead.
    let has_properties = parameters
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|properties| !properties.is_empty());
    if has_properties {
        declaration.insert("parameters".to_owned(), parameters);
    }
    Value::Object(declaration)
}

fn geminify(node: &mut Value, refs: &mut Refs<'_>, depth: usize) {
    if depth > MAX_DEPTH {
        *node = json!({"type": "object", "description": "(nesting too deep; omitted)"});
        return;
    }
    if !node.is_object() {
        // `true`/`false` schemas have no OpenAPI form; an unconstrained schema is closest.
        *node = json!({});
    }
    let Value::Object(map) = node else {
        return;
    };
    let mark = refs.mark();
    loop {
        if let Some(reference) = map.remove("$ref") {
            let reference = reference.as_str().unwrap_or_default().to_owned();
            match refs.enter(&reference, RECURSION_DEPTH) {
                Ok(target) => merge_into(map, into_map(target.clone())),
                Err(Unexpandable::Recursive) => cut_recursion(map, refs, &reference),
                Err(Unexpandable::Dangling) => {}
            }
            continue;
        }
        if flatten_all_of(map, refs, RECURSION_DEPTH) {
            continue;
        }
        one_of_to_any_of(map);
        if collapse_null_branches(map) {
            continue;
        }
        break;
    }
    rewrite_keywords(map);
    for (_, child) in subschemas_mut(map) {
        geminify(child, refs, depth + 1);
    }
    merge_enum_branches(map);
    refs.truncate(mark);
}

/// `anyOf` of single string values (how documented enum variants are generated) becomes one
/// string `enum`, the form Gemini handles best; variant descriptions move to the parent's.
fn merge_enum_branches(map: &mut Map<String, Value>) {
    let Some(Value::Array(branches)) = map.get("anyOf") else {
        return;
    };
    let mut values = Vec::new();
    let mut notes = Vec::new();
    for branch in branches {
        let Some(branch) = branch.as_object() else {
            return;
        };
        let simple = branch.get("type") == Some(&json!("string"))
            && branch
                .keys()
                .all(|key| matches!(key.as_str(), "type" | "enum" | "description" | "title"));
        let Some(Value::Array(branch_values)) = branch.get("enum").filter(|_| simple) else {
            return;
        };
        if let Some(Value::String(text)) = branch.get("description") {
            let names: Vec<&str> = branch_values.iter().filter_map(Value::as_str).collect();
            let text = text.trim_end_matches('.');
            notes.push(format!("{}: {text}", names.join("/")));
        }
        values.extend(branch_values.iter().cloned());
    }
    map.remove("anyOf");
    map.insert("type".to_owned(), json!("string"));
    map.insert("enum".to_owned(), Value::Array(values));
    if !notes.is_empty() {
        append_description(map, &format!("({})", notes.join("; ")));
    }
}

/// Replaces a reference that would recurse once more by a plain object, keeping whatever
/// description the reference or its target had so the model still knows what goes there.
fn cut_recursion(map: &mut Map<String, Value>, refs: &Refs<'_>, reference: &str) {
    let description = map.get("description").cloned().or_else(|| {
        refs.resolve(reference)
            .and_then(|target| target.get("description"))
            .cloned()
    });
    map.clear();
    map.insert("type".to_owned(), json!("object"));
    if let Some(description) = description {
        map.insert("description".to_owned(), description);
    }
    append_description(map, "(deeper nesting omitted)");
}

/// `anyOf: [X, {"type": "null"}]` becomes `X` with `nullable: true`; with several non-null
/// branches the null branch still becomes `nullable`. Returns whether a branch was merged
/// into the schema, which then needs another round (the branch may be a `$ref`).
fn collapse_null_branches(map: &mut Map<String, Value>) -> bool {
    let Some(Value::Array(branches)) = map.get_mut("anyOf") else {
        return false;
    };
    let before = branches.len();
    branches.retain(|branch| !is_null_schema(branch));
    if branches.len() != before {
        map.insert("nullable".to_owned(), json!(true));
    }
    let single = match map.get_mut("anyOf") {
        Some(Value::Array(branches)) if branches.len() == 1 => branches.pop(),
        _ => None,
    };
    match single {
        Some(branch) => {
            map.remove("anyOf");
            merge_into(map, into_map(branch));
            true
        }
        None => false,
    }
}

fn is_null_schema(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(types)) => types.iter().all(|t| t == "null"),
        _ => false,
    }
}

/// Rewrites one schema's own keywords into Gemini's vocabulary and drops the rest. An
/// integer `format` (dropped below) is first turned into the `minimum`/`maximum` Gemini keeps.
fn rewrite_keywords(map: &mut Map<String, Value>) {
    integers::bound(map);
    if let Some(value) = map.remove("const")
        && !map.contains_key("enum")
    {
        map.insert("enum".to_owned(), json!([value]));
    }
    if let Some(Value::Array(examples)) = map.remove("examples")
        && let Some(first) = examples.into_iter().next()
    {
        map.entry("example").or_insert(first);
    }
    let is_map = matches!(map.get("additionalProperties"), Some(v) if v != &json!(false));
    let has_properties = map
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|properties| !properties.is_empty());
    if is_map && !has_properties {
        append_description(map, "(an object with arbitrary keys)");
    }
    split_type_array(map);
    stringify_enum(map);
    if let Some(format) = map.get("format")
        && !FORMATS.iter().any(|allowed| format == allowed)
    {
        map.remove("format");
    }
    if !matches!(map.get("items"), None | Some(Value::Object(_))) {
        // `items: false` (closed tuple) or the draft-7 tuple array: no single item schema.
        map.remove("items");
    }
    restrict_required(map);
    if map.get("nullable") == Some(&json!(false)) {
        map.remove("nullable");
    }
    map.retain(|key, _| ALLOWED.contains(&key.as_str()));
}

/// `type: ["T", "null"]` becomes `type: "T", nullable: true`; several non-null types become
/// an `anyOf` of single types, since Gemini's `type` is not repeated.
fn split_type_array(map: &mut Map<String, Value>) {
    let Some(Value::Array(types)) = map.get("type") else {
        return;
    };
    let mut types: Vec<Value> = types.clone();
    let before = types.len();
    types.retain(|t| t != "null");
    if types.len() != before {
        map.insert("nullable".to_owned(), json!(true));
    }
    match types.len() {
        0 => {
            map.insert("type".to_owned(), json!("null"));
        }
        1 => {
            map.insert("type".to_owned(), types.remove(0));
        }
        _ => {
            map.remove("type");
            if !map.contains_key("anyOf") {
                let branches = types.into_iter().map(|t| json!({"type": t})).collect();
                map.insert("anyOf".to_owned(), Value::Array(branches));
            }
        }
    }
}

/// Gemini enums hold strings only: other values are written as their JSON text, and a
/// `null` member turns into `nullable`. An enum without a type is a string enum.
fn stringify_enum(map: &mut Map<String, Value>) {
    // A non-array `enum` is not a valid schema; removing it only loosens the schema.
    let Some(Value::Array(values)) = map.remove("enum") else {
        return;
    };
    let mut nullable = false;
    let mut strings = Vec::with_capacity(values.len());
    for value in values {
        match value {
            Value::Null => nullable = true,
            Value::String(text) => strings.push(Value::String(text)),
            other => strings.push(Value::String(other.to_string())),
        }
    }
    if nullable {
        map.insert("nullable".to_owned(), json!(true));
    }
    if !strings.is_empty() {
        map.insert("enum".to_owned(), Value::Array(strings));
        map.entry("type").or_insert_with(|| json!("string"));
    }
}

/// Keeps only required names that are declared properties: Gemini refuses a `required`
/// entry it cannot find, which a map (properties dropped) would otherwise produce.
fn restrict_required(map: &mut Map<String, Value>) {
    let Some(Value::Array(required)) = map.remove("required") else {
        return;
    };
    let Some(Value::Object(properties)) = map.get("properties") else {
        return;
    };
    let kept: Vec<Value> = required
        .into_iter()
        .filter(|name| {
            name.as_str()
                .is_some_and(|name| properties.contains_key(name))
        })
        .collect();
    if !kept.is_empty() {
        map.insert("required".to_owned(), Value::Array(kept));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn refs_are_inlined_and_recursion_cut() {
        let out = parameters(&json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/T", "description": "root"}},
            "required": ["tree"],
            "$defs": {"T": {"type": "object", "description": "a node", "properties": {
                "kids": {"type": "array", "items": {"$ref": "#/$defs/T"}}
            }}}
        }));
        let cut = json!({"type": "object", "description": "a node (deeper nesting omitted)"});
        let level2 = json!({"type": "object", "description": "a node", "properties": {
            "kids": {"type": "array", "items": cut}
        }});
        assert_eq!(
            out,
            json!({"type": "object", "required": ["tree"], "properties": {"tree": {
                "type": "object", "description": "root",
                "properties": {"kids": {"type": "array", "items": level2}}
            }}})
        );
    }

    #[test]
    fn nullables_and_type_arrays() {
        let out = parameters(&json!({
            "type": "object",
            "properties": {
                "a": {"type": ["string", "null"]},
                "b": {"anyOf": [{"$ref": "#/$defs/B"}, {"type": "null"}], "description": "b"},
                "c": {"type": ["integer", "boolean"]},
                "d": {"enum": ["x", null]},
                "e": {"type": "null"}
            },
            "$defs": {"B": {"type": "integer", "description": "inner", "minimum": 1}}
        }));
        let p = &out["properties"];
        assert_eq!(p["a"], json!({"type": "string", "nullable": true}));
        assert_eq!(
            p["b"],
            json!({"type": "integer", "nullable": true, "description": "b", "minimum": 1})
        );
        assert_eq!(
            p["c"],
            json!({"anyOf": [{"type": "integer"}, {"type": "boolean"}]})
        );
        assert_eq!(
            p["d"],
            json!({"type": "string", "enum": ["x"], "nullable": true})
        );
        assert_eq!(p["e"], json!({"type": "null"}));
    }

    #[test]
    fn unsupported_keywords_are_rewritten_or_dropped() {
        let out = parameters(&json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "k": {"const": "fixed"},
                "n": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 2, "maximum": 9, "format": "double"},
                "when": {"type": "string", "format": "date-time", "examples": ["2024-01-01T00:00:00Z"]},
                "uri": {"type": "string", "format": "uri", "pattern": "^h"},
                "tuple": {"type": "array", "prefixItems": [{"type": "string"}], "items": false, "uniqueItems": true},
                "map": {"type": "object", "additionalProperties": {"type": "string"}, "propertyNames": {"minLength": 1}},
                "cond": {"type": "string", "not": {"const": ""}, "if": {}, "then": {}, "else": {}},
                "both": {"allOf": [{"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]},
                                   {"properties": {"y": {"type": "integer", "enum": [1, 2]}}, "required": ["y", "z"]}]},
                "choice": {"oneOf": [{"type": "string"}, {"type": "integer"}]}
            },
            "required": ["k", "nope"]
        }));
        let p = &out["properties"];
        assert!(out.get("additionalProperties").is_none());
        assert_eq!(out["required"], json!(["k"]));
        assert_eq!(p["k"], json!({"type": "string", "enum": ["fixed"]}));
        assert_eq!(p["n"], json!({"type": "number", "maximum": 9}));
        assert_eq!(
            p["when"],
            json!({"type": "string", "format": "date-time", "example": "2024-01-01T00:00:00Z"})
        );
        assert_eq!(p["uri"], json!({"type": "string", "pattern": "^h"}));
        assert_eq!(p["tuple"], json!({"type": "array"}));
        assert_eq!(
            p["map"],
            json!({"type": "object", "description": "(an object with arbitrary keys)"})
        );
        assert_eq!(p["cond"], json!({"type": "string"}));
        assert_eq!(
            p["both"],
            json!({"type": "object", "required": ["x", "y"], "properties": {
                "x": {"type": "string"}, "y": {"type": "integer", "enum": ["1", "2"]}
            }})
        );
        assert_eq!(
            p["choice"],
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})
        );
    }

    #[test]
    fn documented_variants_become_one_string_enum() {
        let out = parameters(&json!({
            "type": "object",
            "properties": {"mode": {"description": "Mode.", "oneOf": [
                {"type": "string", "const": "fast", "description": "quick"},
                {"type": "string", "const": "slow"}
            ]}}
        }));
        assert_eq!(
            out["properties"]["mode"],
            json!({"type": "string", "enum": ["fast", "slow"], "description": "Mode. (fast: quick)"})
        );
    }

    #[test]
    fn render_omits_empty_parameters() {
        let none = ToolDefinition::new("t", "d", json!({"type": "object", "properties": {}}));
        assert_eq!(render(&none, "t"), json!({"name": "t", "description": "d"}));
        let some = ToolDefinition::new(
            "t",
            "d",
            json!({"type": "object", "properties": {"a": {"type": "string"}}}),
        );
        assert_eq!(
            render(&some, "t"),
            json!({"name": "t", "description": "d", "parameters": {
                "type": "object", "properties": {"a": {"type": "string"}}
            }})
        );
    }
}
