//! [`OpenAiResponses`]: OpenAI's Responses API (`POST {base_url}/responses`), and servers that
//! speak it (OpenRouter, vLLM, llama.cpp and others).
//!
//! The wire differs from Chat Completions in shape, not in spirit. The conversation is a list
//! of `input` *items*: messages (`{"type":"message","role","content"}`), the model's calls
//! (`{"type":"function_call","call_id","name","arguments"}`, arguments a JSON *string*) and
//! their results (`{"type":"function_call_output","call_id","output"}`). Tools are flat
//! (`{"type":"function","name","description","parameters","strict"}`). The answer is a list
//! of `output` items of the same kinds, plus the provider's own: `reasoning` (sent back
//! with its `encrypted_content` so that a reasoning model keeps its thoughts across tool
//! calls), and the items of its tool search.
//!
//! Requests are stateless: `store: false`, the whole conversation sent every time, and the
//! output items of an assistant turn kept in [`Message::native`] and sent back unchanged
//! (without the server's item ids, which mean nothing when nothing is stored) as long as the
//! turn's calls are still the ones the items hold.
//!
//! Large and changing tool lists ([`ToolFeatures`]):
//! - **Deferred tools** ([`ChatRequest::deferred_tools`]) are sent after the others with
//!   `defer_loading: true`, those of a group inside a `namespace`, together with the
//!   `tool_search` tool: run by OpenAI ([`ResponsesToolSearch::Hosted`]) or by the caller
//!   ([`ResponsesToolSearch::Client`]), in which case the model's `tool_search_call` is a
//!   [`ToolCall`] of `search_tools` whose answer lists the tools found
//!   ([`Message::tool_references`]), sent back as a `tool_search_output` item carrying their
//!   definitions.
//! - **A fixed tool list** ([`ChatRequest::declared_tools`]): the `tools` array stays the one
//!   declared, the tools callable now are named in `tool_choice`
//!   (`{"type":"allowed_tools",..}`), and tools added mid-conversation
//!   ([`ToolChange`](crate::model::ToolChange) messages) arrive as `additional_tools` input
//!   items where the change happened. The body's keys are written in a fixed order with
//!   everything that varies between turns after `input`, so that the bytes before the new
//!   input items stay the same from one turn to the next.
//!
//! Programs ([`ChatRequest::hosted_code`], [`ToolFeatures::hosted_code`]): the request declares
//! `{"type":"programmatic_tool_calling"}` and every function tool with
//! `allowed_callers: ["direct","programmatic"]`. The model may then write a JavaScript
//! `program` item that OpenAI runs; the program's calls of our tools are `function_call`
//! items with `caller: {"type":"program","caller_id":<the program's call_id>}`, read as
//! ordinary [`ToolCall`]s and answered with `function_call_output` items, and the program ends
//! with a `program_output` item. The `program` and `program_output` items are kept in
//! [`Message::native`] and sent back whole (their ids and the program's `fingerprint`
//! included); [`Message::program_of`] names a call's program.

use std::collections::HashSet;

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{DEFAULT_BASE_URL, finish_call, normalize_calls, wire_name};
use crate::dialect::{Dialect, NameMap};
use crate::endpoint::Secret;
use crate::model::http::{self, Endpoint, HttpSettings, recovery};
use crate::model::text_calls::plain_history;
use crate::model::{
    ChatEvent, ChatModel, ChatRequest, ChatResponse, DeferredTool, FinishReason, Message,
    ModelError, NativeItems, Role, ToolChoice, ToolFeatures, Usage,
};
use crate::tool::{ToolCall, ToolDefinition};

mod stream;
#[cfg(test)]
mod tests;

use stream::ResponsesStream;

/// The model [`OpenAiResponses::from_env`] asks for without `OPENAI_MODEL`: tool search needs
/// gpt-5.4 or later.
const DEFAULT_MODEL: &str = "gpt-5.4";

/// The provider name of the items kept in [`Message::native`].
pub(crate) const PROVIDER: &str = "openai-responses";

/// The name of the [`ToolCall`] a client-side `tool_search_call` becomes: the agent's own
/// search tool answers it.
pub(crate) const SEARCH_TOOL_NAME: &str = "search_tools";

/// The type of the tool that lets the model write programs calling the function tools
/// ([`ChatRequest::hosted_code`]).
const PROGRAM_TOOL: &str = "programmatic_tool_calling";

