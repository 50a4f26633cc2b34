//! Reading the tools an agent card offers: [`tools_from_card`].

use a2a::AgentCard;
use serde_json::{Map, Value, json};

use crate::ToolAnnotations;
use crate::a2a::parts::integral_floats_to_ints;

/// The URI of the tools extension this project's servers declare. Cards are read by the shape
/// of the extension's `params` (a `tools` object), so peers using another URI work too.
pub const TOOLS_EXTENSION_URI: &str = "https://agent-toolkit.dev/a2a/ext/tools/v1";

/// One tool an agent card offers.
#[derive(Clone, Debug, PartialEq)]
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

/// The tools `card` offers, in the order of its skills, by the project's convention (design
/// (b)):
///
/// - Every skill tagged `tool` is a tool. Its name is the key of its entry in the tools
///   extension (matched by `skillId`), else its id without the `tool-` prefix, else its `name`.
/// - Schemas and hints travel in a `capabilities.extensions[]` entry whose `params.tools` maps
///   tool names to `{skillId, inputSchema, outputSchema?, annotations}` — A2A skills have no
///   schema fields, and a free-form extension `params` is what survives every SDK. Integral
///   floats in the schemas (`7.0`, as protobuf-based peers send every number) become integers.
/// - A tool without an entry (a card from an agent that does not use the extension) gets the
///   permissive input schema `{"type": "object"}`: the model may send any object and the remote
///   agent is the one to check it.
/// - Annotations use MCP's hint names (`readOnlyHint`, `idempotentHint`, `destructiveHint`);
///   the snake-case names of [`ToolAnnotations`] are accepted too.
pub fn tools_from_card(card: &AgentCard) -> Vec<RemoteToolInfo> {
    let entries = extension_entries(card);
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
            let schema = |key: &str| {
                entry
                    .and_then(|e| e.get(key))
                    .filter(|s| s.is_object())
                    .cloned()
                    .map(|mut s| {
                        integral_floats_to_ints(&mut s);
                        s
                    })
            };
            let input = schema("inputSchema");
            RemoteToolInfo {
                name,
                skill_id: skill.id.clone(),
                description: skill.description.clone(),
                schema_declared: input.is_some(),
                input_schema: input.unwrap_or_else(|| json!({"type": "object"})),
                output_schema: schema("outputSchema"),
                annotations: entry
                    .and_then(|e| e.get("annotations"))
                    .and_then(Value::as_object)
                    .map(annotations)
                    .unwrap_or_default(),
            }
        })
        .collect()
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
}
