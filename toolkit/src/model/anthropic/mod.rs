//! [`AnthropicMessages`]: the Anthropic Messages API.
//!
//! Differences from Chat Completions that shape this file: system text is a top-level field;
//! tool calls are `tool_use` content blocks whose `input` is a JSON *object*; results go
//! back as `tool_result` blocks at the start of a *user* message; `max_tokens` is required;
//! streaming sends typed events (`content_block_start`, `content_block_delta`, ...) with
//! tool arguments as `partial_json` fragments.

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::http::{self, Endpoint, HttpSettings, recovery};
use super::text_calls::plain_history;
use super::{
    ChatEvent, ChatModel, ChatRequest, ChatResponse, FinishReason, Message, ModelError, Role,
    ToolChoice, Usage,
};
use crate::dialect::{Dialect, NameMap};
use crate::endpoint::Secret;
use crate::tool::ToolCall;

mod stream;

use stream::StreamState;

const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
const DEFAULT_MODEL: &str = "claude-haiku-4-5";
const API_VERSION: &str = "2023-06-01";
const DEFAULT_MAX_TOKENS: u32 = 1024;

/// A chat model behind the Anthropic Messages API.
///
/// ```no_run
/// # use agent_toolkit::model::AnthropicMessages;
/// let claude = AnthropicMessages::builder()
///     .api_key(std::env::var("ANTHROPIC_API_KEY").unwrap_or_default())
///     .model("claude-sonnet-4-5")
///     .max_tokens(4096)
///     .build()?;
/// # Ok::<(), agent_toolkit::model::ModelError>(())
/// ```
///
/// Requests go to `{base_url}/v1/messages` with `anthropic-version: 2023-06-01`. Transient
/// failures (rate limits, 5xx including 529 "overloaded", connection errors) are retried
/// with exponential backoff; see [`AnthropicMessagesBuilder::retry`]. Cloning is cheap and
/// shares the connection pool.
#[derive(Clone, Debug)]
pub struct AnthropicMessages {
    endpoint: Endpoint,
    model: String,
    max_tokens: u32,
    text_calls: bool,
}

/// Settings of an [`AnthropicMessages`]; start with [`AnthropicMessages::builder`].
#[derive(Clone, Debug, Default)]
pub struct AnthropicMessagesBuilder {
    http: HttpSettings,
    model: Option<String>,
    max_tokens: Option<u32>,
    text_calls: Option<bool>,
}

impl AnthropicMessagesBuilder {
    /// The key sent as `x-api-key`. Optional only for proxies that add it themselves.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.http.api_key = Some(Secret(key.into()));
        self
    }

    /// The `max_tokens` of requests that do not set
    /// [`GenerationOptions::max_tokens`](super::GenerationOptions::max_tokens); the API
    /// requires one (default 1024).
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    http::connection_methods!(
        "The API root, before `/v1/messages` (default `https://api.anthropic.com`)."
    );
    crate::endpoint::endpoint_methods!(http.endpoint);

    /// Whether tool calls the model writes as text are read as calls (default `true`): what
    /// [`OpenAiChatBuilder::text_tool_calls`](super::OpenAiChatBuilder::text_tool_calls)
    /// describes, for Anthropic-compatible servers (llama.cpp's `/v1/messages`, proxies in
    /// front of local models). Claude itself writes its calls as `tool_use` blocks.
    pub fn text_tool_calls(mut self, on: bool) -> Self {
        self.text_calls = Some(on);
        self
    }

    /// The model. Fails on a missing model name or an invalid URL, key or header.
    pub fn build(self) -> Result<AnthropicMessages, ModelError> {
        let model = self
            .model
            .filter(|m| !m.trim().is_empty())
            .ok_or_else(|| http::config_error("no model name: call `.model(..)`"))?;
        let mut headers = vec![(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(API_VERSION),
        )];
        if let Some(key) = &self.http.api_key {
            headers.push(http::secret_header(
                HeaderName::from_static("x-api-key"),
                &key.0,
            )?);
        }
        Ok(AnthropicMessages {
            endpoint: Endpoint::new(&self.http, DEFAULT_BASE_URL, "/v1/messages", headers)?,
            model,
            max_tokens: self.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            text_calls: self.text_calls.unwrap_or(true),
        })
    }
}

impl AnthropicMessages {
    /// A builder with the defaults (Anthropic's URL, no key, 2 retries, 1024 max tokens).
    pub fn builder() -> AnthropicMessagesBuilder {
        AnthropicMessagesBuilder::default()
    }

