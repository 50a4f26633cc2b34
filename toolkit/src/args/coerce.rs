//! Lossless coercion: a model's string that is exactly the integer, number or boolean the
//! visible schema asks for is read as that value (`"7"` → `7`, `"true"` → `true`).
//!
//! Small models often quote scalars. When a call's arguments have already failed, the
//! resolver asks [`coerce`] for a corrected text and checks that instead; the happy path
//! never comes here. A string is converted only when nothing is lost and nothing is guessed:
//!
//! - the schema at that place is unambiguous: one `type` among `integer`, `number` and
//!   `boolean` (with `"null"` beside it, as `Option<T>` gives), reached through
//!   `properties`, `items`, local `$ref`s and `anyOf`/`oneOf` of one schema and `null`. A
//!   schema that also allows a string, or offers several branches, or has no `type`, is left
//!   alone;
//! - the text is exactly the JSON form of the value: `"7"`, `"-3"`, `"2.5"` (number only),
//!   `"true"`, `"false"` — never `"7.0"` for an integer, `"1e3"`, `" 7"`, `"+7"`, `"07"`,
//!   `"yes"`, an integer beyond `i64`/`u64`, or a decimal that does not print back the same;
//! - only keys of the visible schema are touched, and never a hidden parameter's (the caller
//!   names them).
//!
//! Everything else in the text stays byte for byte: the converted strings are spliced out and
//! their contents spliced in, so repeated keys and every other value reach the checks as the
//! model wrote them.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use super::resolve::Key;

/// How deep schemas and values are followed (`$ref` cycles included).
const MAX_DEPTH: usize = 32;

/// A text after coercion, and where it changed (`id`, `filter.limit`, `ids[0]`).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Coerced {
    pub(crate) text: String,
    pub(crate) changed: Vec<String>,
}

/// The argument object `text` with every unambiguous, lossless string coerced to the scalar
/// `schema` (the visible input schema) asks for; `None` when nothing changes. Top-level keys
/// for which `hidden` is true are never touched.
pub(crate) fn coerce(schema: &Value, text: &str, hidden: &dyn Fn(&str) -> bool) -> Option<Coerced> {
    let mut walk = Walk {
        root: schema,
        changed: Vec::new(),
    };
    let text = walk.object(schema, text, "", hidden, 0)?;
    Some(Coerced {
        text,
        changed: walk.changed,
    })
}

/// The scalar types a string can be coerced to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scalar {
    Integer,
    Number,
    Boolean,
}

/// What the schema at one place asks for, when it is unambiguous.
enum Shape<'s> {
    Scalar(Scalar),
    Object(&'s Value),
    Array(&'s Value),
}

struct Walk<'s> {
    root: &'s Value,
    changed: Vec<String>,
}

