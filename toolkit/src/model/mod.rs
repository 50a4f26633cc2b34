//! Chat models: the [`ChatModel`] trait the agent talks to, the messages and requests it
//! exchanges, and the providers that implement it.
//!
//! The types here are provider-neutral: a [`ChatRequest`] carries canonical
//! [`ToolDefinition`]s and each provider renders them in its own [`Dialect`]; a
//! [`ChatResponse`] carries text and [`ToolCall`]s whatever the wire format was.

#[cfg(feature = "anthropic")]
mod anthropic;
#[cfg(any(feature = "openai", feature = "anthropic"))]
mod http;
#[cfg(feature = "openai")]
mod openai;
mod text_calls;

#[cfg(feature = "anthropic")]
pub use anthropic::{AnthropicMessages, AnthropicMessagesBuilder};
#[cfg(feature = "openai")]
pub use openai::{OpenAiChat, OpenAiChatBuilder};
pub use text_calls::{ParsedReply, TextCallError, TextCallFormat, TextToolCalls, parse_tool_calls};

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};

use crate::schema::Dialect;
use crate::tool::ToolDefinition;
use crate::tool::{ToolCall, ToolResult};

/// Who wrote a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions for the model.
    System,
    /// The user.
    User,
    /// The model.
    Assistant,
    /// A tool's result.
    Tool,
}

/// One message of a conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// Its text (empty for an assistant message that only calls tools).
    pub content: String,
    /// Tool calls the assistant asked for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a tool message: the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<Arc<str>>,
    /// For a tool message: the tool's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// For a tool message: the call failed (Anthropic's `is_error`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

impl Message {
    fn new(role: Role, content: impl Into<String>) -> Self {
        Message {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
            is_error: false,
        }
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::new(Role::System, content)
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::new(Role::User, content)
    }

    /// An assistant message with text and tool calls.
    pub fn assistant(content: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Message {
            tool_calls,
            ..Self::new(Role::Assistant, content)
        }
    }

    /// The message that gives a tool's result back to the model.
    pub fn tool_result(result: &ToolResult) -> Self {
        Message {
            tool_call_id: Some(result.call_id.clone()),
            name: Some(result.name.clone()),
            is_error: result.is_error(),
            ..Self::new(Role::Tool, result.model_text())
        }
    }
}

/// Whether and which tools the model may call.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// No tool calls.
    None,
    /// At least one tool call.
    Required,
    /// A call of this tool.
    Specific(String),
}

/// Sampling and length settings of one request.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GenerationOptions {
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Upper bound on generated tokens.
    pub max_tokens: Option<u32>,
    /// Stop sequences.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
}

/// One request to a chat model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChatRequest {
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// Tools the model may call, in canonical form (providers render them in their dialect).
    pub tools: Vec<ToolDefinition>,
    /// Whether and which tools it may call.
    pub tool_choice: ToolChoice,
    /// Whether it may ask for several calls in one turn.
    pub parallel_tool_calls: bool,
    /// Sampling and length settings.
    pub options: GenerationOptions,
}

/// Token counts of one response.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Generated tokens.
    pub output_tokens: u64,
}

/// Why the model stopped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FinishReason {
    /// A natural end.
    Stop,
    /// It asked for tool calls.
    ToolCalls,
    /// It hit the token limit.
    Length,
    /// Output was filtered.
    ContentFilter,
    /// Something the provider named otherwise.
    Other(String),
}

/// One response of a chat model.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatResponse {
    /// The assistant message: text and/or tool calls.
    pub message: Message,
    /// Token counts, when the provider reports them.
    pub usage: Usage,
    /// Why it stopped.
    pub finish_reason: FinishReason,
}

/// A piece of a streamed response.
#[derive(Clone, Debug, PartialEq)]
pub enum ChatEvent {
    /// More text.
    TextDelta(String),
    /// A tool call began (its arguments follow as the response completes).
    ToolCallStarted {
        /// The call's id.
        id: Arc<str>,
        /// The tool's name.
        name: String,
    },
    /// The whole response, assembled; always the last event.
    Done(ChatResponse),
}

