//! [`TextToolCalls`]: tool calling for chat models that have no native tool-calling API.
//!
//! The wrapper describes the request's tools in the system prompt, teaches one text format
//! for calling them ([`TextCallFormat`]), and reads the calls back out of the reply. The agent
//! sees an ordinary [`ChatModel`] whose responses carry [`ToolCall`](crate::ToolCall)s.
//!
//! | Module | Owns |
//! |---|---|
//! | `mod.rs` | [`TextToolCalls`]: the wrapper, its repair loop and token accounting |
//! | `prompt` | what the inner model is told: the tool section, the history rewritten without native tool messages, the re-ask after a malformed call |
//! | `parse` | what counts as a call: every reader run over the reply, found calls checked against the offered tools, ids, the blocks cut out of the prose |
//! | `json`, `xml`, `bare` | finding call blocks: `{"tool_calls": ..}` objects; `<tool_call>` elements (seed 002's and Hermes); bare `{"name", "arguments"}` objects |
//! | `lenient` | reading call JSON with small models' slips (a missing last brace, single quotes, `True`, trailing commas), and the attempted calls of offered tools that cannot be read even so |
//! | `recover` | calls a model with native tool calling wrote as text, read for the providers and for the agent (a reply to a request that allowed no calls) |
//! | `history` | the history a provider sends after such calls: their turns as the text written, their results in plain words |
//! | `elements` | reading XML-element parameters into a tree |
//! | `typing` | giving that tree JSON types from the tool's parameter schema |
//! | `syntax` | shared vocabulary: [`TextCallFormat`] and a call as written (a leaf) |
//! | `error` | why a reply's calls cannot be used, in words for the model (a leaf) |
//!
//! Dependencies point one way: `parse` uses the readers, the readers use `syntax` and
//! `error`, and those two use nothing here.

mod bare;
mod elements;
mod error;
#[cfg(any(feature = "openai", feature = "anthropic"))]
mod history;
mod json;
mod lenient;
mod parse;
mod prompt;
mod recover;
mod syntax;
mod typing;
mod xml;

#[cfg(test)]
mod tests;

pub use error::TextCallError;
pub use parse::{ParsedReply, parse_tool_calls};
pub use syntax::TextCallFormat;

#[cfg(any(feature = "openai", feature = "anthropic"))]
pub(crate) use history::plain_history;
pub(crate) use recover::recover;

use std::sync::atomic::{AtomicU64, Ordering};

use futures::future::BoxFuture;

use super::message::call_ids;
use super::{
    AssistantMessage, ChatModel, ChatRequest, ChatResponse, FinishReason, Message, ModelError,
    ToolChoice, Usage,
};
use crate::dialect::Dialect;
use crate::tool::ToolDefinition;

