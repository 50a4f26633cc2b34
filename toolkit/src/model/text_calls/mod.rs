//! [`TextToolCalls`]: tool calling for chat models that have no native tool-calling API.
//!
//! The wrapper describes the request's tools in the system prompt, teaches one text format
//! for calling them ([`TextCallFormat`]), and reads the calls back out of the reply with
//! [`parse_tool_calls`]. The agent sees an ordinary [`ChatModel`] whose responses carry
//! [`ToolCall`](crate::ToolCall)s.
//!
//! - `prompt.rs` owns what the inner model is told: the tool section, the history rewritten
//!   without native tool messages, and the re-ask after a malformed call.
//! - `parse.rs` owns what counts as a call, with `json.rs` and `xml.rs` finding the call
//!   blocks of each format; `elements.rs` reads XML-element parameters and `typing.rs`
//!   types them by the tool's schema.

mod elements;
mod json;
mod parse;
mod prompt;
mod typing;
mod xml;

#[cfg(test)]
mod tests;

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::future::BoxFuture;

pub use parse::{ParsedReply, TextCallError, parse_tool_calls};

use super::{ChatModel, ChatRequest, ChatResponse, FinishReason, Message, ModelError, ToolChoice};
use crate::schema::Dialect;
use crate::tool::ToolDefinition;

/// How a text-only model writes tool calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TextCallFormat {
    /// One JSON object: `{"tool_calls": [{"id": "..", "name": "..", "parameters": {..}}]}`.
    #[default]
    Json,
    /// One element per call:
    /// `<tool_call id=".." name=".."><parameters>{json}</parameters></tool_call>`; the
    /// parameters may also be one element per parameter (`<a>10</a>`), typed by the tool's
    /// schema (see [`parse_tool_calls`]).
    Xml,
}

/// A [`ChatModel`] that gives tool calling to an inner model without it.
///
/// The inner model is sent no native tools. Instead the system prompt (the first system
/// message, or a new one in front) lists the request's tools with their JSON schemas and
/// says how to call them in the chosen [`TextCallFormat`], honouring
/// [`ToolChoice`]; earlier assistant calls and tool results in the history are rewritten as
/// text. The reply is read with [`parse_tool_calls`].
///
/// A reply with an attempted but unusable call (bad JSON, no name, parameters that are not
/// an object, a tool the request does not offer), or without a call when the request
/// requires one, is never passed on: the inner model is asked again, with its reply and a
/// message saying what was wrong and what shape is expected, up to
/// [`max_repairs`](Self::max_repairs) times; then the call fails with
/// [`ModelError::Malformed`]. Token usage is summed over all attempts.
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
/// let request = ChatRequest {
///     messages: vec![Message::user("1 + 2?")],
///     tools: vec![ToolDefinition::new("add", "Add two numbers.", serde_json::json!({"type": "object"}))],
///     ..ChatRequest::default()
/// };
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
        } = request;
        if tools.is_empty() {
            let request = ChatRequest {
                messages: prompt::history(messages, None, self.format),
                options,
                ..ChatRequest::default()
            };
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
        let taken: HashSet<String> = messages
            .iter()
            .flat_map(|m| {
                let calls = m.tool_calls.iter().map(|c| c.id.to_string());
                calls.chain(m.tool_call_id.as_deref().map(str::to_owned))
            })
            .collect();
        let section = prompt::tool_section(&tools, &tool_choice, parallel_tool_calls, self.format);
        let mut sent = ChatRequest {
            messages: prompt::history(messages, Some(section), self.format),
            options,
            ..ChatRequest::default()
        };

        let mut usage = super::Usage::default();
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
                return Err(ModelError::Malformed(format!(
                    "the model's text tool call was still unusable after {repairs} repair \
                     request(s): {error}"
                )));
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

/// The response the agent sees: the prose as content, native calls (if the inner model made
/// any regardless) followed by the parsed ones.
fn assemble(response: ChatResponse, parsed: ParsedReply, usage: super::Usage) -> ChatResponse {
    let mut calls = response.message.tool_calls;
    calls.extend(parsed.calls);
    let finish_reason = if calls.is_empty() {
        response.finish_reason
    } else {
        FinishReason::ToolCalls
    };
    ChatResponse {
        message: Message::assistant(parsed.text, calls),
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
}
