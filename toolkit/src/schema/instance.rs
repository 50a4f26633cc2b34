//! How a JSON value relates to a schema, as far as reading a model's arguments needs it:
//! following `$ref`, whether `null` is allowed, and which `anyOf`/`oneOf` branch a value
//! belongs to.
//!
//! Not a validator (the canonical schema validates the arguments later): [`fits`] answers
//! "could this value be an instance of this schema?" well enough to tell the variants of a
//! Rust enum apart, whatever their serde tagging: by the tag's `const`/`enum` (internally and
//! adjacently tagged), by the required key (externally tagged), by shape and types
//! (untagged). A `null` for an optional property counts as absent, the way a strict-mode
//! model writes "not given".

use std::cell::Cell;
use std::cmp::Ordering;
use std::collections::HashSet;

use serde_json::{Map, Value};

use super::walk::{MAX_DEPTH, Refs};

/// Most `$ref` hops followed to reach a schema; chains longer than this are cycles.
const MAX_HOPS: usize = 32;

/// Most schema nodes one walk visits. Unions of unions (`A: {anyOf: [A, A]}`) would otherwise
/// make a walk exponential; past the budget, answers are the lenient ones.
const BUDGET: usize = 100_000;

/// The schema a walk reads, with its `$ref`s resolvable and its cost bounded.
pub(crate) struct Schemas<'a> {
    refs: Refs<'a>,
    budget: Cell<usize>,
}

impl<'a> Schemas<'a> {
    /// A walk over `root` and the definitions it holds.
    pub(crate) fn new(root: &'a Value) -> Self {
        Schemas {
            refs: Refs::new(root),
            budget: Cell::new(BUDGET),
        }
    }

    /// Whether the walk may visit one more node.
    fn spend(&self, depth: usize) -> bool {
        let left = self.budget.get();
        if left == 0 || depth > MAX_DEPTH {
            return false;
        }
        self.budget.set(left - 1);
        true
    }