/// Who runs the `tool_search` tool sent with deferred tools.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResponsesToolSearch {
    /// OpenAI searches the deferred tools itself (`{"type":"tool_search"}`); the tools it
    /// loads become callable in the same response.
    #[default]
    Hosted,
    /// The model asks the caller to search (`"execution":"client"`): its `tool_search_call`
    /// comes back as a [`ToolCall`] of `search_tools` with arguments
    /// `{"query": "..", "limit": n}` (`limit` optional), answered by a tool message whose
    /// [`tool_references`](Message::tool_references) name the deferred tools found.
    Client,
}

impl ResponsesToolSearch {
    /// The entry of the `tools` array.
    fn tool(self) -> Value {
        match self {
            ResponsesToolSearch::Hosted => json!({"type": "tool_search"}),
            ResponsesToolSearch::Client => json!({
                "type": "tool_search",
                "execution": "client",
                "description": "Search the tools that are not loaded yet by what they do. \
                    The tools found become callable.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "query": {
                            "type": "string",
                            "description": "What the tool should do, in a few words.",
                        },
                        "limit": {
                            "type": "integer",
                            "minimum": 1,
                            "maximum": 20,
                            "description": "The most tools to return.",
                        },
                    },
                    "required": ["query"],
                    "additionalProperties": false,
                },
            }),
        }
    }
}

/// A chat model behind OpenAI's Responses API (`POST {base_url}/responses`).
///
/// ```no_run
/// # use agent_toolkit::model::{OpenAiResponses, ResponsesToolSearch};
/// // Hosted OpenAI, key from the environment:
/// let openai = OpenAiResponses::from_env()?;
/// // A chosen model, with the deferred tools searched by the agent rather than by OpenAI:
/// let custom = OpenAiResponses::builder()
///     .api_key("sk-...")
///     .model("gpt-5.4")
///     .tool_search(ResponsesToolSearch::Client)
///     .build()?;
/// # Ok::<(), agent_toolkit::model::ModelError>(())
/// ```
///
/// Tool names are sanitised to what OpenAI accepts and mapped back in responses, as by
/// [`OpenAiChat`](super::OpenAiChat). Transient failures (rate limits, 5xx, connection errors)
/// are retried with exponential backoff; see [`OpenAiResponsesBuilder::retry`]. Requests are
/// sent with `store: false`: nothing is kept on the server, and the reasoning items a
/// reasoning model writes travel in [`Message::native`] (see the module documentation).
///
/// The Responses API has no stop sequences: [`GenerationOptions::stop`] is not sent.
/// [`GenerationOptions::max_tokens`] is sent as `max_output_tokens`.
/// Cloning is cheap and shares the connection pool.
///
/// [`GenerationOptions::stop`]: crate::model::GenerationOptions::stop
/// [`GenerationOptions::max_tokens`]: crate::model::GenerationOptions::max_tokens
#[derive(Clone, Debug)]
pub struct OpenAiResponses {
    endpoint: Endpoint,
    model: String,
    dialect: Dialect,
    text_calls: bool,
    tool_search: ResponsesToolSearch,
    reasoning_items: bool,
    features: ToolFeatures,
}

/// Settings of an [`OpenAiResponses`]; start with [`OpenAiResponses::builder`].
#[derive(Clone, Debug, Default)]
pub struct OpenAiResponsesBuilder {
    http: HttpSettings,
    model: Option<String>,
    strict: bool,
    text_calls: Option<bool>,
    tool_search: ResponsesToolSearch,
    reasoning_items: Option<bool>,
    features: Option<ToolFeatures>,
}

