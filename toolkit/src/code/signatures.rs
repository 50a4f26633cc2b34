//! TypeScript-style signatures of tools, written from their JSON Schemas, for the description of
//! the code tool: `/** Get the weather. */ get_weather(args: { city: string; unit?: "c" | "f" }): Promise<unknown>;`.
//! A declaration models read well, and much shorter than the schemas it comes from.

use serde_json::{Map, Value};

use crate::tool::ToolDefinition;

/// The deepest a type is written out; deeper parts are `any`.
const MAX_DEPTH: usize = 6;

/// One tool as a method of `tools`, its description as a doc comment.
pub(crate) fn signature(definition: &ToolDefinition) -> String {
    let schema = definition.parameters();
    let defs = definitions(schema);
    let args = ts_type(schema, defs, 0);
    let output = definition
        .output_schema()
        .map(|s| ts_type(s, definitions(s), 0))
        .unwrap_or_else(|| "any".into());
    let description = one_line(definition.description());
    let mut out = String::new();
    if !description.is_empty() {
        out.push_str("/** ");
        out.push_str(&description);
        out.push_str(" */\n");
    }
    let optional = schema
        .get("required")
        .and_then(Value::as_array)
        .is_none_or(|r| r.is_empty());
    out.push_str(&format!(
        "{}(args{}: {args}): Promise<{output}>;",
        definition.name(),
        if optional { "?" } else { "" }
    ));
    out
}

/// The description on one line, `*/` defused.
fn one_line(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace("*/", "* /")
}

fn definitions(schema: &Value) -> Option<&Map<String, Value>> {
    schema
        .get("$defs")
        .or_else(|| schema.get("definitions"))
        .and_then(Value::as_object)
}

/// The TypeScript type of `schema`.
fn ts_type(schema: &Value, defs: Option<&Map<String, Value>>, depth: usize) -> String {
    if depth > MAX_DEPTH {
        return "any".into();
    }
    let Some(object) = schema.as_object() else {
        // `true` (anything) or `false` (nothing).
        return if schema == &Value::Bool(false) {
            "never".into()
        } else {
            "any".into()
        };
    };
    if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
        let name = reference.rsplit('/').next().unwrap_or(reference);
        return match defs.and_then(|d| d.get(name)) {
            Some(target) => ts_type(target, defs, depth + 1),
            None => "any".into(),
        };
    }
    if let Some(value) = object.get("const") {
        return value.to_string();
    }
    if let Some(values) = object.get("enum").and_then(Value::as_array) {
        return values
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join(" | ");
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(options) = object.get(key).and_then(Value::as_array) {
            return union(options.iter().map(|o| ts_type(o, defs, depth + 1)));
        }
    }
    if let Some(all) = object.get("allOf").and_then(Value::as_array) {
        return all
            .iter()
            .map(|o| ts_type(o, defs, depth + 1))
            .collect::<Vec<_>>()
            .join(" & ");
    }
    match object.get("type") {
        Some(Value::String(t)) => typed(t, object, defs, depth),
        Some(Value::Array(types)) => union(
            types
                .iter()
                .filter_map(Value::as_str)
                .map(|t| typed(t, object, defs, depth)),
        ),
        _ if object.contains_key("properties") => typed("object", object, defs, depth),
        _ => "any".into(),
    }
}

fn union(types: impl Iterator<Item = String>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for t in types {
        if !seen.contains(&t) {
            seen.push(t);
        }
    }
    match seen.len() {
        0 => "never".into(),
        _ => seen.join(" | "),
    }
}

fn typed(
    t: &str,
    object: &Map<String, Value>,
    defs: Option<&Map<String, Value>>,
    depth: usize,
) -> String {
    match t {
        "string" => "string".into(),
        "integer" | "number" => "number".into(),
        "boolean" => "boolean".into(),
        "null" => "null".into(),
        "array" => match object.get("items") {
            Some(items) => {
                let inner = ts_type(items, defs, depth + 1);
                // `a | b[]` would be a union with an array: such items are written `Array<…>`.
                if is_compound(&inner) {
                    format!("Array<{inner}>")
                } else {
                    format!("{inner}[]")
                }
            }
            None => "any[]".into(),
        },
        "object" => {
            let Some(properties) = object.get("properties").and_then(Value::as_object) else {
                return match object.get("additionalProperties") {
                    Some(extra) if extra.is_object() => {
                        format!("Record<string, {}>", ts_type(extra, defs, depth + 1))
                    }
                    _ => "Record<string, any>".into(),
                };
            };
            let required: Vec<&str> = object
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let fields: Vec<String> = properties
                .iter()
                .map(|(name, property)| {
                    let key = if is_identifier(name) {
                        name.clone()
                    } else {
                        Value::String(name.clone()).to_string()
                    };
                    let mark = if required.contains(&name.as_str()) {
                        ""
                    } else {
                        "?"
                    };
                    let note = property
                        .get("description")
                        .and_then(Value::as_str)
                        .map(|d| format!(" /* {} */", one_line(d)))
                        .unwrap_or_default();
                    format!("{key}{mark}: {}{note}", ts_type(property, defs, depth + 1))
                })
                .collect();
            if fields.is_empty() {
                "{}".into()
            } else {
                format!("{{ {} }}", fields.join("; "))
            }
        }
        _ => "any".into(),
    }
}

/// Whether `t` is a union or an intersection at its top level (outside braces and brackets).
fn is_compound(t: &str) -> bool {
    let mut depth = 0i32;
    let mut quoted = false;
    for c in t.chars() {
        match c {
            '"' => quoted = !quoted,
            '{' | '<' | '[' | '(' if !quoted => depth += 1,
            '}' | '>' | ']' | ')' if !quoted => depth -= 1,
            '|' | '&' if !quoted && depth == 0 => return true,
            _ => {}
        }
    }
    false
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn schemas_become_typescript() {
        let definition = ToolDefinition::new(
            "get_weather",
            "Current weather\n  for a city.",
            json!({
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "City name"},
                    "unit": {"enum": ["c", "f"]},
                    "days": {"type": ["integer", "null"]},
                    "tags": {"type": "array", "items": {"$ref": "#/$defs/Tag"}},
                    "odd-key": {"type": "boolean"}
                },
                "required": ["city"],
                "$defs": {"Tag": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}}
            }),
        )
        .with_output_schema(json!({"type": "object", "properties": {"temp": {"type": "number"}}, "required": ["temp"]}));
        assert_eq!(
            signature(&definition),
            "/** Current weather for a city. */\nget_weather(args: { city: string /* City name */; unit?: \"c\" | \"f\"; days?: number | null; tags?: { id: number }[]; \"odd-key\"?: boolean }): Promise<{ temp: number }>;"
        );
    }

    #[test]
    fn arrays_of_unions_are_written_with_array() {
        let items = |schema| ts_type(&json!({"type": "array", "items": schema}), None, 0);
        assert_eq!(
            items(json!({"type": ["string", "null"]})),
            "Array<string | null>"
        );
        assert_eq!(
            items(json!({"enum": ["a|b", "c"]})),
            "Array<\"a|b\" | \"c\">"
        );
        assert_eq!(items(json!({"enum": ["a|b"]})), "\"a|b\"[]");
        assert_eq!(
            items(json!({"type": "object", "properties": {"x": {"type": ["integer", "null"]}}})),
            "{ x?: number | null }[]"
        );
    }

    #[test]
    fn no_required_parameter_makes_the_argument_optional() {
        let definition =
            ToolDefinition::new("now", "", json!({"type": "object", "properties": {}}));
        assert_eq!(signature(&definition), "now(args?: {}): Promise<any>;");
    }
}