    /// The schema object a walk visits next, or `None` when `schema` is not an object or
    /// the walk is out of budget or depth.
    pub(crate) fn walk(&self, schema: &'a Value, depth: usize) -> Option<&'a Map<String, Value>> {
        if self.spend(depth) {
            schema.as_object()
        } else {
            None
        }
    }

    /// The target of the schema's own `$ref`, if it has one that resolves. Keywords next to
    /// a `$ref` apply too (2020-12), so callers treat the target as one more conjunct.
    pub(crate) fn target(&self, map: &Map<String, Value>) -> Option<&'a Value> {
        map.get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| self.refs.resolve(r))
    }

    /// The schema behind a chain of bare `$ref`s (`{"$ref": ...}` and nothing else, which is
    /// how schemars refers to a named type).
    pub(crate) fn resolve(&self, mut schema: &'a Value) -> &'a Value {
        for _ in 0..MAX_HOPS {
            match schema.as_object() {
                Some(map) if map.len() == 1 => match self.target(map) {
                    Some(target) => schema = target,
                    None => break,
                },
                _ => break,
            }
        }
        schema
    }

    /// Whether `null` is visibly valid for the schema: unconstrained, a `null` type, enum
    /// member or const, or a union with such a branch.
    pub(crate) fn accepts_null(&self, schema: &'a Value, depth: usize) -> bool {
        if !self.spend(depth) {
            return true;
        }
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
                    branches.iter().any(|b| self.accepts_null(b, depth + 1))
                }
                _ => true,
            });
        let conjoined = match map.get("allOf") {
            Some(Value::Array(parts)) => parts.iter().all(|p| self.accepts_null(p, depth + 1)),
            _ => true,
        };
        let referenced = self
            .target(map)
            .is_none_or(|target| self.accepts_null(target, depth + 1));
        typed && enumerated && branched && conjoined && referenced
    }

    /// Whether the schema is exactly `{"type": "null"}` (after `$ref`), the branch `Option`
    /// adds to a union.
    pub(crate) fn is_null_only(&self, schema: &'a Value) -> bool {
        match self.resolve(schema).get("type") {
            Some(Value::String(t)) => t == "null",
            _ => false,
        }
    }

    /// The branch of `branches` (an `anyOf`/`oneOf`) that `value` belongs to: the first one
    /// it [fits](Self::fits), in order, which is also the order serde tries untagged
    /// variants in. When no branch fits (the value is invalid anyway) and only one branch is
    /// not `null`-only, that one, so the value is still read as the type it most likely
    /// meant.
    pub(crate) fn branch_of(
        &self,
        branches: &'a [Value],
        value: &Value,
        depth: usize,
    ) -> Option<&'a Value> {
        let mut candidates = branches.iter().filter(|b| !self.is_null_only(b));
        if let Some(found) = candidates.clone().find(|b| self.fits(b, value, depth + 1)) {
            return Some(found);
        }
        match (candidates.next(), candidates.next()) {
            (Some(only), None) => Some(only),
            _ => None,
        }
    }

    /// Whether `value` could be an instance of `schema`: its `type`, `const` and `enum`
    /// allow it, its `$ref` target and every part of `allOf` fit it, some branch of each
    /// `anyOf`/`oneOf` does, an object has every required property and its known properties
    /// fit, an array's items fit `items`.
    ///
    /// Lenient where a check would need more than structure: `pattern`, formats and numeric
    /// or length bounds are not checked, unknown properties are allowed unless
    /// `additionalProperties` is `false`, and an optional property set to `null` counts as
    /// absent.
    pub(crate) fn fits(&self, schema: &'a Value, value: &Value, depth: usize) -> bool {
        if !self.spend(depth) {
            return true;
        }
        let map = match schema {
            Value::Object(map) => map,
            Value::Bool(allowed) => return *allowed,
            _ => return true,
        };
        if let Some(types) = map.get("type")
            && !type_fits(types, value)
        {
            return false;
        }
        if let Some(constant) = map.get("const")
            && !same(constant, value)
        {
            return false;
        }
        if let Some(Value::Array(members)) = map.get("enum")
            && !members.iter().any(|member| same(member, value))
        {
            return false;
        }
        if let Some(target) = self.target(map)
            && !self.fits(target, value, depth + 1)
        {
            return false;
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = map.get(keyword)
                && !branches.iter().any(|b| self.fits(b, value, depth + 1))
            {
                return false;
            }
        }
        if let Some(Value::Array(parts)) = map.get("allOf")
            && !parts.iter().all(|p| self.fits(p, value, depth + 1))
        {
            return false;
        }
        match value {
            Value::Object(members) => self.object_fits(map, members, depth),
            Value::Array(items) => match map.get("items") {
                Some(item) if item.is_object() || item.is_boolean() => {
                    items.iter().all(|v| self.fits(item, v, depth + 1))
                }
                _ => true,
            },
            _ => true,
        }
    }

    fn object_fits(
        &self,
        map: &'a Map<String, Value>,
        members: &Map<String, Value>,
        depth: usize,
    ) -> bool {
        let properties = map.get("properties").and_then(Value::as_object);
        let required: HashSet<&str> = match map.get("required") {
            Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
            _ => HashSet::new(),
        };
        if required.iter().any(|name| !members.contains_key(*name)) {
            return false;
        }
        let closed = map.get("additionalProperties") == Some(&Value::Bool(false))
            && !map.contains_key("patternProperties");
        let additional = map.get("additionalProperties").filter(|s| s.is_object());
        members.iter().all(|(name, value)| {
            match properties.and_then(|p| p.get(name)) {
                // A strict-mode model writes "not given" as `null`.
                Some(_) if value.is_null() && !required.contains(name.as_str()) => true,
                Some(property) => self.fits(property, value, depth + 1),
                None if closed => false,
                None => additional.is_none_or(|schema| self.fits(schema, value, depth + 1)),
            }
        })
    }
}

/// Whether the JSON type of `value` is (one of) `types`. `integer` takes any number without
/// a fraction, as JSON Schema does; unknown type names do not restrict.
fn type_fits(types: &Value, value: &Value) -> bool {
    let one = |name: &Value| match name.as_str() {
        Some("null") => value.is_null(),
        Some("boolean") => value.is_boolean(),
        Some("integer") => is_integer(value),
        Some("number") => value.is_number(),
        Some("string") => value.is_string(),
        Some("array") => value.is_array(),
        Some("object") => value.is_object(),
        _ => true,
    };
    match types {
        Value::Array(names) => names.iter().any(one),
        name => one(name),
    }
}

