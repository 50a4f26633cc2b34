//! The range of each Rust integer type, and of `f32`, written into its JSON Schema.
//!
//! schemars marks integers with a `format` (`uint32`, `int64`, `uint`, ...) but states a range
//! only for the 8- and 16-bit types, and a `format` is an annotation: a validator ignores it
//! and a model may too, so a schema for a `u32` would accept `-1` and `2^32`, which serde then
//! refuses. This module owns the mapping from those formats to `minimum`/`maximum`.
//!
//! Bounds are exact JSON integers (`18446744073709551615` for `u64::MAX`, `-9223372036854775808`
//! for `i64::MIN`): `serde_json` writes `u64`/`i64` numbers digit for digit, and validators that
//! compare numbers exactly (as the `jsonschema` crate does) enforce them to the unit. A bound
//! that no JSON number of `serde_json` holds exactly (`u128::MAX`, `i128::MIN`) is left out
//! rather than rounded, because a rounded bound would refuse values the type accepts or accept
//! values it refuses. `int`/`uint` (`isize`/`usize`) get the bounds of the platform the tool
//! runs on, which is the platform that deserializes the arguments.
//!
//! `f32` (schemars' `"format": "float"`) gets `±f32::MAX`, written as the `f64` that equals it
//! exactly (`3.4028234663852886e38`): a larger number is refused by serde as out of range, so a
//! schema without the bound would invite values the tool cannot take. `f64` needs none: a JSON
//! number that is not a finite `f64` does not parse at all.

use std::cmp::Ordering;

use serde_json::{Map, Number, Value, json};

use super::walk::{MAX_DEPTH, has_type, subschemas_mut};

/// The smallest and largest value of the Rust integer type schemars writes as `format`, or
/// `None` for a format that is not one of schemars' integer formats.
fn range_of(format: &str) -> Option<(i128, i128)> {
    let range = match format {
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "int64" => (i64::MIN.into(), i64::MAX.into()),
        "int128" => (i128::MIN, i128::MAX),
        "int" => (isize::MIN as i128, isize::MAX as i128),
        "uint8" => (0, u8::MAX.into()),
        "uint16" => (0, u16::MAX.into()),
        "uint32" => (0, u32::MAX.into()),
        "uint64" => (0, u64::MAX.into()),
        // `u128::MAX` does not fit an `i128`, and no JSON number of serde_json holds it anyway.
        "uint128" => (0, i128::MAX),
        "uint" => (0, usize::MAX as i128),
        _ => return None,
    };
    Some(range)
}

/// `value` as an exact JSON integer, if serde_json can hold it exactly.
fn exact(value: i128) -> Option<Number> {
    if let Ok(n) = u64::try_from(value) {
        Some(Number::from(n))
    } else {
        i64::try_from(value).ok().map(Number::from)
    }
}

/// Compares a JSON number with an integer, exactly where the number is an integer.
fn compare(number: &Number, value: i128) -> Option<Ordering> {
    if let Some(n) = number.as_i64() {
        return Some(i128::from(n).cmp(&value));
    }
    if let Some(n) = number.as_u64() {
        return Some(i128::from(n).cmp(&value));
    }
    // A float bound: exact enough, since only bounds the type already excludes differ.
    number.as_f64()?.partial_cmp(&(value as f64))
}

/// Sets `keyword` to `bound` unless the schema already states a bound at least as tight.
fn tighten(map: &mut Map<String, Value>, keyword: &str, bound: i128, tighter: Ordering) {
    let Some(number) = exact(bound) else {
        return;
    };
    let keep = match map.get(keyword) {
        Some(Value::Number(existing)) => {
            matches!(compare(existing, bound), Some(o) if o == tighter || o == Ordering::Equal)
        }
        _ => false,
    };
    if !keep {
        map.insert(keyword.to_owned(), Value::Number(number));
    }
}

/// The range of the integer type one schema describes, if it describes one: a `type` that
/// is or includes `integer`, and one of schemars' integer formats.
fn integer_range(map: &Map<String, Value>) -> Option<(i128, i128)> {
    if !has_type(map, "integer") {
        return None;
    }
    map.get("format").and_then(Value::as_str).and_then(range_of)
}

