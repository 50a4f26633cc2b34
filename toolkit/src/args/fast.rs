//! The one-pass path of `#[tool]`-generated tools: the argument object is parsed straight
//! into a typed sink, one value per parameter, with no intermediate tree. Anything irregular
//! sends the call to the thorough path ([`resolve`](super::resolve)), which explains it.

use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use std::fmt;

use super::resolve::Key;
use super::{ArgPolicy, HiddenArgs, ParamPlan, ToolArgs, UnknownArgs};
use crate::param::ParamKind;

impl ToolArgs {
    /// The one-pass path: parse the argument object straight into `sink`, one typed value per
    /// parameter, then fill absent ones from the registration's bindings. Returns `false` on
    /// anything irregular — a hidden or unknown key under the reject policy, a repeated key, a
    /// type mismatch, a missing required value — and the caller then takes the thorough path
    /// ([`resolve_slots`](Self::resolve_slots) and [`value`](Self::value)) to describe it.
    pub fn fast<S: ArgSink>(&self, sink: &mut S) -> bool {
        let plan = &*self.plan;
        // Already resolved (the toolkit did it up front): the slots are the answer.
        if self.resolved || plan.dynamic || plan.params.len() > 64 {
            return false;
        }
        let visitor = FastVisitor {
            plan,
            policy: &self.policy,
            sink: &mut *sink,
            seen: 0,
        };
        let mut de = serde_json::Deserializer::from_str(&self.text);
        if visitor
            .deserialize(&mut de)
            .and_then(|()| de.end())
            .is_err()
        {
            return false;
        }
        plan.params.iter().enumerate().all(|(i, p)| {
            if !p.kind.is_json() || sink.present(i) {
                return true;
            }
            match &p.binding {
                Some(raw) => sink.bind(i, raw.get()),
                None => p.kind != ParamKind::Required && p.kind != ParamKind::Preset,
            }
        })
    }
}

/// Typed storage for one tool's JSON parameters, filled by [`ToolArgs::fast`]. `#[tool]`
/// generates one per tool; an `Option` per parameter.
pub trait ArgSink {
    /// Deserialize the value of parameter `index` (signature position) from `map`.
    fn accept<'de, A: MapAccess<'de>>(&mut self, index: usize, map: &mut A)
    -> Result<(), A::Error>;
    /// Whether parameter `index` has a value.
    fn present(&self, index: usize) -> bool;
    /// Fill parameter `index` from a registration binding (JSON text); `false` if it does not fit.
    fn bind(&mut self, index: usize, json: &str) -> bool;
}

struct FastVisitor<'p, S> {
    plan: &'p ParamPlan,
    policy: &'p ArgPolicy,
    sink: &'p mut S,
    seen: u64,
}

impl<'de, S: ArgSink> DeserializeSeed<'de> for FastVisitor<'_, S> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, S: ArgSink> Visitor<'de> for FastVisitor<'_, S> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object of named arguments")
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        // Errors here only say "take the thorough path"; their text is never shown.
        let irregular = || de::Error::custom("irregular arguments");
        while let Some(key) = map.next_key::<Key<'de>>()? {
            let Some(index) = self.plan.params.iter().position(|p| p.name == *key.0) else {
                if self.policy.unknown == UnknownArgs::Reject {
                    return Err(irregular());
                }
                map.next_value::<de::IgnoredAny>()?;
                continue;
            };
            let param = &self.plan.params[index];
            if param.hidden {
                if self.policy.hidden == HiddenArgs::Reject {
                    return Err(irregular());
                }
                tracing::warn!(
                    tool = &*self.plan.tool,
                    parameter = %key.0,
                    "the model sent a value for a hidden parameter; ignored"
                );
                map.next_value::<de::IgnoredAny>()?;
                continue;
            }
            if self.seen & (1 << index) != 0 {
                return Err(irregular());
            }
            self.seen |= 1 << index;
            self.sink.accept(index, &mut map)?;
        }
        Ok(())
    }
}
