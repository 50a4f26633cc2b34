//! Agent cards: fetching one ([`fetch_card`]), reading it in any generation's shape
//! ([`parse_card`]), and the tools it offers ([`tools_from_card`]).

use a2a::{AgentCard, AgentExtension};
use serde_json::{Map, Value, json};

use super::error::A2aClientError;
use crate::a2a::extensions::TOOLS_EXTENSION_URI;
use crate::a2a::{compat, parts::integral_floats_to_ints};
use crate::tool::ToolAnnotations;
use crate::util::prefix;

/// The well-known path of an agent card (A2A 0.3 and 1.0).
const AGENT_CARD_PATH: &str = "/.well-known/agent-card.json";

/// Where 0.2-era agents serve their card.
const LEGACY_CARD_PATH: &str = "/.well-known/agent.json";

/// `url` without a trailing `/` or card path: the agent's base URL.
pub(super) fn base_url(url: &str) -> String {
    let url = url.trim_end_matches('/');
    url.strip_suffix(AGENT_CARD_PATH)
        .or_else(|| url.strip_suffix(LEGACY_CARD_PATH))
        .unwrap_or(url)
        .to_string()
}

/// Where the card of the agent at `url` is served.
fn card_url(url: &str) -> String {
    if url.ends_with(".json") {
        url.to_string()
    } else {
        format!("{}{AGENT_CARD_PATH}", url.trim_end_matches('/'))
    }
}

/// Fetch and read an agent card, in the 1.0 shape or the 0.3 one.
pub(super) async fn fetch_card(
    http: &reqwest::Client,
    url: &str,
    bearer: Option<&str>,
) -> Result<AgentCard, A2aClientError> {
    let url = card_url(url);
    let mut request = http.get(&url).header("Accept", "application/json");
    if let Some(token) = bearer {
        request = request.bearer_auth(token);
    }
    let response = request
        .send()
        .await
        .map_err(|e| A2aClientError::from_http(&url, e))?;
    let status = response.status();
    let body = response
        .text()
        .await
        .map_err(|e| A2aClientError::from_http(&url, e))?;
    if !status.is_success() {
        let message = format!("HTTP {status}: {}", prefix(&body, 200));
        if status == reqwest::StatusCode::UNAUTHORIZED || status == reqwest::StatusCode::FORBIDDEN {
            return Err(A2aClientError::Unauthorized { url, message });
        }
        return Err(A2aClientError::Card { url, message });
    }
    let value: Value = serde_json::from_str(&body).map_err(|e| A2aClientError::Card {
        url: url.clone(),
        message: format!("not JSON: {e}"),
    })?;
    parse_card(value).map_err(|message| A2aClientError::Card { url, message })
}

/// Read a card given as JSON, in the 1.0 shape (`supportedInterfaces`), the 0.3 one (`url`,
/// `protocolVersion`, `preferredTransport`, `additionalInterfaces`) or the merged one.
///
/// Schemas a card puts on its skills (`input_schema`/`output_schema`, remote tools as design
/// document 004 writes them) have no field in [`AgentSkill`](a2a::AgentSkill); they are kept in
/// the card's extensions so that [`tools_from_card`] finds them (see there).
pub fn parse_card(value: Value) -> Result<AgentCard, String> {
    let mut card = compat::card_from_v03(&value).map_err(|e| e.to_string())?;
    keep_skill_schemas(&value, &mut card);
    Ok(card)
}

/// One tool an agent card offers.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct RemoteToolInfo {
    /// The tool's name on the remote agent (what `_tool_call.name` carries).
    pub name: String,
    /// The id of the skill that declares it (`tool-<name>`).
    pub skill_id: String,
    /// The skill's description.
    pub description: String,
    /// JSON Schema of the arguments (`{"type": "object"}` when the card has none).
    pub input_schema: Value,
    /// JSON Schema of the structured result, if declared.
    pub output_schema: Option<Value>,
    /// Behaviour hints.
    pub annotations: ToolAnnotations,
    /// Whether the schema came from the card (false: the permissive fallback).
    pub schema_declared: bool,
}

