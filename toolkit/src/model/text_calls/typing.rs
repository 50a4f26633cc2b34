//! Types for XML-element parameters (read by `elements/`): XML text has no types, so the
//! called tool's parameter schema decides what each element becomes.
//!
//! - **Scalars.** Text becomes an integer, number, boolean or `null` where the schema (after
//!   `$ref`, `allOf`, and each branch of `anyOf`/`oneOf` in order) asks for one and the text
//!   is one (`10`, `-2.5`, `true`, `null`); an `enum`/`const` member is matched as written.
//!   Where the schema asks for a string, the text stays a string even if it looks like a
//!   number: `<code>007</code>` is `"007"`. Text the schema cannot take is kept as a string,
//!   so argument validation reports the mismatch to the model.
//! - **Objects.** Child elements become an object's properties, each typed by its property
//!   schema; for a union (a Rust enum) the first branch the object fits is used.
//! - **Arrays.** Sibling elements with the same name become an array. A single element
//!   where the schema asks for an array becomes a one-element array. An array may also be
//!   written as one element whose children are all `<item>` elements, one per item.
//!   Repeated elements where the schema wants one value stay an array too: nothing is
//!   dropped, and validation tells the model.
//! - **Empty elements** are `null` where the schema allows `null`, an empty array where it
//!   takes an array (and no string), and the empty string otherwise.
//! - **Without a schema** (no `properties` entry for the name, or a schema that says
//!   nothing), text that is exactly a JSON number, `true`, `false` or `null` becomes that
//!   value, and anything else a string.

use serde_json::{Map, Number, Value};

use super::syntax::{Body, Element};
use crate::schema::instance::{Schemas, same};

/// The parameters object: `elements` typed by `schema`, the tool's parameter schema.
pub(super) fn typed(elements: &[Element], schema: &Value) -> Value {
    let schemas = Schemas::new(schema);
    Typer { schemas: &schemas }.object(elements, schema, 0)
}

/// Most alternatives one schema is expanded into (unions of unions multiply).
const MAX_ALTERNATIVES: usize = 64;

/// One way a value can satisfy a schema: the conjunction of these schema objects (a schema,
/// its `$ref` target, its `allOf` parts, one branch of each union).
type Alternative<'a> = Vec<&'a Map<String, Value>>;

struct Typer<'s, 'a> {
    schemas: &'s Schemas<'a>,
}

