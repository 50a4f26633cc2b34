//! Strict-mode arguments for enums of every serde tagging style: for each representative type,
//! values written the way a strict-mode model must write them (every key present, `null` for
//! "not given") are generated from the strict schema itself, one per combination of enum
//! variants and null choices; after `normalize_arguments` each one deserializes into the Rust
//! type and passes the canonical, OpenAI and Anthropic schemas. The other dialects leave
//! arguments untouched.

use agent_toolkit::Dialect;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::{assert_meta_valid, canonical, validator};

fn default_speed() -> u8 {
    5
}

/// Internally tagged, with defaulted fields, an `Option`, a newtype struct variant, a unit
/// variant and a nested internally tagged enum.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
#[allow(dead_code)]
enum Action {
    Key {
        code: String,
        #[serde(default)]
        shift: bool,
        modifiers: Option<Vec<String>>,
    },
    Click {
        x: i32,
        #[serde(default)]
        double: bool,
    },
    Scroll(Scroll),
    Then {
        first: Box<Step>,
        #[serde(default = "default_speed")]
        speed: u8,
    },
    Noop,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Scroll {
    #[serde(default)]
    dy: i32,
    #[serde(default)]
    smooth: bool,
}

/// Internally tagged under another tag name, nested inside `Action`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "op")]
#[allow(dead_code)]
enum Step {
    Wait {
        #[serde(default)]
        ms: u32,
    },
    Say {
        text: String,
        #[serde(default)]
        loud: bool,
    },
}

/// Adjacently tagged.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind", content = "data")]
#[allow(dead_code)]
enum Adjacent {
    Move {
        #[serde(default)]
        dx: i32,
        dy: Option<i32>,
    },
    Wait(u32),
    Inner(Action),
    Stop,
}

/// Externally tagged (serde's default).
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
enum External {
    Point {
        x: i32,
        #[serde(default)]
        y: i32,
    },
    Named(Scroll),
    Stop,
}

/// Untagged: told apart by shape only.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum Untagged {
    Key {
        code: String,
        #[serde(default)]
        shift: bool,
    },
    Position {
        x: i32,
        #[serde(default)]
        y: i32,
    },
    Label(String),
}

/// Every style side by side, in `Vec`s, `Option`s and a nested struct.
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Everything {
    action: Action,
    adjacent: Adjacent,
    external: External,
    untagged: Untagged,
    actions: Vec<Action>,
    maybe: Option<Adjacent>,
    nested: Nested,
    #[serde(default)]
    retries: u8,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Nested {
    #[serde(default)]
    level: u8,
    externals: Vec<External>,
    deep: Option<Action>,
    untagged: Vec<Untagged>,
}

/// Wraps a type as a tool's single parameter, the way `#[tool]` would present it.
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Param<T> {
    value: T,
    #[serde(default)]
    flag: bool,
}

/// Writes one instance of a strict-mode schema, choosing enum branches, nulls and array
/// lengths with a pseudo-random generator seeded per instance, so that a few hundred seeds
/// visit every branch of every union in many combinations.
struct Writer<'a> {
    root: &'a Value,
    state: u64,
}

impl Writer<'_> {
    /// One of `0..options` (SplitMix64).
    fn choose(&mut self, options: usize) -> usize {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z % options.max(1) as u64) as usize
    }

    fn resolve<'s>(&'s self, mut schema: &'s Value) -> &'s Value {
        while let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let pointer = reference.trim_start_matches('#');
            schema = self
                .root
                .pointer(pointer)
                .unwrap_or_else(|| panic!("dangling {reference}"));
        }
        schema
    }

    fn write(&mut self, schema: &Value, depth: usize) -> Value {
        assert!(depth < 40, "runaway recursion at {schema}");
        let schema = self.resolve(schema).clone();
        if let Some(Value::Array(branches)) = schema.get("anyOf") {
            let index = self.choose(branches.len());
            return self.write(&branches[index], depth + 1);
        }
        if let Some(constant) = schema.get("const") {
            return constant.clone();
        }
        if let Some(Value::Array(members)) = schema.get("enum") {
            return members[self.choose(members.len())].clone();
        }
        let types: Vec<&str> = match schema.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => panic!("strict schema without type: {schema}"),
        };
        let kind = types[self.choose(types.len())];
        match kind {
            "null" => Value::Null,
            "boolean" => json!(true),
            "string" => json!("text"),
            "integer" | "number" => {
                let min = schema.get("minimum").and_then(Value::as_i64).unwrap_or(0);
                let max = schema
                    .get("maximum")
                    .and_then(Value::as_i64)
                    .unwrap_or(i64::MAX);
                json!(3.clamp(min, max))
            }
            "array" => {
                let items = schema.get("items").cloned().unwrap_or(json!({}));
                let count = 1 + self.choose(2);
                (0..count).map(|_| self.write(&items, depth + 1)).collect()
            }
            "object" => {
                let mut out = Map::new();
                if let Some(Value::Object(properties)) = schema.get("properties") {
                    for (name, property) in properties {
                        out.insert(name.clone(), self.write(property, depth + 1));
                    }
                }
                Value::Object(out)
            }
            other => panic!("unexpected type {other}"),
        }
    }
}

