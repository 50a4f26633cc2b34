//! [`AnthropicMessages`]: the Anthropic Messages API.
//!
//! Differences from Chat Completions that shape this file: system text is a top-level field;
//! tool calls are `tool_use` content blocks whose `input` is a JSON *object*; results go
//! back as `tool_result` blocks at the start of a *user* message; `max_tokens` is required;
//! streaming sends typed events (`content_block_start`, `content_block_delta`, ...) with
//! tool arguments as `partial_json` fragments.
//!
//! Large tool lists ([`ChatRequest::deferred_tools`], [`ChatRequest::declared_tools`]): the
//! deferred tools are declared with `"defer_loading": true` next to the search tool chosen
//! with [`AnthropicMessagesBuilder::tool_search`] (Anthropic's BM25 or regex search, run on
//! its side, or the agent's own `search_tools`, whose answers carry `tool_reference` blocks).
//! The blocks of a server-side search (`server_tool_use`, `tool_search_tool_result`), and
//! thinking blocks, are kept with the assistant message ([`NativeItems`]) and sent back
//! unchanged. A conversation with a declared tool list keeps `tools` as it started, every
//! tool that joins later declared deferred after them, and says where tools came and went
//! with `tool_addition` / `tool_removal` blocks in a `system` message (beta
//! `mid-conversation-tool-changes-2026-07-01`), so the cached prefix is not rewritten.
//!
//! Hosted code ([`ChatRequest::hosted_code`]): the request declares the code execution tool
//! (`code_execution_20250825`) and every client tool with
//! `allowed_callers: ["direct", "code_execution_20250825"]`. Calls the model's code makes are
//! `tool_use` blocks with `caller: {"type": "code_execution_…", "tool_id": "srvtoolu_…"}`,
//! read as ordinary [`ToolCall`]s and answered with `tool_result` blocks; the blocks go back
//! unchanged, callers included ([`NativeItems`]), and so do the `server_tool_use` and code
//! execution result blocks. The response's `container` is kept with the assistant message
//! ([`NativeItems::container`]) and its id sent as the next requests' `container`, so the code
//! goes on in the same container.

use std::collections::HashSet;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::http::provider::{self, HttpProvider};
use super::http::{self, Endpoint, HttpSettings};
use super::text_calls::plain_history;
use super::{
    AssistantMessage, ChatEvent, ChatModel, ChatRequest, ChatResponse, FinishReason, Message,
    ModelError, NativeItems, ToolChoice, ToolFeatures, Usage,
};
use crate::dialect::{Dialect, NameMap};
use crate::tool::{ToolCall, ToolDefinition};

mod stream;
#[cfg(test)]
mod tests;

use stream::StreamState;

const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
const DEFAULT_MODEL: &str = "claude-haiku-4-5";
const API_VERSION: &str = "2023-06-01";
const DEFAULT_MAX_TOKENS: u32 = 1024;
/// The beta that lets a conversation change its tools without rewriting the cached prefix.
const TOOL_CHANGES_BETA: &str = "mid-conversation-tool-changes-2026-07-01";
/// The code execution tool declared for [`ChatRequest::hosted_code`], and the caller its
/// programs' calls name (in `allowed_callers` and in a `tool_use` block's `caller`).
const CODE_TOOL: &str = "code_execution_20250825";
/// What [`NativeItems::provider`] says for blocks written by this provider.
pub(crate) const PROVIDER: &str = "anthropic";

/// Which search finds an [`AnthropicMessages`] model's deferred tools.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum AnthropicToolSearch {
    /// Anthropic's BM25 search, run on its side (`tool_search_tool_bm25_20251119`).
    #[default]
    Bm25,
    /// Anthropic's regex search (`tool_search_tool_regex_20251119`): the model writes a
    /// Python `re.search` pattern.
    Regex,
    /// The agent's own `search_tools`, declared as an ordinary tool; its answers reference the
    /// tools found (`tool_reference` blocks), which makes them callable.
    Client,
}

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
    tool_search: AnthropicToolSearch,
    features: ToolFeatures,
}

