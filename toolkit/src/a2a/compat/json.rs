//! Reading and writing the JSON of either generation: [`CompatError`] with the path of what
//! is wrong, and the member-copying helpers every conversion uses.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::util::json_kind;

/// A 0.3 object that cannot be read as its 1.0 counterpart.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid A2A 0.3 JSON at `{path}`: {problem}")]
pub struct CompatError {
    /// Where in the object, e.g. `message.parts[1].kind`.
    pub path: String,
    /// What is wrong there.
    pub problem: String,
}

pub(super) fn err(path: impl Into<String>, problem: impl Into<String>) -> CompatError {
    CompatError {
        path: path.into(),
        problem: problem.into(),
    }
}

pub(super) type Result<T, E = CompatError> = std::result::Result<T, E>;

/// The 1.0 types hold only string-keyed maps and JSON values, so serializing them cannot fail;
/// `Null` stands in rather than a panic should that ever change.
pub(super) fn to_json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

pub(super) fn from_json<T: DeserializeOwned>(value: Value, path: &str) -> Result<T> {
    serde_json::from_value(value).map_err(|e| err(path, e.to_string()))
}

pub(super) fn object<'v>(value: &'v Value, path: &str) -> Result<&'v Map<String, Value>> {
    value.as_object().ok_or_else(|| {
        err(
            path,
            format!("expected an object, found {}", json_kind(value)),
        )
    })
}

/// Copies the listed members of `from` that are present (and not null) into `to`.
pub(super) fn copy(from: &Map<String, Value>, to: &mut Map<String, Value>, keys: &[&str]) {
    for key in keys {
        if let Some(v) = from.get(*key).filter(|v| !v.is_null()) {
            to.insert((*key).to_string(), v.clone());
        }
    }
}

/// Maps each element of the array at `key` (if present) with `f`, into `to[key]`.
pub(super) fn map_array(
    from: &Map<String, Value>,
    to: &mut Map<String, Value>,
    key: &str,
    path: &str,
    f: impl Fn(&Value, &str) -> Result<Value>,
) -> Result<()> {
    match from.get(key) {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Array(items)) => {
            let mapped = items
                .iter()
                .enumerate()
                .map(|(i, v)| f(v, &format!("{path}.{key}[{i}]")))
                .collect::<Result<Vec<_>>>()?;
            to.insert(key.to_string(), Value::Array(mapped));
            Ok(())
        }
        Some(other) => Err(err(
            format!("{path}.{key}"),
            format!("expected an array, found {}", json_kind(other)),
        )),
    }
}

/// The 1.0 → 0.3 direction of [`map_array`]: its input was serialized from typed 1.0 values,
/// so there is nothing to reject.
pub(super) fn map_array_v1(
    from: &Map<String, Value>,
    to: &mut Map<String, Value>,
    key: &str,
    f: impl Fn(&Value) -> Value,
) {
    if let Some(Value::Array(items)) = from.get(key) {
        to.insert(key.to_string(), items.iter().map(f).collect());
    }
}

/// The members of `v`: an object, since it was serialized from a typed 1.0 value (none if it
/// is not).
pub(super) fn members(v: &Value) -> &Map<String, Value> {
    static NONE: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);
    v.as_object().unwrap_or(&NONE)
}
