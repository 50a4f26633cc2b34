//! [`OpenAiChat`]: any OpenAI-compatible Chat Completions endpoint (OpenAI, OpenRouter,
//! Ollama, vLLM, llama.cpp, LM Studio).
//!
//! The wire format follows the Chat Completions reference: tools as
//! `{"type":"function","function":{..}}`, assistant calls as `tool_calls` whose `arguments`
//! is a JSON *string*, results as `{"role":"tool","tool_call_id",..}` messages. Parsing is
//! lenient where compatible servers differ (content as text parts, arguments as an object,
//! missing ids or `finish_reason`), strict where a response cannot be trusted.
//!
//! [`OpenAiResponses`] (`responses/`, streaming in `responses/stream.rs`) speaks OpenAI's
//! Responses API with the same settings and shares the names, calls and strict-mode clean-up
//! below.

use std::borrow::Cow;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use reqwest::header::AUTHORIZATION;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::http::provider::{self, HttpProvider};
use super::http::{self, Endpoint, HttpSettings};
use super::text_calls::plain_history;
use super::{
    AssistantMessage, ChatEvent, ChatModel, ChatRequest, ChatResponse, FinishReason, Message,
    ModelError, ToolChoice, Usage,
};
use crate::dialect::{Dialect, NameMap};
use crate::tool::ToolCall;
use crate::tool::ToolDefinition;

mod responses;
mod stream;

pub use responses::{OpenAiResponses, OpenAiResponsesBuilder, ResponsesToolSearch};
use stream::StreamState;

const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
const DEFAULT_MODEL: &str = "gpt-4o-mini";

/// A chat model behind an OpenAI-compatible Chat Completions endpoint.
///
/// ```no_run
/// # use agent_toolkit::model::OpenAiChat;
/// // Hosted OpenAI, key from the environment:
/// let openai = OpenAiChat::from_env()?;
/// // A local Ollama server, which needs no key:
/// let local = OpenAiChat::builder()
///     .base_url("http://localhost:11434/v1")
///     .model("qwen2.5:7b")
///     .build()?;
/// # Ok::<(), agent_toolkit::model::ModelError>(())
/// ```
///
/// Requests go to `{base_url}/chat/completions`. Tool names are sanitised to what OpenAI
/// accepts and mapped back in responses. Transient failures (rate limits, 5xx, connection
/// errors) are retried with exponential backoff; see [`OpenAiChatBuilder::retry`].
/// Cloning is cheap and shares the connection pool.
#[derive(Clone, Debug)]
pub struct OpenAiChat {
    endpoint: Endpoint,
    model: String,
    dialect: Dialect,
    text_calls: bool,
    constrained: bool,
}

/// Settings of an [`OpenAiChat`]; start with [`OpenAiChat::builder`].
#[derive(Clone, Debug, Default)]
pub struct OpenAiChatBuilder {
    http: HttpSettings,
    model: Option<String>,
    strict: bool,
    text_calls: Option<bool>,
    constrained: bool,
}

impl OpenAiChatBuilder {
    http::provider_setters! {
        /// The API key, sent as `Authorization: Bearer <key>` (a
        /// [`bearer_token`](Self::bearer_token) given too replaces it). Optional: local servers
        /// usually need none.
        api_key;

        /// Send tools with `strict: true` ([`Dialect::OpenAiStrict`]) so that OpenAI guarantees
        /// arguments matching the schema. Many compatible servers ignore or reject it, so the
        /// default is `false` ([`Dialect::OpenAi`]).
        strict;

        /// Whether tool calls the model writes as text are read as calls (default `true`).
        ///
        /// Small models behind llama.cpp, Ollama and other compatible servers often answer with
        /// `{"name": "get_weather", "arguments": {"city": "Paris"}}` in the text instead of a
        /// structured call, when their chat template gives the server no tool-call syntax to
        /// recognise. With this on, a reply without structured calls whose text holds calls — a
        /// bare or fenced JSON object (one or several, one per line), Hermes
        /// `<tool_call>{..}</tool_call>`, or the JSON and XML forms of [`TextCallFormat`] — is a
        /// reply with those calls, run through the same rules as any other (groups, hidden
        /// parameters, approvals); a call of a tool that is not offered gets an error result the
        /// model reads. Text with no call in it stays the answer. Each call read this way is
        /// logged (`tracing`, info). Such a message is marked
        /// [`AssistantMessage::calls_in_text`] and sent back as the text it was, with its results as a
        /// user message in plain words.
        ///
        /// When the server rejects the model's own output ([`ModelError::OutputRejected`], e.g.
        /// two calls in a turn that its template does not allow), the request is not sent again
        /// unchanged (at temperature 0 it would fail the same way): it is asked once more without
        /// native tools, with the tools described in the system prompt as
        /// [`TextToolCalls`](super::TextToolCalls) does, and the calls are read from the text.
        ///
        /// Turn it off for a model whose text answers may legitimately be JSON objects with
        /// `name` and `arguments` keys.
        ///
        /// [`TextCallFormat`]: super::TextCallFormat
        text_tool_calls;
    }