/// Settings of an [`AnthropicMessages`]; start with [`AnthropicMessages::builder`].
#[derive(Clone, Debug, Default)]
pub struct AnthropicMessagesBuilder {
    http: HttpSettings,
    model: Option<String>,
    max_tokens: Option<u32>,
    text_calls: Option<bool>,
    tool_search: AnthropicToolSearch,
    features: Option<ToolFeatures>,
}

impl AnthropicMessagesBuilder {
    http::provider_setters! {
        /// The search that finds deferred tools (default [`AnthropicToolSearch::Bm25`]).
        tool_search(AnthropicToolSearch);

        /// What the agent may use of this endpoint's features for large tool lists and hosted
        /// code. Default: every one ([`ToolFeatures::all`]) for Anthropic's own API, none for
        /// another [`base_url`](Self::base_url) (a compatible server or a proxy to a local
        /// model), whose support is unknown.
        tool_features;

        /// The key sent as `x-api-key`. Optional only for proxies that add it themselves.
        api_key;

        /// Whether tool calls the model writes as text are read as calls (default `true`): what
        /// [`OpenAiChatBuilder::text_tool_calls`](super::OpenAiChatBuilder::text_tool_calls)
        /// describes, for Anthropic-compatible servers (llama.cpp's `/v1/messages`, proxies in
        /// front of local models). Claude itself writes its calls as `tool_use` blocks.
        text_tool_calls;
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

    /// The model. Fails on a missing model name or an invalid URL, key or header.
    pub fn build(self) -> Result<AnthropicMessages, ModelError> {
        let model = http::model_name(self.model)?;
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
        let features = self.features.unwrap_or(if self.http.base_url.is_none() {
            ToolFeatures::all()
        } else {
            ToolFeatures::default()
        });
        if features.tool_changes {
            headers.push((
                HeaderName::from_static("anthropic-beta"),
                HeaderValue::from_static(TOOL_CHANGES_BETA),
            ));
        }
        Ok(AnthropicMessages {
            endpoint: Endpoint::new(&self.http, DEFAULT_BASE_URL, "/v1/messages", headers)?,
            model,
            max_tokens: self.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            text_calls: self.text_calls.unwrap_or(true),
            tool_search: self.tool_search,
            features,
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
        let env =
            http::EnvSettings::read("ANTHROPIC", DEFAULT_MODEL, "ANTHROPIC_API_KEY is not set")?;
        Self::builder().env(env).build()
    }

    /// The tools to declare, each with whether it is declared deferred: the conversation's
    /// declared list (else the tools callable now), then the deferred tools in the order the
    /// request gives them, then any other tool callable now or added by a tool change
    /// (deferred: a tool change or a reference makes it callable).
    fn tool_list(&self, request: &ChatRequest) -> Vec<(ToolDefinition, bool)> {
        let main = request.declared_tools.as_ref().unwrap_or(&request.tools);
        let mut seen: HashSet<String> = main.iter().map(|t| t.name().to_string()).collect();
        let mut list: Vec<(ToolDefinition, bool)> =
            main.iter().map(|t| (t.clone(), false)).collect();
        let mut defer = |def: &ToolDefinition, list: &mut Vec<(ToolDefinition, bool)>| {
            if seen.insert(def.name().to_string()) {
                list.push((def.clone(), true));
            }
        };
        for tool in &request.deferred_tools {
            defer(&tool.definition, &mut list);
        }
        if self.tool_search == AnthropicToolSearch::Client && !request.deferred_tools.is_empty() {
            let search = crate::search::search_tool_definition("");
            if !list.iter().any(|(t, _)| t.name() == search.name()) {
                list.push((search, false));
            }
        }
        if request.declared_tools.is_some() {
            for tool in request.tools.iter().chain(request.added_tools()) {
                defer(tool, &mut list);
            }
        }
        list
    }
}

impl AnthropicMessages {}

impl HttpProvider for AnthropicMessages {
    type Assembler = StreamState;

    fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    fn text_calls(&self) -> bool {
        self.text_calls
    }

    fn body(&self, request: &ChatRequest, stream: bool) -> Result<(Vec<u8>, NameMap), ModelError> {
        let tools = self.tool_list(request);
        let names = NameMap::new(Dialect::Anthropic, tools.iter().map(|(t, _)| t.name()));
        let deferred: HashSet<&str> = tools
            .iter()
            .filter(|(_, deferred)| *deferred)
            .map(|(t, _)| t.name())
            .collect();
        let history = Wire {
            names: &names,
            deferred: &deferred,
            tool_changes: request.declared_tools.is_some(),
        };
        let (system, messages) = history.messages(&plain_history(&request.messages));
        let code = request.hosted_code;
        let has_tools = !tools.is_empty() || code;
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model));
        body.insert(
            "max_tokens".into(),
            json!(request.options.max_tokens.unwrap_or(self.max_tokens)),
        );
        if has_tools {
            let mut wire: Vec<Value> = tools
                .iter()
                .map(|(def, deferred)| {
                    let name = names.wire_name(def.name()).unwrap_or(def.name());
                    let mut tool = Dialect::Anthropic.render(def, name);
                    if *deferred {
                        tool["defer_loading"] = json!(true);
                    }
                    if code {
                        tool["allowed_callers"] = json!(["direct", CODE_TOOL]);
                    }
                    tool
                })
                .collect();
            match self.tool_search {
                _ if deferred.is_empty() => {}
                AnthropicToolSearch::Bm25 => wire.push(json!({
                    "type": "tool_search_tool_bm25_20251119",
                    "name": "tool_search_tool_bm25"
                })),
                AnthropicToolSearch::Regex => wire.push(json!({
                    "type": "tool_search_tool_regex_20251119",
                    "name": "tool_search_tool_regex"
                })),
                // Declared in `tool_list`, as an ordinary tool.
                AnthropicToolSearch::Client => {}
            }
            if code {
                wire.push(json!({"type": CODE_TOOL, "name": "code_execution"}));
            }
            body.insert("tools".into(), Value::Array(wire));
        }
        if !system.is_empty() {
            body.insert("system".into(), json!(system));
        }
        // Everything that may change from one request of a conversation to the next comes
        // after the messages, so the bytes before the newest messages stay the same.
        body.insert("messages".into(), Value::Array(messages));
        if has_tools {
            body.insert(
                "tool_choice".into(),
                tool_choice(&request.tool_choice, request.parallel_tool_calls, &names),
            );
        }
        if code && let Some(container) = last_container(&request.messages) {
            body.insert("container".into(), json!(container));
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

    fn parse(&self, body: &[u8], names: &NameMap) -> Result<ChatResponse, ModelError> {
        parse_response(body, names)
    }

    fn assembler(&self, names: NameMap) -> Self::Assembler {
        StreamState::new(names)
    }
}

impl ChatModel for AnthropicMessages {
    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, ModelError>> {
        provider::chat(self, request)
    }

    fn chat_stream(&self, request: ChatRequest) -> BoxStream<'_, Result<ChatEvent, ModelError>> {
        provider::chat_stream(self, request)
    }

    fn dialect(&self) -> Dialect {
        Dialect::Anthropic
    }

    fn name(&self) -> &str {
        &self.model
    }

    fn tool_features(&self) -> ToolFeatures {
        self.features
    }
}

fn wire_name(names: &NameMap, name: &str) -> String {
    names
        .wire_name(name)
        .map(str::to_owned)
        .unwrap_or_else(|| Dialect::Anthropic.sanitize_name(name).into_owned())
}

/// How the conversation goes on the wire: the names to use, which tools are declared
/// deferred (a search's answer may reference them), and whether tool changes are sent.
struct Wire<'a> {
    names: &'a NameMap,
    deferred: &'a HashSet<&'a str>,
    tool_changes: bool,
}

impl Wire<'_> {
    /// The `system` text and the `messages` array. System messages anywhere are gathered into
    /// the one top-level field, the only place the API takes them (tool changes, when sent,
    /// stay where they are, as `system` messages of blocks). Consecutive tool results share one
    /// user message, and a user message right after them joins it as a text block after the
    /// results, where the API wants them.
    fn messages(&self, messages: &[Message]) -> (String, Vec<Value>) {
        let names = self.names;
        let mut system = Vec::new();
        let mut wire: Vec<Value> = Vec::new();
        // Whether the last wire message is a user message of tool results that may grow.
        let mut open_results = false;
        for message in messages {
            match message {
                Message::ToolChange(change) if self.tool_changes => {
                    open_results = false;
                    let blocks: Vec<Value> = change
                        .added
                        .iter()
                        .map(|t| ("tool_addition", t.name()))
                        .chain(change.removed.iter().map(|n| ("tool_removal", n.as_str())))
                        .map(|(kind, name)| {
                            json!({"type": kind, "tool": {"type": "tool_reference", "name": wire_name(names, name)}})
                        })
                        .collect();
                    wire.push(json!({"role": "system", "content": blocks}));
                }
                // Without the beta the tools sent already say what is callable.
                Message::ToolChange(_) => {}
                Message::System { content } => system.push(content.as_str()),
                Message::User { content } if open_results => {
                    if let Some(blocks) = last_blocks(&mut wire) {
                        blocks.push(json!({"type": "text", "text": content}));
                    }
                    open_results = false;
                }
                Message::User { content } => {
                    wire.push(json!({"role": "user", "content": content}));
                }
                Message::Tool(result) => {
                    let mut block = json!({
                        "type": "tool_result",
                        "tool_use_id": result.call_id,
                        "content": result.content,
                    });
                    let references: Vec<Value> = result
                        .tool_references
                        .iter()
                        .filter(|name| self.deferred.contains(name.as_str()))
                        .map(|name| json!({"type": "tool_reference", "tool_name": wire_name(names, name)}))
                        .collect();
                    if !references.is_empty() {
                        let mut content = vec![json!({"type": "text", "text": result.content})];
                        content.extend(references);
                        block["content"] = Value::Array(content);
                    }
                    if result.is_error {
                        block["is_error"] = json!(true);
                    }
                    match last_blocks(&mut wire).filter(|_| open_results) {
                        Some(blocks) => blocks.push(block),
                        None => wire.push(json!({"role": "user", "content": [block]})),
                    }
                    open_results = true;
                }
                Message::Assistant(turn) => {
                    open_results = false;
                    let blocks = match replayed(turn) {
                        Some(blocks) => blocks,
                        None => {
                            let mut blocks = Vec::new();
                            if !turn.content.is_empty() {
                                blocks.push(json!({"type": "text", "text": turn.content}));
                            }
                            for call in &turn.tool_calls {
                                blocks.push(json!({
                                    "type": "tool_use",
                                    "id": call.id,
                                    "name": wire_name(names, &call.name),
                                    "input": tool_input(&call.arguments),
                                }));
                            }
                            blocks
                        }
                    };
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
}

/// The blocks this provider wrote for an assistant message, to send back unchanged — when
/// they are still the message's: the same calls, in the same order.
fn replayed(turn: &AssistantMessage) -> Option<Vec<Value>> {
    let native = turn.native_of(PROVIDER)?;
    let ids: Vec<&str> = native
        .items
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
        .filter_map(|b| b.get("id").and_then(Value::as_str))
        .collect();
    let calls: Vec<&str> = turn.tool_calls.iter().map(|c| &*c.id).collect();
    (ids == calls).then(|| native.items.clone())
}

/// The id of the container the conversation's hosted code last ran in
/// ([`NativeItems::container`] of the last assistant message that has one).
fn last_container(messages: &[Message]) -> Option<&str> {
    messages
        .iter()
        .rev()
        .filter_map(|m| m.as_assistant()?.native_of(PROVIDER))
        .find_map(|n| n.container.as_ref()?.get("id")?.as_str())
}

/// The blocks of a response worth keeping to send back: all of them, when any is of a kind
/// the message's text and calls cannot say again (server tool blocks, thinking, a call made
/// by hosted code, which goes back with its `caller`), or when the response names the
/// container its hosted code ran in.
pub(super) fn native_items(
    blocks: Vec<Value>,
    container: Option<Value>,
) -> Option<Box<NativeItems>> {
    let plain = |b: &Value| match b.get("type").and_then(Value::as_str) {
        Some("text") => true,
        Some("tool_use") => b
            .get("caller")
            .is_none_or(|c| c.is_null() || c.get("type") == Some(&json!("direct"))),
        _ => false,
    };
    if container.is_none() && blocks.iter().all(plain) {
        return None;
    }
    let mut native = NativeItems::new(PROVIDER, blocks);
    native.container = container;
    Some(Box::new(native))
}

/// The `container` of a response (or of a stream's `message_start` or `message_delta`):
/// `{"id", "expires_at"}` when hosted code ran, absent or `null` otherwise.
pub(super) fn read_container(
    what: &str,
    container: Option<Value>,
) -> Result<Option<Value>, ModelError> {
    match container {
        None | Some(Value::Null) => Ok(None),
        Some(container)
            if container
                .get("id")
                .and_then(Value::as_str)
                .is_some_and(|id| !id.is_empty()) =>
        {
            Ok(Some(container))
        }
        Some(other) => Err(ModelError::Malformed(format!(
            "{what} names a container without an id: {}",
            http::clip(&other.to_string())
        ))),
    }
}

/// Checks the `caller` of a `tool_use` block: absent, `{"type": "direct"}`, or
/// `{"type": "code_execution_…", "tool_id": "srvtoolu_…"}` for a call made by hosted code
/// ([`ChatRequest::hosted_code`]). The call is an ordinary [`ToolCall`]; the block, caller
/// included, goes back unchanged.
pub(super) fn check_caller(what: &str, block: &Value) -> Result<(), ModelError> {
    let caller = match block.get("caller") {
        None | Some(Value::Null) => return Ok(()),
        Some(caller) => caller,
    };
    let valid = match caller.get("type").and_then(Value::as_str) {
        Some("direct") => true,
        Some(kind) if kind.starts_with("code_execution_") => caller
            .get("tool_id")
            .and_then(Value::as_str)
            .is_some_and(|id| !id.is_empty()),
        _ => false,
    };
    if valid {
        return Ok(());
    }
    Err(ModelError::Malformed(format!(
        "{what} is a tool_use block with a caller that is neither `direct` nor a code \
         execution with a `tool_id`: {}",
        http::clip(&caller.to_string())
    )))
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
    content: Vec<Value>,
    #[serde(default)]
    container: Option<Value>,
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
    for (n, raw) in message.content.iter().enumerate() {
        let block: WireBlock = serde_json::from_value(raw.clone()).map_err(|e| {
            ModelError::Malformed(format!(
                "content block #{n} of the message is malformed: {e}"
            ))
        })?;
        match block {
            WireBlock::Text { text: part } => text.push_str(&part),
            WireBlock::ToolUse { id, name, input } => {
                check_caller(&format!("content block #{n} of the message"), raw)?;
                let arguments = input.unwrap_or_else(|| json!({})).to_string();
                calls.push(call(id, &name, arguments, names));
            }
            WireBlock::Other => {}
        }
    }
    let container = read_container("the message", message.container)?;
    let usage = message.usage.unwrap_or_default();
    let mut reply = AssistantMessage::new(text, calls);
    reply.native = native_items(message.content, container);
    Ok(ChatResponse {
        message: reply,
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
