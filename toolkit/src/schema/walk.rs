//! Walking JSON Schemas: the helpers every dialect pass, the integer ranges and the instance
//! matcher share — visiting sub-schemas by keyword, resolving and inlining `$ref`, flattening
//! `allOf`, pruning unused definitions. Every helper accepts any [`Value`]: non-object roots,
//! boolean schemas, dangling or recursive `$ref`s give a usable result, never a panic or an
//! endless loop.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

/// Most `$ref` expansions one pass performs. Inlining a DAG of definitions can grow the
/// schema exponentially; past this budget, references are no longer expanded.
const INLINE_BUDGET: usize = 2048;

/// Deepest nesting a pass descends into. `serde_json` refuses to parse deeper documents
/// anyway; this only protects against stack exhaustion on hand-built values.
pub(crate) const MAX_DEPTH: usize = 128;

/// Which keyword a sub-schema sits under, so a pass can tell a definition from a property.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slot<'k> {
    /// `items`, `not`, `additionalProperties`, ...: one schema under `keyword`.
    Single(&'k str),
    /// `anyOf`, `prefixItems`, ...: schema number `index` of the array under `keyword`.
    Item(&'k str, usize),
    /// `properties`, `$defs`, ...: the schema named `name` in the map under `keyword`.
    Entry(&'k str, &'k str),
}

const SINGLE_KEYWORDS: &[&str] = &[
    "additionalProperties",
    "items",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
];
const ARRAY_KEYWORDS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems", "items"];
const MAP_KEYWORDS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// The direct sub-schemas of a schema object, with where each sits. Values of annotation
/// keywords (`default`, `enum`, `examples`) are data, not schemas, and are never returned.
pub(crate) fn subschemas_mut(map: &mut Map<String, Value>) -> Vec<(Slot<'_>, &mut Value)> {
    let mut out = Vec::new();
    for (key, value) in map.iter_mut() {
        let key = key.as_str();
        if SINGLE_KEYWORDS.contains(&key) && (value.is_object() || value.is_boolean()) {
            out.push((Slot::Single(key), value));
        } else if let Value::Array(items) = value {
            if ARRAY_KEYWORDS.contains(&key) {
                for (index, item) in items.iter_mut().enumerate() {
                    out.push((Slot::Item(key, index), item));
                }
            }
        } else if let Value::Object(entries) = value
            && MAP_KEYWORDS.contains(&key)
        {
            for (name, entry) in entries.iter_mut() {
                out.push((Slot::Entry(key, name.as_str()), entry));
            }
        }
    }
    out
}

/// Read-only counterpart of [`subschemas_mut`], for checks.
pub(crate) fn subschemas(map: &Map<String, Value>) -> Vec<(Slot<'_>, &Value)> {
    let mut out = Vec::new();
    for (key, value) in map {
        let key = key.as_str();
        if SINGLE_KEYWORDS.contains(&key) && (value.is_object() || value.is_boolean()) {
            out.push((Slot::Single(key), value));
        } else if let (Value::Array(items), true) = (value, ARRAY_KEYWORDS.contains(&key)) {
            out.extend(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (Slot::Item(key, i), v)),
            );
        } else if let (Value::Object(entries), true) = (value, MAP_KEYWORDS.contains(&key)) {
            out.extend(
                entries
                    .iter()
                    .map(|(n, v)| (Slot::Entry(key, n.as_str()), v)),
            );
        }
    }
    out
}

/// The `$ref` a definition is reached by, for slots under `$defs`/`definitions`.
pub(crate) fn definition_ref(slot: Slot<'_>) -> Option<String> {
    match slot {
        Slot::Entry(keyword @ ("$defs" | "definitions"), name) => Some(format!(
            "#/{keyword}/{}",
            name.replace('~', "~0").replace('/', "~1")
        )),
        _ => None,
    }
}

/// Resolves local `$ref`s against the original root and tracks which references are being
/// expanded, so that recursive definitions are detected instead of expanded forever.
pub(crate) struct Refs<'a> {
    root: &'a Value,
    stack: Vec<String>,
    budget: usize,
}

/// Why a `$ref` could not be expanded.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Unexpandable {
    /// Not a local reference, or nothing at that location.
    Dangling,
    /// Already expanded the allowed number of times on the current path, or the budget
    /// is spent.
    Recursive,
}

impl<'a> Refs<'a> {
    /// References into `root`; the root itself counts as being expanded (`"$ref": "#"`).
    pub(crate) fn new(root: &'a Value) -> Self {
        Refs {
            root,
            stack: vec!["#".to_owned()],
            budget: INLINE_BUDGET,
        }
    }