    /// Constrain the model's reply to valid tool calls (default `false`), for local servers
    /// that hold output to a JSON schema — llama.cpp's server, vLLM, Ollama: they take
    /// `response_format` with a `json_schema`.
    ///
    /// A request with tools is then sent with the tools described in the system prompt (as
    /// [`TextToolCalls`](super::TextToolCalls) does) and a schema built from the offered tools'
    /// definitions: the model can only write `{"tool_calls": [..]}` naming an offered tool with
    /// arguments its schema accepts, or `{"answer": ".."}` (when [`ToolChoice`] lets it answer;
    /// a named tool choice leaves only that tool, `none` only the answer, parallel calls off
    /// allows one call). With `none` — what an agent sends a model that repeats its calls —
    /// the reply is an answer whatever the model would write. The calls are read as calls
    /// written as text are, and an answer becomes the reply's text; a reply cut at the token
    /// limit inside its calls keeps the calls it finished (the one being written is dropped).
    /// Hidden parameters are never in a definition, so never in the schema. While constrained a
    /// request is not streamed: the reply is one JSON value, asked whole, its events sent
    /// after.
    ///
    /// Not detected: a server does not say whether it honours the schema, and a hosted API
    /// that takes it would answer in JSON too. Turn it on for a small local model that writes
    /// broken calls; measured in `BENCHMARKS.md`.
    ///
    /// [`ToolChoice`]: crate::ToolChoice
    pub fn constrained_tool_calls(mut self, on: bool) -> Self {
        self.constrained = on;
        self
    }

    http::connection_methods!(
        "The API root, before `/chat/completions` (default `https://api.openai.com/v1`)."
    );
    crate::endpoint::endpoint_methods!(http.endpoint);

    /// The model. Fails on a missing model name or an invalid URL, key or header.
    pub fn build(self) -> Result<OpenAiChat, ModelError> {
        let model = http::model_name(self.model)?;
        let headers = bearer_headers(&self.http)?;
        Ok(OpenAiChat {
            endpoint: Endpoint::new(&self.http, DEFAULT_BASE_URL, "/chat/completions", headers)?,
            model,
            dialect: dialect(self.strict),
            text_calls: self.text_calls.unwrap_or(true),
            constrained: self.constrained,
        })
    }
}

/// The headers of a request to an OpenAI API: the key, if any, as a bearer token.
fn bearer_headers(
    http: &HttpSettings,
) -> Result<Vec<(reqwest::header::HeaderName, reqwest::header::HeaderValue)>, ModelError> {
    let mut headers = Vec::new();
    if let Some(key) = &http.api_key {
        headers.push(http::secret_header(
            AUTHORIZATION,
            &format!("Bearer {}", key.0),
        )?);
    }
    Ok(headers)
}

/// The dialect of an OpenAI API's tools: strict or not.
fn dialect(strict: bool) -> Dialect {
    if strict {
        Dialect::OpenAiStrict
    } else {
        Dialect::OpenAi
    }
}

impl OpenAiChat {
    /// A builder with the defaults (OpenAI's URL, no key, 2 retries, non-strict tools).
    pub fn builder() -> OpenAiChatBuilder {
        OpenAiChatBuilder::default()
    }

    /// A model configured from `OPENAI_API_KEY`, `OPENAI_BASE_URL` (optional) and
    /// `OPENAI_MODEL` (default `gpt-4o-mini`). The key is required unless a base URL is set,
    /// since local servers need none.
    pub fn from_env() -> Result<Self, ModelError> {
        let env = http::EnvSettings::read(
            "OPENAI",
            DEFAULT_MODEL,
            "OPENAI_API_KEY is not set (set it, or OPENAI_BASE_URL for a local server)",
        )?;
        Self::builder().env(env).build()
    }
}

impl HttpProvider for OpenAiChat {
    type Assembler = StreamState;

    fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    fn text_calls(&self) -> bool {
        self.text_calls
    }

    fn constrained(&self) -> bool {
        self.constrained
    }

    fn body(&self, request: &ChatRequest, stream: bool) -> Result<(Vec<u8>, NameMap), ModelError> {
        let names = NameMap::new(self.dialect, request.tools.iter().map(|t| t.name()));
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model));
        body.insert(
            "messages".into(),
            Value::Array(
                plain_history(&request.messages)
                    .iter()
                    .map(|m| wire_message(m, &names))
                    .collect(),
            ),
        );
        if !request.tools.is_empty() {
            let tools = request
                .tools
                .iter()
                .map(|def| {
                    let wire = names.wire_name(def.name()).unwrap_or(def.name());
                    self.dialect.render(def, wire)
                })
                .collect();
            body.insert("tools".into(), Value::Array(tools));
            // Without tools, OpenAI rejects both fields, so they are sent only with tools.
            body.insert(
                "tool_choice".into(),
                tool_choice(&request.tool_choice, &names),
            );
            body.insert(
                "parallel_tool_calls".into(),
                json!(request.parallel_tool_calls),
            );
        }
        if let Some(schema) = &request.output_schema {
            body.insert(
                "response_format".into(),
                json!({"type": "json_schema",
                       "json_schema": {"name": "reply", "schema": schema}}),
            );
        }
        let options = &request.options;
        if let Some(t) = options.temperature {
            body.insert("temperature".into(), http::temperature(t));
        }
        // `max_tokens` rather than `max_completion_tokens`: every compatible server accepts
        // it, while only OpenAI knows the newer name (its reasoning models need the newer one;
        // set it with a custom request if needed).
        if let Some(max) = options.max_tokens {
            body.insert("max_tokens".into(), json!(max));
        }
        if !options.stop.is_empty() {
            body.insert("stop".into(), json!(options.stop));
        }
        if stream {
            body.insert("stream".into(), json!(true));
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        let bytes = serde_json::to_vec(&Value::Object(body))
            .map_err(|e| http::config_error(format!("the request cannot be serialized: {e}")))?;
        Ok((bytes, names))
    }

    fn parse(&self, body: &[u8], names: &NameMap) -> Result<ChatResponse, ModelError> {
        parse_response(body, names)
    }

    fn assembler(&self, names: NameMap) -> Self::Assembler {
        StreamState::new(names)
    }

    fn finish(&self, request: &ChatRequest, response: &mut ChatResponse) {
        normalize_calls(self.dialect, &request.tools, response);
    }
}

impl ChatModel for OpenAiChat {
    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, ModelError>> {
        provider::chat(self, request)
    }

    fn chat_stream(&self, request: ChatRequest) -> BoxStream<'_, Result<ChatEvent, ModelError>> {
        provider::chat_stream(self, request)
    }

    fn dialect(&self) -> Dialect {
        self.dialect
    }

    fn name(&self) -> &str {
        &self.model
    }
}

impl OpenAiChat {}

/// Undo what the dialect did to the arguments: strict mode makes optional parameters
/// required-and-nullable, so a `null` there means "not given", at every nesting level — which
/// a nested field with a serde default would otherwise refuse. Arguments that are not JSON are
/// left for the toolkit to report.
fn normalize_calls(dialect: Dialect, tools: &[ToolDefinition], response: &mut ChatResponse) {
    if dialect != Dialect::OpenAiStrict {
        return;
    }
    for call in &mut response.message.tool_calls {
        let Some(def) = tools.iter().find(|t| t.name() == call.name) else {
            continue;
        };
        if let Ok(mut arguments) = serde_json::from_str::<Value>(&call.arguments) {
            dialect.normalize_arguments(def.parameters(), &mut arguments);
            call.arguments = arguments.to_string();
        }
    }
}

/// A tool name as the model knows it: the name sent in `tools`, or, for a tool no longer
/// offered, its sanitised form.
fn wire_name<'a>(names: &'a NameMap, name: &'a str) -> Cow<'a, str> {
    match names.wire_name(name) {
        Some(wire) => Cow::Borrowed(wire),
        None => names.dialect().sanitize_name(name),
    }
}