impl<'a> Typer<'_, 'a> {
    /// The alternatives of `schema`, in branch order. An unconstrained schema is one
    /// alternative with no conjuncts.
    fn alternatives(&self, schema: &'a Value, depth: usize) -> Vec<Alternative<'a>> {
        let Some(map) = self.schemas.walk(schema, depth) else {
            return vec![Vec::new()];
        };
        let mut alternatives = vec![vec![map]];
        let mut conjuncts: Vec<&'a Value> = self.schemas.target(map).into_iter().collect();
        if let Some(Value::Array(parts)) = map.get("allOf") {
            conjuncts.extend(parts);
        }
        for conjunct in conjuncts {
            alternatives = product(&alternatives, &self.alternatives(conjunct, depth + 1));
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = map.get(keyword) {
                let options: Vec<Alternative<'a>> = branches
                    .iter()
                    .flat_map(|b| self.alternatives(b, depth + 1))
                    .collect();
                alternatives = product(&alternatives, &options);
            }
        }
        alternatives
    }

    /// An element typed by `schema`.
    fn element(&self, element: &Element, schema: &'a Value, depth: usize) -> Value {
        match &element.body {
            Body::Children(children) => self.children(children, schema, depth),
            Body::Empty => self.text(None, schema, depth),
            Body::Text(text) => self.text(Some(text), schema, depth),
        }
    }

    /// Child elements typed by `schema`: an array for `<item>` children where the schema
    /// takes an array, otherwise an object, with the first union branch it fits.
    fn children(&self, children: &[Element], schema: &'a Value, depth: usize) -> Value {
        let items = !children.is_empty() && children.iter().all(|c| c.name == "item");
        let mut first = None;
        for alternative in self.alternatives(schema, depth) {
            let value = if items && admits(&alternative, Kind::Array) {
                let item_schema = lookup(&alternative, |map| map.get("items"));
                children
                    .iter()
                    .map(|child| self.element_or_untyped(child, item_schema, depth + 1))
                    .collect()
            } else if admits(&alternative, Kind::Object) {
                self.object_in(children, &alternative, depth)
            } else {
                continue;
            };
            if self.schemas.fits(schema, &value, depth) {
                return value;
            }
            first.get_or_insert(value);
        }
        first.unwrap_or_else(|| untyped_object(children))
    }

    fn element_or_untyped(
        &self,
        element: &Element,
        schema: Option<&'a Value>,
        depth: usize,
    ) -> Value {
        match schema {
            Some(schema) => self.element(element, schema, depth),
            None => untyped(element),
        }
    }

    /// The parameters object (or any object) typed by `schema`.
    fn object(&self, children: &[Element], schema: &'a Value, depth: usize) -> Value {
        let alternatives = self.alternatives(schema, depth);
        let mut first = None;
        for alternative in &alternatives {
            let value = self.object_in(children, alternative, depth);
            if self.schemas.fits(schema, &value, depth) {
                return value;
            }
            first.get_or_insert(value);
        }
        first.unwrap_or_else(|| untyped_object(children))
    }

    /// Children as the properties of an object of one alternative; repeated names become
    /// arrays.
    fn object_in(
        &self,
        children: &[Element],
        alternative: &Alternative<'a>,
        depth: usize,
    ) -> Value {
        let mut object = Map::new();
        for (name, group) in by_name(children) {
            let property = lookup(alternative, |map| {
                map.get("properties").and_then(|p| p.get(name))
            })
            .or_else(|| {
                lookup(alternative, |map| {
                    map.get("additionalProperties").filter(|s| s.is_object())
                })
            });
            let value = match (property, group.as_slice()) {
                (None, [one]) => untyped(one),
                (None, many) => many.iter().map(|e| untyped(e)).collect(),
                (Some(property), [one]) => self.single(one, property, depth + 1),
                (Some(property), many) => {
                    let items = self.items_of(property, depth + 1).unwrap_or(property);
                    many.iter()
                        .map(|e| self.element(e, items, depth + 2))
                        .collect()
                }
            };
            object.insert(name.to_owned(), value);
        }
        Value::Object(object)
    }

    /// One element for a property: typed by the property's schema, or wrapped into a
    /// one-element array where the schema takes an array and the element is one item.
    fn single(&self, element: &Element, schema: &'a Value, depth: usize) -> Value {
        let value = self.element(element, schema, depth);
        if self.schemas.fits(schema, &value, depth) {
            return value;
        }
        if let Some(items) = self.items_of(schema, depth) {
            let wrapped = Value::Array(vec![self.element(element, items, depth + 1)]);
            if self.schemas.fits(schema, &wrapped, depth) {
                return wrapped;
            }
        }
        value
    }

    /// The item schema of the first alternative of `schema` that takes arrays.
    fn items_of(&self, schema: &'a Value, depth: usize) -> Option<&'a Value> {
        self.alternatives(schema, depth)
            .iter()
            .filter(|alternative| admits(alternative, Kind::Array))
            .find_map(|alternative| lookup(alternative, |map| map.get("items")))
    }

    /// Text (or an empty element, `None`) typed by `schema`: the first alternative that
    /// can take it, else the untyped rule.
    fn text(&self, text: Option<&str>, schema: &'a Value, depth: usize) -> Value {
        for alternative in self.alternatives(schema, depth) {
            if let Some(value) = scalar(text, &alternative) {
                return value;
            }
        }
        untyped_text(text)
    }
}

/// Every combination of one alternative from `left` and one from `right`, in order, at most
/// [`MAX_ALTERNATIVES`].
fn product<'a>(left: &[Alternative<'a>], right: &[Alternative<'a>]) -> Vec<Alternative<'a>> {
    let mut out = Vec::new();
    for l in left {
        for r in right {
            if out.len() == MAX_ALTERNATIVES {
                return out;
            }
            out.push(l.iter().chain(r).copied().collect());
        }
    }
    out
}

/// The first value `pick` finds in the alternative's conjuncts.
fn lookup<'a>(
    alternative: &Alternative<'a>,
    pick: impl Fn(&'a Map<String, Value>) -> Option<&'a Value>,
) -> Option<&'a Value> {
    alternative.iter().find_map(|map| pick(map))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Null,
    Boolean,
    Integer,
    Number,
    String,
    Array,
    Object,
}

/// Whether every conjunct of the alternative allows values of `kind` by its `type`.
fn admits(alternative: &Alternative<'_>, kind: Kind) -> bool {
    alternative.iter().all(|map| match map.get("type") {
        None => true,
        Some(Value::Array(types)) => types.iter().any(|t| type_admits(t, kind)),
        Some(t) => type_admits(t, kind),
    })
}

fn type_admits(name: &Value, kind: Kind) -> bool {
    match name.as_str() {
        Some("null") => kind == Kind::Null,
        Some("boolean") => kind == Kind::Boolean,
        Some("integer") => kind == Kind::Integer,
        // Every integer is a number; text for a `number` is read as one too.
        Some("number") => matches!(kind, Kind::Number | Kind::Integer),
        Some("string") => kind == Kind::String,
        Some("array") => kind == Kind::Array,
        Some("object") => kind == Kind::Object,
        _ => true,
    }
}