/// The tools `card` offers, in the order of its skills. Both forms of remote tools are read:
///
/// - Every skill tagged `tool` is a tool. Its name is the key of its entry in a tools
///   extension (matched by `skillId`), else its id without the `tool-` prefix, else its `name`.
/// - **This project's form:** schemas and hints in a `capabilities.extensions[]` entry whose
///   `params.tools` maps tool names to `{skillId, inputSchema, outputSchema?, annotations}`.
///   A2A skills have no schema fields, and a free-form extension `params` is what survives
///   every SDK.
/// - **Design 004's form:** `input_schema` / `output_schema` on the skill object itself
///   (`inputSchema` / `outputSchema` too, as some peers spell them). [`AgentSkill`](a2a::AgentSkill)
///   cannot hold them, so they survive only in a card read by
///   [`parse_card`] (and so by [`RemoteAgent`](super::RemoteAgent) and the registry), which keeps them in the card's extensions (URI `urn:agent-toolkit:skill-schemas`,
///   `params.skills.<skill id>`). A card deserialized some other way has lost them.
/// - When both forms give a schema, **the extension wins**, schema by schema (an `outputSchema`
///   only on the skill is still used): the extension is where this project and SDK-built peers
///   put schemas, and this crate's servers write both from the same definition; a disagreement
///   is logged as a warning naming the tool.
/// - Integral floats in the schemas (`7.0`, as protobuf-based peers send every number) become
///   integers.
/// - A tool without a schema (a card from an agent that uses neither form), or whose schema is
///   not a JSON object, gets the permissive input schema `{"type": "object"}`: the model may
///   send any object and the remote agent is the one to check it.
/// - Annotations use MCP's hint names (`readOnlyHint`, `idempotentHint`, `destructiveHint`);
///   the snake-case names of [`ToolAnnotations`] are accepted too.
pub fn tools_from_card(card: &AgentCard) -> Vec<RemoteToolInfo> {
    let entries = extension_entries(card);
    let on_skills = skill_schema_entries(card);
    card.skills
        .iter()
        .filter(|s| s.tags.iter().any(|t| t == "tool"))
        .map(|skill| {
            let entry = entries
                .iter()
                .find(|(_, e)| e.get("skillId").and_then(Value::as_str) == Some(&skill.id))
                .or_else(|| {
                    let name = skill.id.strip_prefix("tool-").unwrap_or(&skill.id);
                    entries.iter().find(|(n, _)| n == name)
                });
            let name = match entry {
                Some((name, _)) => name.clone(),
                None => skill
                    .id
                    .strip_prefix("tool-")
                    .filter(|n| !n.is_empty())
                    .unwrap_or(&skill.name)
                    .to_string(),
            };
            let entry = entry.map(|(_, e)| e);
            let on_skill = on_skills
                .and_then(|s| s.get(&skill.id))
                .and_then(Value::as_object);
            let schema = |ext_key: &str, skill_key: &str| {
                let from_ext = entry.and_then(|e| usable_schema(&name, ext_key, e.get(ext_key)));
                let from_skill =
                    on_skill.and_then(|s| usable_schema(&name, skill_key, s.get(skill_key)));
                if let (Some(ext), Some(sk)) = (&from_ext, &from_skill)
                    && ext != sk
                {
                    tracing::warn!(
                        tool = name.as_str(),
                        skill = skill.id.as_str(),
                        "the card gives two different {skill_key}s for this tool: the one in \
                         the tools extension is used, the one on the skill is ignored"
                    );
                }
                from_ext.or(from_skill).map(|mut s| {
                    integral_floats_to_ints(&mut s);
                    s
                })
            };
            let input = schema("inputSchema", "input_schema");
            let output = schema("outputSchema", "output_schema");
            RemoteToolInfo {
                skill_id: skill.id.clone(),
                description: skill.description.clone(),
                schema_declared: input.is_some(),
                input_schema: input.unwrap_or_else(|| json!({"type": "object"})),
                output_schema: output,
                annotations: entry
                    .and_then(|e| e.get("annotations"))
                    .and_then(Value::as_object)
                    .map(annotations)
                    .unwrap_or_default(),
                name,
            }
        })
        .collect()
}