impl<'s> Walk<'s> {
    /// The one shape `schema` allows, following `$ref`s and `anyOf`/`oneOf` of one schema and
    /// `null`; `None` when it allows no coercible shape or more than one.
    fn shape(&self, schema: &'s Value, depth: usize) -> Option<Shape<'s>> {
        if depth > MAX_DEPTH {
            return None;
        }
        let map = schema.as_object()?;
        if let Some(reference) = map.get("$ref") {
            // Siblings of a `$ref` could narrow it further; an unambiguous reading needs none.
            if map.keys().any(|k| constrains(k) && k != "$ref") {
                return None;
            }
            let target = self.root.pointer(reference.as_str()?.strip_prefix('#')?)?;
            return self.shape(target, depth + 1);
        }
        let branches = match (map.get("anyOf"), map.get("oneOf")) {
            (Some(b), None) | (None, Some(b)) => Some(b.as_array()?),
            (Some(_), Some(_)) => return None,
            (None, None) => None,
        };
        if let Some(branches) = branches {
            if map
                .keys()
                .any(|k| constrains(k) && k != "anyOf" && k != "oneOf")
            {
                return None;
            }
            let mut others = branches.iter().filter(|b| !is_null_schema(b));
            let (Some(only), None) = (others.next(), others.next()) else {
                return None;
            };
            return self.shape(only, depth + 1);
        }
        if map
            .keys()
            .any(|k| matches!(k.as_str(), "allOf" | "not" | "if"))
        {
            return None;
        }
        let ty = match map.get("type")? {
            Value::String(t) => t.as_str(),
            Value::Array(types) => {
                let mut named = types.iter().filter(|t| t.as_str() != Some("null"));
                match (named.next(), named.next()) {
                    (Some(t), None) => t.as_str()?,
                    _ => return None,
                }
            }
            _ => return None,
        };
        Some(match ty {
            "integer" => Shape::Scalar(Scalar::Integer),
            "number" => Shape::Scalar(Scalar::Number),
            "boolean" => Shape::Scalar(Scalar::Boolean),
            "object" => Shape::Object(schema),
            "array" if map.get("items").is_some_and(Value::is_object) => {
                Shape::Array(&map["items"])
            }
            _ => return None,
        })
    }

    /// The replacement of one value's text, if it changes.
    fn value(&mut self, schema: &'s Value, raw: &str, path: &str, depth: usize) -> Option<String> {
        match self.shape(schema, depth)? {
            Shape::Scalar(scalar) => {
                if !raw.starts_with('"') {
                    return None;
                }
                let text: String = serde_json::from_str(raw).ok()?;
                let value = scalar.read(&text)?;
                self.changed.push(path.to_string());
                Some(value)
            }
            Shape::Object(schema) => self.object(schema, raw, path, &|_| false, depth + 1),
            Shape::Array(items) => {
                if !raw.starts_with('[') {
                    return None;
                }
                let values: Vec<&RawValue> = serde_json::from_str(raw).ok()?;
                let mut edits = Vec::new();
                for (i, item) in values.iter().enumerate() {
                    let at = format!("{path}[{i}]");
                    if let Some(new) = self.value(items, item.get(), &at, depth + 1) {
                        edits.push((item.get(), new));
                    }
                }
                splice(raw, edits)
            }
        }
    }

    /// The replacement of an object's text, coercing the properties `schema` names.
    fn object(
        &mut self,
        schema: &'s Value,
        raw: &str,
        path: &str,
        hidden: &dyn Fn(&str) -> bool,
        depth: usize,
    ) -> Option<String> {
        if depth > MAX_DEPTH || !raw.trim_start().starts_with('{') {
            return None;
        }
        let properties = schema.get("properties").and_then(Value::as_object)?;
        let mut entries = Vec::new();
        let mut de = serde_json::Deserializer::from_str(raw);
        Entries(&mut entries).deserialize(&mut de).ok()?;
        de.end().ok()?;
        let mut edits = Vec::new();
        for (key, value) in entries {
            let Some(property) = properties.get(&*key) else {
                continue;
            };
            if hidden(&key) {
                continue;
            }
            let at = if path.is_empty() {
                key.to_string()
            } else {
                format!("{path}.{key}")
            };
            if let Some(new) = self.value(property, value.get(), &at, depth + 1) {
                edits.push((value.get(), new));
            }
        }
        splice(raw, edits)
    }
}

/// Whether a keyword can change what a schema accepts (annotations cannot).
fn constrains(keyword: &str) -> bool {
    !matches!(
        keyword,
        "description"
            | "title"
            | "default"
            | "examples"
            | "deprecated"
            | "readOnly"
            | "writeOnly"
            | "$comment"
            | "format"
    )
}

/// `{"type": "null"}` (annotations aside), as in `anyOf: [T, {"type": "null"}]`.
fn is_null_schema(schema: &Value) -> bool {
    let Some(map) = schema.as_object() else {
        return false;
    };
    map.get("type").and_then(Value::as_str) == Some("null")
        && map.keys().all(|k| k == "type" || !constrains(k))
}

impl Scalar {
    /// The JSON text of the value `text` is exactly, if any.
    fn read(self, text: &str) -> Option<String> {
        match self {
            Scalar::Boolean => matches!(text, "true" | "false").then(|| text.to_string()),
            Scalar::Integer => integer(text),
            Scalar::Number => integer(text).or_else(|| decimal(text)),
        }
    }
}

/// `text` if it is an integer written as JSON writes it (no sign but `-`, no leading zeros, no
/// `-0`) within `i64` or `u64`.
fn integer(text: &str) -> Option<String> {
    let prints_back = match text.parse::<i64>() {
        Ok(v) => v.to_string() == text,
        Err(_) => text.parse::<u64>().is_ok_and(|v| v.to_string() == text),
    };
    prints_back.then(|| text.to_string())
}

/// `text` if it is a finite decimal that prints back exactly as JSON writes the `f64` it
/// reads as: `2.5` and `-0.75` do; `1e3`, `2.50`, `.5`, `0.1000000000000000055` do not.
fn decimal(text: &str) -> Option<String> {
    let value: f64 = text.parse().ok()?;
    let number = serde_json::Number::from_f64(value)?;
    (number.to_string() == text).then(|| text.to_string())
}

/// `raw` with each `(slice, replacement)` applied; the slices are sub-slices of `raw`, in order.
fn splice(raw: &str, edits: Vec<(&str, String)>) -> Option<String> {
    if edits.is_empty() {
        return None;
    }
    let base = raw.as_ptr() as usize;
    let mut out = String::with_capacity(raw.len());
    let mut at = 0;
    for (slice, new) in edits {
        let start = slice.as_ptr() as usize - base;
        out.push_str(&raw[at..start]);
        out.push_str(&new);
        at = start + slice.len();
    }
    out.push_str(&raw[at..]);
    Some(out)
}

/// Reads an object's entries in order, repeated keys included, values as raw slices.
struct Entries<'v, 'de>(&'v mut Vec<(Cow<'de, str>, &'de RawValue)>);

impl<'de> DeserializeSeed<'de> for Entries<'_, 'de> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Entries<'_, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Key<'de>>()? {
            let value: &'de RawValue = map.next_value()?;
            self.0.push((key.0, value));
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        Err(de::Error::custom("not an object"))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "id": {"type": "integer"},
                "ratio": {"type": "number"},
                "verbose": {"type": "boolean"},
                "limit": {"type": ["integer", "null"]},
                "name": {"type": "string"},
                "either": {"type": ["integer", "string"]},
                "choice": {"anyOf": [{"type": "integer"}, {"type": "boolean"}]},
                "maybe": {"anyOf": [{"$ref": "#/$defs/Count"}, {"type": "null"}]},
                "untyped": {},
                "filter": {
                    "type": "object",
                    "properties": {"min": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}}
                },
                "ids": {"type": "array", "items": {"type": "integer"}},
                "secret": {"type": "integer"}
            },
            "$defs": {"Count": {"type": "integer", "description": "a count"}}
        })
    }

    /// The coerced text of `args`, or `None`.
    fn run(args: &str) -> Option<String> {
        coerce(&schema(), args, &|k| k == "secret").map(|c| c.text)
    }

    /// The value `field` gets from the string `text`, or `None` when it is not coerced.
    fn one(field: &str, text: &str) -> Option<Value> {
        let args = json!({ field: text }).to_string();
        run(&args).map(|t| serde_json::from_str::<Value>(&t).unwrap()[field].clone())
    }

    #[test]
    fn exact_scalars_are_coerced() {
        assert_eq!(one("id", "7"), Some(json!(7)));
        assert_eq!(one("id", "-3"), Some(json!(-3)));
        assert_eq!(one("id", "18446744073709551615"), Some(json!(u64::MAX)));
        assert_eq!(one("id", "-9223372036854775808"), Some(json!(i64::MIN)));
        assert_eq!(one("ratio", "2.5"), Some(json!(2.5)));
        assert_eq!(one("ratio", "7"), Some(json!(7)));
        assert_eq!(one("ratio", "-0.75"), Some(json!(-0.75)));
        assert_eq!(one("verbose", "true"), Some(json!(true)));
        assert_eq!(one("verbose", "false"), Some(json!(false)));
        // `Option<T>`, as a type list or as `anyOf` with null, through a `$ref`.
        assert_eq!(one("limit", "10"), Some(json!(10)));
        assert_eq!(one("maybe", "4"), Some(json!(4)));
    }

    #[test]
    fn lossy_or_unusual_texts_are_not() {
        for text in [
            "7.0",
            "1e3",
            " 7",
            "7 ",
            "+7",
            "07",
            "-0",
            "0x10",
            "",
            "seven",
            "18446744073709551616",
            "-9223372036854775809",
        ] {
            assert_eq!(one("id", text), None, "integer from {text:?}");
        }
        for text in [
            "1e3",
            "2.50",
            ".5",
            "5.",
            "NaN",
            "inf",
            "0.1000000000000000055",
            "1E2",
            "123456789012345678901234567890",
        ] {
            assert_eq!(one("ratio", text), None, "number from {text:?}");
        }
        for text in ["yes", "no", "1", "0", "True", "TRUE", " true"] {
            assert_eq!(one("verbose", text), None, "boolean from {text:?}");
        }
        assert_eq!(one("limit", "null"), None);
    }

    #[test]
    fn ambiguous_or_hidden_places_are_left_alone() {
        assert_eq!(one("name", "7"), None, "a string is a string");
        assert_eq!(one("either", "7"), None, "the schema allows the string");
        assert_eq!(one("choice", "7"), None, "two branches");
        assert_eq!(one("untyped", "7"), None, "no type");
        assert_eq!(one("secret", "7"), None, "a hidden parameter");
        assert_eq!(one("unknown", "7"), None, "not in the schema");
    }

    #[test]
    fn nested_properties_and_items_are_followed() {
        assert_eq!(
            run(r#"{"filter": {"min": "2", "tags": ["3"]}, "ids": ["1", 2, "x", "-4"]}"#),
            Some(r#"{"filter": {"min": 2, "tags": ["3"]}, "ids": [1, 2, "x", -4]}"#.to_string())
        );
        let coerced = coerce(
            &schema(),
            r#"{"ids": ["1"], "filter": {"min": "2"}}"#,
            &|_| false,
        );
        assert_eq!(coerced.unwrap().changed, ["ids[0]", "filter.min"]);
    }

    #[test]
    fn everything_else_stays_byte_for_byte() {
        // Repeated keys, spacing and other values are the model's; both copies are coerced.
        assert_eq!(
            run("{ \"id\" :\"7\",\"name\":\"7\", \"id\": \"8\" }"),
            Some("{ \"id\" :7,\"name\":\"7\", \"id\": 8 }".to_string())
        );
        assert_eq!(run(r#"{"id": 7}"#), None, "nothing to change");
        assert_eq!(run(r#"{"id": "7"#), None, "not JSON");
        assert_eq!(run(r#"["7"]"#), None, "not an object");
        // An escaped string whose text is exactly the value.
        assert_eq!(run(r#"{"id": "\u0037"}"#), Some(r#"{"id": 7}"#.to_string()));
    }
}