impl OpenAiResponsesBuilder {
    /// The API key, sent as `Authorization: Bearer <key>` (a
    /// [`bearer_token`](Self::bearer_token) given too replaces it). Optional: local servers
    /// usually need none.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.http.api_key = Some(Secret(key.into()));
        self
    }

    http::connection_methods!(
        "The API root, before `/responses` (default `https://api.openai.com/v1`)."
    );
    crate::endpoint::endpoint_methods!(http.endpoint);

    /// Send tools with `strict: true` ([`Dialect::OpenAiStrict`]) so that OpenAI guarantees
    /// arguments matching the schema; a tool whose schema strict mode cannot express is sent
    /// with `strict: false`. The default is `false` ([`Dialect::OpenAi`]), sent as such:
    /// Responses reads a missing `strict` as "strict where the schema allows", so it is
    /// always sent explicitly.
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Whether tool calls the model writes as text are read as calls (default `true`), and
    /// whether a request whose output the server could not read is asked again for text; the
    /// same setting as [`OpenAiChatBuilder::text_tool_calls`](super::OpenAiChatBuilder::text_tool_calls),
    /// for the compatible servers (llama.cpp, vLLM) that serve small models on this wire.
    pub fn text_tool_calls(mut self, on: bool) -> Self {
        self.text_calls = Some(on);
        self
    }

    /// Who runs the tool search sent with deferred tools ([`ChatRequest::deferred_tools`]):
    /// OpenAI ([`ResponsesToolSearch::Hosted`], the default) or the caller
    /// ([`ResponsesToolSearch::Client`]).
    pub fn tool_search(mut self, search: ResponsesToolSearch) -> Self {
        self.tool_search = search;
        self
    }

    /// Whether to ask for reasoning items with their encrypted content
    /// (`include: ["reasoning.encrypted_content"]`, default `true`), which a reasoning model
    /// needs to keep its reasoning across the turns of a stateless conversation. Turn it off
    /// for a model or a compatible server that rejects the `include`.
    pub fn reasoning_items(mut self, on: bool) -> Self {
        self.reasoning_items = Some(on);
        self
    }

    /// What [`ChatModel::tool_features`] reports (default: every feature,
    /// [`ToolFeatures::all`]); for a compatible server that has no tool search, no
    /// `allowed_tools`/`additional_tools` or no programmatic tool calling, so that an agent
    /// does without them.
    pub fn tool_features(mut self, features: ToolFeatures) -> Self {
        self.features = Some(features);
        self
    }

    /// The model. Fails on a missing model name or an invalid URL, key or header.
    pub fn build(self) -> Result<OpenAiResponses, ModelError> {
        let model = http::model_name(self.model)?;
        let headers = super::bearer_headers(&self.http)?;
        Ok(OpenAiResponses {
            endpoint: Endpoint::new(&self.http, DEFAULT_BASE_URL, "/responses", headers)?,
            model,
            dialect: super::dialect(self.strict),
            text_calls: self.text_calls.unwrap_or(true),
            tool_search: self.tool_search,
            reasoning_items: self.reasoning_items.unwrap_or(true),
            features: self.features.unwrap_or_else(ToolFeatures::all),
        })
    }
}

impl OpenAiResponses {
    /// A builder with the defaults (OpenAI's URL, no key, 2 retries, non-strict tools, hosted
    /// tool search, reasoning items asked for).
    pub fn builder() -> OpenAiResponsesBuilder {
        OpenAiResponsesBuilder::default()
    }

    /// A model configured from `OPENAI_API_KEY`, `OPENAI_BASE_URL` (optional) and
    /// `OPENAI_MODEL` (default `gpt-5.4`, the first with tool search). The key is required
    /// unless a base URL is set, since local servers need none.
    pub fn from_env() -> Result<Self, ModelError> {
        let env = http::EnvSettings::read(
            "OPENAI",
            DEFAULT_MODEL,
            "OPENAI_API_KEY is not set (set it, or OPENAI_BASE_URL for a local server)",
        )?;
        let mut builder = Self::builder().model(env.model);
        if let Some(key) = env.api_key {
            builder = builder.api_key(key);
        }
        if let Some(url) = env.base_url {
            builder = builder.base_url(url);
        }
        builder.build()
    }

    /// The request body for `request`, and the name map to read the answer with.
    ///
    /// Key order is part of the contract (serde_json keeps insertion order here): what stays
    /// the same for a whole conversation (`model`, `tools`, `store`, `include`) comes first,
    /// then `input`, then what may change from one turn to the next.
    fn body(&self, request: &ChatRequest, stream: bool) -> Result<(Vec<u8>, NameMap), ModelError> {
        let names = name_map(self.dialect, request);
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model));
        let function_tools = request.declared_tools.as_deref().unwrap_or(&request.tools);
        let code = request.hosted_code;
        let mut tools: Vec<Value> = function_tools
            .iter()
            .map(|def| function_tool(self.dialect, def, &names, false, code))
            .collect();
        if code {
            tools.push(json!({"type": PROGRAM_TOOL}));
        }
        let searching = !request.deferred_tools.is_empty();
        if searching {
            tools.push(self.tool_search.tool());
            tools.extend(deferred_tools(
                self.dialect,
                &request.deferred_tools,
                &names,
                code,
            ));
        }
        let has_tools = !tools.is_empty();
        if has_tools {
            body.insert("tools".into(), Value::Array(tools));
        }
        body.insert("store".into(), json!(false));
        if self.reasoning_items {
            body.insert("include".into(), json!(["reasoning.encrypted_content"]));
        }
        let client_search = searching && self.tool_search == ResponsesToolSearch::Client;
        body.insert(
            "input".into(),
            Value::Array(input(self.dialect, request, &names, client_search)),
        );
        if has_tools {
            body.insert(
                "tool_choice".into(),
                tool_choice(request, &names, searching),
            );
            body.insert(
                "parallel_tool_calls".into(),
                json!(request.parallel_tool_calls),
            );
        }
        let options = &request.options;
        if let Some(max) = options.max_tokens {
            body.insert("max_output_tokens".into(), json!(max));
        }
        if let Some(t) = options.temperature {
            body.insert("temperature".into(), http::temperature(t));
        }
        if !options.stop.is_empty() {
            tracing::debug!("the Responses API has no stop sequences; `stop` is not sent");
        }
        if stream {
            body.insert("stream".into(), json!(true));
        }
        let bytes = serde_json::to_vec(&Value::Object(body))
            .map_err(|e| http::config_error(format!("the request cannot be serialized: {e}")))?;
        Ok((bytes, names))
    }

    /// One non-streaming request, parsed, for [`recovery`].
    fn ask(&self) -> recovery::Ask<'_> {
        Box::new(move |request| {
            Box::pin(async move {
                let (body, names) = self.body(&request, false)?;
                let bytes = self.endpoint.post(body).await?;
                let mut response = parse_response(&bytes, &names)?;
                normalize(self.dialect, &request, &mut response);
                Ok((response, names))
            })
        })
    }
}