    /// The schema `reference` points to, if it is a local JSON pointer that resolves.
    pub(crate) fn resolve(&self, reference: &str) -> Option<&'a Value> {
        let pointer = percent_decode(reference.strip_prefix('#')?);
        if pointer.is_empty() {
            return Some(self.root);
        }
        self.root.pointer(&pointer)
    }

    /// How many times `reference` is being expanded on the current path. References are
    /// compared percent-decoded, so `A%3CT%3E` and `A<T>` count as the same definition.
    pub(crate) fn depth(&self, reference: &str) -> usize {
        let key = percent_decode(reference);
        self.stack.iter().filter(|r| **r == key).count()
    }

    /// Starts expanding `reference` unless it is already expanded `max_depth` times on
    /// this path or the budget is spent; the caller must [`Refs::truncate`] back
    /// to [`Refs::mark`] once the expanded sub-tree is done.
    pub(crate) fn enter(
        &mut self,
        reference: &str,
        max_depth: usize,
    ) -> Result<&'a Value, Unexpandable> {
        let target = self.resolve(reference).ok_or(Unexpandable::Dangling)?;
        if self.budget == 0 || self.depth(reference) >= max_depth {
            return Err(Unexpandable::Recursive);
        }
        self.budget -= 1;
        self.stack.push(percent_decode(reference));
        Ok(target)
    }

    /// Marks a definition as being expanded while its body is transformed in place.
    pub(crate) fn push(&mut self, reference: &str) {
        self.stack.push(percent_decode(reference));
    }

    /// Current stack height, to restore with [`Refs::truncate`].
    pub(crate) fn mark(&self) -> usize {
        self.stack.len()
    }

    /// Leaves every expansion entered since `mark`.
    pub(crate) fn truncate(&mut self, mark: usize) {
        self.stack.truncate(mark);
    }
}

/// `%XX` escapes in a URI fragment, as schema generators write them for unusual names.
fn percent_decode(fragment: &str) -> String {
    let bytes = fragment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| fragment.to_owned())
}

/// A schema as an object map: `true` becomes `{}`, `false` becomes `{"not": {}}`, anything
/// else (not a schema at all) becomes `{}` so that a pass can keep going.
pub(crate) fn into_map(schema: Value) -> Map<String, Value> {
    match schema {
        Value::Object(map) => map,
        Value::Bool(false) => {
            let mut map = Map::new();
            map.insert("not".to_owned(), json!({}));
            map
        }
        _ => Map::new(),
    }
}

/// Combines `src` into `dst` as the conjunction of both, as far as a flat schema can:
/// `properties` and `required` are unioned, every other keyword of `src` is copied only when
/// `dst` lacks it, so `dst`'s own annotations (the `description` next to a `$ref`) win.
pub(crate) fn merge_into(dst: &mut Map<String, Value>, src: Map<String, Value>) {
    for (key, value) in src {
        match (key.as_str(), dst.get_mut(&key), value) {
            ("properties", Some(Value::Object(mine)), Value::Object(theirs)) => {
                for (name, schema) in theirs {
                    mine.entry(name).or_insert(schema);
                }
            }
            ("required", Some(Value::Array(mine)), Value::Array(theirs)) => {
                for name in theirs {
                    if !mine.contains(&name) {
                        mine.push(name);
                    }
                }
            }
            (_, Some(_), _) => {}
            (_, None, value) => {
                dst.insert(key, value);
            }
        }
    }
}

/// Replaces `allOf` by the merge of its members where each member is an inline schema or a
/// resolvable `$ref` (expanded through `refs`, so recursion stays bounded). Members that
/// cannot be merged (a recursive reference) stay in a shorter `allOf`. Returns whether
/// anything changed; the caller transforms the merged schema afterwards.
pub(crate) fn flatten_all_of(
    map: &mut Map<String, Value>,
    refs: &mut Refs<'_>,
    max_depth: usize,
) -> bool {
    let Some(Value::Array(members)) = map.remove("allOf") else {
        return false;
    };
    let mut kept = Vec::new();
    let mut changed = false;
    for member in members {
        let reference = member
            .get("$ref")
            .and_then(Value::as_str)
            .filter(|_| member.as_object().is_some_and(|m| m.len() == 1))
            .map(str::to_owned);
        let member = match reference {
            Some(reference) => match refs.enter(&reference, max_depth) {
                Ok(target) => target.clone(),
                Err(_) => {
                    kept.push(member);
                    continue;
                }
            },
            None => member,
        };
        changed = true;
        merge_into(map, into_map(member));
    }
    if !kept.is_empty() {
        map.insert("allOf".to_owned(), Value::Array(kept));
    }
    changed
}

