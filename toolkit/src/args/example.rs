//! One valid call, built from the visible input schema, to end an invalid-arguments error
//! with: `...; a valid call: {"city": "text", "days": 1}`.
//!
//! A model that has just been told what was wrong fixes its call more reliably when it also
//! sees one that works. The example holds the required properties only (optional ones are
//! left out, so it stays short and never suggests values the model did not ask for), each
//! value taken from the schema: `const`, the first `enum` value, `default`, the first of
//! `examples`, else a typed placeholder (`"text"`, `1` or the minimum, `true`, `[]`, an object
//! built the same way). A schema the builder cannot satisfy for certain (a `pattern`, a
//! `multipleOf`, `allOf`, `not`, ...) gives no example rather than a wrong one, an example
//! longer than [`MAX_EXAMPLE_BYTES`] is dropped, and with the `validate` feature the example
//! is checked against the schema before it is ever shown.

use serde_json::{Map, Value};

/// The longest example shown, in bytes of JSON text; a longer one is left out.
pub(crate) const MAX_EXAMPLE_BYTES: usize = 300;

/// How deep the builder follows schemas (`$ref` cycles included).
const MAX_DEPTH: usize = 12;

/// One valid call for the input schema `schema`, as compact JSON with a space after each `:`
/// and `,`; `None` when none can be built for certain, it would be too long, or the schema
/// declares no properties.
pub(crate) fn example(schema: &Value) -> Option<String> {
    // A tool without parameters says "send {}" already.
    if schema
        .get("properties")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty)
    {
        return None;
    }
    let value = Builder { root: schema }.build(schema, 0)?;
    if !value.is_object() {
        return None;
    }
    let mut text = String::new();
    write(&value, &mut text);
    if text.len() > MAX_EXAMPLE_BYTES {
        return None;
    }
    if super::schema::is_valid(schema, &value) == Some(false) {
        tracing::debug!(
            target: "agent_toolkit::args",
            example = %text,
            "the example call built from a tool's schema does not validate; none is shown"
        );
        return None;
    }
    Some(text)
}

struct Builder<'s> {
    root: &'s Value,
}

impl Builder<'_> {
    fn build(&self, schema: &Value, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        let map = match schema {
            Value::Bool(true) => return Some(Value::from("text")),
            Value::Object(map) => map,
            _ => return None,
        };
        if let Some(value) = map.get("const") {
            return Some(value.clone());
        }
        if let Some(first) = map.get("enum").and_then(Value::as_array) {
            return first.first().cloned();
        }
        if let Some(value) = map.get("default") {
            return Some(value.clone());
        }
        if let Some(first) = map
            .get("examples")
            .and_then(Value::as_array)
            .and_then(|e| e.first())
        {
            return Some(first.clone());
        }
        if [
            "not",
            "if",
            "pattern",
            "multipleOf",
            "patternProperties",
            "propertyNames",
        ]
        .iter()
        .any(|k| map.contains_key(*k))
        {
            return None;
        }
        if let Some(reference) = map.get("$ref") {
            let target = self.root.pointer(reference.as_str()?.strip_prefix('#')?)?;
            return self.build(target, depth + 1);
        }
        if let Some(all) = map.get("allOf") {
            return match all.as_array()?.as_slice() {
                [only] => self.build(only, depth + 1),
                _ => None,
            };
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(branches) = map.get(key) {
                // A non-null branch reads better than `null`; the check at the end catches a
                // value two `oneOf` branches both accept.
                let branches = branches.as_array()?;
                let (nulls, others): (Vec<&Value>, Vec<&Value>) = branches
                    .iter()
                    .partition(|b| b.get("type").and_then(Value::as_str) == Some("null"));
                return others
                    .into_iter()
                    .chain(nulls)
                    .find_map(|b| self.build(b, depth + 1));
            }
        }
        let ty = match map.get("type") {
            None => {
                // Only annotations: any value fits.
                return (!map.keys().any(|k| typed_keyword(k))).then(|| Value::from("text"));
            }
            Some(Value::String(t)) => t.as_str(),
            Some(Value::Array(types)) => types
                .iter()
                .filter_map(Value::as_str)
                .find(|t| *t != "null")
                .or_else(|| types.iter().find_map(Value::as_str))?,
            Some(_) => return None,
        };
        match ty {
            "string" => string(map),
            "integer" => number(map, true),
            "number" => number(map, false),
            "boolean" => Some(Value::Bool(true)),
            "null" => Some(Value::Null),
            "array" => self.array(map, depth),
            "object" => self.object(map, depth),
            _ => None,
        }
    }

    fn array(&self, map: &Map<String, Value>, depth: usize) -> Option<Value> {
        let min = map.get("minItems").and_then(Value::as_u64).unwrap_or(0);
        if min == 0 {
            return Some(Value::Array(Vec::new()));
        }
        if min > 3 || map.contains_key("prefixItems") || map.contains_key("contains") {
            return None;
        }
        if min > 1 && map.get("uniqueItems") == Some(&Value::Bool(true)) {
            return None;
        }
        let item = self.build(map.get("items")?, depth + 1)?;
        Some(Value::Array(vec![item; min as usize]))
    }

    fn object(&self, map: &Map<String, Value>, depth: usize) -> Option<Value> {
        let properties = map.get("properties").and_then(Value::as_object);
        let mut out = Map::new();
        if let Some(required) = map.get("required").and_then(Value::as_array) {
            for name in required {
                let name = name.as_str()?;
                let value = self.build(properties?.get(name)?, depth + 1)?;
                out.insert(name.to_string(), value);
            }
        }
        let min = map
            .get("minProperties")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        (out.len() as u64 >= min).then_some(Value::Object(out))
    }
}