/// A schema the card gives at `key`, if it is a JSON object; anything else is reported and
/// not used (the tool then falls back to the permissive schema).
fn usable_schema(tool: &str, key: &str, value: Option<&Value>) -> Option<Value> {
    match value? {
        Value::Null => None,
        schema @ Value::Object(_) => Some(schema.clone()),
        other => {
            tracing::warn!(
                tool,
                "the card's {key} for this tool is not a JSON object ({other}); it is ignored"
            );
            None
        }
    }
}

/// The URI under which [`keep_skill_schemas`] keeps schemas found on skills.
const SKILL_SCHEMAS_URI: &str = "urn:agent-toolkit:skill-schemas";

/// Keeps what `raw` (an agent card as JSON) puts on its skills as schemas —
/// `input_schema`/`output_schema` (design 004's names) or `inputSchema`/`outputSchema` — in
/// `card`'s extensions, since [`AgentSkill`](a2a::AgentSkill) has no field for them and drops
/// them when it is deserialized. Stored as an extension with URI [`SKILL_SCHEMAS_URI`] and
/// `params.skills.<skill id> = {input_schema?, output_schema?}`. A schema equal to the one the
/// tools extension already gives (this crate's servers write both) is not kept twice; nothing
/// is added when no skill carries a schema of its own.
fn keep_skill_schemas(raw: &Value, card: &mut AgentCard) {
    let Some(skills) = raw.get("skills").and_then(Value::as_array) else {
        return;
    };
    let declared = extension_entries(card);
    let mut kept = Map::new();
    for skill in skills.iter().filter_map(Value::as_object) {
        let Some(id) = skill.get("id").and_then(Value::as_str) else {
            continue;
        };
        let entry = declared
            .iter()
            .find(|(_, e)| e.get("skillId").and_then(Value::as_str) == Some(id))
            .map(|(_, e)| e);
        let mut schemas = Map::new();
        for (snake, camel) in [
            ("input_schema", "inputSchema"),
            ("output_schema", "outputSchema"),
        ] {
            let value = match (skill.get(snake), skill.get(camel)) {
                (Some(s), Some(c)) if s != c => {
                    tracing::warn!(
                        skill = id,
                        "the skill has both {snake} and {camel}, and they differ: {snake} is used"
                    );
                    Some(s)
                }
                (s, c) => s.or(c),
            };
            let same_as_declared = |v: &Value| entry.and_then(|e| e.get(camel)) == Some(v);
            if let Some(value) = value.filter(|v| !v.is_null() && !same_as_declared(v)) {
                schemas.insert(snake.to_string(), value.clone());
            }
        }
        if !schemas.is_empty() {
            kept.insert(id.to_string(), Value::Object(schemas));
        }
    }
    if kept.is_empty() {
        return;
    }
    let extension = AgentExtension {
        uri: SKILL_SCHEMAS_URI.into(),
        description: Some(
            "Not declared by the agent: the schemas its card puts on skills, kept by \
             agent-toolkit because A2A skills have no fields for them"
                .into(),
        ),
        required: Some(false),
        params: Some([("skills".to_string(), Value::Object(kept))].into()),
    };
    card.capabilities
        .extensions
        .get_or_insert_with(Vec::new)
        .push(extension);
}

/// The schemas [`keep_skill_schemas`] kept, by skill id.
fn skill_schema_entries(card: &AgentCard) -> Option<&Map<String, Value>> {
    card.capabilities
        .extensions
        .iter()
        .flatten()
        .find(|e| e.uri == SKILL_SCHEMAS_URI)
        .and_then(|e| e.params.as_ref())
        .and_then(|p| p.get("skills"))
        .and_then(Value::as_object)
}

