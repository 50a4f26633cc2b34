//! A tool that asks its caller, over MCP, our server to our client on loopback: an elicitation
//! (a typed form with defaults) and a sampling request reach the handlers the client's options
//! name, the answers come back to the tool, and the client fills in the defaults of the fields
//! its user left out. A client that declared neither capability makes the tool fail with an
//! error naming the capability (never a silent decline), and outside MCP the tool is told
//! nobody can be asked. (The conformance suite checks the same against the official
//! TypeScript SDK, both ways.)

use agent_toolkit::context::{
    AskError, Caller, Elicitation, Elicited, Elicitor, Sampled, Sampler, Sampling,
};
use agent_toolkit::mcp::{McpClient, McpClientOptions, McpEra, McpImport, McpTarget};
use agent_toolkit::prelude::*;
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// How to ship the order.
#[derive(Debug, Deserialize, JsonSchema)]
struct Shipping {
    /// Ship it?
    confirm: bool,
    /// How many days it may take.
    #[serde(default = "Shipping::days")]
    days: u32,
}

impl Shipping {
    fn days() -> u32 {
        5
    }
}

/// Ship an order, asking the user how.
#[tool]
async fn ship(order: String, #[ctx] ask: Elicitor) -> Result<String, ToolError> {
    Ok(
        match ask.elicit::<Shipping>(format!("Ship {order}?")).await? {
            Elicited::Accepted(s) => format!("{order}: confirm={} days={}", s.confirm, s.days),
            Elicited::Declined => format!("{order}: declined"),
            Elicited::Cancelled => format!("{order}: cancelled"),
        },
    )
}

/// Summarize a text with the caller's model.
#[tool]
async fn summarize(text: String, #[ctx] sampler: Sampler) -> Result<String, ToolError> {
    let request = Sampling::prompt(format!("Summarize: {text}"), 50).system("Be brief.");
    let answer = sampler.sample(request).await?;
    Ok(format!("{} (by {})", answer.text, answer.model))
}

/// The user and the model of the client: confirms orders of `yes`, declines the others, and
/// leaves `days` out (its default is filled in); the model echoes the last message.
struct User;

impl Caller for User {
    fn elicit(&self, request: Elicitation) -> BoxFuture<'_, Result<Elicited<Value>, AskError>> {
        Box::pin(async move {
            assert!(
                request.schema["properties"]["days"]["default"] == json!(5),
                "the form carries the default: {}",
                request.schema
            );
            Ok(if request.message.contains("yes") {
                Elicited::Accepted(json!({"confirm": true}))
            } else {
                Elicited::Declined
            })
        })
    }

    fn sample(&self, request: Sampling) -> BoxFuture<'_, Result<Sampled, AskError>> {
        Box::pin(async move {
            let system = request.system_prompt.unwrap_or_default();
            let (role, last) = request.messages.last().cloned().unwrap_or_default();
            Ok(Sampled::new(
                format!("[{system}] {role}: {last} ({} tokens)", request.max_tokens),
                "echo-1",
            ))
        })
    }
}

async fn imported(url: &str, options: McpClientOptions) -> Toolkit {
    let client = McpClient::with_options(McpTarget::url(url), options);
    let import = McpImport::from_client(client, "srv").await.unwrap();
    Toolkit::builder()
        .group("srv", "the served tools")
        .dynamic("srv", import.tools())
        .build()
        .unwrap()
}

async fn call(toolkit: &Toolkit, name: &str, arguments: Value) -> ToolResult {
    toolkit
        .call(ToolCall::json("c", name, arguments), &ToolContext::new())
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_ask_the_mcp_client_and_a_client_that_cannot_answer_is_named() {
    let served = Toolkit::builder()
        .register(Ship)
        .register(Summarize)
        .build()
        .unwrap();
    let url = crate::serve_http(&served).await;

    // Asking the client needs the handshake era (2026-07-28 sends no requests to a client).
    let handshake = || McpClientOptions::new().era(McpEra::Handshake);
    let answering = imported(&url, handshake().elicitation(User).sampling(User)).await;
    let shipped = call(&answering, "srv__ship", json!({"order": "yes-1"})).await;
    assert_eq!(
        shipped.model_text(),
        "yes-1: confirm=true days=5",
        "{shipped}"
    );
    let declined = call(&answering, "srv__ship", json!({"order": "no-2"})).await;
    assert_eq!(declined.model_text(), "no-2: declined", "{declined}");
    let summary = call(&answering, "srv__summarize", json!({"text": "long"})).await;
    assert_eq!(
        summary.model_text(),
        "[Be brief.] user: Summarize: long (50 tokens) (by echo-1)",
        "{summary}"
    );

    // No handlers: the client declares neither capability, and the tool says which is missing.
    let silent = imported(&url, handshake()).await;
    let refused = call(&silent, "srv__ship", json!({"order": "yes-3"})).await;
    let message = refused.error().expect("an error, not a decline").message();
    assert!(
        message.contains("did not declare the `elicitation` capability"),
        "{message}"
    );
    let refused = call(&silent, "srv__summarize", json!({"text": "x"})).await;
    let message = refused.error().expect("an error").message();
    assert!(
        message.contains("did not declare the `sampling` capability"),
        "{message}"
    );

    // A client on 2026-07-28 (stateless) cannot be asked during a call, whatever it declares.
    let stateless = imported(&url, McpClientOptions::new().elicitation(User)).await;
    let refused = call(&stateless, "srv__ship", json!({"order": "yes-5"})).await;
    let message = refused.error().expect("an error").message();
    assert!(
        message.contains("revision 2026-07-28") && message.contains("handshake"),
        "{message}"
    );

    // Outside MCP, nobody can be asked, and the tool is told how to change that.
    let local = call(&served, "ship", json!({"order": "yes-4"})).await;
    let message = local.error().expect("an error").message();
    assert!(message.contains("nobody can be asked here"), "{message}");
}