impl ChatModel for OpenAiResponses {
    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, ModelError>> {
        Box::pin(recovery::chat(self.text_calls, request, self.ask()))
    }

    fn chat_stream(&self, request: ChatRequest) -> BoxStream<'_, Result<ChatEvent, ModelError>> {
        let (body, names) = match self.body(&request, true) {
            Ok(prepared) => prepared,
            Err(e) => return Box::pin(futures::stream::once(std::future::ready(Err(e)))),
        };
        let dialect = self.dialect;
        // Only strict mode changes arguments (see `normalize`).
        let definitions = if dialect == Dialect::OpenAiStrict {
            all_definitions(&request)
        } else {
            Vec::new()
        };
        let events = http::sse::chat_events(
            self.endpoint.post_stream(body),
            ResponsesStream::new(names.clone()),
        )
        .map(move |event| match event {
            Ok(ChatEvent::Done(mut response)) => {
                normalize_calls(dialect, &definitions, &mut response);
                Ok(ChatEvent::Done(response))
            }
            other => other,
        })
        .boxed();
        recovery::stream(self.text_calls, request, names, events, self.ask())
    }

    fn dialect(&self) -> Dialect {
        self.dialect
    }

    fn name(&self) -> &str {
        &self.model
    }

    fn tool_features(&self) -> ToolFeatures {
        self.features
    }
}

/// Every tool definition the request names: the callable, declared and deferred ones and those
/// added mid-conversation, each once, in that order.
fn all_definitions(request: &ChatRequest) -> Vec<ToolDefinition> {
    let declared = request.declared_tools.iter().flatten();
    let deferred = request.deferred_tools.iter().map(|d| &d.definition);
    let added = request
        .messages
        .iter()
        .filter_map(|m| m.tool_change.as_ref())
        .flat_map(|change| &change.added);
    let mut seen = HashSet::new();
    request
        .tools
        .iter()
        .chain(declared)
        .chain(deferred)
        .chain(added)
        .filter(|def| seen.insert(def.name()))
        .cloned()
        .collect()
}

/// Wire names for every tool the request names. The declared list (when there is one) comes
/// first, so that its names do not depend on what is callable this turn.
fn name_map(dialect: Dialect, request: &ChatRequest) -> NameMap {
    let declared = request.declared_tools.iter().flatten();
    let deferred = request.deferred_tools.iter().map(|d| &d.definition);
    let added = request
        .messages
        .iter()
        .filter_map(|m| m.tool_change.as_ref())
        .flat_map(|change| &change.added);
    NameMap::new(
        dialect,
        declared
            .chain(&request.tools)
            .chain(deferred)
            .chain(added)
            .map(ToolDefinition::name),
    )
}

/// Undo what strict mode did to the arguments of the calls (see
/// [`normalize_calls`]), for every tool the request names.
fn normalize(dialect: Dialect, request: &ChatRequest, response: &mut ChatResponse) {
    if dialect == Dialect::OpenAiStrict {
        normalize_calls(dialect, &all_definitions(request), response);
    }
}