/// Renames `oneOf` to `anyOf`. Providers either reject `oneOf` or treat it as `anyOf`; the
/// generated branches (enum variants) are disjoint, so nothing is lost. When both keywords
/// are present they cannot share one name, and `oneOf` is left for the caller to judge.
pub(crate) fn one_of_to_any_of(map: &mut Map<String, Value>) {
    if !map.contains_key("anyOf")
        && let Some(branches) = map.remove("oneOf")
    {
        map.insert("anyOf".to_owned(), branches);
    }
}

/// Whether the schema's `type` is or includes `name`.
pub(crate) fn has_type(map: &Map<String, Value>, name: &str) -> bool {
    match map.get("type") {
        Some(Value::String(t)) => t == name,
        Some(Value::Array(types)) => types.iter().any(|t| t == name),
        _ => false,
    }
}

/// Whether the schema describes objects: `type` says so, or it lists properties.
pub(crate) fn is_object_schema(map: &Map<String, Value>) -> bool {
    has_type(map, "object") || (!map.contains_key("type") && map.contains_key("properties"))
}

/// A parameters root that is always `{"type": "object", ...}`: providers reject anything
/// else for tool parameters. An object-less type (a bare string schema) cannot describe
/// named arguments, so it is replaced by an empty object schema rather than sent broken.
pub(crate) fn object_root(schema: &Value) -> Map<String, Value> {
    let mut map = match schema {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    match map.get("type") {
        None => {}
        Some(Value::String(t)) if t == "object" => {}
        Some(Value::Array(types)) if types.iter().any(|t| t == "object") => {}
        Some(_) => map = Map::new(),
    }
    map.insert("type".to_owned(), Value::String("object".to_owned()));
    map
}

/// The light clean-up shared by the non-strict dialects (OpenAI, Anthropic), which accept
/// JSON Schema nearly verbatim: object root, no `$schema` (OpenAI rejects a meta-schema
/// URI it does not know), `oneOf` spelled `anyOf`.
pub(crate) fn loose(canonical: &Value) -> Value {
    fn walk(map: &mut Map<String, Value>, depth: usize) {
        map.remove("$schema");
        one_of_to_any_of(map);
        if depth < MAX_DEPTH {
            for (_, child) in subschemas_mut(map) {
                if let Value::Object(child) = child {
                    walk(child, depth + 1);
                }
            }
        }
    }
    let mut root = object_root(canonical);
    walk(&mut root, 0);
    Value::Object(root)
}

/// Removes definitions no longer referenced from outside `$defs` (directly or through other
/// definitions), typically after their only use was inlined.
pub(crate) fn prune_definitions(root: &mut Map<String, Value>) {
    for keyword in ["$defs", "definitions"] {
        let Some(Value::Object(defs)) = root.remove(keyword) else {
            continue;
        };
        let mut refs = Vec::new();
        root.values()
            .for_each(|value| collect_refs(value, &mut refs));
        let prefix = format!("/{keyword}/");
        let mut used: HashSet<String> = HashSet::new();
        while let Some(reference) = refs.pop() {
            let decoded = percent_decode(reference.strip_prefix('#').unwrap_or_default());
            let Some(rest) = decoded.strip_prefix(&prefix) else {
                continue;
            };
            let name = rest
                .split('/')
                .next()
                .unwrap_or_default()
                .replace("~1", "/")
                .replace("~0", "~");
            if let Some(def) = defs.get(&name)
                && used.insert(name)
            {
                collect_refs(def, &mut refs);
            }
        }
        let kept: Map<String, Value> = defs
            .into_iter()
            .filter(|(name, _)| used.contains(name))
            .collect();
        if !kept.is_empty() {
            root.insert(keyword.to_owned(), Value::Object(kept));
        }
    }
}

fn collect_refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("$ref", Value::String(reference)) => out.push(reference.clone()),
                    _ => collect_refs(value, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

/// Appends `note` to the schema's description, creating it if needed.
pub(crate) fn append_description(map: &mut Map<String, Value>, note: &str) {
    let text = match map.get("description").and_then(Value::as_str) {
        Some(existing) if !existing.is_empty() => format!("{existing} {note}"),
        _ => note.to_owned(),
    };
    map.insert("description".to_owned(), Value::String(text));
}
