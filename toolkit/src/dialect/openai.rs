//! OpenAI function calling, strict (Structured Outputs subset) and non-strict.
//!
//! Strict mode compiles the schema into a grammar, so it only takes a subset: every object
//! closed with `additionalProperties: false`, every property in `required`, no keyword next
//! to `$ref`, no `oneOf`/`allOf`. Optional parameters survive as "required but nullable":
//! the model sends `null`, and serde reads `null` as `None` for an `Option` field.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use crate::schema::integers;
use crate::schema::walk::{
    MAX_DEPTH, Refs, Slot, Unexpandable, append_description, definition_ref, flatten_all_of,
    has_type, into_map, is_object_schema, loose, merge_into, object_root, one_of_to_any_of,
    prune_definitions, subschemas, subschemas_mut,
};
use crate::tool::ToolDefinition;

/// String formats strict mode accepts; any other `format` is rejected by the API.
const STRICT_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Constraints strict mode does not document. They are moved into the description, as
/// OpenAI's own helpers do, so the model still reads them and the canonical schema still
/// enforces them when the arguments come back.
const DESCRIBED_KEYWORDS: &[&str] = &[
    "minLength",
    "maxLength",
    "minProperties",
    "maxProperties",
    "uniqueItems",
];

/// Keywords strict mode cannot express at all; a schema that still holds one after the
/// transformation is not [`strict_representable`].
const UNSUPPORTED_KEYWORDS: &[&str] = &[
    "allOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "patternProperties",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "prefixItems",
    "contains",
    "additionalItems",
];

/// Strict parameters: see the module docs. Maps (`additionalProperties` holding a schema or
/// `true`) are left open because closing them would silently forbid every key; the result
/// is then not strict-representable and `render` falls back to non-strict.
pub(super) fn strict_parameters(canonical: &Value) -> Value {
    let mut root = Value::Object(object_root(canonical));
    let mut refs = Refs::new(canonical);
    strictify(&mut root, &mut refs, 0);
    if let Value::Object(map) = &mut root {
        // A root `allOf`/`$ref` that was merged can leave the type off; strict needs it.
        map.insert("type".to_owned(), Value::String("object".to_owned()));
        prune_definitions(map);
    }
    root
}

/// Non-strict parameters: the canonical schema with the shared light clean-up.
pub(super) fn loose_parameters(canonical: &Value) -> Value {
    loose(canonical)
}

/// Whether OpenAI accepts the strict form of `canonical` with `strict: true`, i.e. the
/// strict pass left no map, free-form value (`{}`), boolean schema or unsupported keyword
/// (`not`, `if`, `patternProperties`, an `allOf` around a recursive reference, ...).
///
/// [`Dialect::render`](super::Dialect::render) uses this to fall back to `strict: false`
/// instead of producing a request OpenAI rejects as a whole.
pub fn strict_representable(canonical: &Value) -> bool {
    is_strict(&strict_parameters(canonical))
}

pub(super) fn render_strict(def: &ToolDefinition, name: &str) -> Value {
    let strict = strict_parameters(def.parameters());
    let (parameters, strict_flag) = if is_strict(&strict) {
        (strict, true)
    } else {
        (loose_parameters(def.parameters()), false)
    };
    json!({
        "type": "function",
        "function": {
            "name": name,
            "description": def.description(),
            "parameters": parameters,
            "strict": strict_flag,
        }
    })
}

pub(super) fn render_loose(def: &ToolDefinition, name: &str) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": name,
            "description": def.description(),
            "parameters": loose_parameters(def.parameters()),
        }
    })
}

