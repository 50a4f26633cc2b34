//! The card as served: the server's card plus the interfaces, security and 0.3 members the
//! router adds per request, with each tool's schemas repeated on its skill.

use a2a::{
    AgentCapabilities, AgentCard, AgentExtension, AgentInterface, AgentSkill,
    HttpAuthSecurityScheme, SecurityScheme, TRANSPORT_PROTOCOL_JSONRPC,
};
use axum::http::{HeaderMap, header};
use serde_json::Value;

use super::options::ServerOptions;
use crate::a2a::compat;
use crate::a2a::extensions::TOOLS_EXTENSION_URI;

/// The name of the bearer security scheme on the card.
const BEARER: &str = "bearer";

/// The URL of the JSON-RPC endpoint as clients should see it.
fn endpoint_url(options: &ServerOptions, headers: &HeaderMap) -> String {
    if let Some(url) = &options.public_url {
        return url.clone();
    }
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1");
    format!("http://{host}/")
}

/// A card of this library's servers as each server makes it once: streaming without push
/// notifications, the one `extension` that says how to use the server, its input and output
/// `modes`, and its `skills`. The interfaces and security are added per request
/// ([`served_card`]); there is no provider, documentation, icon or signature.
pub(super) fn server_card(
    name: String,
    description: String,
    version: String,
    extension: AgentExtension,
    input_modes: Vec<String>,
    output_modes: Vec<String>,
    skills: Vec<AgentSkill>,
) -> AgentCard {
    AgentCard {
        name,
        description,
        version,
        supported_interfaces: Vec::new(),
        capabilities: AgentCapabilities {
            streaming: Some(true),
            push_notifications: Some(false),
            extensions: Some(vec![extension]),
            extended_agent_card: None,
        },
        default_input_modes: input_modes,
        default_output_modes: output_modes,
        skills,
        provider: None,
        documentation_url: None,
        icon_url: None,
        security_schemes: None,
        security_requirements: None,
        signatures: None,
    }
}

/// `card` as JSON for a request with `headers`: the options' name, description and version;
/// the endpoint as a 1.0 and a 0.3 interface; the bearer scheme when a token is required; the
/// merged 1.0 + 0.3 shape ([`compat::card_to_v03`]), and the tools extension's schemas on the
/// skills ([`skill_schemas_on_card`]).
pub(super) fn served_card(
    mut card: AgentCard,
    options: &ServerOptions,
    headers: &HeaderMap,
) -> Value {
    options.apply_to(&mut card);
    let url = endpoint_url(options, headers);
    let mut legacy = AgentInterface::new(url.clone(), TRANSPORT_PROTOCOL_JSONRPC);
    legacy.protocol_version = compat::V03.to_string();
    card.supported_interfaces = vec![AgentInterface::new(url, TRANSPORT_PROTOCOL_JSONRPC), legacy];
    if options.bearer_token.is_some() {
        card.security_schemes = Some(
            [(
                BEARER.to_string(),
                SecurityScheme::HttpAuth(HttpAuthSecurityScheme {
                    scheme: "Bearer".into(),
                    description: Some("The token the server was configured with".into()),
                    bearer_format: None,
                }),
            )]
            .into(),
        );
        card.security_requirements = Some(vec![[(BEARER.to_string(), Vec::new())].into()]);
    }
    let mut body = compat::card_to_v03(&card);
    skill_schemas_on_card(&mut body);
    body
}

/// Puts each tool's schemas from the tools extension on its skill as well, as `input_schema`
/// and `output_schema` (remote tools as design 004 writes them), in a card already in JSON:
/// the official skill type has no such fields. Peers that read them (JSON-level readers, 004
/// clients) get the schemas on the skill; the official SDKs ignore unknown skill fields. A card
/// without the tools extension is left as it is.
fn skill_schemas_on_card(card: &mut Value) {
    let Some(tools) = card
        .pointer("/capabilities/extensions")
        .and_then(Value::as_array)
        .and_then(|exts| {
            exts.iter()
                .find(|e| e.get("uri").and_then(Value::as_str) == Some(TOOLS_EXTENSION_URI))
        })
        .and_then(|e| e.pointer("/params/tools"))
        .and_then(Value::as_object)
        .cloned()
    else {
        return;
    };
    let Some(skills) = card.get_mut("skills").and_then(Value::as_array_mut) else {
        return;
    };
    for skill in skills.iter_mut().filter_map(Value::as_object_mut) {
        let id = skill.get("id").and_then(Value::as_str);
        let Some(entry) = tools
            .values()
            .find(|t| t.get("skillId").and_then(Value::as_str) == id && id.is_some())
        else {
            continue;
        };
        for (from, to) in [
            ("inputSchema", "input_schema"),
            ("outputSchema", "output_schema"),
        ] {
            if let Some(schema) = entry.get(from) {
                skill.insert(to.into(), schema.clone());
            }
        }
    }
}
