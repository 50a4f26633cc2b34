//! The one versioned form of every value kept as JSON in a database or handed out to be
//! stored (a job's payload, its stored result, an A2A agent's conversation, a paused run):
//! `{"version": N, …fields}`, written and read through [`encode`] and [`decode`].
//!
//! A reader checks the version before anything else: a value of a version this build reads is
//! read (older ones included, each type says which); any other is refused with an error naming
//! what the value is, its version and the versions this build reads. Values written before this
//! form existed carried the version as `"v"`, which is read as well.

use std::ops::RangeInclusive;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

pub(crate) use super::error::StoredError;

/// A value kept in the versioned form.
pub(crate) trait Stored: Serialize {
    /// What the value is, for errors: "a job payload".
    const WHAT: &'static str;
    /// The version this build writes.
    const VERSION: u32;
    /// The versions this build reads (older versions whose fields it still understands).
    const READS: RangeInclusive<u32> = Self::VERSION..=Self::VERSION;
    /// The version of a value stored without any, when such values were written once (before
    /// this form existed) and are still read.
    const UNVERSIONED: Option<u32> = None;

    /// Rewrites the fields of a value of the older `version` (one of [`READS`](Self::READS))
    /// into today's form, before it is read; an error says what could not be rewritten. By
    /// default the forms are the same.
    fn upgrade(_version: u32, _fields: &mut Map<String, Value>) -> Result<(), String> {
        Ok(())
    }
}

/// Upgrades a value of `T` stored inside another stored value (which does not go through
/// [`decode`]) to today's form: its version is checked and its fields rewritten as
/// [`Stored::upgrade`] says. Anything but an object is left for the reader to refuse.
#[cfg_attr(not(all(feature = "a2a", durable)), allow(dead_code))]
pub(crate) fn upgrade_nested<T: Stored>(value: &mut Value) -> Result<(), StoredError> {
    if let Value::Object(fields) = value {
        upgrade::<T>(fields)?;
    }
    Ok(())
}

/// Checks the version of `fields` and rewrites them into today's form, the version included.
fn upgrade<T: Stored>(fields: &mut Map<String, Value>) -> Result<(), StoredError> {
    let version = fields.get("version").or_else(|| fields.get("v"));
    let found = match (version, T::UNVERSIONED) {
        (Some(version), _) => version.as_u64(),
        (None, unversioned) => unversioned.map(u64::from),
    };
    let Some(found) = found else {
        return Err(StoredError::Malformed {
            what: T::WHAT,
            reason: "it has no format version".into(),
        });
    };
    let readable = u32::try_from(found).ok().filter(|v| T::READS.contains(v));
    let Some(found) = readable else {
        return Err(StoredError::Version {
            what: T::WHAT,
            found,
            reads: T::READS,
        });
    };
    fields.remove("v");
    if found != T::VERSION {
        T::upgrade(found, fields).map_err(|reason| StoredError::Malformed {
            what: T::WHAT,
            reason: format!("upgrading it from version {found}: {reason}"),
        })?;
        fields.insert("version".into(), Value::from(T::VERSION));
    }
    Ok(())
}

/// `value` in the versioned form (its own `version` field, if it has one, is kept).
pub(crate) fn encode<T: Stored>(value: &T) -> String {
    encode_value(value).to_string()
}

/// [`encode`] as a JSON value (for a JSON column).
#[cfg_attr(not(durable), allow(dead_code))]
pub(crate) fn encode_value<T: Stored>(value: &T) -> Value {
    let fields = match serde_json::to_value(value) {
        Ok(Value::Object(fields)) => fields,
        // Every stored type is a struct; a serializer that fails leaves the version alone, which
        // a reader refuses clearly.
        _ => Map::new(),
    };
    let mut out = Map::with_capacity(fields.len() + 1);
    if !fields.contains_key("version") {
        out.insert("version".into(), Value::from(T::VERSION));
    }
    out.extend(fields);
    Value::Object(out)
}

/// Read a value written by [`encode`] (or, before it, with `"v"`), checking its version first.
pub(crate) fn decode<T: Stored + DeserializeOwned>(text: &str) -> Result<T, StoredError> {
    match serde_json::from_str::<Value>(text) {
        Ok(value) => decode_value(value),
        Err(e) => Err(StoredError::Malformed {
            what: T::WHAT,
            reason: format!("it is not JSON: {e}"),
        }),
    }
}

/// [`decode`] of a JSON value (from a JSON column).
#[cfg_attr(not(durable), allow(dead_code))]
pub(crate) fn decode_value<T: Stored + DeserializeOwned>(value: Value) -> Result<T, StoredError> {
    let malformed = |reason: String| StoredError::Malformed {
        what: T::WHAT,
        reason,
    };
    let mut fields = match value {
        Value::Object(fields) => fields,
        other => {
            return Err(malformed(format!(
                "it is {}, not an object",
                crate::util::json_kind(&other)
            )));
        }
    };
    upgrade::<T>(&mut fields)?;
    serde_path_to_error::deserialize(Value::Object(fields)).map_err(|e| {
        let path = e.path().to_string();
        let at = if path == "." {
            String::new()
        } else {
            format!(" at `{path}`")
        };
        malformed(format!("{}{at}", e.into_inner()))
    })
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Thing {
        job: u64,
    }

    impl Stored for Thing {
        const WHAT: &'static str = "a thing";
        const VERSION: u32 = 2;
        const READS: RangeInclusive<u32> = 1..=2;
    }

    #[test]
    fn written_with_its_version_and_read_back() {
        let text = encode(&Thing { job: 7 });
        assert_eq!(text, r#"{"version":2,"job":7}"#);
        assert_eq!(decode::<Thing>(&text), Ok(Thing { job: 7 }));
        // The form written before, with `v`, and an older version this type still reads.
        assert_eq!(decode::<Thing>(r#"{"v":1,"job":7}"#), Ok(Thing { job: 7 }));
    }

    #[test]
    fn other_versions_and_broken_values_are_refused_clearly() {
        let error = decode::<Thing>(r#"{"version":3,"job":7}"#).unwrap_err();
        assert_eq!(
            error.to_string(),
            "a thing in format version 3, but this build reads versions 1 to 2; it was written by \
             another version of agent-toolkit"
        );
        for (text, reason) in [
            (r#"{"job":7}"#, "no format version"),
            ("[1]", "an array, not an object"),
            ("nope", "not JSON"),
            (r#"{"version":2}"#, "missing field `job`"),
        ] {
            let error = decode::<Thing>(text).unwrap_err().to_string();
            assert!(
                error.starts_with("a thing that cannot be read: "),
                "{error}"
            );
            assert!(error.contains(reason), "{error}");
        }
    }
}
