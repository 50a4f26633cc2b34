//! `mcp-conformance-server`: the tools the official MCP conformance suite's server scenarios
//! call (`@modelcontextprotocol/conformance`, what the SDKs ship as an "everything" server),
//! written as ordinary `#[tool]`s and served over streamable HTTP on 127.0.0.1.
//!
//! `mcp-conformance-server [PORT]` prints `READY http://127.0.0.1:PORT/mcp` once it listens
//! (port 0 or none: any free port). Run by `tests/mcp/conformance.rs`; the scenarios it cannot
//! pass yet are listed, with the reason, in `tests/mcp/conformance-expected.yml`.

use std::time::Duration;

use agent_toolkit::context::{Elicitation, Elicited, Elicitor, LogLevel, Sampler, Sampling};
use agent_toolkit::mcp::CallStream;
use agent_toolkit::prelude::*;
use agent_toolkit::tool::Attachment;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Answers with one text block.
#[tool(read_only)]
fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Always fails: the client gets `isError: true` with this message.
#[tool(read_only)]
fn test_error_handling() -> Result<String, ToolError> {
    Err(ToolError::execution(
        "This tool intentionally returns an error for testing",
    ))
}

/// Reports progress 0, 50 and 100 of 100, about 50 ms apart.
#[tool(read_only)]
async fn test_tool_with_progress(#[ctx] progress: ToolEmitter) -> &'static str {
    for (step, done) in [0u32, 50, 100].into_iter().enumerate() {
        if step > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        progress.progress(done, 100.0, format!("{done} of 100"));
    }
    "Progress test completed"
}

/// Logs three messages at `info`, about 50 ms apart (MCP `notifications/message`).
#[tool(read_only)]
async fn test_tool_with_logging(#[ctx] log: ToolEmitter) -> &'static str {
    log.log(LogLevel::Info, "Tool execution started");
    tokio::time::sleep(Duration::from_millis(50)).await;
    log.log(LogLevel::Info, "Tool processing data");
    tokio::time::sleep(Duration::from_millis(50)).await;
    log.log(LogLevel::Info, "Tool execution completed");
    "Logging test completed"
}

/// A 1×1 red PNG.
const RED_PIXEL_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

fn red_pixel() -> Attachment {
    Attachment::Image {
        data: RED_PIXEL_PNG.into(),
        mime_type: "image/png".into(),
    }
}

/// A tenth of a second of silence: 8-bit mono PCM at 8 kHz, as a WAV file.
fn silence_wav() -> Vec<u8> {
    let samples = 800u32;
    let mut wav = Vec::with_capacity(44 + samples as usize);
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + samples).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes()); // fmt chunk size
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // mono
    wav.extend_from_slice(&8000u32.to_le_bytes()); // sample rate
    wav.extend_from_slice(&8000u32.to_le_bytes()); // byte rate
    wav.extend_from_slice(&1u16.to_le_bytes()); // block align
    wav.extend_from_slice(&8u16.to_le_bytes()); // bits per sample
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&samples.to_le_bytes());
    wav.resize(44 + samples as usize, 128); // 8-bit silence is 128
    wav
}

/// Answers with an image (a red pixel).
#[tool(read_only)]
fn test_image_content() -> ToolOutput {
    ToolOutput::text("A red pixel (PNG) is attached.").with_attachment(red_pixel())
}

/// Answers with audio (silence).
#[tool(read_only)]
fn test_audio_content() -> ToolOutput {
    ToolOutput::text("A tenth of a second of silence (WAV) is attached.")
        .with_attachment(Attachment::audio(silence_wav(), "audio/wav"))
}

/// Answers with an embedded text resource.
#[tool(read_only)]
fn test_embedded_resource() -> ToolOutput {
    ToolOutput::text("").with_attachment(Attachment::text(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    ))
}

/// Answers with text, an image and an embedded JSON resource.
#[tool(read_only)]
fn test_multiple_content_types() -> ToolOutput {
    ToolOutput::text("Multiple content types test:")
        .with_attachment(red_pixel())
        .with_attachment(Attachment::text(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        ))
}

/// What `test_elicitation` asks for.
#[derive(Deserialize, Serialize, JsonSchema)]
struct Contact {
    /// User's response
    username: String,
    /// User's email address
    email: String,
}

/// Asks the user for a name and an email address (`elicitation/create`).
#[tool]
async fn test_elicitation(
    /// The message to show the user.
    message: String,
    #[ctx] ask: Elicitor,
) -> Result<String, ToolError> {
    let answer = match ask.elicit::<Contact>(message).await? {
        Elicited::Accepted(contact) => {
            format!(
                "action: accept, content: {}",
                serde_json::to_string(&contact)?
            )
        }
        Elicited::Declined => "action: decline".into(),
        Elicited::Cancelled => "action: cancel".into(),
    };
    Ok(format!("User response: <{answer}>"))
}

/// A status (SEP-1034's enum field).
#[derive(Deserialize, Serialize, JsonSchema, Default)]
#[serde(rename_all = "lowercase")]
enum Status {
    #[default]
    Active,
    Inactive,
    Pending,
}