/// A function tool as Responses wants it: flat, with an explicit `strict`; with
/// `programmatic`, callable from the model's programs as well as directly.
fn function_tool(
    dialect: Dialect,
    def: &ToolDefinition,
    names: &NameMap,
    deferred: bool,
    programmatic: bool,
) -> Value {
    let wire = wire_name(names, def.name());
    let mut rendered = dialect.render(def, &wire);
    let function = rendered.get_mut("function").map(Value::take);
    let field = |key: &str| function.as_ref().and_then(|f| f.get(key)).cloned();
    let mut tool = Map::new();
    tool.insert("type".into(), json!("function"));
    tool.insert("name".into(), json!(wire));
    tool.insert("description".into(), json!(def.description()));
    tool.insert(
        "parameters".into(),
        field("parameters").unwrap_or_else(|| dialect.parameters(def.parameters())),
    );
    let strict = field("strict").and_then(|s| s.as_bool()).unwrap_or(false);
    tool.insert("strict".into(), json!(strict));
    if deferred {
        tool.insert("defer_loading".into(), json!(true));
    }
    if programmatic {
        tool.insert("allowed_callers".into(), json!(["direct", "programmatic"]));
    }
    Value::Object(tool)
}

/// Deferred tools: those of a group inside one `namespace` per group, the others alone, in
/// the order each group or tool first appears.
fn deferred_tools(
    dialect: Dialect,
    deferred: &[DeferredTool],
    names: &NameMap,
    programmatic: bool,
) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    // Group name → the index of its namespace in `out`.
    let mut namespaces: Vec<(&str, usize)> = Vec::new();
    for tool in deferred {
        let function = function_tool(dialect, &tool.definition, names, true, programmatic);
        let Some(group) = &tool.group else {
            out.push(function);
            continue;
        };
        match namespaces.iter().find(|(name, _)| *name == group.name) {
            Some(&(_, index)) => {
                if let Some(tools) = out[index].get_mut("tools").and_then(Value::as_array_mut) {
                    tools.push(function);
                }
            }
            None => {
                namespaces.push((&group.name, out.len()));
                out.push(json!({
                    "type": "namespace",
                    "name": dialect.sanitize_name(&group.name),
                    "description": group.description,
                    "tools": [function],
                }));
            }
        }
    }
    out
}

/// The `tool_choice`. With a declared tool list that is not what may be called now, the
/// callable tools are named in an `allowed_tools` choice instead of changing `tools`; the
/// tool search, the deferred tools and the programs ([`ChatRequest::hosted_code`]) stay
/// allowed.
fn tool_choice(request: &ChatRequest, names: &NameMap, searching: bool) -> Value {
    let restricted = request.declared_tools.as_ref().is_some_and(|declared| {
        let declared: HashSet<&str> = declared.iter().map(ToolDefinition::name).collect();
        let callable: HashSet<&str> = request.tools.iter().map(ToolDefinition::name).collect();
        declared != callable
    });
    let mode = match &request.tool_choice {
        ToolChoice::None => return json!("none"),
        ToolChoice::Specific(name) => {
            return json!({"type": "function", "name": wire_name(names, name)});
        }
        ToolChoice::Auto if !restricted => return json!("auto"),
        ToolChoice::Required if !restricted => return json!("required"),
        ToolChoice::Auto => "auto",
        ToolChoice::Required => "required",
    };
    let deferred = request.deferred_tools.iter().map(|d| &d.definition);
    let callable = request.tools.iter().chain(deferred);
    // A deferred tool found earlier may be among the callable ones too: named once.
    let mut seen = HashSet::new();
    let mut allowed: Vec<Value> = callable
        .filter(|def| seen.insert(def.name()))
        .map(|def| json!({"type": "function", "name": wire_name(names, def.name())}))
        .collect();
    if searching {
        allowed.push(json!({"type": "tool_search"}));
    }
    if request.hosted_code {
        allowed.push(json!({"type": PROGRAM_TOOL}));
    }
    if allowed.is_empty() {
        // Nothing may be called now; an empty `allowed_tools` is not a valid choice.
        return json!("none");
    }
    json!({"type": "allowed_tools", "mode": mode, "tools": allowed})
}

