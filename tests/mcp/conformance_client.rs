//! `mcp-conformance-client`: the library's MCP client as the official conformance suite's client
//! scenarios run it (`conformance client --command mcp-conformance-client`): the suite starts
//! its test server, then runs this program with the server's URL as the last argument and the
//! scenario's name in `MCP_CONFORMANCE_SCENARIO`.
//!
//! What it does is what an application does with [`McpClient`]: connect (the 2025-11-25
//! handshake, since the suite's servers speak that era), list the tools, and call the ones a
//! scenario names. Exit status 0 when every step worked, 1 with the error on stderr otherwise;
//! the suite judges the traffic itself.

use agent_toolkit::context::{AskError, Caller, Elicitation, Elicited};
use agent_toolkit::mcp::{McpClient, McpClientOptions, McpEra, McpOAuth, McpTarget};
use futures::future::BoxFuture;
use serde_json::{Value, json};

/// The user of this client: accepts every form without filling in a field, so every answer
/// is the form's defaults, which the library fills in (SEP-1034).
struct AcceptsDefaults;

impl Caller for AcceptsDefaults {
    fn elicit(&self, request: Elicitation) -> BoxFuture<'_, Result<Elicited<Value>, AskError>> {
        eprintln!("asked: {}", request.message);
        Box::pin(async { Ok(Elicited::Accepted(json!({}))) })
    }
}

/// The tool a scenario's server wants called, and the arguments (`None`: the scenario checks
/// only the handshake and the listing). `listed` is what the server listed.
fn call_for(scenario: &str, listed: &[String]) -> Option<(String, Value)> {
    let (name, arguments) = match scenario {
        "tools_call" => ("add_numbers", json!({"a": 5, "b": 3})),
        "elicitation-sep1034-client-defaults" => ("test_client_elicitation_defaults", json!({})),
        "sse-retry" => ("test_reconnection", json!({})),
        // An authorization scenario's server offers one tool behind OAuth: call it.
        auth if auth.starts_with("auth/") => return Some((listed.first()?.clone(), json!({}))),
        _ => return None,
    };
    Some((name.to_owned(), arguments))
}

/// The browser of this client's user: opens the authorization URL, which the suite's
/// authorization server answers at once with a redirect to the callback, and returns where it
/// was sent.
async fn browser(url: String) -> Result<String, String> {
    let http = reqwest::Client::builder()
        .tls_backend_preconfigured(tls())
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| e.to_string())?;
    let response = http.get(&url).send().await.map_err(|e| e.to_string())?;
    response
        .headers()
        .get("location")
        .and_then(|l| l.to_str().ok())
        .map(str::to_owned)
        .ok_or_else(|| {
            format!(
                "the authorization server did not redirect (HTTP {})",
                response.status()
            )
        })
}

/// rustls with the ring provider (reqwest is built here without a default one).
fn tls() -> rustls::ClientConfig {
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions")
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth()
}

/// OAuth as an application would set it up: its metadata document's URL (used where the
/// server supports it), its name for dynamic registration, and the pre-registered client the
/// scenario's context names (`MCP_CONFORMANCE_CONTEXT`), if any; for the client-credentials
/// scenarios, that grant with the context's client (its secret, or its private key).
fn oauth(scenario: &str) -> McpOAuth {
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default();
    let (id, secret) = (
        context["client_id"].as_str(),
        context["client_secret"].as_str(),
    );
    // A client acting for itself (no user): the client-credentials grant, authenticated by a
    // secret or by a JWT signed with its key (`private_key_jwt`).
    if scenario.contains("client-credentials")
        && let Some(id) = id
    {
        if let Some(key) = context["private_key_pem"].as_str() {
            let algorithm = context["signing_algorithm"].as_str().unwrap_or("ES256");
            return McpOAuth::client_credentials_jwt(id, key, algorithm);
        }
        if let Some(secret) = secret {
            return McpOAuth::client_credentials(id, secret);
        }
    }
    // Enterprise-managed (SEP-990): the user's ID token from the organization's sign-on, which
    // the scenario hands over as an application's SSO would.
    if let (Some(id), Some(secret), Some(idp), Some(token)) = (
        id,
        secret,
        context["idp_token_endpoint"].as_str(),
        context["idp_id_token"].as_str(),
    ) {
        let token = token.to_owned();
        let mut oauth = McpOAuth::cross_app_access(id, secret, idp, move || {
            let token = token.clone();
            async move { Ok(token) }
        });
        if let Some(idp_client) = context["idp_client_id"].as_str() {
            oauth = oauth.idp_client_id(idp_client);
        }
        return oauth;
    }
    let mut oauth = McpOAuth::new("http://localhost:3000/callback", browser)
        .client_name("agent-toolkit conformance client")
        .client_metadata_url("https://conformance-test.local/client-metadata.json");
    if let Some(id) = id {
        oauth = oauth.preregistered(id, secret.map(str::to_owned));
    }
    oauth
}

async fn run(url: &str, scenario: &str) -> Result<(), String> {
    let options = McpClientOptions::new()
        .client_info("agent-toolkit-conformance", env!("CARGO_PKG_VERSION"))
        .era(McpEra::Handshake)
        .elicitation(AcceptsDefaults)
        .oauth(oauth(scenario));
    let client = McpClient::with_options(McpTarget::url(url), options);
    let tools = client.list_tools().await.map_err(|e| e.to_string())?;
    let listed: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    eprintln!("listed: {listed:?}");
    if let Some((name, arguments)) = call_for(scenario, &listed) {
        let result = client
            .call_tool(&name, arguments)
            .await
            .map_err(|e| e.to_string())?;
        eprintln!(
            "{name}: {}",
            serde_json::to_string(&result).unwrap_or_default()
        );
    }
    client.close().await;
    Ok(())
}

#[tokio::main]
async fn main() {
    let Some(url) = std::env::args().next_back().filter(|a| a.contains("://")) else {
        eprintln!("usage: MCP_CONFORMANCE_SCENARIO=NAME mcp-conformance-client URL");
        std::process::exit(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    if let Err(e) = run(&url, &scenario).await {
        eprintln!("mcp-conformance-client ({scenario}): {e}");
        std::process::exit(1);
    }
}
