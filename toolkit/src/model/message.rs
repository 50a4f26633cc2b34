//! [`Message`]: one message of a conversation, and its [`Role`].

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::tool::{ToolCall, ToolDefinition, ToolResult};

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
    /// For a tool message: tools its result makes callable (the answer of a tool search).
    /// Providers with client-side tool search send them as references the model can call
    /// (Anthropic `tool_reference` blocks); others show the text alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_references: Vec<String>,
    /// For a system message: the tool list changed here in the conversation (see
    /// [`ToolChange`]). Providers that can change tools mid-conversation without rewriting
    /// the cached request prefix render it; the others leave it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_change: Option<Box<ToolChange>>,
    /// For an assistant message: the provider's own items of this turn, as it sent them
    /// (reasoning, server-side tool search), replayed unchanged to the same provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native: Option<Box<NativeItems>>,
}

/// A change of the tools the model may call, at one point of a conversation: tools found by
/// a search or switched on with their group (`added`), tools switched off (`removed`).
///
/// An agent records one as a system message ([`Message::tool_change`]) when it talks to a
/// model whose provider keeps its prompt cache across such changes
/// ([`ToolFeatures::tool_changes`](crate::model::ToolFeatures)).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolChange {
    /// Tools callable from here on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub added: Vec<ToolDefinition>,
    /// Names of tools no longer callable from here on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<String>,
}

impl ToolChange {
    /// A change adding `added` and removing `removed`.
    pub fn new(added: Vec<ToolDefinition>, removed: Vec<String>) -> Self {
        ToolChange { added, removed }
    }

    /// Whether it changes nothing.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty()
    }
}

/// A provider's own items of one assistant turn, kept so that the next request to the same
/// provider can send them back unchanged: OpenAI Responses reasoning items (with their
/// encrypted content), `tool_search_call`s, and the `program` / `program_output` items of its
/// programmatic tool calling; Anthropic `server_tool_use`, `tool_search_tool_result` and code
/// execution result blocks. Calls a hosted program made keep their `caller` here. Another
/// provider reads the message's `content` and `tool_calls` instead.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NativeItems {
    /// The provider that wrote them (its [`ChatModel::name`](crate::model::ChatModel::name)
    /// family: `"openai-responses"`, `"anthropic"`).
    pub provider: String,
    /// The items, in the order the provider sent them, calls included.
    pub items: Vec<serde_json::Value>,
    /// The container the provider's hosted code ran in during this turn, as it described it
    /// (Anthropic: `{"id": "container_…", "expires_at": "…"}`). A later request of the
    /// conversation that asks for hosted code
    /// ([`ChatRequest::hosted_code`](crate::model::ChatRequest::hosted_code)) names the last
    /// one, so that a stored conversation goes on in the same container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<serde_json::Value>,
}

impl NativeItems {
    /// `items` as written by `provider`.
    pub fn new(provider: impl Into<String>, items: Vec<serde_json::Value>) -> Self {
        NativeItems {
            provider: provider.into(),
            items,
            container: None,
        }
    }

    /// The id of the hosted program that made the call `call_id` of this turn, from the
    /// call's `caller`: an OpenAI Responses `function_call` with
    /// `"caller": {"type": "program", "caller_id": ..}` (the program item's `call_id`), an
    /// Anthropic `tool_use` block with `"caller": {"type": "code_execution_…", "tool_id": ..}`
    /// (the code execution's `server_tool_use` id). `None` for a direct call or an unknown id.
    fn program_of(&self, call_id: &str) -> Option<&str> {
        let (kind, id_key, caller_key) = match self.provider.as_str() {
            "openai-responses" => ("function_call", "call_id", "caller_id"),
            "anthropic" => ("tool_use", "id", "tool_id"),
            _ => return None,
        };
        let item = self.items.iter().find(|item| {
            item.get("type").and_then(serde_json::Value::as_str) == Some(kind)
                && item.get(id_key).and_then(serde_json::Value::as_str) == Some(call_id)
        })?;
        let caller = item.get("caller")?;
        let caller_type = caller.get("type")?.as_str()?;
        let from_program = match kind {
            "function_call" => caller_type == "program",
            _ => caller_type.starts_with("code_execution_"),
        };
        if !from_program {
            return None;
        }
        caller.get(caller_key)?.as_str()
    }
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
            tool_references: Vec::new(),
            tool_change: None,
            native: None,
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

    /// A system message recording a change of the tool list (see [`ToolChange`]); its text
    /// says the same in words, for providers that show it as text.
    pub fn tool_change(change: ToolChange) -> Self {
        let mut text = String::from("[tools]");
        if !change.added.is_empty() {
            let names: Vec<&str> = change.added.iter().map(|d| d.name()).collect();
            text.push_str(&format!(" Now available: {}.", names.join(", ")));
        }
        if !change.removed.is_empty() {
            text.push_str(&format!(
                " No longer available: {}.",
                change.removed.join(", ")
            ));
        }
        Message {
            tool_change: Some(Box::new(change)),
            ..Self::new(Role::System, text)
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

    /// For an assistant message: the id of the program that made its call `call_id`, when a
    /// program the provider ran made it ([`ChatRequest::hosted_code`]); `None` for a call the
    /// model made directly, or an id that is not one of the message's calls. The id is the
    /// provider's: the `call_id` of an OpenAI Responses `program` item, the id of an Anthropic
    /// code execution (`srvtoolu_…`). Such a call is answered like any other.
    ///
    /// ```
    /// use agent_toolkit::model::{Message, NativeItems};
    /// use agent_toolkit::ToolCall;
    /// use serde_json::json;
    ///
    /// let mut turn = Message::assistant("", vec![ToolCall::new("call_1", "add", r#"{"a":1}"#)]);
    /// turn.native = Some(Box::new(NativeItems::new("openai-responses", vec![
    ///     json!({"type": "program", "call_id": "prog_1", "code": "..", "fingerprint": "f"}),
    ///     json!({"type": "function_call", "call_id": "call_1", "name": "add",
    ///            "arguments": "{\"a\":1}", "caller": {"type": "program", "caller_id": "prog_1"}}),
    /// ])));
    /// assert_eq!(turn.program_of("call_1"), Some("prog_1"));
    /// assert_eq!(turn.program_of("call_2"), None);
    /// ```
    ///
    /// [`ChatRequest::hosted_code`]: crate::model::ChatRequest::hosted_code
    pub fn program_of(&self, call_id: &str) -> Option<&str> {
        if !self.tool_calls.iter().any(|call| &*call.id == call_id) {
            return None;
        }
        self.native.as_ref()?.program_of(call_id)
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