/// The `input` items of the conversation. With `client_search` (the model searches through
/// the caller), a `search_tools` call of a turn whose own items cannot be sent back is sent as
/// the client-side `tool_search_call` it stands for.
fn input(
    dialect: Dialect,
    request: &ChatRequest,
    names: &NameMap,
    client_search: bool,
) -> Vec<Value> {
    let messages = plain_history(&request.messages);
    // Tools the model has been given so far: the declared ones, then those added by
    // `additional_tools` items (each is added once, even if it was switched off and on).
    let mut given: HashSet<&str> = request
        .declared_tools
        .iter()
        .flatten()
        .map(ToolDefinition::name)
        .collect();
    // Call ids of the client-side tool searches sent so far: their results are
    // `tool_search_output` items.
    let mut searches: HashSet<&str> = HashSet::new();
    let mut out = Vec::with_capacity(messages.len());
    for message in messages.iter() {
        match message.role {
            Role::System => match &message.tool_change {
                Some(change) => {
                    if request.declared_tools.is_none() {
                        continue;
                    }
                    let tools: Vec<Value> = change
                        .added
                        .iter()
                        .filter(|def| given.insert(def.name()))
                        .map(|def| function_tool(dialect, def, names, false, request.hosted_code))
                        .collect();
                    if !tools.is_empty() {
                        out.push(json!({
                            "type": "additional_tools",
                            "role": "developer",
                            "tools": tools,
                        }));
                    }
                }
                None => out.push(text_message("system", &message.content)),
            },
            Role::User => out.push(text_message("user", &message.content)),
            Role::Assistant => match replayable(message) {
                Some(items) => {
                    for item in items {
                        if let Some(id) = client_search_id(item) {
                            searches.insert(id);
                        }
                        out.push(replayed(item));
                    }
                }
                None => {
                    if !message.content.is_empty() {
                        out.push(text_message("assistant", &message.content));
                    }
                    for call in &message.tool_calls {
                        if client_search && call.name == SEARCH_TOOL_NAME {
                            searches.insert(&call.id);
                            let arguments = serde_json::from_str::<Value>(&call.arguments)
                                .unwrap_or_else(|_| json!({}));
                            out.push(json!({
                                "type": "tool_search_call",
                                "call_id": call.id,
                                "execution": "client",
                                "arguments": arguments,
                                "status": "completed",
                            }));
                        } else {
                            out.push(json!({
                                "type": "function_call",
                                "call_id": call.id,
                                "name": wire_name(names, &call.name),
                                "arguments": call.arguments,
                            }));
                        }
                    }
                }
            },
            Role::Tool => {
                let call_id = message.tool_call_id.as_deref().unwrap_or_default();
                if searches.contains(call_id) {
                    out.push(search_output(dialect, call_id, message, request, names));
                } else {
                    out.push(json!({
                        "type": "function_call_output",
                        "call_id": call_id,
                        "output": message.content,
                    }));
                }
            }
        }
    }
    out
}

fn text_message(role: &str, text: &str) -> Value {
    json!({"type": "message", "role": role, "content": text})
}

/// The call id of an item that is one of a turn's [`ToolCall`]s: a `function_call`, or a
/// client-side `tool_search_call`.
fn call_id(item: &Value) -> Option<&str> {
    match item.get("type").and_then(Value::as_str) {
        Some("function_call") => item.get("call_id").and_then(Value::as_str),
        Some("tool_search_call") => client_search_id(item),
        _ => None,
    }
}

/// The call id of a client-side `tool_search_call`.
fn client_search_id(item: &Value) -> Option<&str> {
    let is_client = item.get("type").and_then(Value::as_str) == Some("tool_search_call")
        && item.get("execution").and_then(Value::as_str) == Some("client");
    is_client
        .then(|| item.get("call_id").and_then(Value::as_str))
        .flatten()
}

/// The items of an assistant turn to send back as they came: those this provider wrote, as
/// long as their calls are the message's calls.
fn replayable(message: &Message) -> Option<&[Value]> {
    let native = message.native.as_ref().filter(|n| n.provider == PROVIDER)?;
    let mut sent: Vec<&str> = native.items.iter().filter_map(call_id).collect();
    let mut kept: Vec<&str> = message.tool_calls.iter().map(|c| &*c.id).collect();
    sent.sort_unstable();
    kept.sort_unstable();
    (sent == kept).then_some(native.items.as_slice())
}

/// An output item sent back as input, unchanged but for the server's item id: nothing is
/// stored (`store: false`), so the id names nothing the server could find. A `program` or
/// `program_output` item goes back whole, its id and `fingerprint` included: the API's replay
/// items require them.
fn replayed(item: &Value) -> Value {
    let mut item = item.clone();
    let kind = item.get("type").and_then(Value::as_str);
    if matches!(kind, Some("program" | "program_output")) {
        return item;
    }
    if let Some(fields) = item.as_object_mut() {
        fields.remove("id");
    }
    item
}

/// The answer to a client-side tool search: the definitions of the deferred tools it found.
fn search_output(
    dialect: Dialect,
    call_id: &str,
    message: &Message,
    request: &ChatRequest,
    names: &NameMap,
) -> Value {
    let tools: Vec<Value> = message
        .tool_references
        .iter()
        .filter_map(|name| {
            let found = request
                .deferred_tools
                .iter()
                .find(|d| d.definition.name() == name);
            if found.is_none() {
                tracing::debug!(tool = %name, "a tool search found a tool that is not deferred");
            }
            found.map(|d| function_tool(dialect, &d.definition, names, true, request.hosted_code))
        })
        .collect();
    json!({
        "type": "tool_search_output",
        "call_id": call_id,
        "execution": "client",
        "status": "completed",
        "tools": tools,
    })
}

