//! [`ChatRequest`]: what one request to a chat model carries — the conversation, the tools
//! and [`ToolChoice`], and [`GenerationOptions`].

use serde::{Deserialize, Serialize};

use super::message::Message;
use crate::tool::{GroupInfo, ToolDefinition};

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

/// Sampling and length settings of one request; unset settings are left to the provider.
///
/// ```
/// use agent_toolkit::model::GenerationOptions;
///
/// let options = GenerationOptions::new().with_temperature(0.2).with_max_tokens(500);
/// assert_eq!(options.max_tokens, Some(500));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GenerationOptions {
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Upper bound on generated tokens.
    pub max_tokens: Option<u32>,
    /// Stop sequences.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
}

impl GenerationOptions {
    /// No settings: the provider's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same options with this sampling temperature.
    pub fn with_temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// The same options with this upper bound on generated tokens.
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// The same options with these stop sequences (replacing any set before).
    pub fn with_stop<S: Into<String>>(mut self, stop: impl IntoIterator<Item = S>) -> Self {
        self.stop = stop.into_iter().map(Into::into).collect();
        self
    }
}

/// One request to a chat model.
///
/// ```
/// use agent_toolkit::model::{ChatRequest, Message};
/// use agent_toolkit::{ToolChoice, ToolDefinition};
///
/// let add = ToolDefinition::new("add", "Add two numbers.", serde_json::json!({"type": "object"}));
/// let request = ChatRequest::new(vec![Message::user("1 + 2?")])
///     .with_tools(vec![add])
///     .with_tool_choice(ToolChoice::Required);
/// assert!(!request.parallel_tool_calls);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
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
    /// Tools the model does not see up front but may find with the provider's own tool
    /// search (sent marked `defer_loading`, with the provider's search tool). Empty unless the
    /// agent uses the provider's search ([`ToolSearch::Native`](crate::agent::ToolSearch)).
    pub deferred_tools: Vec<DeferredTool>,
    /// When set, the tool list this conversation started with, sent as the request's tool
    /// list in every request so that the provider's cached prefix stays the same; `tools` is
    /// then what may be called now, and the conversation's
    /// [`tool_change`](Message::tool_change) messages say where tools came and went. Set by
    /// the agent only for models whose provider supports it
    /// ([`ToolFeatures::tool_changes`](crate::model::ToolFeatures)); a provider that cannot
    /// use it sends `tools`.
    pub declared_tools: Option<Vec<ToolDefinition>>,
    /// Whether the provider may run programs the model writes, on its side, that call the
    /// client's tools (`tools`, and the deferred and declared ones): OpenAI Responses'
    /// programmatic tool calling, Anthropic's code execution tool. The provider then declares
    /// its code tool, lets every client tool be called by a program as well as directly
    /// (`allowed_callers`), and, on Anthropic, runs the program in the container the
    /// conversation's last program ran in ([`NativeItems::container`]).
    ///
    /// A call made by a program arrives as an ordinary [`ToolCall`](crate::ToolCall) of the
    /// assistant message and is answered by a tool message like any other;
    /// [`AssistantMessage::program_of`](crate::model::AssistantMessage::program_of) tells it apart. The provider's own items (the program, its
    /// output, the code execution blocks) travel in [`AssistantMessage::native`](crate::model::AssistantMessage::native) and go back
    /// unchanged. Set it only for models with
    /// [`ToolFeatures::hosted_code`](crate::model::ToolFeatures::hosted_code); other providers
    /// ignore it. Off by default, and a request without it is the same as before it existed.
    ///
    /// [`NativeItems::container`]: crate::model::NativeItems::container
    pub hosted_code: bool,
    /// A JSON schema the reply must match, for servers that constrain output (set only by the
    /// providers' constrained tool calls).
    pub(crate) output_schema: Option<serde_json::Value>,
}

/// A tool the model may find with the provider's tool search, and the group it belongs to
/// (OpenAI Responses shows groups as namespaces).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct DeferredTool {
    /// Its definition.
    pub definition: ToolDefinition,
    /// Its group, if any.
    pub group: Option<std::sync::Arc<GroupInfo>>,
}

impl DeferredTool {
    /// `definition`, in `group`.
    pub fn new(definition: ToolDefinition, group: Option<std::sync::Arc<GroupInfo>>) -> Self {
        DeferredTool { definition, group }
    }
}

impl ChatRequest {
    /// A request with `messages`, no tools, [`ToolChoice::Auto`], one call per turn at most,
    /// and the provider's generation defaults.
    pub fn new(messages: Vec<Message>) -> Self {
        ChatRequest {
            messages,
            ..Self::default()
        }
    }

    /// The same request offering these tools.
    pub fn with_tools(mut self, tools: Vec<ToolDefinition>) -> Self {
        self.tools = tools;
        self
    }

    /// The same request with this tool choice.
    pub fn with_tool_choice(mut self, choice: ToolChoice) -> Self {
        self.tool_choice = choice;
        self
    }

    /// The same request allowing (or not) several calls in one turn.
    pub fn with_parallel_tool_calls(mut self, parallel: bool) -> Self {
        self.parallel_tool_calls = parallel;
        self
    }

    /// The same request with these tools findable by the provider's tool search.
    pub fn with_deferred_tools(mut self, tools: Vec<DeferredTool>) -> Self {
        self.deferred_tools = tools;
        self
    }

    /// The same request declaring `tools` as the conversation's fixed tool list (see
    /// [`declared_tools`](Self::declared_tools)).
    pub fn with_declared_tools(mut self, tools: Vec<ToolDefinition>) -> Self {
        self.declared_tools = Some(tools);
        self
    }

    /// The same request letting (or not) the provider run programs that call the tools (see
    /// [`hosted_code`](Self::hosted_code)).
    pub fn with_hosted_code(mut self, on: bool) -> Self {
        self.hosted_code = on;
        self
    }

    /// The same request with these generation settings.
    pub fn with_options(mut self, options: GenerationOptions) -> Self {
        self.options = options;
        self
    }

    /// The tools the conversation's recorded tool changes ([`Message::ToolChange`]) added, in
    /// conversation order (a tool added twice is listed twice): with
    /// [`declared_tools`](Self::declared_tools), what a provider that keeps its tool list
    /// across changes declares.
    pub fn added_tools(&self) -> impl Iterator<Item = &ToolDefinition> {
        self.messages.iter().flat_map(|m| match m {
            Message::ToolChange(change) => change.added.as_slice(),
            _ => &[],
        })
    }
}