fn strictify(node: &mut Value, refs: &mut Refs<'_>, depth: usize) {
    let Value::Object(map) = node else {
        return;
    };
    if depth > MAX_DEPTH {
        return;
    }
    let mark = refs.mark();
    loop {
        map.remove("$schema");
        one_of_to_any_of(map);
        if let Some(reference) = ref_with_siblings(map) {
            match refs.enter(&reference, 1) {
                Ok(target) => {
                    map.remove("$ref");
                    merge_into(map, into_map(target.clone()));
                    continue;
                }
                // A bare `$ref` is allowed and recursion through `$defs` is supported, so
                // the siblings (a description) are the only thing given up.
                Err(Unexpandable::Recursive) => map.retain(|key, _| key == "$ref"),
                Err(Unexpandable::Dangling) => {
                    map.remove("$ref");
                    continue;
                }
            }
        }
        if flatten_all_of(map, refs, 1) {
            continue;
        }
        break;
    }
    // `default` is not part of the subset. The model still needs it to know what sending
    // `null` for an optional parameter means, so it goes into the description. Done after
    // inlining, where the reference's own description has already won over the target's.
    match map.remove("default") {
        None | Some(Value::Null) => {}
        Some(value) => append_description(map, &format!("(default: {value})")),
    }
    for (slot, child) in subschemas_mut(map) {
        let child_mark = refs.mark();
        if depth == 0
            && let Some(reference) = definition_ref(slot)
        {
            refs.push(&reference);
        }
        strictify(child, refs, depth + 1);
        refs.truncate(child_mark);
    }
    close_object(map);
    restrict_keywords(map);
    refs.truncate(mark);
}

/// The target of a `$ref` that has sibling keywords, which strict mode forbids.
fn ref_with_siblings(map: &Map<String, Value>) -> Option<String> {
    let reference = map.get("$ref")?.as_str()?;
    (map.len() > 1).then(|| reference.to_owned())
}

/// Closes an object schema and turns its optional properties into required nullable ones.
fn close_object(map: &mut Map<String, Value>) {
    if !is_object_schema(map) {
        return;
    }
    if !map.contains_key("type") {
        map.insert("type".to_owned(), Value::String("object".to_owned()));
    }
    if !map.contains_key("additionalProperties") {
        map.insert("additionalProperties".to_owned(), Value::Bool(false));
    }
    let was_required: HashSet<String> = match map.get("required") {
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => HashSet::new(),
    };
    let closed = map.get("additionalProperties") == Some(&Value::Bool(false));
    if closed && !map.contains_key("properties") {
        map.insert("properties".to_owned(), Value::Object(Map::new()));
    }
    let Some(Value::Object(properties)) = map.get_mut("properties") else {
        return;
    };
    for (name, schema) in properties.iter_mut() {
        if !was_required.contains(name) {
            make_nullable(schema);
        }
    }
    let required = properties.keys().cloned().map(Value::String).collect();
    map.insert("required".to_owned(), Value::Array(required));
}

/// Lets `schema` also accept `null`, in the form strict mode understands: `"null"` added to
/// a plain `type` (and to its `enum`, or the enum would reject the null the type allows),
/// an extra `anyOf` branch, or an `anyOf` wrapper around a `$ref`/`const`/composite schema.
fn make_nullable(schema: &mut Value) {
    let map = match schema {
        Value::Object(map) => map,
        Value::Bool(true) => return,
        _ => {
            *schema = json!({"type": "null"});
            return;
        }
    };
    if admits_null(map) {
        return;
    }
    let composite = COMPOSITE_KEYWORDS.iter().any(|key| map.contains_key(*key));
    if !composite && (map.contains_key("type") || map.contains_key("enum")) {
        match map.get_mut("type") {
            Some(Value::Array(types)) if !types.contains(&json!("null")) => {
                types.push(json!("null"))
            }
            Some(Value::Array(_)) | None => {}
            Some(single) => *single = json!([single.take(), "null"]),
        }
        if let Some(Value::Array(values)) = map.get_mut("enum")
            && !values.contains(&Value::Null)
        {
            values.push(Value::Null);
        }
        return;
    }
    let only_any_of = map
        .keys()
        .all(|key| matches!(key.as_str(), "anyOf" | "description" | "title"));
    if only_any_of && let Some(Value::Array(branches)) = map.get_mut("anyOf") {
        branches.push(json!({"type": "null"}));
        return;
    }
    // Annotations move to the wrapper, where the model looks for a property's description.
    let mut wrapper = Map::new();
    for key in ["description", "title"] {
        if let Some(value) = map.remove(key) {
            wrapper.insert(key.to_owned(), value);
        }
    }
    let inner = Value::Object(std::mem::take(map));
    wrapper.insert("anyOf".to_owned(), json!([inner, {"type": "null"}]));
    *map = wrapper;
}