/// A Responses API response body (or the `response` of a stream's last event).
#[derive(Deserialize)]
struct WireResponse {
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    output: Option<Vec<Value>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    incomplete_details: Option<Value>,
}

#[derive(Deserialize, Default, Clone, Copy)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
}

/// A [`ChatResponse`] from a Responses API response body.
fn parse_response(body: &[u8], names: &NameMap) -> Result<ChatResponse, ModelError> {
    let mut response: WireResponse = http::parse_json("the response", body)?;
    let Some(items) = response.output.take() else {
        return Err(ModelError::Malformed(format!(
            "the response has no `output`: {}",
            http::clip(&String::from_utf8_lossy(body))
        )));
    };
    finish_response(response, items, names)
}

/// The [`ChatResponse`] of a finished response whose output is `items`, or the error it
/// reports.
fn finish_response(
    response: WireResponse,
    mut items: Vec<Value>,
    names: &NameMap,
) -> Result<ChatResponse, ModelError> {
    if let Some(error) = response.error.as_ref().filter(|e| !e.is_null()) {
        return Err(response_error(error));
    }
    if response.status.as_deref() == Some("failed") {
        return Err(ModelError::Malformed(
            "the response failed without saying why".into(),
        ));
    }
    let (text, calls) = read_items(&mut items, names)?;
    let finish_reason = finish_reason(
        response.status.as_deref(),
        response.incomplete_details.as_ref(),
        !calls.is_empty(),
    );
    let mut message = Message::assistant(text, calls);
    if !items.is_empty() {
        message.native = Some(Box::new(NativeItems::new(PROVIDER, items)));
    }
    let usage = response.usage.unwrap_or_default();
    Ok(ChatResponse {
        message,
        usage: Usage::new(
            usage.input_tokens.unwrap_or_default(),
            usage.output_tokens.unwrap_or_default(),
        ),
        finish_reason,
    })
}

/// The text and the calls of output items. A call item without a `call_id` (some compatible
/// servers send none) is given one, written into the item as well so that the item sent back
/// and the call's result agree.
fn read_items(items: &mut [Value], names: &NameMap) -> Result<(String, Vec<ToolCall>), ModelError> {
    let mut text = String::new();
    let mut calls = Vec::new();
    for (index, item) in items.iter_mut().enumerate() {
        let kind = match item.get("type").and_then(Value::as_str) {
            Some(kind) => kind.to_owned(),
            // A compatible server that leaves the type out of a message.
            None if item.get("content").is_some() => "message".to_owned(),
            None => continue,
        };
        match kind.as_str() {
            "message" => text.push_str(&message_text(item.get("content"))),
            "function_call" => {
                let Some(name) = item.get("name").and_then(Value::as_str) else {
                    return Err(ModelError::Malformed(format!(
                        "output item #{index} is a function call without a name: {}",
                        http::clip(&item.to_string())
                    )));
                };
                let name = name.to_owned();
                let arguments = match item.get("arguments") {
                    None | Some(Value::Null) => String::new(),
                    Some(Value::String(text)) => text.clone(),
                    // Some servers send the object itself.
                    Some(object) => object.to_string(),
                };
                check_caller(index, item)?;
                let id = ensure_call_id(item);
                calls.push(finish_call(Some(id), &name, arguments, names));
            }
            // A program the provider runs ([`ChatRequest::hosted_code`]): its calls of our
            // tools name it by its `call_id`, and it goes back as it came.
            "program" => {
                let has_id = item
                    .get("call_id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| !id.is_empty());
                if !has_id {
                    return Err(ModelError::Malformed(format!(
                        "output item #{index} is a program without a `call_id`: {}",
                        http::clip(&item.to_string())
                    )));
                }
            }
            "tool_search_call"
                if item.get("execution").and_then(Value::as_str) == Some("client") =>
            {
                let arguments = match item.get("arguments") {
                    None | Some(Value::Null) => "{}".to_owned(),
                    Some(Value::String(text)) => text.clone(),
                    Some(object) => object.to_string(),
                };
                let id = ensure_call_id(item);
                calls.push(ToolCall::new(id, SEARCH_TOOL_NAME, arguments));
            }
            // Reasoning, hosted tool search, a program's output, and what comes later: kept for
            // the replay only.
            _ => {}
        }
    }
    Ok((text, calls))
}

/// Checks the `caller` of a function call item: absent, `{"type": "direct"}`, or
/// `{"type": "program", "caller_id": "<the program's call_id>"}` for a call made by a hosted
/// program ([`ChatRequest::hosted_code`]). The call itself is an ordinary [`ToolCall`]; its
/// caller stays in the item, which goes back unchanged.
fn check_caller(index: usize, item: &Value) -> Result<(), ModelError> {
    let caller = match item.get("caller") {
        None | Some(Value::Null) => return Ok(()),
        Some(caller) => caller,
    };
    let valid = match caller.get("type").and_then(Value::as_str) {
        Some("direct") => true,
        Some("program") => caller
            .get("caller_id")
            .and_then(Value::as_str)
            .is_some_and(|id| !id.is_empty()),
        _ => false,
    };
    if valid {
        return Ok(());
    }
    Err(ModelError::Malformed(format!(
        "output item #{index} is a function call with a caller that is neither `direct` nor a \
         `program` with a `caller_id`: {}",
        http::clip(&caller.to_string())
    )))
}

/// The item's `call_id`, else its `id`, else a new one; written into the item when it had
/// none.
fn ensure_call_id(item: &mut Value) -> String {
    if let Some(id) = item
        .get("call_id")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
    {
        return id.to_owned();
    }
    let id = item
        .get("id")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .map_or_else(|| format!("call_{:016x}", fastrand::u64(..)), str::to_owned);
    if let Some(fields) = item.as_object_mut() {
        fields.insert("call_id".into(), json!(id));
    }
    id
}

/// The text of a message item's content: its `output_text` parts (and refusals, which are the
/// model's answer too), or the content itself when a server sends a string.
fn message_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| match part.get("type").and_then(Value::as_str) {
                Some("refusal") => part.get("refusal").and_then(Value::as_str),
                Some("output_text" | "text") | None => part.get("text").and_then(Value::as_str),
                Some(_) => None,
            })
            .collect(),
        _ => String::new(),
    }
}