/// Keywords that restrict a value of some type; a schema with one but no `type` is not
/// "anything".
fn typed_keyword(keyword: &str) -> bool {
    matches!(
        keyword,
        "properties"
            | "required"
            | "additionalProperties"
            | "items"
            | "minItems"
            | "maxItems"
            | "minLength"
            | "maxLength"
            | "minimum"
            | "maximum"
            | "exclusiveMinimum"
            | "exclusiveMaximum"
            | "format"
            | "dependentRequired"
            | "dependentSchemas"
            | "unevaluatedProperties"
            | "unevaluatedItems"
            | "minProperties"
            | "maxProperties"
            | "uniqueItems"
    )
}

fn string(map: &Map<String, Value>) -> Option<Value> {
    let known = match map.get("format").and_then(Value::as_str) {
        Some("date-time") => Some("2024-01-01T00:00:00Z"),
        Some("date") => Some("2024-01-01"),
        Some("time") => Some("12:00:00Z"),
        Some("email") => Some("user@example.com"),
        Some("uri" | "url" | "iri") => Some("https://example.com"),
        Some("uuid") => Some("00000000-0000-0000-0000-000000000000"),
        Some("ipv4") => Some("192.0.2.1"),
        Some("hostname") => Some("example.com"),
        _ => None,
    };
    let min = map.get("minLength").and_then(Value::as_u64).unwrap_or(0);
    let max = map
        .get("maxLength")
        .and_then(Value::as_u64)
        .unwrap_or(u64::MAX);
    let fits = |s: &str| (min..=max).contains(&(s.chars().count() as u64));
    if let Some(sample) = known {
        return fits(sample).then(|| Value::from(sample));
    }
    if fits("text") {
        return Some(Value::from("text"));
    }
    let len = if min > 4 { min } else { max };
    (len <= 64 && len >= min && len <= max).then(|| Value::from("x".repeat(len as usize)))
}

/// `1`, moved into the bounds if it is outside them.
fn number(map: &Map<String, Value>, integer: bool) -> Option<Value> {
    let bound = |key: &str| map.get(key).and_then(Value::as_f64);
    let mut low = bound("minimum");
    let mut high = bound("maximum");
    if let Some(x) = bound("exclusiveMinimum") {
        low = Some(low.map_or(x + 1.0, |l| l.max(x + 1.0)));
    }
    if let Some(x) = bound("exclusiveMaximum") {
        high = Some(high.map_or(x - 1.0, |h| h.min(x - 1.0)));
    }
    if integer {
        low = low.map(f64::ceil);
        high = high.map(f64::floor);
    }
    let mut value = 1.0;
    if let Some(l) = low.filter(|l| *l > value) {
        value = l;
    }
    if let Some(h) = high.filter(|h| *h < value) {
        value = h;
    }
    if low.is_some_and(|l| value < l) || !value.is_finite() {
        return None;
    }
    if value.fract() == 0.0 && value.abs() < 9.0e15 {
        Some(Value::from(value as i64))
    } else if integer {
        None
    } else {
        serde_json::Number::from_f64(value).map(Value::Number)
    }
}