/// Keywords whose schema cannot take `"null"` by editing `type`/`enum` in place.
const COMPOSITE_KEYWORDS: &[&str] = &["$ref", "const", "anyOf", "allOf", "not"];

/// Whether the schema visibly accepts `null` already: a null `anyOf` branch, or a `type`
/// and `enum` that both allow it.
fn admits_null(map: &Map<String, Value>) -> bool {
    if let Some(Value::Array(branches)) = map.get("anyOf")
        && branches.contains(&json!({"type": "null"}))
    {
        return true;
    }
    if COMPOSITE_KEYWORDS.iter().any(|key| map.contains_key(*key)) {
        return false;
    }
    let enum_allows_null = match map.get("enum") {
        Some(Value::Array(values)) => values.contains(&Value::Null),
        Some(_) => false,
        None => true,
    };
    let type_allows_null = match map.get("type") {
        Some(_) => has_type(map, "null"),
        None => map.contains_key("enum"),
    };
    type_allows_null && enum_allows_null
}

/// Drops formats strict mode rejects and moves undocumented constraints to the description.
/// An integer `format` is turned into the range it stands for first: strict mode supports
/// `minimum`/`maximum`, and without them the schema would admit values the type refuses.
fn restrict_keywords(map: &mut Map<String, Value>) {
    integers::bound(map);
    let unsupported_format = match map.get("format") {
        Some(Value::String(format)) => !STRICT_FORMATS.contains(&format.as_str()),
        _ => map.contains_key("format"),
    };
    let mut notes = Vec::new();
    if unsupported_format && let Some(format) = map.remove("format") {
        // Numeric formats (`int32`, `uint32`, `double`) add nothing the type and the bounds
        // written above do not say; a string format (`uri`) is worth telling the model.
        if has_type(map, "string") {
            notes.push(format!("format: {}", plain(&format)));
        }
    }
    for key in DESCRIBED_KEYWORDS {
        if let Some(value) = map.remove(*key) {
            notes.push(format!("{key}: {}", plain(&value)));
        }
    }
    if !notes.is_empty() {
        append_description(map, &format!("({})", notes.join(", ")));
    }
}