/// A [`ChatModel`] that gives tool calling to an inner model without it.
///
/// The inner model is sent no native tools. Instead the system prompt (the first system
/// message, or a new one in front) lists the request's tools with their JSON schemas and
/// says how to call them in the chosen [`TextCallFormat`], honouring
/// [`ToolChoice`]; earlier assistant calls and tool results in the history are rewritten as
/// text. What counts as a call in the reply is described on [`TextCallFormat`].
///
/// A reply with an attempted but unusable call (bad JSON, no name, parameters that are not
/// an object, a tool the request does not offer), or without a call when the request
/// requires one, is not passed on at once: the inner model is asked again, with its reply and
/// a message saying what was wrong and what shape is expected, up to
/// [`max_repairs`](Self::max_repairs) times. A call still unusable after that is passed on as
/// written (a block that cannot be read at all as a call without a name), so the agent
/// answers it with an error result the model reads and the run goes on; a reply that still
/// makes no call where one is required fails with [`ModelError::Malformed`]. Token usage is
/// summed over all attempts.
///
/// Every form [`TextCallFormat`] describes is read whichever format is taught, as are bare
/// `{"name": .., "arguments": ..}` objects and Hermes `<tool_call>{..}</tool_call>` blocks,
/// which models trained on other templates write regardless of the prompt. Their JSON is read
/// leniently where small models slip (see "Lenient reading" on [`TextCallFormat`]), and an
/// object that starts `{"name": "<an offered tool>"` but cannot be read even so is an
/// unusable call like the ones above, never the answer.
///
/// A request without tools is passed through (history rewritten), and its reply is never
/// parsed: the model was taught no format, so anything call-like in it is just text.
///
/// Calls without an id get `call_<n>` from a counter of this wrapper, skipping ids already
/// in the history so results stay unambiguous.
///
/// ```
/// use agent_toolkit::model::{ChatRequest, Message, TextToolCalls};
/// use agent_toolkit::testing::{ScriptedModel, ScriptedTurn};
/// use agent_toolkit::{ChatModel, ToolDefinition};
///
/// let inner = ScriptedModel::new([ScriptedTurn::text(
///     r#"{"tool_calls": [{"name": "add", "parameters": {"a": 1, "b": 2}}]}"#,
/// )]);
/// let model = TextToolCalls::new(inner);
/// let add = ToolDefinition::new("add", "Add two numbers.", serde_json::json!({"type": "object"}));
/// let request = ChatRequest::new(vec![Message::user("1 + 2?")]).with_tools(vec![add]);
/// let response = futures::executor::block_on(model.chat(request)).unwrap();
/// assert_eq!(response.message.tool_calls[0].name, "add");
/// assert_eq!(response.message.tool_calls[0].arguments, r#"{"a":1,"b":2}"#);
/// ```
#[derive(Debug)]
pub struct TextToolCalls<M: ChatModel> {
    inner: M,
    format: TextCallFormat,
    max_repairs: u32,
    next_id: AtomicU64,
}

impl<M: ChatModel> TextToolCalls<M> {
    /// Wrap `inner`, with the JSON format and at most 2 re-asks per request.
    pub fn new(inner: M) -> Self {
        TextToolCalls {
            inner,
            format: TextCallFormat::Json,
            max_repairs: 2,
            next_id: AtomicU64::new(1),
        }
    }

    /// The format the model is taught and read in.
    pub fn format(mut self, format: TextCallFormat) -> Self {
        self.format = format;
        self
    }

    /// How many times a reply with an unusable call is sent back for repair before the
    /// request fails (0: never). Each repair is one more inner request.
    pub fn max_repairs(mut self, repairs: u32) -> Self {
        self.max_repairs = repairs;
        self
    }

    /// The wrapped model.
    pub fn inner(&self) -> &M {
        &self.inner
    }

    /// The wrapped model, unwrapped.
    pub fn into_inner(self) -> M {
        self.inner
    }

