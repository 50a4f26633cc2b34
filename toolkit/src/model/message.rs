//! [`Message`]: one item of a conversation, of a closed set of kinds (system and user text,
//! an [`AssistantMessage`], a [`ToolMessage`], a [`ToolChange`]), and its [`Role`].

use std::collections::HashSet;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::{ToolError, ToolErrorKind};
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

/// One item of a conversation: a closed set of kinds, each carrying what that kind has.
///
/// Build one with [`system`](Self::system), [`user`](Self::user),
/// [`assistant`](Self::assistant), [`tool_result`](Self::tool_result) (from a
/// [`ToolResult`]), [`tool`](Self::tool) / [`tool_error`](Self::tool_error) (from parts) or
/// [`tool_change`](Self::tool_change). Each provider encodes every kind on its own wire and
/// decodes a response into an [`AssistantMessage`]; [`role`](Self::role),
/// [`content`](Self::content) and [`tool_calls`](Self::tool_calls) read what every kind has.
/// The enum is `#[non_exhaustive]`: kinds added later (images) do not break code that matches
/// it.
///
/// Serialized with a `type` tag: `{"type": "user", "content": "Hi"}`,
/// `{"type": "assistant", "content": "", "tool_calls": [..]}`,
/// `{"type": "tool", "call_id": "c1", "name": "add", "content": "3"}`,
/// `{"type": "tool_change", "added": [..], "removed": [..]}`.
///
/// ```
/// use agent_toolkit::model::{Message, Role};
/// use agent_toolkit::ToolCall;
///
/// let turn = Message::assistant("", vec![ToolCall::new("c1", "add", r#"{"a":1}"#)]);
/// let answer = Message::tool("c1", "add", "1");
/// for message in [&turn, &answer] {
///     match message {
///         Message::Assistant(turn) => assert_eq!(turn.tool_calls[0].name, "add"),
///         Message::Tool(result) => assert_eq!(&*result.call_id, "c1"),
///         _ => unreachable!(),
///     }
/// }
/// assert_eq!(answer.role(), Role::Tool);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Message {
    /// Instructions for the model.
    System {
        /// The instructions.
        content: String,
    },
    /// What the user wrote.
    User {
        /// The text.
        content: String,
    },
    /// The model's turn: its text and the tools it called.
    Assistant(AssistantMessage),
    /// A tool's result, answering one call of an assistant turn.
    Tool(ToolMessage),
    /// The tool list changed here in the conversation (see [`ToolChange`]). Providers that can
    /// change tools mid-conversation without rewriting the cached request prefix render it;
    /// the others show it as a system message in words ([`ToolChange::describe`]).
    ToolChange(ToolChange),
}

/// The model's turn of a conversation: the [`Message::Assistant`] kind, and what every provider
/// decodes a response into ([`ChatResponse::message`](crate::model::ChatResponse::message)).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AssistantMessage {
    /// Its text (empty for a turn that only calls tools).
    #[serde(default)]
    pub content: String,
    /// The tool calls the model asked for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Its `tool_calls` were not made through the API's tool calling but written as text in
    /// `content` and read from there (the providers' `text_tool_calls` setting).
    /// Providers send such a turn back as the text the model wrote, and the results of its
    /// calls as a user message in plain words, the way a chat template without tool-call syntax
    /// can show them; sent back as native calls and results, small models tend to repeat the
    /// call forever.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub calls_in_text: bool,
    /// The provider's own items of this turn, as it sent them (reasoning, server-side tool
    /// search), replayed unchanged to the same provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native: Option<Box<NativeItems>>,
}

impl AssistantMessage {
    /// A turn with `content` and `tool_calls`.
    pub fn new(content: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        AssistantMessage {
            content: content.into(),
            tool_calls,
            calls_in_text: false,
            native: None,
        }
    }

    /// The id of the program that made the call `call_id` of this turn, when a program the
    /// provider ran made it ([`ChatRequest::hosted_code`]); `None` for a call the model made
    /// directly, or an id that is not one of the turn's calls. The id is the provider's: the
    /// `call_id` of an OpenAI Responses `program` item, the id of an Anthropic code execution
    /// (`srvtoolu_…`). Such a call is answered like any other.
    ///
    /// ```
    /// use agent_toolkit::model::{AssistantMessage, NativeItems};
    /// use agent_toolkit::ToolCall;
    /// use serde_json::json;
    ///
    /// let mut turn = AssistantMessage::new("", vec![ToolCall::new("call_1", "add", r#"{"a":1}"#)]);
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

    /// The provider's own items of this turn, when `provider` (a
    /// [`NativeItems::provider`] name) wrote them: what a provider replays of a turn it wrote.
    pub fn native_of(&self, provider: &str) -> Option<&NativeItems> {
        self.native.as_deref().filter(|n| n.provider == provider)
    }
}