fn plain(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// Checks the output of the strict pass against the strict-mode subset.
fn is_strict(schema: &Value) -> bool {
    let Value::Object(root) = schema else {
        return false;
    };
    root.get("type") == Some(&json!("object"))
        && !root.contains_key("anyOf")
        && strict_node(root, 0)
}

fn strict_node(map: &Map<String, Value>, depth: usize) -> bool {
    if depth > MAX_DEPTH
        || UNSUPPORTED_KEYWORDS
            .iter()
            .any(|key| map.contains_key(*key))
    {
        return false;
    }
    if map.contains_key("$ref") {
        return map.len() == 1;
    }
    let constrained = ["type", "anyOf", "enum", "const"]
        .iter()
        .any(|key| map.contains_key(*key));
    if !constrained {
        return false;
    }
    if is_object_schema(map) && map.get("additionalProperties") != Some(&Value::Bool(false)) {
        return false;
    }
    subschemas(map)
        .into_iter()
        .all(|(slot, child)| match (slot, child) {
            (Slot::Single("additionalProperties"), _) => true,
            (_, Value::Object(child)) => strict_node(child, depth + 1),
            _ => false,
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn strict(schema: Value) -> Value {
        strict_parameters(&schema)
    }

    #[test]
    fn objects_are_closed_everywhere() {
        let out = strict(json!({
            "type": "object",
            "properties": {
                "nested": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]},
                "list": {"type": "array", "items": {"properties": {"y": {"type": "string"}}, "required": ["y"]}},
                "either": {"anyOf": [{"type": "object", "properties": {}}, {"type": "string"}]},
                "def": {"$ref": "#/$defs/D"}
            },
            "required": ["nested", "list", "either", "def"],
            "$defs": {"D": {"type": "object", "properties": {"z": {"type": "boolean"}}, "required": ["z"]}}
        }));
        assert_eq!(out["additionalProperties"], json!(false));
        assert_eq!(
            out["properties"]["nested"]["additionalProperties"],
            json!(false)
        );
        let item = &out["properties"]["list"]["items"];
        assert_eq!(item["additionalProperties"], json!(false));
        assert_eq!(item["type"], json!("object"));
        assert_eq!(
            out["properties"]["either"]["anyOf"][0],
            json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
        );
        assert_eq!(out["$defs"]["D"]["additionalProperties"], json!(false));
        assert!(is_strict(&out));
    }

    #[test]
    fn optionals_become_required_and_nullable() {
        let out = strict(json!({
            "type": "object",
            "properties": {
                "req": {"type": "string"},
                "plain": {"type": "integer", "default": 3, "description": "n"},
                "already": {"type": ["string", "null"]},
                "choice": {"type": "string", "enum": ["F", "C"]},
                "reference": {"$ref": "#/$defs/D"},
                "union": {"anyOf": [{"type": "string"}, {"type": "integer"}], "description": "u"},
                "constant": {"const": "k", "description": "c"},
                "untyped_enum": {"enum": [1, 2]}
            },
            "required": ["req"],
            "$defs": {"D": {"type": "string"}}
        }));
        let p = &out["properties"];
        assert_eq!(p["req"], json!({"type": "string"}));
        assert_eq!(
            p["plain"],
            json!({"type": ["integer", "null"], "description": "n (default: 3)"})
        );
        assert_eq!(p["already"], json!({"type": ["string", "null"]}));
        assert_eq!(
            p["choice"],
            json!({"type": ["string", "null"], "enum": ["F", "C", null]})
        );
        assert_eq!(
            p["reference"],
            json!({"anyOf": [{"$ref": "#/$defs/D"}, {"type": "null"}]})
        );
        assert_eq!(
            p["union"],
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}], "description": "u"})
        );
        assert_eq!(
            p["constant"],
            json!({"description": "c", "anyOf": [{"const": "k"}, {"type": "null"}]})
        );
        assert_eq!(p["untyped_enum"], json!({"enum": [1, 2, null]}));
        let required: Vec<&str> = out["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut keys: Vec<&str> = p
            .as_object()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        keys.sort_unstable();
        let mut sorted = required.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, keys);
    }

    #[test]
    fn refs_with_siblings_are_inlined_and_unused_defs_pruned() {
        let out = strict(json!({
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A", "description": "the a"}},
            "required": ["a"],
            "$defs": {"A": {"type": "object", "description": "an A", "properties": {"n": {"type": "number"}}}}
        }));
        assert_eq!(
            out["properties"]["a"],
            json!({
                "description": "the a", "type": "object", "additionalProperties": false,
                "properties": {"n": {"type": ["number", "null"]}}, "required": ["n"]
            })
        );
        assert!(out.get("$defs").is_none());
    }

    #[test]
    fn recursive_refs_stay_refs() {
        let out = strict(json!({
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/T", "description": "root"}},
            "required": ["tree"],
            "$defs": {"T": {"type": "object", "properties": {
                "kids": {"type": "array", "items": {"$ref": "#/$defs/T", "description": "kid"}},
                "me": {"$ref": "#", "description": "loop"}
            }, "required": ["kids", "me"]}}
        }));
        let tree = &out["properties"]["tree"];
        assert_eq!(tree["description"], json!("root"));
        assert_eq!(
            tree["properties"]["kids"]["items"],
            json!({"$ref": "#/$defs/T"})
        );
        assert_eq!(tree["properties"]["me"], json!({"$ref": "#"}));
        assert_eq!(
            out["$defs"]["T"]["properties"]["kids"]["items"],
            json!({"$ref": "#/$defs/T"})
        );
        assert!(is_strict(&out));
    }

    #[test]
    fn one_of_all_of_schema_and_formats() {
        let out = strict(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "mode": {"oneOf": [{"const": "a"}, {"const": "b"}]},
                "wrapped": {"allOf": [{"$ref": "#/$defs/W"}], "description": "w"},
                "n": {"type": "integer", "format": "uint32", "minimum": 0},
                "when": {"type": "string", "format": "date-time"},
                "url": {"type": "string", "format": "uri", "minLength": 1}
            },
            "required": ["mode", "wrapped", "n", "when", "url"],
            "$defs": {"W": {"type": "string", "description": "inner"}}
        }));
        assert!(out.get("$schema").is_none());
        let p = &out["properties"];
        assert_eq!(
            p["mode"],
            json!({"anyOf": [{"const": "a"}, {"const": "b"}]})
        );
        assert_eq!(p["wrapped"], json!({"type": "string", "description": "w"}));
        assert_eq!(
            p["n"],
            json!({"type": "integer", "minimum": 0, "maximum": 4294967295u64})
        );
        assert_eq!(p["when"], json!({"type": "string", "format": "date-time"}));
        assert_eq!(
            p["url"],
            json!({"type": "string", "description": "(format: uri, minLength: 1)"})
        );
        assert!(is_strict(&out));
    }

    #[test]
    fn maps_stay_open_and_make_the_schema_non_strict() {
        let canonical = json!({
            "type": "object",
            "properties": {"tags": {"type": "object", "additionalProperties": {"type": "integer"}}},
            "required": ["tags"]
        });
        let out = strict(canonical.clone());
        assert_eq!(
            out["properties"]["tags"],
            json!({"type": "object", "additionalProperties": {"type": "integer"}})
        );
        assert_eq!(out["additionalProperties"], json!(false));
        assert!(!strict_representable(&canonical));
        let def = ToolDefinition::new("t", "d", canonical.clone());
        let rendered = render_strict(&def, "t");
        assert_eq!(rendered["function"]["strict"], json!(false));
        assert_eq!(
            rendered["function"]["parameters"],
            loose_parameters(&canonical)
        );
    }

    #[test]
    fn unsupported_constructs_are_not_strict_representable() {
        for property in [
            json!({}),
            json!(true),
            json!({"not": {"type": "string"}}),
            json!({"type": "object", "patternProperties": {"^x": {"type": "string"}}}),
            json!({"type": "object", "additionalProperties": true}),
        ] {
            let canonical =
                json!({"type": "object", "properties": {"p": property}, "required": ["p"]});
            assert!(!strict_representable(&canonical), "{canonical}");
        }
        let root_union = json!({"anyOf": [{"type": "object"}, {"type": "object"}]});
        assert!(!strict_representable(&root_union));
    }

    #[test]
    fn render_shapes() {
        let def = ToolDefinition::new("t", "does t", json!({"type": "object"}));
        assert_eq!(
            render_strict(&def, "w"),
            json!({"type": "function", "function": {
                "name": "w", "description": "does t", "strict": true,
                "parameters": {"type": "object", "properties": {}, "required": [], "additionalProperties": false}
            }})
        );
        assert_eq!(
            render_loose(&def, "w"),
            json!({"type": "function", "function": {
                "name": "w", "description": "does t", "parameters": {"type": "object"}
            }})
        );
    }
}
