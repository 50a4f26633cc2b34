//! Schemas of macro-generated tools: hidden parameters never appear in any dialect, every
//! generated schema is valid JSON Schema 2020-12, model-style arguments validate against it,
//! and each dialect's rendering is pinned by a snapshot.

use agent_toolkit::Dialect;
use agent_toolkit::prelude::*;
use serde_json::{Value, json};

use super::fixtures::*;

/// Every group switched on, so every tool is rendered.
fn all_on() -> Toolkit {
    let kit = toolkit();
    kit.set_group_active("counter", true).unwrap();
    kit
}

/// The parameter (and output) schemas inside one rendered tool entry.
fn schemas_of(dialect: Dialect, entry: &Value) -> Vec<Value> {
    let pick = |v: &Value| (!v.is_null()).then(|| v.clone());
    match dialect {
        Dialect::OpenAiStrict | Dialect::OpenAi => vec![entry["function"]["parameters"].clone()],
        Dialect::Anthropic => vec![entry["input_schema"].clone()],
        Dialect::Gemini => pick(&entry["parameters"]).into_iter().collect(),
        Dialect::Mcp => [pick(&entry["inputSchema"]), pick(&entry["outputSchema"])]
            .into_iter()
            .flatten()
            .collect(),
    }
}

fn property_names(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = map.get("properties") {
                out.extend(props.keys().cloned());
            }
            map.values().for_each(|v| property_names(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| property_names(v, out)),
        _ => {}
    }
}

#[test]
fn hidden_parameters_never_appear_in_any_dialect() {
    let kit = all_on();
    let hidden = ["api_key", "secret", "user", "info", "emitter", "t"];
    for dialect in Dialect::ALL {
        for entry in kit.definitions_for(dialect) {
            let mut names = Vec::new();
            property_names(&entry, &mut names);
            for h in hidden {
                assert!(
                    !names.iter().any(|n| n == h),
                    "{dialect:?}: `{h}` leaked into {entry}"
                );
            }
            let text = entry.to_string();
            assert!(
                !text.contains("api_key") && !text.contains("Ctx"),
                "{dialect:?}: {text}"
            );
        }
    }
    for def in kit.definitions() {
        let mut names = Vec::new();
        property_names(def.parameters(), &mut names);
        assert!(
            !names.iter().any(|n| hidden.contains(&n.as_str())),
            "{names:?}"
        );
    }
}

#[test]
fn every_generated_schema_is_valid_json_schema_2020_12() {
    let kit = all_on();
    let mut checked = 0;
    for def in kit.definitions() {
        for schema in [Some(def.parameters()), def.output_schema()]
            .into_iter()
            .flatten()
        {
            jsonschema::draft202012::meta::validate(schema)
                .unwrap_or_else(|e| panic!("{}: {e}\n{schema:#}", def.name()));
            checked += 1;
        }
    }
    for dialect in Dialect::ALL {
        for entry in kit.definitions_for(dialect) {
            for schema in schemas_of(dialect, &entry) {
                jsonschema::draft202012::meta::validate(&schema)
                    .unwrap_or_else(|e| panic!("{dialect:?}: {e}\n{schema:#}"));
                jsonschema::draft202012::new(&schema)
                    .unwrap_or_else(|e| panic!("{dialect:?}: does not compile: {e}\n{schema:#}"));
                checked += 1;
            }
        }
    }
    assert!(checked > 50, "only {checked} schemas checked");
}

#[test]
fn model_style_arguments_validate_against_the_schemas() {
    let kit = all_on();
    let weather = kit.definition("get_weather").unwrap().parameters().clone();
    let v = jsonschema::draft202012::new(&weather).unwrap();
    assert!(v.is_valid(&json!({"location": "Paris"})));
    assert!(v.is_valid(&json!({"location": "Paris", "unit": "celsius", "days": 2})));
    assert!(
        !v.is_valid(&json!({"unit": "celsius"})),
        "location is required"
    );
    assert!(!v.is_valid(&json!({"location": "Paris", "unit": "kelvin"})));
    assert!(
        !v.is_valid(&json!({"location": "Paris", "api_key": "x"})),
        "no extra keys"
    );

    // What a strict-mode model sends: every key, null for the optional ones.
    let strict = kit.definitions_for(Dialect::OpenAiStrict);
    let entry = strict
        .iter()
        .find(|e| e["function"]["name"] == "get_weather")
        .unwrap();
    let v = jsonschema::draft202012::new(&entry["function"]["parameters"]).unwrap();
    assert!(v.is_valid(&json!({"location": "Paris", "unit": null, "days": null})));
    assert!(
        !v.is_valid(&json!({"location": "Paris"})),
        "strict: every key is required"
    );

    let address = kit
        .definition("store_address")
        .unwrap()
        .parameters()
        .clone();
    let v = jsonschema::draft202012::new(&address).unwrap();
    assert!(v.is_valid(&json!({"address": {"street": "Main 1", "city": "X"}, "tags": []})));
    assert!(!v.is_valid(&json!({"address": {"street": "Main 1"}, "tags": []})));
}

#[test]
fn dialect_snapshots() {
    let kit = all_on();
    for dialect in Dialect::ALL {
        let all = kit.definitions_for(dialect);
        let weather = all
            .iter()
            .find(|e| e.to_string().contains("get_weather"))
            .expect("get_weather rendered")
            .clone();
        insta::assert_json_snapshot!(format!("get_weather_{dialect:?}"), weather);
    }
    insta::assert_json_snapshot!(
        "canonical_store_address",
        kit.definition("store_address").unwrap()
    );
}

/// An invalid-arguments error ends with an example call; it must be one the schema accepts and
/// the tool runs (presets and context bound as the fixtures bind them).
#[tokio::test]
async fn the_example_call_of_an_error_is_valid_and_runs() {
    let kit = all_on();
    let mut shown = 0;
    for def in kit.definitions() {
        let refused = super::call(&kit, def.name(), "[]").await;
        let message = super::err(&refused).message();
        let Some((_, example)) = message.split_once("; a valid call: ") else {
            continue;
        };
        shown += 1;
        let value: Value = serde_json::from_str(example).unwrap();
        let validator = jsonschema::draft202012::new(def.parameters()).unwrap();
        assert!(
            validator.is_valid(&value),
            "{}: {example} does not fit {}",
            def.name(),
            def.parameters()
        );
        let ran = super::call(&kit, def.name(), example).await;
        assert_ne!(
            ran.error().map(|e| e.kind()),
            Some(agent_toolkit::error::ToolErrorKind::InvalidArguments),
            "{}: {example}: {}",
            def.name(),
            ran.model_text()
        );
    }
    assert!(shown >= 5, "only {shown} tools showed an example");
}
