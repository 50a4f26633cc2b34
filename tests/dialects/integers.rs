//! Integer parameters: the schema of every integer type states the type's real range in every
//! dialect, and the schema and the tool agree on every boundary value.

use std::num::{NonZeroI8, NonZeroI32, NonZeroI64, NonZeroU8, NonZeroU32, NonZeroU64};

use agent_toolkit::Dialect;
use agent_toolkit::prelude::*;
use serde_json::{Map, Value};

/// Takes one parameter of every integer type; succeeds exactly when serde accepts them all.
#[tool]
#[allow(clippy::too_many_arguments)]
fn integers(
    p_u8: u8,
    p_u16: u16,
    p_u32: u32,
    p_u64: u64,
    p_usize: usize,
    p_i8: i8,
    p_i16: i16,
    p_i32: i32,
    p_i64: i64,
    p_isize: isize,
    p_nz_u8: NonZeroU8,
    p_nz_u32: NonZeroU32,
    p_nz_u64: NonZeroU64,
    p_nz_i8: NonZeroI8,
    p_nz_i32: NonZeroI32,
    p_nz_i64: NonZeroI64,
    p_opt_u32: Option<u32>,
    p_opt_nz_i64: Option<NonZeroI64>,
) -> String {
    let _ = (
        p_u8, p_u16, p_u32, p_u64, p_usize, p_i8, p_i16, p_i32, p_i64, p_isize,
    );
    let _ = (p_nz_u8, p_nz_u32, p_nz_u64, p_nz_i8, p_nz_i32, p_nz_i64);
    format!("{p_opt_u32:?} {p_opt_nz_i64:?}")
}

/// One parameter: its name, the smallest and largest value its type holds, and whether zero
/// is excluded between them (the signed `NonZero*` types).
struct Case {
    name: &'static str,
    min: i128,
    max: i128,
    no_zero: bool,
}

fn cases() -> Vec<Case> {
    let case = |name, min: i128, max: i128, no_zero| Case {
        name,
        min,
        max,
        no_zero,
    };
    vec![
        case("p_u8", 0, u8::MAX.into(), false),
        case("p_u16", 0, u16::MAX.into(), false),
        case("p_u32", 0, u32::MAX.into(), false),
        case("p_u64", 0, u64::MAX.into(), false),
        case("p_usize", 0, usize::MAX as i128, false),
        case("p_i8", i8::MIN.into(), i8::MAX.into(), false),
        case("p_i16", i16::MIN.into(), i16::MAX.into(), false),
        case("p_i32", i32::MIN.into(), i32::MAX.into(), false),
        case("p_i64", i64::MIN.into(), i64::MAX.into(), false),
        case("p_isize", isize::MIN as i128, isize::MAX as i128, false),
        case("p_nz_u8", 1, u8::MAX.into(), false),
        case("p_nz_u32", 1, u32::MAX.into(), false),
        case("p_nz_u64", 1, u64::MAX.into(), false),
        case("p_nz_i8", i8::MIN.into(), i8::MAX.into(), true),
        case("p_nz_i32", i32::MIN.into(), i32::MAX.into(), true),
        case("p_nz_i64", i64::MIN.into(), i64::MAX.into(), true),
        case("p_opt_u32", 0, u32::MAX.into(), false),
        case("p_opt_nz_i64", i64::MIN.into(), i64::MAX.into(), true),
    ]
}

/// The parameters schema inside one rendered tool entry.
fn parameters(dialect: Dialect, entry: &Value) -> Value {
    match dialect {
        Dialect::OpenAiStrict | Dialect::OpenAi => entry["function"]["parameters"].clone(),
        Dialect::Anthropic => entry["input_schema"].clone(),
        Dialect::Gemini => entry["parameters"].clone(),
        Dialect::Mcp => entry["inputSchema"].clone(),
    }
}

/// The arguments as JSON text with `name` set to `value`, every other parameter to 1. Text,
/// because `u64::MAX + 1` and `i64::MIN - 1` are no `serde_json::Value` integer.
fn arguments(name: &str, value: i128) -> String {
    let fields: Vec<String> = cases()
        .iter()
        .map(|case| {
            let v = if case.name == name { value } else { 1 };
            format!("\"{}\": {v}", case.name)
        })
        .collect();
    format!("{{{}}}", fields.join(", "))
}

/// Whether a validator working on `serde_json::Value` can tell `value` apart from `bound`:
/// integers beyond 64 bits become `f64`, and `i64::MIN - 1` rounds onto `i64::MIN`.
fn distinguishable(value: i128, bound: i128) -> bool {
    let parsed: Value = serde_json::from_str(&value.to_string()).expect("a JSON number");
    parsed.as_i64().is_some() || parsed.as_u64().is_some() || parsed.as_f64() != Some(bound as f64)
}