/// A form whose every field has a default (SEP-1034).
#[derive(Deserialize, Serialize, JsonSchema)]
struct Profile {
    #[serde(default = "Profile::name")]
    name: String,
    #[serde(default = "Profile::age")]
    age: i64,
    #[serde(default = "Profile::score")]
    score: f64,
    #[serde(default)]
    status: Status,
    #[serde(default = "Profile::verified")]
    verified: bool,
}

impl Profile {
    fn name() -> String {
        "John Doe".into()
    }
    fn age() -> i64 {
        30
    }
    fn score() -> f64 {
        95.5
    }
    fn verified() -> bool {
        true
    }
}

/// The answer as the SEP scenarios want it.
fn completed(answer: Elicited<Value>) -> String {
    let (action, content) = match answer {
        Elicited::Accepted(content) => ("accept", content.to_string()),
        Elicited::Declined => ("decline", "{}".into()),
        Elicited::Cancelled => ("cancel", "{}".into()),
    };
    format!("Elicitation completed: action={action}, content={content}")
}

/// Asks with a form whose fields all have defaults (a typed form: `Profile`).
#[tool]
async fn test_elicitation_sep1034_defaults(#[ctx] ask: Elicitor) -> Result<String, ToolError> {
    let answer = match ask.elicit::<Profile>("Please review your profile").await? {
        Elicited::Accepted(profile) => Elicited::Accepted(serde_json::to_value(profile)?),
        Elicited::Declined => Elicited::Declined,
        Elicited::Cancelled => Elicited::Cancelled,
    };
    Ok(completed(answer))
}

/// Asks with the five kinds of enum field of SEP-1330 (a form written by hand).
#[tool]
async fn test_elicitation_sep1330_enums(#[ctx] ask: Elicitor) -> Result<String, ToolError> {
    let titled = |values: [(&str, &str); 3]| {
        values
            .map(|(value, title)| json!({"const": value, "title": title}))
            .to_vec()
    };
    let form = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "oneOf": titled([
                ("value1", "First Option"), ("value2", "Second Option"), ("value3", "Third Option")
            ])},
            "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                           "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array",
                              "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "items": {"anyOf": titled([
                ("value1", "First Choice"), ("value2", "Second Choice"), ("value3", "Third Choice")
            ])}}
        }
    });
    let answer = ask
        .ask(Elicitation::new("Choose your options", form))
        .await?;
    Ok(completed(answer))
}

/// Asks the client's model to answer `prompt` (`sampling/createMessage`).
#[tool]
async fn test_sampling(
    /// The prompt to send to the model.
    prompt: String,
    #[ctx] sampler: Sampler,
) -> Result<String, ToolError> {
    let answer = sampler.sample(Sampling::prompt(prompt, 100)).await?;
    Ok(format!("LLM response: {}", answer.text))
}

/// A street address (the `address` definition the scenario looks for under `$defs`).
#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "address")]
#[allow(dead_code)]
struct Address {
    street: Option<String>,
    city: Option<String>,
}

/// Tool with JSON Schema 2020-12 features: `$schema`, `$defs` and a `$ref` into them, no
/// additional properties.
#[tool(name = "json_schema_2020_12_tool", read_only)]
fn json_schema_tool(name: Option<String>, address: Option<Address>) -> String {
    let city = address.and_then(|a| a.city).unwrap_or_default();
    format!("name={} city={city}", name.unwrap_or_default())
}

/// Closes its own event stream mid-call (SEP-1699 polling): the client comes back with
/// `Last-Event-ID` and gets the result there.
#[tool(read_only)]
async fn test_reconnection(#[ctx] stream: CallStream) -> String {
    let closed = stream.close(Duration::from_millis(100));
    // The answer is written after the stream is closed, so it goes out on the resumed one.
    tokio::time::sleep(Duration::from_millis(200)).await;
    format!("Reconnection test completed (stream closed: {closed})")
}

/// The suite's tools, in one toolkit.
fn toolkit() -> Toolkit {
    Toolkit::builder()
        .register(TestSimpleText)
        .register(TestErrorHandling)
        .register(TestToolWithProgress)
        .register(TestToolWithLogging)
        .register(TestImageContent)
        .register(TestAudioContent)
        .register(TestEmbeddedResource)
        .register(TestMultipleContentTypes)
        .register(TestElicitation)
        .register(TestElicitationSep1034Defaults)
        .register(TestElicitationSep1330Enums)
        .register(TestSampling)
        .register(JsonSchemaTool)
        .register(TestReconnection)
        .build()
        .expect("the conformance tools register")
}

#[tokio::main]
async fn main() {
    use axum::serve::ListenerExt;
    let port: u16 = match std::env::args().nth(1).map(|p| p.parse()) {
        None => 0,
        Some(Ok(port)) => port,
        Some(Err(e)) => {
            eprintln!("mcp-conformance-server: the port is not a number ({e})");
            std::process::exit(2);
        }
    };
    let app = axum::Router::new().nest_service("/mcp", toolkit().mcp_http_service());
    let listener = match tokio::net::TcpListener::bind(("127.0.0.1", port)).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("mcp-conformance-server: cannot listen on 127.0.0.1:{port}: {e}");
            std::process::exit(1);
        }
    };
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(port);
    println!("READY http://127.0.0.1:{port}/mcp");
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    if let Err(e) = axum::serve(listener, app).await {
        eprintln!("mcp-conformance-server: {e}");
        std::process::exit(1);
    }
}