fn wire_message(message: &Message, names: &NameMap) -> Value {
    match message {
        Message::System { content } => json!({"role": "system", "content": content}),
        Message::ToolChange(change) => json!({"role": "system", "content": change.describe()}),
        Message::User { content } => json!({"role": "user", "content": content}),
        Message::Assistant(turn) => {
            let mut wire = Map::new();
            wire.insert("role".into(), json!("assistant"));
            // OpenAI wants `null`, not "", beside tool calls.
            let content = if turn.content.is_empty() && !turn.tool_calls.is_empty() {
                Value::Null
            } else {
                json!(turn.content)
            };
            wire.insert("content".into(), content);
            if !turn.tool_calls.is_empty() {
                let calls = turn
                    .tool_calls
                    .iter()
                    .map(|call| {
                        json!({
                            "id": call.id,
                            "type": "function",
                            "function": {
                                "name": wire_name(names, &call.name),
                                "arguments": call.arguments,
                            },
                        })
                    })
                    .collect();
                wire.insert("tool_calls".into(), Value::Array(calls));
            }
            Value::Object(wire)
        }
        Message::Tool(result) => json!({
            "role": "tool",
            "tool_call_id": result.call_id,
            "content": result.content,
        }),
    }
}

fn tool_choice(choice: &ToolChoice, names: &NameMap) -> Value {
    match choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::None => json!("none"),
        ToolChoice::Required => json!("required"),
        ToolChoice::Specific(name) => {
            json!({"type": "function", "function": {"name": wire_name(names, name)}})
        }
    }
}

#[derive(Deserialize)]
struct WireCompletion {
    #[serde(default)]
    choices: Vec<WireChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireChoice {
    message: WireMessage,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
}

#[derive(Deserialize)]
struct WireToolCall {
    #[serde(default)]
    id: Option<String>,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Deserialize, Default, Clone, Copy)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
}

impl From<WireUsage> for Usage {
    fn from(usage: WireUsage) -> Self {
        Usage {
            input_tokens: usage.prompt_tokens.unwrap_or_default(),
            output_tokens: usage.completion_tokens.unwrap_or_default(),
        }
    }
}

/// A [`ChatResponse`] from a Chat Completions response body.
fn parse_response(body: &[u8], names: &NameMap) -> Result<ChatResponse, ModelError> {
    let completion: WireCompletion = http::parse_json("the chat completion", body)?;
    let Some(choice) = completion.choices.into_iter().next() else {
        return Err(ModelError::Malformed(format!(
            "the chat completion has no choices: {}",
            http::clip(&String::from_utf8_lossy(body))
        )));
    };
    let text = match choice.message.content {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text,
        // Some compatible servers answer with content parts, as requests may send them.
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect(),
        Some(other) => {
            return Err(ModelError::Malformed(format!(
                "the message content is neither text nor parts: {other}"
            )));
        }
    };
    let calls = choice
        .message
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .map(|call| {
            let arguments = match call.function.arguments {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(text)) => text,
                // Ollama and others have been seen sending the object itself.
                Some(object) => object.to_string(),
            };
            finish_call(call.id, &call.function.name, arguments, names)
        })
        .collect::<Vec<_>>();
    let finish_reason = finish_reason(choice.finish_reason.as_deref(), !calls.is_empty());
    Ok(ChatResponse {
        message: AssistantMessage::new(text, calls),
        usage: completion.usage.unwrap_or_default().into(),
        finish_reason,
    })
}

/// A complete call: the original tool name, an id even when the server sent none (some
/// local servers do not), and `{}` for empty arguments (a tool without parameters, which
/// some servers call with nothing rather than an empty object).
fn finish_call(id: Option<String>, name: &str, arguments: String, names: &NameMap) -> ToolCall {
    let id = id
        .filter(|id| !id.is_empty())
        .unwrap_or_else(|| format!("call_{:016x}", fastrand::u64(..)));
    let name = names.original_name(name).unwrap_or(name);
    let arguments = if arguments.trim().is_empty() {
        "{}".to_owned()
    } else {
        arguments
    };
    ToolCall::new(id, name, arguments)
}

fn finish_reason(reason: Option<&str>, has_calls: bool) -> FinishReason {
    match reason {
        Some("stop") => FinishReason::Stop,
        Some("length") => FinishReason::Length,
        Some("tool_calls" | "function_call") => FinishReason::ToolCalls,
        Some("content_filter") => FinishReason::ContentFilter,
        Some(other) if !other.is_empty() => FinishReason::Other(other.to_owned()),
        // Absent on some compatible servers: the calls say what happened.
        _ if has_calls => FinishReason::ToolCalls,
        _ => FinishReason::Stop,
    }
}
