//! Tests of the shared helpers and of guarantees every dialect gives.

use serde_json::{Map, Value, json};

use super::*;
use crate::schema::walk::*;

fn hostile_inputs() -> Vec<Value> {
    vec![
        json!(true),
        json!(false),
        json!(null),
        json!(42),
        json!("schema"),
        json!([]),
        json!({}),
        json!({"type": "string"}),
        json!({"type": ["object", "null"], "properties": {"a": true, "b": false}}),
        json!({"$ref": "#"}),
        json!({"$ref": "#/$defs/Missing", "description": "dangling"}),
        json!({"$ref": 7}),
        json!({"type": "object", "properties": {"self": {"$ref": "#", "description": "x"}}}),
        json!({
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A", "description": "a"}},
            "$defs": {
                "A": {"$ref": "#/$defs/B", "title": "A"},
                "B": {"allOf": [{"$ref": "#/$defs/A"}], "description": "b"}
            }
        }),
        json!({
            "type": "object",
            "allOf": [{"$ref": "#"}],
            "properties": {"n": {"allOf": [{"$ref": "#/properties/n"}]}}
        }),
        json!({"type": "object", "properties": {"e": {"enum": 3, "items": [true], "anyOf": 1}}}),
        json!({"type": "object", "required": "x", "properties": []}),
    ]
}

#[test]
fn every_dialect_survives_hostile_input_with_an_object_root() {
    let def_of = |schema: &Value| ToolDefinition::new("t", "d", schema.clone());
    for input in hostile_inputs() {
        for dialect in Dialect::ALL {
            let out = dialect.parameters(&input);
            assert_eq!(out["type"], json!("object"), "{dialect:?} on {input}");
            let rendered = dialect.render(&def_of(&input), "t");
            assert!(rendered.is_object(), "{dialect:?} on {input}");
        }
    }
}

#[test]
fn exponential_definition_graphs_stay_bounded() {
    // Each level references the next one twice: full inlining would be 2^30 nodes.
    let mut defs = Map::new();
    for level in 0..30 {
        let next = format!("#/$defs/L{}", level + 1);
        defs.insert(
            format!("L{level}"),
            json!({"type": "object", "properties": {
                "left": {"$ref": next, "description": "l"},
                "right": {"$ref": next, "description": "r"}
            }}),
        );
    }
    defs.insert("L30".into(), json!({"type": "string"}));
    let schema =
        json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/L0"}}, "$defs": defs});
    for dialect in Dialect::ALL {
        let out = dialect.parameters(&schema);
        assert!(out.to_string().len() < 2_000_000, "{dialect:?}");
    }
}

#[test]
fn resolve_follows_local_pointers_only() {
    let root = json!({"$defs": {"a/b": {"type": "string"}, "c d": {"type": "integer"}}});
    let refs = Refs::new(&root);
    assert_eq!(
        refs.resolve("#/$defs/a~1b"),
        Some(&json!({"type": "string"}))
    );
    assert_eq!(
        refs.resolve("#/$defs/c%20d"),
        Some(&json!({"type": "integer"}))
    );
    assert_eq!(refs.resolve("#"), Some(&root));
    assert_eq!(refs.resolve("other.json#/$defs/x"), None);
    assert_eq!(refs.resolve("#/$defs/none"), None);
}

#[test]
fn enter_stops_at_the_recursion_depth() {
    let root = json!({"$defs": {"A": {}}});
    let mut refs = Refs::new(&root);
    assert!(refs.enter("#/$defs/A", 2).is_ok());
    assert!(refs.enter("#/$defs/A", 2).is_ok());
    assert_eq!(refs.enter("#/$defs/A", 2), Err(Unexpandable::Recursive));
    assert_eq!(refs.enter("#/$defs/B", 2), Err(Unexpandable::Dangling));
    refs.truncate(1);
    assert_eq!(refs.depth("#/$defs/A"), 0);
}

#[test]
fn percent_encoded_references_count_as_the_same_definition() {
    let root = json!({"$defs": {"A<T>": {}}});
    let mut refs = Refs::new(&root);
    assert!(refs.enter("#/$defs/A%3CT%3E", 1).is_ok());
    assert_eq!(refs.depth("#/$defs/A<T>"), 1);
    assert_eq!(refs.enter("#/$defs/A<T>", 1), Err(Unexpandable::Recursive));
}

#[test]
fn merge_unions_properties_and_required_and_keeps_own_annotations() {
    let mut dst =
        into_map(json!({"description": "mine", "properties": {"a": {}}, "required": ["a"]}));
    merge_into(
        &mut dst,
        into_map(json!({
            "description": "theirs", "type": "object",
            "properties": {"a": {"type": "string"}, "b": {}}, "required": ["b", "a"]
        })),
    );
    assert_eq!(
        Value::Object(dst),
        json!({"description": "mine", "type": "object",
               "properties": {"a": {}, "b": {}}, "required": ["a", "b"]})
    );
}

#[test]
fn unused_definitions_are_pruned_transitively() {
    let mut root = into_map(json!({
        "properties": {"a": {"$ref": "#/$defs/A"}},
        "$defs": {"A": {"items": {"$ref": "#/$defs/B"}}, "B": {}, "C": {"$ref": "#/$defs/C"}}
    }));
    prune_definitions(&mut root);
    assert_eq!(
        root["$defs"]
            .as_object()
            .map(|d| d.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["A".to_owned(), "B".to_owned()])
    );
    let mut none_used = into_map(json!({"$defs": {"X": {}}}));
    prune_definitions(&mut none_used);
    assert!(!none_used.contains_key("$defs"));
}

#[test]
fn loose_pass_only_cleans_up() {
    let canonical = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"m": {"type": "object", "additionalProperties": {"oneOf": [{"const": 1}]}}},
        "required": []
    });
    assert_eq!(
        loose(&canonical),
        json!({
            "type": "object",
            "properties": {"m": {"type": "object", "additionalProperties": {"anyOf": [{"const": 1}]}}},
            "required": []
        })
    );
}
