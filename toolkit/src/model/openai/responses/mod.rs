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
//! output items of an assistant turn kept in [`AssistantMessage::native`](crate::model::AssistantMessage::native) and sent back unchanged
//! (without the server's item ids, which mean nothing when nothing is stored) as long as the
//! turn's calls are still the ones the items hold.
//!
//! Large and changing tool lists ([`ToolFeatures`]):
//! - **Deferred tools** ([`ChatRequest::deferred_tools`]) are sent after the others with
//!   `defer_loading: true`, those of a group inside a `namespace`, together with the
//!   `tool_search` tool: run by OpenAI ([`ResponsesToolSearch::Hosted`]) or by the caller
//!   ([`ResponsesToolSearch::Client`]), in which case the model's `tool_search_call` is a
//!   [`ToolCall`] of `search_tools` whose answer lists the tools found
//!   ([`ToolMessage::tool_references`]), sent back as a `tool_search_output` item carrying their
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
//! [`AssistantMessage::native`](crate::model::AssistantMessage::native) and sent back whole (their ids and the program's `fingerprint`
//! included); [`AssistantMessage::program_of`] names a call's program.

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use serde_json::{Map, Value, json};

use crate::dialect::{Dialect, NameMap};
use crate::model::http::provider::{self, HttpProvider};
use crate::model::http::{self, Endpoint};
use crate::model::{ChatEvent, ChatModel, ChatRequest, ChatResponse, ModelError, ToolFeatures};
// Named in the documentation.
#[allow(unused_imports)]
use crate::{model::Message, tool::ToolCall};

mod builder;
mod request;
mod response;
mod stream;
#[cfg(test)]
mod tests;

pub use builder::OpenAiResponsesBuilder;
use request::{deferred_tools, function_tool, input, name_map, normalize, tool_choice};
use response::{WireResponse, ensure_call_id, finish_response, parse_response, response_error};
use stream::ResponsesStream;

/// The model [`OpenAiResponses::from_env`] asks for without `OPENAI_MODEL`: tool search needs
/// gpt-5.4 or later.
const DEFAULT_MODEL: &str = "gpt-5.4";

/// The provider name of the items kept in [`AssistantMessage::native`](crate::model::AssistantMessage::native).
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
    /// [`tool_references`](crate::model::ToolMessage::tool_references) name the deferred tools found.
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
/// reasoning model writes travel in [`AssistantMessage::native`](crate::model::AssistantMessage::native) (see the module documentation).
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
        Self::builder().env(env).build()
    }
}

impl HttpProvider for OpenAiResponses {
    type Assembler = ResponsesStream;

    fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    fn text_calls(&self) -> bool {
        self.text_calls
    }

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

    fn parse(&self, body: &[u8], names: &NameMap) -> Result<ChatResponse, ModelError> {
        parse_response(body, names)
    }

    fn assembler(&self, names: NameMap) -> Self::Assembler {
        ResponsesStream::new(names)
    }

    fn finish(&self, request: &ChatRequest, response: &mut ChatResponse) {
        normalize(self.dialect, request, response);
    }
}

impl ChatModel for OpenAiResponses {
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

    fn tool_features(&self) -> ToolFeatures {
        self.features
    }
}