    async fn chat_text(&self, request: ChatRequest) -> Result<ChatResponse, ModelError> {
        let ChatRequest {
            messages,
            tools,
            tool_choice,
            parallel_tool_calls,
            options,
            // Tool search and cache-keeping tool lists are features of providers' APIs; a
            // model taught tools in the prompt has neither (its `tool_features` are none).
            ..
        } = request;
        if tools.is_empty() {
            let request = ChatRequest::new(prompt::history(messages, None, self.format))
                .with_options(options);
            return self.inner.chat(request).await;
        }

        let allowed: Vec<ToolDefinition> = match &tool_choice {
            ToolChoice::None => Vec::new(),
            ToolChoice::Specific(name) => {
                tools.iter().filter(|t| t.name() == name).cloned().collect()
            }
            ToolChoice::Auto | ToolChoice::Required => tools.clone(),
        };
        let required = match &tool_choice {
            ToolChoice::Required => Some(TextCallError::CallRequired { tool: None }),
            ToolChoice::Specific(name) => Some(TextCallError::CallRequired {
                tool: Some(name.clone()),
            }),
            ToolChoice::Auto | ToolChoice::None => None,
        };
        let taken = call_ids(&messages);
        let mut sent = prompted(
            messages,
            &tools,
            &tool_choice,
            parallel_tool_calls,
            options,
            self.format,
        );

        let mut usage = Usage::default();
        let mut repairs = 0;
        loop {
            let last_chance = repairs >= self.max_repairs;
            // The request is kept only while a repair may still need it.
            let request = if last_chance {
                std::mem::take(&mut sent)
            } else {
                sent.clone()
            };
            let response = self.inner.chat(request).await?;
            usage.input_tokens = usage
                .input_tokens
                .saturating_add(response.usage.input_tokens);
            usage.output_tokens = usage
                .output_tokens
                .saturating_add(response.usage.output_tokens);

            let mut fresh = || format!("call_{}", self.next_id.fetch_add(1, Ordering::Relaxed));
            let outcome = parse::parse_reply(
                &response.message.content,
                self.format,
                &allowed,
                parse::Strictness::Refuse,
                &mut taken.clone(),
                &mut fresh,
            )
            .and_then(|parsed| match &required {
                Some(error)
                    if parsed.calls.is_empty() && response.message.tool_calls.is_empty() =>
                {
                    Err(error.clone())
                }
                _ => Ok(parsed),
            });
            let error = match outcome {
                Ok(parsed) => return Ok(assemble(response, parsed, usage)),
                Err(error) => error,
            };
            if last_chance {
                if let TextCallError::CallRequired { .. } = error {
                    return Err(ModelError::Malformed(format!(
                        "the model still made no tool call after {repairs} repair request(s): \
                         {error}"
                    )));
                }
                // The calls go on as written; the agent answers each one it cannot run with
                // an error the model reads, so the run goes on rather than failing.
                tracing::debug!(model = self.inner.name(), %error, "passing on a text tool call that is still unusable");
                let parsed = parse::parse_reply(
                    &response.message.content,
                    self.format,
                    &allowed,
                    parse::Strictness::Keep,
                    &mut taken.clone(),
                    &mut fresh,
                )
                .unwrap_or_else(|_| ParsedReply {
                    text: response.message.content.clone(),
                    calls: vec![crate::tool::ToolCall::new(fresh(), "", "{}")],
                });
                return Ok(assemble(response, parsed, usage));
            }
            repairs += 1;
            tracing::debug!(model = self.inner.name(), repair = repairs, %error, "asking the model to repair its tool call");
            sent.messages
                .push(Message::assistant(response.message.content, Vec::new()));
            sent.messages
                .push(Message::user(prompt::repair(&error, self.format, &allowed)));
        }
    }
}

/// The request a model without native tool calling is sent: no tools, the history rewritten as
/// text, and the tool section (the tools, how to call them, the rule of `choice`) in the system
/// prompt.
fn prompted(
    messages: Vec<Message>,
    tools: &[ToolDefinition],
    choice: &ToolChoice,
    parallel: bool,
    options: super::GenerationOptions,
    format: TextCallFormat,
) -> ChatRequest {
    let section = prompt::tool_section(tools, choice, parallel, format);
    ChatRequest::new(prompt::history(messages, Some(section), format)).with_options(options)
}

/// `request` as [`TextToolCalls`] would send it to its inner model, in the JSON format: for a
/// provider asking again when the server could not read the model's output as native calls.
#[cfg(any(feature = "openai", feature = "anthropic"))]
pub(crate) fn as_text_request(request: &ChatRequest) -> ChatRequest {
    prompted(
        request.messages.clone(),
        &request.tools,
        &request.tool_choice,
        request.parallel_tool_calls,
        request.options.clone(),
        TextCallFormat::Json,
    )
}

/// The response the agent sees: the prose as content, native calls (if the inner model made
/// any regardless) followed by the parsed ones.
fn assemble(response: ChatResponse, parsed: ParsedReply, usage: Usage) -> ChatResponse {
    let mut calls = response.message.tool_calls;
    calls.extend(parsed.calls);
    let finish_reason = if calls.is_empty() {
        response.finish_reason
    } else {
        FinishReason::ToolCalls
    };
    ChatResponse {
        message: AssistantMessage::new(parsed.text, calls),
        usage,
        finish_reason,
    }
}

impl<M: ChatModel> ChatModel for TextToolCalls<M> {
    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, ModelError>> {
        Box::pin(self.chat_text(request))
    }

    fn dialect(&self) -> Dialect {
        self.inner.dialect()
    }

    fn name(&self) -> &str {
        self.inner.name()
    }

    fn provider(&self) -> &str {
        self.inner.provider()
    }
}