fn finish_reason(
    status: Option<&str>,
    incomplete: Option<&Value>,
    has_calls: bool,
) -> FinishReason {
    match status {
        Some("incomplete") => {
            let reason = incomplete
                .and_then(|d| d.get("reason"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            match reason {
                "max_output_tokens" => FinishReason::Length,
                "content_filter" => FinishReason::ContentFilter,
                "" => FinishReason::Other("incomplete".into()),
                other => FinishReason::Other(other.to_owned()),
            }
        }
        // Compatible servers may leave the status out.
        Some("completed" | "") | None => {
            if has_calls {
                FinishReason::ToolCalls
            } else {
                FinishReason::Stop
            }
        }
        Some(other) => FinishReason::Other(other.to_owned()),
    }
}

/// The error a response or a stream reports (`error` of a failed response, or an `error`
/// event): an HTTP error of the status its `code` stands for, so that
/// [`ModelError::is_retryable`] judges it like the same error sent up front, and a server's
/// refusal of the model's own output is [`ModelError::OutputRejected`]. A numeric `code`
/// (llama.cpp's) is that status.
fn response_error(error: &Value) -> ModelError {
    let body = http::clip(&error.to_string());
    let code = error.get("code");
    if let Some(status) = code
        .and_then(Value::as_u64)
        .and_then(|code| u16::try_from(code).ok())
        .filter(|code| (400..=599).contains(code))
    {
        return ModelError::from_status(status, body);
    }
    let code = code
        .and_then(Value::as_str)
        .or_else(|| error.get("type").and_then(Value::as_str))
        .unwrap_or_default();
    let status = match code {
        "rate_limit_exceeded" | "rate_limit_error" => {
            return ModelError::RateLimited { retry_after: None };
        }
        "server_error" | "api_error" => 500,
        "vector_store_timeout" | "timeout" => 504,
        "invalid_prompt"
        | "invalid_request_error"
        | "data_residency_mismatch"
        | "bio_policy"
        | "misalignment_policy_violation"
        | "invalid_image"
        | "invalid_image_format"
        | "invalid_base64_image"
        | "invalid_image_url"
        | "image_too_large"
        | "image_too_small"
        | "image_parse_error"
        | "image_content_policy_violation"
        | "invalid_image_mode"
        | "image_file_too_large"
        | "unsupported_image_media_type"
        | "empty_image_file"
        | "failed_to_download_image"
        | "image_file_not_found" => 400,
        _ => {
            return ModelError::Malformed(format!("the response reports an error: {body}"));
        }
    };
    ModelError::from_status(status, body)
}