/// A tool's result in a conversation: the [`Message::Tool`] kind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolMessage {
    /// The call it answers.
    pub call_id: Arc<str>,
    /// The tool's name.
    pub name: String,
    /// The result as the model reads it.
    #[serde(default)]
    pub content: String,
    /// The call failed (Anthropic's `is_error`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// Why, when it failed in this toolkit ([`Message::tool_result`]): what the agent's loop
    /// guard tells an approver's denial by, which a repeat of the call gets again without asking
    /// anew. `None` for results from elsewhere; a kind this version does not know reads as
    /// `None`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "known_kind"
    )]
    pub error_kind: Option<ToolErrorKind>,
    /// Tools this result makes callable (the answer of a tool search). Providers with
    /// client-side tool search send them as references the model can call (Anthropic
    /// `tool_reference` blocks); others show the text alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_references: Vec<String>,
}

impl ToolMessage {
    /// The result `content` of the call `call_id` of the tool `name`.
    pub fn new(
        call_id: impl Into<Arc<str>>,
        name: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        ToolMessage {
            call_id: call_id.into(),
            name: name.into(),
            content: content.into(),
            is_error: false,
            error_kind: None,
            tool_references: Vec::new(),
        }
    }
}

/// A stored error kind, `None` when this version does not know it (a newer writer's).
fn known_kind<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<ToolErrorKind>, D::Error> {
    let name = <Option<std::borrow::Cow<'de, str>>>::deserialize(deserializer)?;
    Ok(name.and_then(|name| name.parse().ok()))
}

/// A change of the tools the model may call, at one point of a conversation: tools found by
/// a search or switched on with their group (`added`), tools switched off (`removed`).
///
/// An agent records one in its conversation ([`Message::ToolChange`]) when it talks to a
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

    /// The change in words, for providers that show it as a system message:
    /// `[tools] Now available: a, b. No longer available: c.`
    pub fn describe(&self) -> String {
        let mut text = String::from("[tools]");
        if !self.added.is_empty() {
            let names: Vec<&str> = self.added.iter().map(|d| d.name()).collect();
            text.push_str(&format!(" Now available: {}.", names.join(", ")));
        }
        if !self.removed.is_empty() {
            text.push_str(&format!(
                " No longer available: {}.",
                self.removed.join(", ")
            ));
        }
        text
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
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Message::System {
            content: content.into(),
        }
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Message::User {
            content: content.into(),
        }
    }

    /// An assistant turn with text and tool calls.
    pub fn assistant(content: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Message::Assistant(AssistantMessage::new(content, tool_calls))
    }

    /// A change of the tool list (see [`ToolChange`]).
    pub fn tool_change(change: ToolChange) -> Self {
        Message::ToolChange(change)
    }

    /// The message that gives a tool's result back to the model.
    pub fn tool_result(result: &ToolResult) -> Self {
        Message::Tool(ToolMessage {
            is_error: result.is_error(),
            error_kind: result.error().map(ToolError::kind),
            ..ToolMessage::new(
                result.call_id.clone(),
                result.name.clone(),
                result.model_text(),
            )
        })
    }

    /// A tool message answering the call `call_id` of the tool `name` with `content`: for
    /// results that did not come from this toolkit (a client's tools, a stored conversation).
    pub fn tool(
        call_id: impl Into<Arc<str>>,
        name: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        Message::Tool(ToolMessage::new(call_id, name, content))
    }

    /// [`tool`](Self::tool) for a call that failed; `content` says why, for the model.
    pub fn tool_error(
        call_id: impl Into<Arc<str>>,
        name: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        Message::Tool(ToolMessage {
            is_error: true,
            ..ToolMessage::new(call_id, name, content)
        })
    }

    /// Who wrote it: a tool-list change counts as [`Role::System`].
    pub fn role(&self) -> Role {
        match self {
            Message::System { .. } | Message::ToolChange(_) => Role::System,
            Message::User { .. } => Role::User,
            Message::Assistant(_) => Role::Assistant,
            Message::Tool(_) => Role::Tool,
        }
    }

    /// Its text: what the system, the user, the model or the tool wrote; empty for a
    /// tool-list change (its words are [`ToolChange::describe`]).
    pub fn content(&self) -> &str {
        match self {
            Message::System { content } | Message::User { content } => content,
            Message::Assistant(turn) => &turn.content,
            Message::Tool(result) => &result.content,
            Message::ToolChange(_) => "",
        }
    }

    /// The tool calls of an assistant turn; empty for every other kind.
    pub fn tool_calls(&self) -> &[ToolCall] {
        match self {
            Message::Assistant(turn) => &turn.tool_calls,
            _ => &[],
        }
    }

    /// The assistant turn, when it is one.
    pub fn as_assistant(&self) -> Option<&AssistantMessage> {
        match self {
            Message::Assistant(turn) => Some(turn),
            _ => None,
        }
    }

    /// The tool result, when it is one.
    pub fn as_tool(&self) -> Option<&ToolMessage> {
        match self {
            Message::Tool(result) => Some(result),
            _ => None,
        }
    }
}