/// Compact JSON with a space after each `:` and `,`, as a person would write the call.
fn write(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&Value::from(key.as_str()).to_string());
                out.push_str(": ");
                write(item, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[track_caller]
    fn assert_example(schema: Value, want: Option<&str>) {
        let got = example(&schema);
        assert_eq!(got.as_deref(), want, "{schema}");
        #[cfg(feature = "validate")]
        if let Some(text) = got {
            let value: Value = serde_json::from_str(&text).unwrap();
            assert!(
                jsonschema::validator_for(&schema).unwrap().is_valid(&value),
                "{text} does not fit {schema}"
            );
        }
    }

    #[test]
    fn required_properties_with_typed_placeholders() {
        assert_example(
            json!({
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer", "minimum": 1, "maximum": 16},
                    "ratio": {"type": "number", "exclusiveMinimum": 2.5},
                    "verbose": {"type": "boolean"},
                    "limit": {"type": ["integer", "null"]},
                    "note": {"type": "string"}
                },
                "required": ["city", "days", "ratio", "verbose"]
            }),
            Some(r#"{"city": "text", "days": 1, "ratio": 3.5, "verbose": true}"#),
        );
    }

    #[test]
    fn enum_default_and_examples_are_used() {
        assert_example(
            json!({
                "type": "object",
                "properties": {
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                    "days": {"type": "integer", "default": 3},
                    "city": {"type": "string", "examples": ["Paris"]},
                    "mode": {"const": "fast"},
                    "code": {"type": "string", "pattern": "^[A-Z]{3}$", "examples": ["CDG"]}
                },
                "required": ["unit", "days", "city", "mode", "code"]
            }),
            Some(
                r#"{"unit": "celsius", "days": 3, "city": "Paris", "mode": "fast", "code": "CDG"}"#,
            ),
        );
    }

    #[test]
    fn nested_objects_refs_and_arrays() {
        assert_example(
            json!({
                "type": "object",
                "properties": {
                    "address": {"$ref": "#/$defs/Address"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "ids": {"type": "array", "items": {"type": "integer"}, "minItems": 1},
                    "maybe": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/Address"}]}
                },
                "required": ["address", "tags", "ids", "maybe"],
                "$defs": {
                    "Address": {
                        "type": "object",
                        "properties": {"street": {"type": "string"}, "zip": {"type": "string", "maxLength": 2}},
                        "required": ["street", "zip"],
                        "additionalProperties": false
                    }
                }
            }),
            Some(
                r#"{"address": {"street": "text", "zip": "xx"}, "tags": [], "ids": [1], "maybe": {"street": "text", "zip": "xx"}}"#,
            ),
        );
    }

    #[test]
    fn optional_properties_are_skipped() {
        assert_example(
            json!({"type": "object", "properties": {"q": {"type": "string"}}}),
            Some("{}"),
        );
        // Nothing to show for a tool without parameters.
        assert_example(json!({"type": "object", "properties": {}}), None);
        assert_example(json!({"type": "object"}), None);
    }

    #[test]
    fn no_example_rather_than_a_wrong_or_long_one() {
        // A pattern cannot be satisfied for certain.
        assert_example(
            json!({"type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}}, "required": ["code"]}),
            None,
        );
        // A recursive type without a way out.
        assert_example(
            json!({
                "type": "object",
                "properties": {"node": {"$ref": "#/$defs/Node"}},
                "required": ["node"],
                "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}, "required": ["next"]}}
            }),
            None,
        );
        // Too long to be worth reading.
        let properties: Map<String, Value> = (0..40)
            .map(|i| (format!("parameter_{i}"), json!({"type": "string"})))
            .collect();
        let required: Vec<String> = properties.keys().cloned().collect();
        assert_example(
            json!({"type": "object", "properties": properties, "required": required}),
            None,
        );
        // An integer range with no integer in it.
        assert_example(
            json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1.2, "maximum": 1.8}}, "required": ["n"]}),
            None,
        );
    }

    #[cfg(feature = "validate")]
    #[test]
    fn a_default_that_does_not_fit_gives_no_example() {
        assert_example(
            json!({"type": "object", "properties": {"n": {"type": "integer", "default": "x"}}, "required": ["n"]}),
            None,
        );
    }
}
