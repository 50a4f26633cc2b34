//! The agent card: the merged 1.0 + 0.3 card a server publishes, and reading either generation.

use a2a::AgentCard;
use serde_json::{Map, Value, json};

use super::json::{Result, err, from_json, object, to_json};

/// The protocol version string of A2A 0.3 as cards and headers carry it (`Major.Minor`).
pub const V03: &str = "0.3";

/// Whether an interface's `protocolVersion` is 0.x (or unset, which 0.3 peers imply).
fn is_legacy_version(version: &str) -> bool {
    version.is_empty() || version.starts_with("0.")
}

/// The merged agent card a server publishes to both generations of clients: the 1.0 card plus
/// the 0.3 members (`url`, `preferredTransport`, `protocolVersion`, `additionalInterfaces`,
/// `supportsAuthenticatedExtendedCard`, `security`, 0.3 security schemes and skills), as the
/// official Python SDK's `agent_card_to_dict` does.
///
/// The 0.3 members describe the interfaces declared with a 0.x `protocolVersion`: the first is
/// `url`, the others `additionalInterfaces`. A card without such an interface does not offer
/// 0.3 and is returned as the plain 1.0 card. Where both generations use the same member name
/// with different shapes (`securitySchemes` entries), the two are merged into one object that
/// each generation's parser reads its own keys from.
pub fn card_to_v03(card: &AgentCard) -> Value {
    let mut v1 = to_json(card);
    let legacy: Vec<_> = card
        .supported_interfaces
        .iter()
        .filter(|i| is_legacy_version(&i.protocol_version))
        .collect();
    let Some(primary) = legacy.first() else {
        return v1;
    };
    let mut compat = Map::new();
    compat.insert("url".into(), primary.wire_url().into());
    compat.insert(
        "preferredTransport".into(),
        primary.protocol_binding.clone().into(),
    );
    let version = if primary.protocol_version.is_empty() {
        V03.to_string()
    } else {
        primary.protocol_version.clone()
    };
    compat.insert("protocolVersion".into(), version.into());
    if legacy.len() > 1 {
        let more: Vec<Value> = legacy[1..]
            .iter()
            .map(|i| json!({ "url": i.wire_url(), "transport": i.protocol_binding }))
            .collect();
        compat.insert("additionalInterfaces".into(), Value::Array(more));
    }
    if card.capabilities.extended_agent_card == Some(true) {
        compat.insert("supportsAuthenticatedExtendedCard".into(), true.into());
    }
    if let Some(v1_card) = v1.as_object() {
        if let Some(Value::Object(schemes)) = v1_card.get("securitySchemes") {
            let legacy: Map<String, Value> = schemes
                .iter()
                .map(|(name, s)| (name.clone(), security_scheme_v1_to_v03(s)))
                .collect();
            compat.insert("securitySchemes".into(), Value::Object(legacy));
        }
        if let Some(reqs) = v1_card.get("securityRequirements") {
            compat.insert("security".into(), security_v1_to_v03(reqs));
        }
        if let Some(Value::Array(skills)) = v1_card.get("skills") {
            let skills: Vec<Value> = skills
                .iter()
                .map(|s| match s.get("securityRequirements") {
                    Some(reqs) => json!({ "security": security_v1_to_v03(reqs) }),
                    None => json!({}),
                })
                .collect();
            compat.insert("skills".into(), Value::Array(skills));
        }
    }
    merge(&mut v1, Value::Object(compat));
    v1
}

/// The Python SDK's merge: members missing from `into` are added, objects merge recursively,
/// arrays merge element-wise by position; members present in both otherwise keep `into`'s.
fn merge(into: &mut Value, from: Value) {
    match (into, from) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                match a.get_mut(&k) {
                    None => {
                        a.insert(k, v);
                    }
                    Some(existing) => merge(existing, v),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for (x, y) in a.iter_mut().zip(b) {
                if x.is_object() && y.is_object() {
                    merge(x, y);
                }
            }
        }
        _ => {}
    }
}

const SCHEME_TYPES: [(&str, &str); 5] = [
    ("apiKeySecurityScheme", "apiKey"),
    ("httpAuthSecurityScheme", "http"),
    ("oauth2SecurityScheme", "oauth2"),
    ("openIdConnectSecurityScheme", "openIdConnect"),
    ("mtlsSecurityScheme", "mutualTLS"),
];

fn security_scheme_v1_to_v03(scheme: &Value) -> Value {
    for (wrapper, kind) in SCHEME_TYPES {
        if let Some(Value::Object(inner)) = scheme.get(wrapper) {
            let mut out = Map::new();
            out.insert("type".into(), kind.into());
            for (k, v) in inner {
                let key = if wrapper == "apiKeySecurityScheme" && k == "location" {
                    "in"
                } else {
                    k.as_str()
                };
                out.insert(key.to_string(), v.clone());
            }
            return Value::Object(out);
        }
    }
    json!({})
}

