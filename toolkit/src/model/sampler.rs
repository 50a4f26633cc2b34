//! [`ModelSampler`]: a [`ChatModel`] answering the sampling requests of the tools it is asked
//! by — the opt-in that lets an imported MCP server's prompts reach your model.

use std::sync::Arc;

use futures::future::BoxFuture;

use super::{ChatModel, ChatRequest, FinishReason, GenerationOptions, Message};
use crate::context::{AskError, Caller, Sampled, Sampling};

/// A [`Caller`] whose [`sample`](Caller::sample) asks a [`ChatModel`] (without tools); it
/// answers no elicitation. Give it to an MCP client to let the servers it imports ask your
/// model, which nothing does unless you do:
///
/// ```
/// # #[cfg(feature = "mcp")] {
/// use std::sync::Arc;
/// use agent_toolkit::mcp::{McpClientOptions, McpEra};
/// use agent_toolkit::model::ModelSampler;
/// use agent_toolkit::testing::{ScriptedModel, ScriptedTurn};
///
/// // Any `ChatModel`: a provider (`OpenAiChat`, `AnthropicMessages`, …) or, here, a script.
/// let model = Arc::new(ScriptedModel::new([ScriptedTurn::text("a short summary")]));
/// let options = McpClientOptions::new()
///     .era(McpEra::Handshake)
///     .sampling(ModelSampler::new(model));
/// # }
/// ```
#[derive(Clone)]
pub struct ModelSampler {
    model: Arc<dyn ChatModel>,
}

impl ModelSampler {
    /// Sample with `model`.
    pub fn new(model: Arc<dyn ChatModel>) -> Self {
        ModelSampler { model }
    }
}

impl std::fmt::Debug for ModelSampler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelSampler")
            .field("model", &self.model.name())
            .finish()
    }
}

impl Caller for ModelSampler {
    fn sample(&self, request: Sampling) -> BoxFuture<'_, Result<Sampled, AskError>> {
        Box::pin(async move {
            let mut messages = Vec::with_capacity(request.messages.len() + 1);
            if let Some(system) = request.system_prompt {
                messages.push(Message::system(system));
            }
            for (role, text) in request.messages {
                messages.push(match role.as_str() {
                    "assistant" => Message::assistant(text, Vec::new()),
                    _ => Message::user(text),
                });
            }
            let mut chat = ChatRequest::new(messages);
            let mut options = GenerationOptions::new();
            options.max_tokens = Some(request.max_tokens);
            chat.options = options;
            let response = self.model.chat(chat).await.map_err(|e| AskError::Failed {
                what: "sampling",
                message: e.to_string(),
            })?;
            let mut sampled = Sampled::new(response.message.content, self.model.name());
            sampled.stop_reason = Some(
                match response.finish_reason {
                    FinishReason::Stop => "endTurn",
                    FinishReason::Length => "maxTokens",
                    FinishReason::ToolCalls => "toolUse",
                    FinishReason::ContentFilter => "contentFilter",
                    FinishReason::Other(ref other) => other.as_str(),
                }
                .to_owned(),
            );
            Ok(sampled)
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::model::{AssistantMessage, ChatResponse, ModelError, Usage};

    /// Answers "short" and keeps the request.
    #[derive(Default)]
    struct Short(Mutex<Option<ChatRequest>>);

    impl ChatModel for Short {
        fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, ModelError>> {
            *self.0.lock().unwrap() = Some(request);
            Box::pin(async {
                Ok(ChatResponse {
                    message: AssistantMessage::new("short", Vec::new()),
                    usage: Usage::default(),
                    finish_reason: FinishReason::Length,
                })
            })
        }
    }

    #[tokio::test]
    async fn the_model_answers_with_the_system_prompt_and_token_limit() {
        let model = Arc::new(Short::default());
        let sampler = ModelSampler::new(model.clone());
        let answer = sampler
            .sample(Sampling::prompt("Summarize this", 20).system("Be brief."))
            .await
            .unwrap();
        assert_eq!(answer.text, "short");
        assert_eq!(answer.stop_reason.as_deref(), Some("maxTokens"));
        let request = model.0.lock().unwrap().take().unwrap();
        assert_eq!(request.messages[0].content(), "Be brief.");
        assert_eq!(request.messages[1].content(), "Summarize this");
        assert_eq!(request.options.max_tokens, Some(20));
        assert!(request.tools.is_empty());
    }
}
