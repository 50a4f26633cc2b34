//! The canonical JSON Schema (2020-12) of a tool's visible parameters, built from the
//! per-parameter schemas that `#[tool]` generates with schemars.
//!
//! Built once per registration: presets bound with `.preset` leave the schema, values bound
//! with `.default_arg` stay but become optional (with a `default`). Provider dialects are
//! derived from this one schema by [`Dialect`](super::Dialect).

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Map, Value, json};

use super::integers;
use crate::param::{ParamKind, ParamSpec, PlannedParam};

/// The generator `#[tool]` uses for parameter schemas: draft 2020-12, `$defs` for shared types,
/// and every integer type's range stated as `minimum`/`maximum` (schemars gives most of them
/// only a `format`, which validators and models may ignore).
pub fn schema_generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with_transform(state_integer_ranges)
        .into_generator()
}

/// Schema of one parameter type (a `$ref` into the generator's `$defs` for named types).
pub fn param_schema<T: JsonSchema + ?Sized>(generator: &mut SchemaGenerator) -> Value {
    // schemars runs a generator's transforms on root schemas and on definitions taken with
    // `take_definitions(true)`, not on the inline schema returned here (`u32`, `Vec<i64>`).
    let mut schema = generator.subschema_for::<T>().to_value();
    integers::state_ranges(&mut schema);
    schema
}

fn state_integer_ranges(schema: &mut Schema) {
    if let Some(map) = schema.as_object_mut() {
        integers::state_ranges_in(map, 0);
    }
}

/// A self-contained schema for `T` (its own `$defs`, no `$schema`), used for output schemas.
pub fn standalone_schema<T: JsonSchema + ?Sized>(_generator: &mut SchemaGenerator) -> Value {
    let mut value = schema_generator().into_root_schema_for::<T>().to_value();
    if let Some(obj) = value.as_object_mut() {
        obj.remove("$schema");
    }
    value
}

/// Assemble the canonical input schema of one registration: `whole` when the tool declares
/// its input schema whole, else the object of its visible `params` (as `planned` for this
/// registration) with the `defs` they reference.
pub(crate) fn input_schema(
    whole: Option<&Value>,
    params: &[ParamSpec],
    defs: &Map<String, Value>,
    planned: &[PlannedParam],
) -> Value {
    if let Some(schema) = whole {
        return schema.clone();
    }
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (decl, plan) in params.iter().zip(planned) {
        if plan.hidden || !decl.kind.is_json() {
            continue;
        }
        let mut schema = decl.schema.clone();
        if let Some(obj) = schema.as_object_mut() {
            if let Some(desc) = &decl.description {
                obj.insert("description".into(), Value::String(desc.to_string()));
            }
            if let Some(bound) = &plan.binding
                && let Ok(default) = serde_json::from_str::<Value>(bound.get())
            {
                obj.insert("default".into(), default);
            }
        }
        if decl.kind == ParamKind::Required && plan.binding.is_none() {
            required.push(Value::String(decl.name.to_string()));
        }
        properties.insert(decl.name.to_string(), schema);
    }
    let mut root = Map::new();
    root.insert("type".into(), json!("object"));
    root.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        root.insert("required".into(), Value::Array(required));
    }
    root.insert("additionalProperties".into(), Value::Bool(false));
    let defs = referenced_defs(&root, defs);
    if !defs.is_empty() {
        root.insert("$defs".into(), Value::Object(defs));
    }
    Value::Object(root)
}

/// The definitions reachable from `root` through `#/$defs/..` references. Definitions used
/// only by parameters that a registration hid are dropped, so no trace of them reaches a model.
fn referenced_defs(root: &Map<String, Value>, defs: &Map<String, Value>) -> Map<String, Value> {
    let mut keep = Map::new();
    let mut pending: Vec<String> = Vec::new();
    for value in root.values() {
        collect_refs(value, &mut pending);
    }
    while let Some(name) = pending.pop() {
        if keep.contains_key(&name) {
            continue;
        }
        if let Some(def) = defs.get(&name) {
            collect_refs(def, &mut pending);
            keep.insert(name, def.clone());
        }
    }
    // Keep the declaration order of the generator, for stable snapshots.
    defs.iter()
        .filter(|(k, _)| keep.contains_key(*k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn collect_refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if k == "$ref" {
                    if let Some(name) = v.as_str().and_then(|r| r.strip_prefix("#/$defs/")) {
                        out.push(name.replace("~1", "/").replace("~0", "~"));
                    }
                } else {
                    collect_refs(v, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}