/// Writes the range of the integer type into this one schema (not its sub-schemas): a
/// `minimum`/`maximum` the schema already has is kept where it is tighter (`NonZeroU32`'s
/// `minimum: 1`), replaced where it is looser than the type allows.
///
/// Used by the dialect passes that drop `format`, so that a canonical schema written by
/// another generator does not lose the only statement of its range on the way.
pub(crate) fn bound(map: &mut Map<String, Value>) {
    if let Some((min, max)) = integer_range(map) {
        tighten(map, "minimum", min, Ordering::Greater);
        tighten(map, "maximum", max, Ordering::Less);
    } else if has_type(map, "number") && map.get("format").and_then(Value::as_str) == Some("float")
    {
        let max = f64::from(f32::MAX);
        tighten_float(map, "minimum", -max, Ordering::Greater);
        tighten_float(map, "maximum", max, Ordering::Less);
    }
}

/// [`tighten`] with a float bound.
fn tighten_float(map: &mut Map<String, Value>, keyword: &str, bound: f64, tighter: Ordering) {
    let Some(number) = Number::from_f64(bound) else {
        return;
    };
    let keep = match map.get(keyword).and_then(Value::as_f64) {
        Some(existing) => {
            matches!(existing.partial_cmp(&bound), Some(o) if o == tighter || o == Ordering::Equal)
        }
        None => false,
    };
    if !keep {
        map.insert(keyword.to_owned(), Value::Number(number));
    }
}

/// Writes the range of every integer type in `schema` and its sub-schemas (see [`bound`]),
/// and turns the `not: {const: 0}` schemars gives the signed `NonZero*` types into the two
/// ranges either side of zero.
///
/// The split matters because no provider dialect but the canonical one can say "not":
/// OpenAI strict mode rejects the keyword (the whole tool would fall back to non-strict) and
/// Gemini drops it (its schema would accept the `0` the type refuses), while an `anyOf` of
/// two ranges is understood everywhere.
pub(crate) fn state_ranges(schema: &mut Value) {
    if let Value::Object(map) = schema {
        state_ranges_in(map, 0);
    }
}

/// [`state_ranges`] on a schema object, `depth` levels down.
pub(crate) fn state_ranges_in(map: &mut Map<String, Value>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    for (_, child) in subschemas_mut(map) {
        if let Value::Object(child) = child {
            state_ranges_in(child, depth + 1);
        }
    }
    bound(map);
    split_excluded_value(map);
}