fn is_integer(value: &Value) -> bool {
    match value {
        Value::Number(n) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

/// JSON equality with numbers compared by value (`1` equals `1.0`), as JSON Schema's
/// `const` and `enum` do.
pub(crate) fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => match (x.as_u64(), y.as_u64()) {
                (Some(x), Some(y)) => x == y,
                _ => x.as_f64().partial_cmp(&y.as_f64()) == Some(Ordering::Equal),
            },
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn root() -> Value {
        json!({
            "$defs": {
                "Action": {"oneOf": [
                    {"type": "object", "properties": {"type": {"type": "string", "const": "key"},
                        "code": {"type": "string"}, "shift": {"type": "boolean", "default": false}},
                     "required": ["type", "code"]},
                    {"type": "object", "properties": {"type": {"type": "string", "const": "click"},
                        "x": {"type": "integer"}},
                     "required": ["type", "x"]}
                ]},
                "External": {"oneOf": [
                    {"type": "string", "enum": ["Stop"]},
                    {"type": "object", "properties": {"Go": {"type": "integer"}},
                     "required": ["Go"], "additionalProperties": false}
                ]}
            }
        })
    }

    fn pick(name: &str, value: Value) -> Option<usize> {
        let root = root();
        let schemas = Schemas::new(&root);
        let branches = root["$defs"][name]["oneOf"].as_array().unwrap();
        schemas
            .branch_of(branches, &value, 0)
            .and_then(|found| branches.iter().position(|b| std::ptr::eq(b, found)))
    }

    #[test]
    fn branches_are_told_apart_by_tag_key_and_type() {
        assert_eq!(
            pick("Action", json!({"type": "key", "code": "K", "shift": null})),
            Some(0)
        );
        assert_eq!(pick("Action", json!({"type": "click", "x": 3})), Some(1));
        assert_eq!(pick("Action", json!({"type": "click", "x": 3.0})), Some(1));
        assert_eq!(pick("Action", json!({"type": "drag"})), None);
        assert_eq!(pick("External", json!("Stop")), Some(0));
        assert_eq!(pick("External", json!({"Go": 1})), Some(1));
        assert_eq!(pick("External", json!({"Go": 1, "extra": 2})), None);
    }

    #[test]
    fn keywords_next_to_a_ref_apply_too() {
        // How schemars writes a newtype variant of an internally tagged enum.
        let root = json!({
            "oneOf": [
                {"type": "object", "properties": {"type": {"const": "scroll"}},
                 "$ref": "#/$defs/Scroll", "required": ["type"]},
                {"type": "object", "properties": {"type": {"const": "then"}, "n": {"type": "integer"}},
                 "required": ["type"]}
            ],
            "$defs": {"Scroll": {"type": "object", "properties": {"dy": {"type": "integer"}}}}
        });
        let schemas = Schemas::new(&root);
        let branches = root["oneOf"].as_array().unwrap();
        let then = json!({"type": "then", "n": null});
        assert!(std::ptr::eq(
            schemas.branch_of(branches, &then, 0).unwrap(),
            &branches[1]
        ));
        assert!(!schemas.fits(&branches[0], &json!({"type": "scroll", "dy": "x"}), 0));
    }

    #[test]
    fn required_nulls_must_be_allowed() {
        let root = json!({});
        let schemas = Schemas::new(&root);
        let schema =
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
        assert!(!schemas.fits(&schema, &json!({"a": null}), 0));
        assert!(!schemas.fits(&schema, &json!({}), 0));
        let optional = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert!(schemas.fits(&optional, &json!({"a": null}), 0));
    }

    #[test]
    fn self_referencing_unions_stay_bounded() {
        let root = json!({"$defs": {"A": {"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/A"}, {"type": "string"}]}}});
        let schemas = Schemas::new(&root);
        let a = &root["$defs"]["A"];
        // Terminates (the budget runs out) and answers leniently.
        assert!(schemas.fits(a, &json!(1), 0));
        assert!(schemas.accepts_null(a, 0));
    }

    #[test]
    fn numbers_compare_by_value() {
        assert!(same(&json!(1), &json!(1.0)));
        assert!(same(&json!({"a": [1]}), &json!({"a": [1.0]})));
        assert!(!same(&json!(1), &json!("1")));
    }
}