fn security_scheme_v03_to_v1(scheme: &Value) -> Value {
    let Some(s) = scheme.as_object() else {
        return scheme.clone();
    };
    // A 1.0 (or merged) entry already carries its wrapper member.
    if SCHEME_TYPES.iter().any(|(w, _)| s.contains_key(*w)) {
        return scheme.clone();
    }
    let kind = s.get("type").and_then(Value::as_str).unwrap_or_default();
    match SCHEME_TYPES.iter().find(|(_, t)| *t == kind) {
        Some((wrapper, _)) => {
            let mut inner = Map::new();
            for (k, v) in s.iter().filter(|(k, _)| k.as_str() != "type") {
                let key = if kind == "apiKey" && k == "in" {
                    "location"
                } else {
                    k.as_str()
                };
                inner.insert(key.to_string(), v.clone());
            }
            let mut out = Map::new();
            out.insert((*wrapper).to_string(), Value::Object(inner));
            Value::Object(out)
        }
        None => scheme.clone(),
    }
}

/// 1.0 `[{"schemes":{name:{"list":[scopes]}}}]` → 0.3 `[{name:[scopes]}]`.
fn security_v1_to_v03(reqs: &Value) -> Value {
    let Some(reqs) = reqs.as_array() else {
        return Value::Array(Vec::new());
    };
    reqs.iter()
        .map(|r| {
            let schemes = r.get("schemes").and_then(Value::as_object);
            let legacy: Map<String, Value> = schemes
                .into_iter()
                .flatten()
                .map(|(name, scopes)| {
                    let list = scopes.get("list").cloned().unwrap_or_else(|| json!([]));
                    (name.clone(), list)
                })
                .collect();
            Value::Object(legacy)
        })
        .collect()
}

/// 0.3 `[{name:[scopes]}]` → 1.0 `[{"schemes":{name:{"list":[scopes]}}}]`.
fn security_v03_to_v1(reqs: &Value) -> Value {
    let Some(reqs) = reqs.as_array() else {
        return reqs.clone();
    };
    reqs.iter()
        .map(|r| {
            let schemes: Map<String, Value> = r
                .as_object()
                .into_iter()
                .flatten()
                .map(|(name, scopes)| (name.clone(), json!({ "list": scopes })))
                .collect();
            json!({ "schemes": schemes })
        })
        .collect()
}

/// `Major.Minor` of a version string (`"0.3.0"` → `"0.3"`), as A2A 1.0 negotiates versions.
fn major_minor(version: &str) -> String {
    version.split('.').take(2).collect::<Vec<_>>().join(".")
}

/// Reads an agent card of either generation: a 0.3 card (its `url`, `preferredTransport`,
/// `protocolVersion` and `additionalInterfaces` become `supportedInterfaces`), a merged card, or
/// a plain 1.0 card. Like the official Python client, a card that lists `supportedInterfaces`
/// is read by them and its 0.3 members are ignored.
pub fn card_from_v03(value: &Value) -> Result<AgentCard> {
    let path = "agentCard";
    let mut card = object(value, path)?.clone();
    let legacy_extended = card.remove("supportsAuthenticatedExtendedCard");
    if legacy_extended == Some(Value::Bool(true)) {
        let caps = card
            .entry("capabilities")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(caps) = caps.as_object_mut() {
            caps.entry("extendedAgentCard").or_insert(true.into());
        }
    }
    let url = card.remove("url");
    let transport = card
        .remove("preferredTransport")
        .and_then(|t| t.as_str().map(str::to_string))
        .unwrap_or_else(|| a2a::TRANSPORT_PROTOCOL_JSONRPC.to_string());
    let version = card
        .remove("protocolVersion")
        .and_then(|t| t.as_str().map(major_minor))
        .unwrap_or_else(|| V03.to_string());
    let additional = card.remove("additionalInterfaces");
    if !card.contains_key("supportedInterfaces") {
        let Some(Value::String(url)) = url else {
            return Err(err(
                format!("{path}.url"),
                "a card needs `supportedInterfaces` (1.0) or `url` (0.3)",
            ));
        };
        let mut interfaces = vec![json!({
            "url": url, "protocolBinding": transport, "protocolVersion": version,
        })];
        if let Some(Value::Array(more)) = additional {
            for (i, iface) in more.iter().enumerate() {
                let ipath = format!("{path}.additionalInterfaces[{i}]");
                let o = object(iface, &ipath)?;
                let (Some(u), Some(t)) = (
                    o.get("url").and_then(Value::as_str),
                    o.get("transport").and_then(Value::as_str),
                ) else {
                    return Err(err(ipath, "needs a string `url` and `transport`"));
                };
                // The primary interface is often listed again here; once is enough.
                if u == url && t == transport {
                    continue;
                }
                interfaces.push(json!({
                    "url": u, "protocolBinding": t, "protocolVersion": version,
                }));
            }
        }
        card.insert("supportedInterfaces".into(), Value::Array(interfaces));
    }
    if let Some(legacy) = card.remove("security")
        && !card.contains_key("securityRequirements")
    {
        card.insert("securityRequirements".into(), security_v03_to_v1(&legacy));
    }
    if let Some(Value::Array(skills)) = card.get_mut("skills") {
        for skill in skills.iter_mut().filter_map(Value::as_object_mut) {
            if let Some(legacy) = skill.remove("security")
                && !skill.contains_key("securityRequirements")
            {
                skill.insert("securityRequirements".into(), security_v03_to_v1(&legacy));
            }
        }
    }
    if let Some(Value::Object(schemes)) = card.get_mut("securitySchemes") {
        for scheme in schemes.values_mut() {
            *scheme = security_scheme_v03_to_v1(scheme);
        }
    }
    card.entry("capabilities")
        .or_insert_with(|| Value::Object(Map::new()));
    from_json(Value::Object(card), path)
}