    /// A model configured from `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL` (optional) and
    /// `ANTHROPIC_MODEL` (default `claude-haiku-4-5`). The key is required unless a base URL
    /// is set (a proxy may add it).
    pub fn from_env() -> Result<Self, ModelError> {
        let mut builder =
            Self::builder().model(http::env("ANTHROPIC_MODEL").unwrap_or(DEFAULT_MODEL.into()));
        let base_url = http::env("ANTHROPIC_BASE_URL");
        match (http::env("ANTHROPIC_API_KEY"), &base_url) {
            (Some(key), _) => builder = builder.api_key(key),
            (None, None) => {
                return Err(http::config_error("ANTHROPIC_API_KEY is not set"));
            }
            (None, Some(_)) => {}
        }
        if let Some(url) = base_url {
            builder = builder.base_url(url);
        }
        builder.build()
    }

    /// The request body for `request`, and the name map to read the answer with.
    fn body(&self, request: &ChatRequest, stream: bool) -> Result<(Vec<u8>, NameMap), ModelError> {
        let names = NameMap::new(Dialect::Anthropic, request.tools.iter().map(|t| t.name()));
        let (system, messages) = wire_messages(&plain_history(&request.messages), &names);
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model));
        body.insert(
            "max_tokens".into(),
            json!(request.options.max_tokens.unwrap_or(self.max_tokens)),
        );
        if !system.is_empty() {
            body.insert("system".into(), json!(system));
        }
        body.insert("messages".into(), Value::Array(messages));
        if !request.tools.is_empty() {
            let tools = request
                .tools
                .iter()
                .map(|def| {
                    let wire = names.wire_name(def.name()).unwrap_or(def.name());
                    Dialect::Anthropic.render(def, wire)
                })
                .collect();
            body.insert("tools".into(), Value::Array(tools));
            body.insert(
                "tool_choice".into(),
                tool_choice(&request.tool_choice, request.parallel_tool_calls, &names),
            );
        }
        if let Some(t) = request.options.temperature {
            body.insert("temperature".into(), http::temperature(t));
        }
        if !request.options.stop.is_empty() {
            body.insert("stop_sequences".into(), json!(request.options.stop));
        }
        if stream {
            body.insert("stream".into(), json!(true));
        }
        let bytes = serde_json::to_vec(&Value::Object(body))
            .map_err(|e| http::config_error(format!("the request cannot be serialized: {e}")))?;
        Ok((bytes, names))
    }
}

impl AnthropicMessages {
    /// One non-streaming request, parsed, for [`recovery`].
    fn ask(&self) -> recovery::Ask<'_> {
        Box::new(move |request| {
            Box::pin(async move {
                let (body, names) = self.body(&request, false)?;
                let bytes = self.endpoint.post(body).await?;
                Ok((parse_response(&bytes, &names)?, names))
            })
        })
    }
}

impl ChatModel for AnthropicMessages {
    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, ModelError>> {
        Box::pin(recovery::chat(self.text_calls, request, self.ask()))
    }

    fn chat_stream(&self, request: ChatRequest) -> BoxStream<'_, Result<ChatEvent, ModelError>> {
        let (body, names) = match self.body(&request, true) {
            Ok(prepared) => prepared,
            Err(e) => return Box::pin(futures::stream::once(std::future::ready(Err(e)))),
        };
        let events = http::sse::chat_events(
            self.endpoint.post_stream(body),
            StreamState::new(names.clone()),
        );
        recovery::stream(self.text_calls, request, names, events, self.ask())
    }

    fn dialect(&self) -> Dialect {
        Dialect::Anthropic
    }

    fn name(&self) -> &str {
        &self.model
    }
}

fn wire_name(names: &NameMap, name: &str) -> String {
    names
        .wire_name(name)
        .map(str::to_owned)
        .unwrap_or_else(|| Dialect::Anthropic.sanitize_name(name).into_owned())
}

