//! [`Message`]: one message of a conversation, and its [`Role`].

use std::sync::Arc;

use serde::{Deserialize, Serialize};

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
///
/// Build one with [`system`](Self::system), [`user`](Self::user),
/// [`assistant`](Self::assistant), [`tool_result`](Self::tool_result) (from a
/// [`ToolResult`]) or [`tool`](Self::tool) / [`tool_error`](Self::tool_error) (from parts).
/// The fields stay public for reading and editing; the struct is `#[non_exhaustive]` so that
/// kinds of content added later (images, reasoning) do not break code that builds messages.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
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
    /// For an assistant message: its `tool_calls` were not made through the API's tool calling
    /// but written as text in `content` and read from there (the providers'
    /// `text_tool_calls` setting).
    /// Providers send such a message back as the text the model wrote, and the results of its
    /// calls as a user message in plain words, the way a chat template without tool-call syntax
    /// can show them; sent back as native calls and results, small models tend to repeat the
    /// call forever.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub calls_in_text: bool,
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
            calls_in_text: false,
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
            is_error: result.is_error(),
            ..Self::tool(
                result.call_id.clone(),
                result.name.clone(),
                result.model_text(),
            )
        }
    }

    /// A tool message answering the call `call_id` of the tool `name` with `content`: for
    /// results that did not come from this toolkit (a client's tools, a stored conversation).
    pub fn tool(
        call_id: impl Into<Arc<str>>,
        name: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        Message {
            tool_call_id: Some(call_id.into()),
            name: Some(name.into()),
            ..Self::new(Role::Tool, content)
        }
    }

    /// [`tool`](Self::tool) for a call that failed; `content` says why, for the model.
    pub fn tool_error(
        call_id: impl Into<Arc<str>>,
        name: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        Message {
            is_error: true,
            ..Self::tool(call_id, name, content)
        }
    }
}
