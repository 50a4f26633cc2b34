//! Chat models: the [`ChatModel`] trait the agent talks to, the messages and requests it
//! exchanges, and the providers that implement it.
//!
//! The types here are provider-neutral: a [`ChatRequest`] carries canonical
//! [`ToolDefinition`](crate::ToolDefinition)s and each provider renders them in its own
//! [`Dialect`]; a [`ChatResponse`] carries text and [`ToolCall`](crate::ToolCall)s whatever
//! the wire format was.
//!
//! | Module | Owns |
//! |---|---|
//! | `message` | [`Message`] (its kinds [`AssistantMessage`], [`ToolMessage`], [`ToolChange`]) and [`Role`]: one item of a conversation |
//! | `request` | [`ChatRequest`], [`ToolChoice`], [`GenerationOptions`] |
//! | `response` | [`ChatResponse`], [`Usage`], [`FinishReason`], the streamed [`ChatEvent`]s |
//! | `error` | [`ModelError`] and which failures are worth retrying |
//! | `openai` | [`OpenAiChat`]: OpenAI-compatible Chat Completions, and [`OpenAiResponses`]: OpenAI's Responses API, with its tool search and tool-list changes (feature `openai`) |
//! | `anthropic` | [`AnthropicMessages`]: the Anthropic Messages API (feature `anthropic`) |
//! | `http` | what the providers share: the endpoint, retries under a [`RetryPolicy`](crate::RetryPolicy), error mapping, server-sent events, and replies whose calls are written as text (`recovery`) |
//! | `text_calls` | [`TextToolCalls`]: tool calling taught in the prompt, for models without it; [`parse_tool_calls`] for text from elsewhere; the reader of calls written as text that the providers use |
//!
//! **Replies are read as real models write them.** A reply is an answer only when it carries no
//! tool call in any form the parser knows: the HTTP providers read calls a model wrote into its
//! text (their `text_tool_calls` setting, on by default), and a server's refusal of the model's
//! own output ([`ModelError::OutputRejected`]) is asked again for text rather than sent again
//! unchanged.
//!
//! Everything public is reached here, at `agent_toolkit::model::*`; [`ChatModel`] and
//! [`ToolChoice`] are also at the crate root.

#[cfg(feature = "anthropic")]
mod anthropic;
mod error;
#[cfg(any(feature = "openai", feature = "anthropic"))]
mod http;
pub(crate) mod message;
#[cfg(feature = "openai")]
mod openai;
mod request;
mod response;
mod sampler;
mod text_calls;
pub(crate) mod trace;

#[cfg(feature = "anthropic")]
pub use anthropic::{AnthropicMessages, AnthropicMessagesBuilder, AnthropicToolSearch};
pub use error::ModelError;
pub use message::{AssistantMessage, Message, NativeItems, Role, ToolChange, ToolMessage};
#[cfg(feature = "openai")]
pub use openai::{
    OpenAiChat, OpenAiChatBuilder, OpenAiResponses, OpenAiResponsesBuilder, ResponsesToolSearch,
};
pub use request::{ChatRequest, DeferredTool, GenerationOptions, ToolChoice};
pub use response::{ChatEvent, ChatResponse, FinishReason, Usage};
pub use sampler::ModelSampler;
/// For the agent: the calls a reply wrote as text, read as the providers read them.
pub(crate) use text_calls::recover as read_text_calls;
pub use text_calls::{ParsedReply, TextCallError, TextCallFormat, TextToolCalls, parse_tool_calls};

use std::sync::Arc;

use futures::future::BoxFuture;
use futures::stream::BoxStream;

use crate::dialect::Dialect;

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

    /// A name for logs and events: the provider's model id (`gen_ai.request.model` in the
    /// `chat` spans).
    fn name(&self) -> &str {
        "model"
    }

    /// Who serves the model, as the OpenTelemetry GenAI conventions name providers
    /// (`gen_ai.provider.name`: `openai`, `anthropic`, …). The default names the provider
    /// whose wire the model's [`dialect`](Self::dialect) is.
    fn provider(&self) -> &str {
        match self.dialect() {
            Dialect::OpenAi | Dialect::OpenAiStrict => "openai",
            Dialect::Anthropic => "anthropic",
            Dialect::Gemini => "gcp.gemini",
            _ => "unknown",
        }
    }

    /// What the provider offers for large and changing tool lists, and whether it runs
    /// programs that call tools. None by default: the agent then searches deferred tools
    /// itself, sends the current tool list every turn, and asks for no hosted programs.
    fn tool_features(&self) -> ToolFeatures {
        ToolFeatures::default()
    }
}

/// What a model's provider offers for large and changing tool lists, and for programs that
/// call tools; an agent uses each feature the model has unless told otherwise.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolFeatures {
    /// The provider searches deferred tools itself
    /// ([`ChatRequest::deferred_tools`]): Anthropic's tool search tool, OpenAI Responses'
    /// `tool_search`.
    pub native_search: bool,
    /// The provider can change the callable tools mid-conversation without rewriting the
    /// cached request prefix ([`ChatRequest::declared_tools`] and
    /// [`ToolChange`] messages).
    pub tool_changes: bool,
    /// The provider runs programs the model writes, on its own side, and lets them call the
    /// client's tools ([`ChatRequest::hosted_code`]): OpenAI Responses' programmatic tool
    /// calling, Anthropic's code execution tool. A call made by a program comes back as an
    /// ordinary [`ToolCall`](crate::ToolCall), answered like any other;
    /// [`AssistantMessage::program_of`] says which program made it.
    pub hosted_code: bool,
}

impl ToolFeatures {
    /// Every feature.
    pub fn all() -> Self {
        ToolFeatures {
            native_search: true,
            tool_changes: true,
            hosted_code: true,
        }
    }

    /// The same features with [`native_search`](Self::native_search) set to `on`.
    pub fn with_native_search(mut self, on: bool) -> Self {
        self.native_search = on;
        self
    }

    /// The same features with [`tool_changes`](Self::tool_changes) set to `on`.
    pub fn with_tool_changes(mut self, on: bool) -> Self {
        self.tool_changes = on;
        self
    }

    /// The same features with [`hosted_code`](Self::hosted_code) set to `on`.
    pub fn with_hosted_code(mut self, on: bool) -> Self {
        self.hosted_code = on;
        self
    }
}

/// A shared or boxed model is the model it points to.
macro_rules! forward_chat_model {
    ($($pointer:ident),*) => {$(
        impl<M: ChatModel + ?Sized> ChatModel for $pointer<M> {
            fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, ModelError>> {
                (**self).chat(request)
            }
            fn chat_stream(
                &self,
                request: ChatRequest,
            ) -> BoxStream<'_, Result<ChatEvent, ModelError>> {
                (**self).chat_stream(request)
            }
            fn dialect(&self) -> Dialect {
                (**self).dialect()
            }
            fn name(&self) -> &str {
                (**self).name()
            }
            fn provider(&self) -> &str {
                (**self).provider()
            }
            fn tool_features(&self) -> ToolFeatures {
                (**self).tool_features()
            }
        }
    )*};
}

forward_chat_model!(Arc, Box);