/// Why a model request failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The provider answered with an error status.
    #[error("the model provider answered HTTP {status}: {body}")]
    Http {
        /// HTTP status.
        status: u16,
        /// Response body (truncated).
        body: String,
    },
    /// Too many requests; try again after the given time if known.
    #[error("the model provider is rate limiting requests{}", retry_after.map(|d| format!(" (retry after {d:?})")).unwrap_or_default())]
    RateLimited {
        /// The provider's `retry-after`, if it sent one.
        retry_after: Option<Duration>,
    },
    /// The response could not be understood.
    #[error("the model provider's response could not be read: {0}")]
    Malformed(String),
    /// The request did not get through (connection, timeout).
    #[error("the model provider could not be reached: {0}")]
    Transport(String),
    /// The provider was configured wrongly (no model, a bad URL, header or key); fix the
    /// configuration, retrying cannot help.
    #[error("invalid model provider configuration: {0}")]
    Config(String),
    /// A scripted model ran out of turns or saw a request it did not expect.
    #[error("scripted model: {0}")]
    Script(String),
}

impl ModelError {
    /// Whether trying again may succeed (rate limits, server errors, transport failures).
    pub fn is_transient(&self) -> bool {
        match self {
            ModelError::RateLimited { .. } | ModelError::Transport(_) => true,
            ModelError::Http { status, .. } => *status >= 500 || *status == 408,
            _ => false,
        }
    }
}

/// A chat model the agent can talk to.
pub trait ChatModel: Send + Sync + 'static {
    /// One request, one response.
    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, ModelError>>;

    /// The same as a stream of events ending with [`ChatEvent::Done`]. The default streams the
    /// whole text at once after [`chat`](Self::chat) returns.
    fn chat_stream(&self, request: ChatRequest) -> BoxStream<'_, Result<ChatEvent, ModelError>> {
        use futures::StreamExt;
        futures::stream::once(self.chat(request))
            .flat_map(|result| {
                let events: Vec<Result<ChatEvent, ModelError>> = match result {
                    Ok(response) => {
                        let mut events = Vec::new();
                        if !response.message.content.is_empty() {
                            events.push(Ok(ChatEvent::TextDelta(response.message.content.clone())));
                        }
                        for call in &response.message.tool_calls {
                            events.push(Ok(ChatEvent::ToolCallStarted {
                                id: call.id.clone(),
                                name: call.name.clone(),
                            }));
                        }
                        events.push(Ok(ChatEvent::Done(response)));
                        events
                    }
                    Err(e) => vec![Err(e)],
                };
                futures::stream::iter(events)
            })
            .boxed()
    }

    /// The schema dialect this model's provider needs.
    fn dialect(&self) -> Dialect {
        Dialect::OpenAi
    }

    /// A name for logs and events.
    fn name(&self) -> &str {
        "model"
    }
}

impl<M: ChatModel + ?Sized> ChatModel for Arc<M> {
    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, ModelError>> {
        (**self).chat(request)
    }
    fn chat_stream(&self, request: ChatRequest) -> BoxStream<'_, Result<ChatEvent, ModelError>> {
        (**self).chat_stream(request)
    }
    fn dialect(&self) -> Dialect {
        (**self).dialect()
    }
    fn name(&self) -> &str {
        (**self).name()
    }
}

impl<M: ChatModel + ?Sized> ChatModel for Box<M> {
    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, ModelError>> {
        (**self).chat(request)
    }
    fn chat_stream(&self, request: ChatRequest) -> BoxStream<'_, Result<ChatEvent, ModelError>> {
        (**self).chat_stream(request)
    }
    fn dialect(&self) -> Dialect {
        (**self).dialect()
    }
    fn name(&self) -> &str {
        (**self).name()
    }
}