/// Every `name → entry` of every tools extension of the card.
fn extension_entries(card: &AgentCard) -> Vec<(String, Map<String, Value>)> {
    let mut out = Vec::new();
    let extensions = card.capabilities.extensions.iter().flatten();
    // Our own URI first, so its entries win over another extension's.
    let (ours, others): (Vec<_>, Vec<_>) = extensions.partition(|e| e.uri == TOOLS_EXTENSION_URI);
    for ext in ours.into_iter().chain(others) {
        let Some(tools) = ext
            .params
            .as_ref()
            .and_then(|p| p.get("tools"))
            .and_then(Value::as_object)
        else {
            continue;
        };
        for (name, entry) in tools {
            if let Some(entry) = entry.as_object()
                && !out.iter().any(|(n, _)| n == name)
            {
                out.push((name.clone(), entry.clone()));
            }
        }
    }
    out
}

fn annotations(hints: &Map<String, Value>) -> ToolAnnotations {
    let flag = |camel: &str, snake: &str| {
        hints
            .get(camel)
            .or_else(|| hints.get(snake))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    };
    ToolAnnotations {
        title: hints
            .get("title")
            .and_then(Value::as_str)
            .map(str::to_string),
        read_only: flag("readOnlyHint", "read_only"),
        idempotent: flag("idempotentHint", "idempotent"),
        destructive: flag("destructiveHint", "destructive"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn card_urls() {
        assert_eq!(
            card_url("http://h:1"),
            "http://h:1/.well-known/agent-card.json"
        );
        assert_eq!(
            card_url("http://h:1/"),
            "http://h:1/.well-known/agent-card.json"
        );
        assert_eq!(card_url("http://h:1/x/card.json"), "http://h:1/x/card.json");
        assert_eq!(
            base_url("http://h:1/.well-known/agent-card.json"),
            "http://h:1"
        );
        assert_eq!(base_url("http://h:1/"), "http://h:1");
    }

    fn card(value: Value) -> AgentCard {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn tools_come_from_tagged_skills_with_extension_schemas() {
        let card = card(json!({
            "name": "t", "description": "d", "version": "1",
            "supportedInterfaces": [{"url": "http://x", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": {"extensions": [{"uri": "urn:other", "params": {"tools": {
                "get_weather": {"skillId": "tool-get_weather",
                    "inputSchema": {"type": "object", "properties": {"days": {"type": "integer", "maximum": 7.0}}},
                    "outputSchema": {"type": "object"},
                    "annotations": {"readOnlyHint": true, "idempotentHint": true}}}}}]},
            "skills": [
                {"id": "tool-get_weather", "name": "Get weather", "description": "Weather", "tags": ["tool"]},
                {"id": "tool-bare", "name": "bare", "description": "No schema", "tags": ["tool", "x"]},
                {"id": "chat", "name": "chat", "description": "Not a tool", "tags": ["agent"]}
            ]
        }));
        let tools = tools_from_card(&card);
        assert_eq!(tools.len(), 2);
        assert_eq!(tools[0].name, "get_weather");
        assert_eq!(
            tools[0].input_schema["properties"]["days"]["maximum"],
            json!(7)
        );
        assert!(tools[0].annotations.read_only && tools[0].annotations.idempotent);
        assert!(tools[0].output_schema.is_some());
        assert_eq!(tools[1].name, "bare");
        assert!(!tools[1].schema_declared);
        assert_eq!(tools[1].input_schema, json!({"type": "object"}));
    }

    /// A 0.3 card written as design 004 shows it: the schemas on the skills.
    fn card_004(skills: Value, extensions: Value) -> Value {
        json!({
            "name": "literal", "description": "d", "version": "1",
            "url": "http://x/", "protocolVersion": "0.3.0",
            "capabilities": {"extensions": extensions},
            "defaultInputModes": ["application/json"], "defaultOutputModes": ["application/json"],
            "skills": skills
        })
    }

    #[test]
    fn schemas_on_skills_are_read_from_a_parsed_card() {
        let raw = card_004(
            json!([
                {"id": "tool-get_weather", "name": "Get Weather", "description": "Weather",
                 "tags": ["tool", "weather"],
                 "input_schema": {"type": "object", "properties": {"city": {"type": "string"},
                                  "days": {"type": "integer", "maximum": 7.0}}, "required": ["city"]},
                 "output_schema": {"type": "object", "properties": {"temp_c": {"type": "number"}}}},
                {"id": "tool-camel", "name": "camel", "description": "camelCase peer",
                 "tags": ["tool"], "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}},
                {"id": "tool-bare", "name": "bare", "description": "no schema", "tags": ["tool"]},
                {"id": "tool-odd", "name": "odd", "description": "not a schema", "tags": ["tool"],
                 "input_schema": "a string"}
            ]),
            json!([]),
        );
        // The official type drops the skill fields: reading the card as a plain `AgentCard`
        // loses them, which is why `parse_card` keeps them.
        let plain = compat::card_from_v03(&raw).unwrap();
        assert_eq!(
            tools_from_card(&plain)[0].input_schema,
            json!({"type": "object"})
        );

        let card = parse_card(raw).unwrap();
        let tools = tools_from_card(&card);
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["get_weather", "camel", "bare", "odd"]);
        let weather = &tools[0];
        assert!(weather.schema_declared);
        assert_eq!(weather.input_schema["required"], json!(["city"]));
        assert_eq!(
            weather.input_schema["properties"]["days"]["maximum"],
            json!(7)
        );
        assert_eq!(
            weather.output_schema.as_ref().unwrap()["properties"]["temp_c"],
            json!({"type": "number"})
        );
        assert_eq!(
            tools[1].input_schema["properties"]["q"],
            json!({"type": "string"})
        );
        for fallback in &tools[2..] {
            assert!(!fallback.schema_declared, "{}", fallback.name);
            assert_eq!(fallback.input_schema, json!({"type": "object"}));
            assert_eq!(fallback.output_schema, None);
        }
    }

    #[test]
    fn the_extension_wins_over_the_skill_schema_by_schema() {
        let raw = card_004(
            json!([{"id": "tool-t", "name": "t", "description": "d", "tags": ["tool"],
                    "input_schema": {"type": "object", "properties": {"from_skill": {}}},
                    "output_schema": {"type": "object", "properties": {"out": {}}}}]),
            json!([{"uri": TOOLS_EXTENSION_URI, "params": {"tools": {"t": {
                "skillId": "tool-t",
                "inputSchema": {"type": "object", "properties": {"from_extension": {}}}}}}}]),
        );
        let card = parse_card(raw).unwrap();
        let tool = &tools_from_card(&card)[0];
        assert_eq!(
            tool.input_schema,
            json!({"type": "object", "properties": {"from_extension": {}}})
        );
        // Only the skill has an output schema: it is used.
        assert_eq!(
            tool.output_schema,
            Some(json!({"type": "object", "properties": {"out": {}}}))
        );
    }

    #[test]
    fn a_card_without_skill_schemas_of_its_own_gets_no_extra_extension() {
        let raw = card_004(
            json!([{"id": "tool-t", "name": "t", "description": "d", "tags": ["tool"]}]),
            json!([]),
        );
        let card = parse_card(raw).unwrap();
        assert_eq!(card.capabilities.extensions, Some(Vec::new()));
        // The same schema on the skill and in the extension (as this crate's servers write
        // them) is kept once.
        let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
        let raw = card_004(
            json!([{"id": "tool-t", "name": "t", "description": "d", "tags": ["tool"],
                    "input_schema": schema}]),
            json!([{"uri": TOOLS_EXTENSION_URI, "params": {"tools": {"t": {
                "skillId": "tool-t", "inputSchema": schema}}}}]),
        );
        let card = parse_card(raw).unwrap();
        assert_eq!(card.capabilities.extensions.as_ref().unwrap().len(), 1);
        assert_eq!(tools_from_card(&card)[0].input_schema, schema);
    }
}