/// The call ids a conversation has used: its turns' calls and the results' call ids.
pub(crate) fn call_ids(messages: &[Message]) -> HashSet<String> {
    let mut ids = HashSet::new();
    for message in messages {
        match message {
            Message::Assistant(turn) => {
                ids.extend(turn.tool_calls.iter().map(|c| c.id.to_string()))
            }
            Message::Tool(result) => {
                ids.insert(result.call_id.to_string());
            }
            _ => {}
        }
    }
    ids
}

impl From<AssistantMessage> for Message {
    fn from(turn: AssistantMessage) -> Self {
        Message::Assistant(turn)
    }
}

impl From<ToolMessage> for Message {
    fn from(result: ToolMessage) -> Self {
        Message::Tool(result)
    }
}

impl From<ToolChange> for Message {
    fn from(change: ToolChange) -> Self {
        Message::ToolChange(change)
    }
}

/// The form messages were stored in before they were a closed set of kinds (format version 1
/// of a paused run, version 0–1 of an A2A conversation): one struct with a `role` and optional
/// fields. Read only, to upgrade stored values ([`upgrade_v1`]).
#[derive(Deserialize)]
struct MessageV1 {
    role: Role,
    #[serde(default)]
    content: String,
    #[serde(default)]
    tool_calls: Vec<ToolCall>,
    #[serde(default)]
    tool_call_id: Option<Arc<str>>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    is_error: bool,
    #[serde(default)]
    calls_in_text: bool,
    #[serde(default)]
    tool_references: Vec<String>,
    #[serde(default)]
    tool_change: Option<ToolChange>,
    #[serde(default)]
    native: Option<Box<NativeItems>>,
}

impl MessageV1 {
    fn upgrade(self) -> Result<Message, String> {
        Ok(match self.role {
            Role::System => match self.tool_change {
                Some(change) => Message::ToolChange(change),
                None => Message::system(self.content),
            },
            Role::User => Message::user(self.content),
            Role::Assistant => Message::Assistant(AssistantMessage {
                content: self.content,
                tool_calls: self.tool_calls,
                calls_in_text: self.calls_in_text,
                native: self.native,
            }),
            Role::Tool => Message::Tool(ToolMessage {
                call_id: self
                    .tool_call_id
                    .ok_or("a tool message without `tool_call_id`")?,
                name: self.name.unwrap_or_default(),
                content: self.content,
                is_error: self.is_error,
                error_kind: None,
                tool_references: self.tool_references,
            }),
        })
    }
}

/// Rewrites a list of messages stored in the form before the closed set of kinds
/// (`{"role": .., "content": .., "tool_calls": ..}`) into today's form, in place: the upgrade
/// step of the stored values that hold a conversation.
pub(crate) fn upgrade_v1(messages: &mut serde_json::Value) -> Result<(), String> {
    let Some(list) = messages.as_array_mut() else {
        return Ok(());
    };
    for (i, item) in list.iter_mut().enumerate() {
        let old: MessageV1 = serde_json::from_value(item.take())
            .map_err(|e| format!("message {i} of the earlier form: {e}"))?;
        let message = old
            .upgrade()
            .map_err(|e| format!("message {i} of the earlier form: {e}"))?;
        *item = serde_json::to_value(message).map_err(|e| e.to_string())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::ToolResult;

    #[test]
    fn a_result_keeps_its_error_kind_through_storage() {
        let denied = ToolResult::new(
            "c1",
            "remove",
            Err(ToolError::new(ToolErrorKind::Denied, "not approved")),
            0,
        );
        let message = Message::tool_result(&denied);
        let stored = serde_json::to_value(&message).unwrap();
        assert_eq!(stored["error_kind"], "denied", "{stored}");
        let back: Message = serde_json::from_value(stored.clone()).unwrap();
        assert_eq!(back, message);
        assert_eq!(
            back.as_tool().unwrap().error_kind,
            Some(ToolErrorKind::Denied)
        );
        // A success stores none; a kind this version does not know reads as none.
        let done = Ok(crate::tool::ToolOutput::text("done"));
        let ok = Message::tool_result(&ToolResult::new("c2", "remove", done, 0));
        assert!(
            serde_json::to_value(&ok)
                .unwrap()
                .get("error_kind")
                .is_none()
        );
        let mut newer = stored;
        newer["error_kind"] = "a_kind_from_later".into();
        let read: Message = serde_json::from_value(newer).unwrap();
        assert_eq!(read.as_tool().unwrap().error_kind, None);
        assert!(read.as_tool().unwrap().is_error);
    }
}
