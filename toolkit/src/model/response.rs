//! [`ChatResponse`]: what a chat model answers — the [`AssistantMessage`], its [`Usage`]
//! and [`FinishReason`] — and the [`ChatEvent`]s of a streamed answer.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::message::AssistantMessage;

/// Token counts of one response.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Generated tokens.
    pub output_tokens: u64,
}

impl Usage {
    /// `input_tokens` read and `output_tokens` generated.
    pub fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Usage {
            input_tokens,
            output_tokens,
        }
    }
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
///
/// ```
/// use agent_toolkit::ToolCall;
/// use agent_toolkit::model::{AssistantMessage, ChatResponse, FinishReason, Usage};
///
/// let call = ToolCall::new("call_1", "add", r#"{"a":1,"b":2}"#);
/// let response = ChatResponse::new(AssistantMessage::new("", vec![call])).with_usage(Usage::new(12, 5));
/// assert_eq!(response.finish_reason, FinishReason::ToolCalls);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ChatResponse {
    /// The model's turn: text and/or tool calls.
    pub message: AssistantMessage,
    /// Token counts, when the provider reports them.
    pub usage: Usage,
    /// Why it stopped.
    pub finish_reason: FinishReason,
}

impl ChatResponse {
    /// The response carrying `message`, without token counts, finished with
    /// [`FinishReason::ToolCalls`] when the turn calls tools and [`FinishReason::Stop`]
    /// otherwise.
    pub fn new(message: AssistantMessage) -> Self {
        let finish_reason = if message.tool_calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        };
        ChatResponse {
            message,
            usage: Usage::default(),
            finish_reason,
        }
    }

    /// The same response with these token counts.
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = usage;
        self
    }

    /// The same response with this finish reason.
    pub fn with_finish_reason(mut self, reason: FinishReason) -> Self {
        self.finish_reason = reason;
        self
    }
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