/// The `enum`/`const` members of the alternative, if one of its conjuncts lists them.
fn members<'a>(alternative: &Alternative<'a>) -> Option<Vec<&'a Value>> {
    alternative
        .iter()
        .find_map(|map| match (map.get("enum"), map.get("const")) {
            (Some(Value::Array(values)), _) => Some(values.iter().collect()),
            (_, Some(value)) => Some(vec![value]),
            _ => None,
        })
}

/// Text as a value of one alternative, if the alternative can take it.
fn scalar(text: Option<&str>, alternative: &Alternative<'_>) -> Option<Value> {
    let says_what = |map: &&Map<String, Value>| {
        ["type", "enum", "const"]
            .iter()
            .any(|key| map.contains_key(*key))
    };
    if !alternative.iter().any(says_what) {
        // The schema says nothing about the value: leave the text to the untyped rule.
        return None;
    }
    let trimmed = text.map(str::trim).unwrap_or_default();
    if let Some(members) = members(alternative) {
        let as_json = serde_json::from_str::<Value>(trimmed).ok();
        return members
            .into_iter()
            .find(|member| match member {
                Value::String(s) => Some(s.as_str()) == text || s == trimmed,
                Value::Null => text.is_none() || trimmed == "null",
                other => as_json.as_ref().is_some_and(|v| same(v, other)),
            })
            .cloned();
    }
    let admits = |kind| admits(alternative, kind);
    if text.is_none() {
        if admits(Kind::Null) {
            return Some(Value::Null);
        }
        if admits(Kind::Array) && !admits(Kind::String) {
            return Some(Value::Array(Vec::new()));
        }
        if admits(Kind::String) {
            return Some(Value::String(String::new()));
        }
    }
    if admits(Kind::Null) && !admits(Kind::String) && trimmed == "null" {
        return Some(Value::Null);
    }
    if admits(Kind::Integer)
        && let Some(number) = integer(trimmed)
    {
        return Some(Value::Number(number));
    }
    if admits(Kind::Number)
        && let Some(number) = number(trimmed)
    {
        return Some(Value::Number(number));
    }
    if admits(Kind::Boolean) {
        if trimmed.eq_ignore_ascii_case("true") {
            return Some(Value::Bool(true));
        }
        if trimmed.eq_ignore_ascii_case("false") {
            return Some(Value::Bool(false));
        }
    }
    if admits(Kind::String) {
        return Some(Value::String(text.unwrap_or_default().to_owned()));
    }
    // JSON written inside an element where the schema takes an object or array.
    let json = serde_json::from_str::<Value>(trimmed).ok()?;
    let fits =
        (json.is_array() && admits(Kind::Array)) || (json.is_object() && admits(Kind::Object));
    fits.then_some(json)
}

/// An integer as written (`10`, `+10`, `007`, `-3`), or a whole number written as a decimal
/// (`10.0`) within the range where `f64` holds integers exactly.
fn integer(text: &str) -> Option<Number> {
    if let Ok(n) = text.parse::<i64>() {
        return Some(n.into());
    }
    if let Ok(n) = text.parse::<u64>() {
        return Some(n.into());
    }
    let float = text.parse::<f64>().ok()?;
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    (float.fract() == 0.0 && float.abs() <= EXACT).then(|| Number::from(float as i64))
}

/// A finite number as written; integers stay integers.
fn number(text: &str) -> Option<Number> {
    if let Some(n) = text.parse::<i64>().ok().map(Number::from) {
        return Some(n);
    }
    if let Some(n) = text.parse::<u64>().ok().map(Number::from) {
        return Some(n);
    }
    text.parse::<f64>().ok().and_then(Number::from_f64)
}

/// An element without a schema: see the module docs.
fn untyped(element: &Element) -> Value {
    match &element.body {
        Body::Children(children) => untyped_object(children),
        Body::Empty => untyped_text(None),
        Body::Text(text) => untyped_text(Some(text)),
    }
}

fn untyped_object(children: &[Element]) -> Value {
    let mut object = Map::new();
    for (name, group) in by_name(children) {
        let value = match group.as_slice() {
            [one] => untyped(one),
            many => many.iter().map(|e| untyped(e)).collect(),
        };
        object.insert(name.to_owned(), value);
    }
    Value::Object(object)
}

/// Children grouped by name, in order of first appearance.
fn by_name(children: &[Element]) -> Vec<(&str, Vec<&Element>)> {
    let mut groups: Vec<(&str, Vec<&Element>)> = Vec::new();
    for child in children {
        match groups.iter_mut().find(|(name, _)| *name == child.name) {
            Some((_, group)) => group.push(child),
            None => groups.push((&child.name, vec![child])),
        }
    }
    groups
}

fn untyped_text(text: Option<&str>) -> Value {
    let Some(text) = text else {
        return Value::String(String::new());
    };
    match serde_json::from_str::<Value>(text.trim()) {
        Ok(scalar @ (Value::Number(_) | Value::Bool(_) | Value::Null)) => scalar,
        _ => Value::String(text.to_owned()),
    }
}