#[tokio::test]
async fn every_integer_type_has_its_range_in_every_dialect_and_serde_agrees() {
    let toolkit = Toolkit::builder().register(Integers).build().unwrap();
    let ctx = ToolContext::new();
    let mut checked = 0;
    for dialect in Dialect::ALL {
        let entries = toolkit.definitions_for(dialect);
        let entry = entries.first().expect("one tool");
        if dialect == Dialect::OpenAiStrict {
            assert_eq!(entry["function"]["strict"], true, "{entry:#}");
        }
        let schema = parameters(dialect, entry);
        let validator = jsonschema::draft202012::new(&schema)
            .unwrap_or_else(|e| panic!("{dialect:?}: {e}\n{schema:#}"));
        for case in cases() {
            let mut probes = vec![
                (case.min, true),
                (case.max, true),
                (case.min - 1, false),
                (case.max + 1, false),
            ];
            if case.no_zero {
                probes.extend([(0, false), (-1, true), (1, true)]);
            }
            for (value, valid) in probes {
                let text = arguments(case.name, value);
                let instance: Value = serde_json::from_str(&text).expect("valid JSON");
                let bound = if value < case.min { case.min } else { case.max };
                if valid || distinguishable(value, bound) {
                    assert_eq!(
                        validator.is_valid(&instance),
                        valid,
                        "{dialect:?}: {} = {value}\n{:#}",
                        case.name,
                        schema["properties"][case.name]
                    );
                }
                if dialect == Dialect::Mcp {
                    // The tool is the same whatever the dialect; ask it once per value.
                    let result = toolkit
                        .call(ToolCall::new("c", "integers", text), &ctx)
                        .await;
                    assert_eq!(
                        !result.is_error(),
                        valid,
                        "tool on {} = {value}: {result:?}",
                        case.name
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 300, "{checked}");
}

#[test]
fn range_keywords_are_exact_integers_in_every_dialect() {
    let toolkit = Toolkit::builder().register(Integers).build().unwrap();
    for dialect in Dialect::ALL {
        let entries = toolkit.definitions_for(dialect);
        let schema = parameters(dialect, &entries[0]);
        let text = schema.to_string();
        for exact in ["18446744073709551615", "-9223372036854775808", "4294967295"] {
            assert!(text.contains(exact), "{dialect:?}: no {exact} in {text}");
        }
        let properties: &Map<String, Value> = schema["properties"].as_object().unwrap();
        let u64_schema = &properties["p_u64"];
        assert_eq!(
            u64_schema["maximum"].as_u64(),
            Some(u64::MAX),
            "{dialect:?}"
        );
        jsonschema::draft202012::meta::validate(&schema)
            .unwrap_or_else(|e| panic!("{dialect:?}: {e}\n{schema:#}"));
    }
}

/// Scale a value (an `f32` parameter).
#[tool]
fn scale(factor: f32, precise: f64) -> String {
    format!("{factor} {precise}")
}

/// An `f32` parameter states its range in every dialect, and the schema and the tool agree at
/// the boundary: `f32::MAX` is taken, the largest `f64` is refused by both.
#[tokio::test]
async fn f32_parameters_state_their_range() {
    let kit = Toolkit::builder().register(Scale).build().unwrap();
    let max = f64::from(f32::MAX);
    for dialect in [
        Dialect::OpenAiStrict,
        Dialect::OpenAi,
        Dialect::Anthropic,
        Dialect::Gemini,
        Dialect::Mcp,
    ] {
        let defs = serde_json::Value::from(kit.definitions_for(dialect)).to_string();
        assert!(defs.contains("3.4028234663852886e"), "{dialect:?}: {defs}");
    }
    let canonical = kit.definitions()[0].parameters().clone();
    assert_eq!(
        canonical["properties"]["factor"]["maximum"],
        serde_json::json!(max)
    );
    assert_eq!(
        canonical["properties"]["factor"]["minimum"],
        serde_json::json!(-max)
    );
    assert!(
        canonical["properties"]["precise"].get("maximum").is_none(),
        "f64 needs none"
    );

    let call = |factor: f64| {
        ToolCall::json(
            "c",
            "scale",
            serde_json::json!({"factor": factor, "precise": 1.0}),
        )
    };
    let ok = kit.call(call(max), &ToolContext::new()).await;
    assert!(!ok.is_error(), "{ok}");
    let refused = kit.call(call(f64::MAX), &ToolContext::new()).await;
    assert!(refused.is_error(), "{refused}");
    let schema = jsonschema::validator_for(&canonical).unwrap();
    assert!(!schema.is_valid(&serde_json::json!({"factor": f64::MAX, "precise": 1.0})));
    assert!(schema.is_valid(&serde_json::json!({"factor": max, "precise": 1.0})));
}