/// `{"type": "integer", "minimum": a, "maximum": b, "not": {"const": k}}` becomes
/// `{"anyOf": [{"type": "integer", "minimum": a, "maximum": k - 1},
/// {"type": "integer", "minimum": k + 1, "maximum": b}]}` (plus a `null` branch when the
/// type was nullable). Anything else is left as it is.
fn split_excluded_value(map: &mut Map<String, Value>) {
    let excluded = match map.get("not") {
        Some(Value::Object(not)) if not.len() == 1 => not.get("const").and_then(Value::as_i64),
        _ => None,
    };
    let Some(excluded) = excluded else {
        return;
    };
    let integer_only = match map.get("type") {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(types)) => types.iter().all(|t| t == "integer" || t == "null"),
        _ => false,
    };
    let limit = |keyword: &str| map.get(keyword).and_then(Value::as_number).cloned();
    let (Some(min), Some(max)) = (limit("minimum"), limit("maximum")) else {
        return;
    };
    if !integer_only || map.contains_key("anyOf") {
        return;
    }
    let excluded = i128::from(excluded);
    let mut branches = Vec::new();
    if compare(&min, excluded) == Some(Ordering::Less)
        && let Some(below) = exact(excluded - 1)
    {
        branches.push(json!({"type": "integer", "minimum": min, "maximum": below}));
    }
    if compare(&max, excluded) == Some(Ordering::Greater)
        && let Some(above) = exact(excluded + 1)
    {
        branches.push(json!({"type": "integer", "minimum": above, "maximum": max}));
    }
    if has_type(map, "null") {
        branches.push(json!({"type": "null"}));
    }
    for keyword in ["type", "minimum", "maximum", "not"] {
        map.remove(keyword);
    }
    map.insert("anyOf".to_owned(), Value::Array(branches));
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn stated(mut schema: Value) -> Value {
        state_ranges(&mut schema);
        schema
    }

    #[test]
    fn every_integer_format_gets_its_exact_range() {
        let cases = [
            ("uint8", json!(0), json!(255)),
            ("int32", json!(-2147483648i64), json!(2147483647)),
            ("uint32", json!(0), json!(4294967295u64)),
            ("int64", json!(i64::MIN), json!(i64::MAX)),
            ("uint64", json!(0), json!(u64::MAX)),
            ("uint", json!(0), json!(usize::MAX)),
            ("int", json!(isize::MIN), json!(isize::MAX)),
        ];
        for (format, min, max) in cases {
            let out = stated(json!({"type": "integer", "format": format}));
            assert_eq!(out["minimum"], min, "{format}");
            assert_eq!(out["maximum"], max, "{format}");
        }
        // Bounds are written digit for digit, not as floats.
        let text = stated(json!({"type": "integer", "format": "uint64"})).to_string();
        assert!(text.contains("18446744073709551615"), "{text}");
        let text = stated(json!({"type": "integer", "format": "int64"})).to_string();
        assert!(text.contains("-9223372036854775808"), "{text}");
    }

    #[test]
    fn bounds_beyond_json_integers_are_left_out() {
        assert_eq!(
            stated(json!({"type": "integer", "format": "uint128", "minimum": 0})),
            json!({"type": "integer", "format": "uint128", "minimum": 0})
        );
        assert_eq!(
            stated(json!({"type": "integer", "format": "int128"})),
            json!({"type": "integer", "format": "int128"})
        );
    }

    #[test]
    fn tighter_bounds_are_kept_looser_ones_replaced() {
        let out = stated(json!({"type": "integer", "format": "uint32", "minimum": 1}));
        assert_eq!(out["minimum"], json!(1));
        assert_eq!(out["maximum"], json!(4294967295u64));
        let out =
            stated(json!({"type": "integer", "format": "uint8", "minimum": -5, "maximum": 1000.5}));
        assert_eq!((&out["minimum"], &out["maximum"]), (&json!(0), &json!(255)));
    }

    #[test]
    fn nullable_and_nested_integers_and_non_integers() {
        let out = stated(json!({
            "type": "object",
            "properties": {
                "n": {"type": ["integer", "null"], "format": "uint16"},
                "list": {"type": "array", "items": {"type": "integer", "format": "int8"}},
                "f": {"type": "number", "format": "double"},
                "s": {"type": "string", "format": "int32"}
            },
            "$defs": {"D": {"type": "integer", "format": "uint8"}}
        }));
        assert_eq!(out["properties"]["n"]["maximum"], json!(65535));
        assert_eq!(out["properties"]["list"]["items"]["minimum"], json!(-128));
        assert_eq!(
            out["properties"]["f"],
            json!({"type": "number", "format": "double"})
        );
        assert_eq!(
            out["properties"]["s"],
            json!({"type": "string", "format": "int32"})
        );
        assert_eq!(out["$defs"]["D"]["maximum"], json!(255));
        let out = stated(json!({"type": ["number", "null"], "format": "float", "minimum": 0.5}));
        assert_eq!(out["minimum"], json!(0.5), "a tighter bound is kept");
        assert_eq!(out["maximum"], json!(f64::from(f32::MAX)));
        assert!(out.to_string().contains("3.4028234663852886e"), "{out}");
    }

    #[test]
    fn non_zero_signed_becomes_two_ranges() {
        let out = stated(
            json!({"type": "integer", "format": "int8", "not": {"const": 0}, "description": "d"}),
        );
        assert_eq!(
            out,
            json!({"format": "int8", "description": "d", "anyOf": [
                {"type": "integer", "minimum": -128, "maximum": -1},
                {"type": "integer", "minimum": 1, "maximum": 127}
            ]})
        );
        let out =
            stated(json!({"type": ["integer", "null"], "format": "int64", "not": {"const": 0}}));
        assert_eq!(
            out["anyOf"],
            json!([
                {"type": "integer", "minimum": i64::MIN, "maximum": -1},
                {"type": "integer", "minimum": 1, "maximum": i64::MAX},
                {"type": "null"}
            ])
        );
        // Without a known range, or with something else under `not`, nothing is rewritten.
        let other = json!({"type": "integer", "not": {"const": 0}});
        assert_eq!(stated(other.clone()), other);
        let other = json!({"type": "integer", "format": "int8", "not": {"enum": [0]}});
        assert_eq!(stated(other.clone())["not"], json!({"enum": [0]}));
    }
}