/// The `system` text and the `messages` array. System messages anywhere are gathered into
/// the one top-level field, the only place the API takes them. Consecutive tool results
/// share one user message, and a user message right after them joins it as a text block
/// after the results, where the API wants them.
fn wire_messages(messages: &[Message], names: &NameMap) -> (String, Vec<Value>) {
    let mut system = Vec::new();
    let mut wire: Vec<Value> = Vec::new();
    // Whether the last wire message is a user message of tool results that may grow.
    let mut open_results = false;
    for message in messages {
        match message.role {
            Role::System => system.push(message.content.as_str()),
            Role::User if open_results => {
                if let Some(blocks) = last_blocks(&mut wire) {
                    blocks.push(json!({"type": "text", "text": message.content}));
                }
                open_results = false;
            }
            Role::User => wire.push(json!({"role": "user", "content": message.content})),
            Role::Tool => {
                let mut block = json!({
                    "type": "tool_result",
                    "tool_use_id": message.tool_call_id.as_deref().unwrap_or_default(),
                    "content": message.content,
                });
                if message.is_error {
                    block["is_error"] = json!(true);
                }
                match last_blocks(&mut wire).filter(|_| open_results) {
                    Some(blocks) => blocks.push(block),
                    None => wire.push(json!({"role": "user", "content": [block]})),
                }
                open_results = true;
            }
            Role::Assistant => {
                open_results = false;
                let mut blocks = Vec::new();
                if !message.content.is_empty() {
                    blocks.push(json!({"type": "text", "text": message.content}));
                }
                for call in &message.tool_calls {
                    blocks.push(json!({
                        "type": "tool_use",
                        "id": call.id,
                        "name": wire_name(names, &call.name),
                        "input": tool_input(&call.arguments),
                    }));
                }
                // The API refuses an empty assistant turn; one without text or calls says
                // nothing the model needs to see.
                if !blocks.is_empty() {
                    wire.push(json!({"role": "assistant", "content": blocks}));
                }
            }
        }
    }
    (system.join("\n\n"), wire)
}

fn last_blocks(wire: &mut [Value]) -> Option<&mut Vec<Value>> {
    wire.last_mut()?.get_mut("content")?.as_array_mut()
}

/// The `input` object of a past call. The API takes only an object; arguments the model sent
/// that were not an object (broken JSON) are sent as `{}`. Nothing is lost for the model:
/// the tool result that follows carries the argument error the toolkit reported.
fn tool_input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(object @ Value::Object(_)) => object,
        _ => json!({}),
    }
}

fn tool_choice(choice: &ToolChoice, parallel: bool, names: &NameMap) -> Value {
    let mut wire = match choice {
        ToolChoice::Auto => json!({"type": "auto"}),
        ToolChoice::Required => json!({"type": "any"}),
        ToolChoice::Specific(name) => json!({"type": "tool", "name": wire_name(names, name)}),
        // `disable_parallel_tool_use` is not accepted with `none`.
        ToolChoice::None => return json!({"type": "none"}),
    };
    if !parallel {
        wire["disable_parallel_tool_use"] = json!(true);
    }
    wire
}

#[derive(Deserialize)]
struct WireMessage {
    content: Vec<WireBlock>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

/// A content block; kinds this crate does not use (thinking, server tools) are skipped.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireBlock {
    Text {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Option<Value>,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize, Default, Clone, Copy)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
}

fn parse_response(body: &[u8], names: &NameMap) -> Result<ChatResponse, ModelError> {
    let message: WireMessage = http::parse_json("the message", body)?;
    let mut text = String::new();
    let mut calls = Vec::new();
    for block in message.content {
        match block {
            WireBlock::Text { text: part } => text.push_str(&part),
            WireBlock::ToolUse { id, name, input } => {
                let arguments = input.unwrap_or_else(|| json!({})).to_string();
                calls.push(call(id, &name, arguments, names));
            }
            WireBlock::Other => {}
        }
    }
    let usage = message.usage.unwrap_or_default();
    Ok(ChatResponse {
        message: Message::assistant(text, calls),
        usage: Usage {
            input_tokens: usage.input_tokens.unwrap_or_default(),
            output_tokens: usage.output_tokens.unwrap_or_default(),
        },
        finish_reason: stop_reason(message.stop_reason.as_deref()),
    })
}

fn call(id: String, name: &str, arguments: String, names: &NameMap) -> ToolCall {
    ToolCall::new(id, names.original_name(name).unwrap_or(name), arguments)
}

fn stop_reason(reason: Option<&str>) -> FinishReason {
    match reason {
        Some("end_turn" | "stop_sequence") | None => FinishReason::Stop,
        Some("tool_use") => FinishReason::ToolCalls,
        Some("max_tokens" | "model_context_window_exceeded") => FinishReason::Length,
        Some("refusal") => FinishReason::ContentFilter,
        Some(other) => FinishReason::Other(other.to_owned()),
    }
}