/// The strict-mode property for one type: see the module docs. Returns how many generated
/// values needed normalizing (held a null serde would refuse).
fn strict_round_trip<T: JsonSchema + DeserializeOwned + std::fmt::Debug>(name: &str) -> usize {
    let canonical = canonical::<Param<T>>();
    assert!(
        agent_toolkit::dialect::strict_representable(&canonical),
        "{name}: strict mode cannot express it"
    );
    let strict = Dialect::OpenAiStrict.parameters(&canonical);
    for dialect in Dialect::ALL {
        assert_meta_valid(dialect, &dialect.parameters(&canonical));
    }
    let strict_validator = validator(&strict);
    let canonical_validator = validator(&canonical);
    let loose_validators: Vec<(Dialect, jsonschema::Validator)> =
        [Dialect::OpenAi, Dialect::Anthropic]
            .into_iter()
            .map(|d| (d, validator(&d.parameters(&canonical))))
            .collect();
    let mut repaired = 0;
    for seed in 0..256 {
        let mut writer = Writer {
            root: &strict,
            state: seed,
        };
        let original = writer.write(&strict, 0);
        let errors: Vec<String> = strict_validator
            .iter_errors(&original)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{name}: the writer broke strict mode: {errors:?}\n{original:#}"
        );
        for dialect in Dialect::ALL {
            if dialect == Dialect::OpenAiStrict {
                continue;
            }
            let mut untouched = original.clone();
            dialect.normalize_arguments(&canonical, &mut untouched);
            assert_eq!(
                untouched, original,
                "{name}: {dialect:?} changed the arguments"
            );
        }
        let mut arguments = original.clone();
        Dialect::OpenAiStrict.normalize_arguments(&canonical, &mut arguments);
        if let Err(error) = serde_json::from_value::<Param<T>>(arguments.clone()) {
            panic!(
                "{name}, seed {seed}: normalized arguments do not deserialize: {error}\n\
                 sent: {original:#}\nnormalized: {arguments:#}"
            );
        }
        // What the tool accepts, every JSON Schema dialect accepts (Gemini's OpenAPI
        // `nullable` is not JSON Schema, so a JSON Schema validator cannot judge it).
        for (dialect, validator) in [(Dialect::Mcp, &canonical_validator)]
            .into_iter()
            .chain(loose_validators.iter().map(|(d, v)| (*d, v)))
        {
            let errors: Vec<String> = validator
                .iter_errors(&arguments)
                .map(|e| format!("{e} at {}", e.instance_path()))
                .collect();
            assert!(
                errors.is_empty(),
                "{name}, seed {seed}: {dialect:?} refuses the normalized arguments: {errors:?}\n{arguments:#}"
            );
        }
        if serde_json::from_value::<Param<T>>(original).is_err() {
            repaired += 1;
        }
    }
    repaired
}

#[test]
fn every_tagging_style_round_trips_through_strict_mode() {
    let repaired = [
        strict_round_trip::<Action>("internally tagged"),
        strict_round_trip::<Step>("internally tagged, other tag"),
        strict_round_trip::<Adjacent>("adjacently tagged"),
        strict_round_trip::<External>("externally tagged"),
        strict_round_trip::<Untagged>("untagged"),
        strict_round_trip::<Vec<Action>>("in a Vec"),
        strict_round_trip::<Option<Action>>("in an Option"),
        strict_round_trip::<Everything>("all nested"),
    ];
    // Each type's generated values include ones serde refuses before normalizing, or the
    // property would hold trivially.
    assert!(repaired.iter().all(|&n| n > 0), "{repaired:?}");
}

/// The case from the issue, spelled out.
#[test]
fn internally_tagged_default_field_null_is_removed() {
    let canonical = canonical::<Param<Action>>();
    let mut arguments = json!({
        "value": {"type": "key", "code": "K", "shift": null, "modifiers": null},
        "flag": null
    });
    Dialect::OpenAiStrict.normalize_arguments(&canonical, &mut arguments);
    assert_eq!(
        arguments,
        json!({"value": {"type": "key", "code": "K", "modifiers": null}})
    );
    let parsed: Param<Action> = serde_json::from_value(arguments).expect("deserializes");
    assert!(matches!(parsed.value, Action::Key { shift: false, .. }));
}
