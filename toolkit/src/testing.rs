//! [`ScriptedModel`]: a deterministic, offline chat model that replays scripted turns and
//! records every request it was sent, for examples and tests.

use std::collections::VecDeque;
use std::sync::Mutex;

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use serde_json::Value;

use crate::model::{
    AssistantMessage, ChatEvent, ChatModel, ChatRequest, ChatResponse, FinishReason, ModelError,
    ToolFeatures, Usage,
};
use crate::tool::ToolCall;
use crate::util::lock;

/// One scripted model turn.
#[derive(Clone, Debug, PartialEq)]
pub enum ScriptedTurn {
    /// Answer with text (and no tool calls).
    Text(String),
    /// Ask for tool calls, with optional accompanying text.
    Calls {
        /// Text said along with the calls.
        text: String,
        /// `(tool name, JSON arguments)`; ids are assigned as `call_<turn>_<n>`.
        calls: Vec<(String, String)>,
    },
    /// Fail with this error.
    Fail(ModelError),
}

impl ScriptedTurn {
    /// A final text answer.
    pub fn text(text: impl Into<String>) -> Self {
        ScriptedTurn::Text(text.into())
    }

    /// One tool call with arguments given as JSON.
    pub fn call(name: impl Into<String>, arguments: Value) -> Self {
        Self::calls([(name, arguments)])
    }

    /// Several tool calls in one turn (a parallel batch).
    pub fn calls<N: Into<String>>(calls: impl IntoIterator<Item = (N, Value)>) -> Self {
        ScriptedTurn::Calls {
            text: String::new(),
            calls: calls
                .into_iter()
                .map(|(n, a)| (n.into(), a.to_string()))
                .collect(),
        }
    }

    /// One tool call whose argument text is given verbatim (to script malformed output).
    pub fn raw_call(name: impl Into<String>, arguments: impl Into<String>) -> Self {
        ScriptedTurn::Calls {
            text: String::new(),
            calls: vec![(name.into(), arguments.into())],
        }
    }
}

type Check = Box<dyn Fn(&ChatRequest) -> Result<(), String> + Send + Sync>;

/// A chat model that answers from a script. Each request takes the next turn; a request with
/// no turn left, or one a registered check refuses, fails with [`ModelError::Script`].
/// Streaming splits text into word deltas, as a real provider would.
#[derive(Default)]
pub struct ScriptedModel {
    turns: Mutex<VecDeque<ScriptedTurn>>,
    checks: Mutex<VecDeque<Option<Check>>>,
    requests: Mutex<Vec<ChatRequest>>,
    features: ToolFeatures,
}

impl std::fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedModel")
            .field("turns_left", &self.remaining())
            .field("requests", &lock(&self.requests).len())
            .finish()
    }
}

impl ScriptedModel {
    /// A model that plays `turns` in order.
    pub fn new(turns: impl IntoIterator<Item = ScriptedTurn>) -> Self {
        let turns: VecDeque<_> = turns.into_iter().collect();
        let checks = turns.iter().map(|_| None).collect();
        ScriptedModel {
            turns: Mutex::new(turns),
            checks: Mutex::new(checks),
            requests: Mutex::default(),
            features: ToolFeatures::default(),
        }
    }

    /// The same model claiming these provider features: an agent then sends it deferred
    /// tools for a search of its own, or the tool list as a provider that keeps its prompt
    /// cache wants it. (The script decides what the model does with them.)
    pub fn with_tool_features(mut self, features: ToolFeatures) -> Self {
        self.features = features;
        self
    }

    /// Add a turn.
    pub fn then(self, turn: ScriptedTurn) -> Self {
        lock(&self.turns).push_back(turn);
        lock(&self.checks).push_back(None);
        self
    }

    /// Add a turn that is played only if the request passes `check` (which says what is wrong
    /// otherwise): a way to assert on what the model was sent.
    pub fn then_expect(
        self,
        check: impl Fn(&ChatRequest) -> Result<(), String> + Send + Sync + 'static,
        turn: ScriptedTurn,
    ) -> Self {
        lock(&self.turns).push_back(turn);
        lock(&self.checks).push_back(Some(Box::new(check)));
        self
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<ChatRequest> {
        lock(&self.requests).clone()
    }

    /// Turns not played yet.
    pub fn remaining(&self) -> usize {
        lock(&self.turns).len()
    }

    fn next(&self, request: ChatRequest) -> Result<ChatResponse, ModelError> {
        let index = {
            let mut requests = lock(&self.requests);
            requests.push(request.clone());
            requests.len()
        };
        let check = lock(&self.checks).pop_front().flatten();
        let Some(turn) = lock(&self.turns).pop_front() else {
            return Err(ModelError::Script(format!(
                "no scripted turn left for request #{index}"
            )));
        };
        if let Some(check) = check {
            check(&request).map_err(|why| {
                ModelError::Script(format!(
                    "request #{index} is not what the script expected: {why}"
                ))
            })?;
        }
        let usage = Usage {
            input_tokens: request
                .messages
                .iter()
                .map(|m| m.content().len() as u64 / 4)
                .sum(),
            output_tokens: 0,
        };
        match turn {
            ScriptedTurn::Text(text) => Ok(ChatResponse {
                usage: Usage {
                    output_tokens: text.len() as u64 / 4,
                    ..usage
                },
                message: AssistantMessage::new(text, Vec::new()),
                finish_reason: FinishReason::Stop,
            }),
            ScriptedTurn::Calls { text, calls } => {
                let calls: Vec<ToolCall> = calls
                    .into_iter()
                    .enumerate()
                    .map(|(n, (name, args))| ToolCall::new(format!("call_{index}_{n}"), name, args))
                    .collect();
                Ok(ChatResponse {
                    message: AssistantMessage::new(text, calls),
                    usage,
                    finish_reason: FinishReason::ToolCalls,
                })
            }
            ScriptedTurn::Fail(error) => Err(error),
        }
    }
}

impl ChatModel for ScriptedModel {
    /// Not a provider: its spans say so.
    fn provider(&self) -> &str {
        "scripted"
    }

    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, ModelError>> {
        let result = self.next(request);
        Box::pin(std::future::ready(result))
    }

    fn chat_stream(&self, request: ChatRequest) -> BoxStream<'_, Result<ChatEvent, ModelError>> {
        let events: Vec<Result<ChatEvent, ModelError>> = match self.next(request) {
            Err(e) => vec![Err(e)],
            Ok(response) => {
                let mut events: Vec<_> = split_words(&response.message.content)
                    .map(|w| Ok(ChatEvent::TextDelta(w.to_string())))
                    .collect();
                events.extend(response.message.tool_calls.iter().map(|c| {
                    Ok(ChatEvent::ToolCallStarted {
                        id: c.id.clone(),
                        name: c.name.clone(),
                    })
                }));
                events.push(Ok(ChatEvent::Done(response)));
                events
            }
        };
        futures::stream::iter(events).boxed()
    }

    fn name(&self) -> &str {
        "scripted"
    }

    fn tool_features(&self) -> ToolFeatures {
        self.features
    }
}

/// Words with their trailing whitespace, so the deltas join back to the text.
fn split_words(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let word_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let end = rest[word_end..]
            .find(|c: char| !c.is_whitespace())
            .map_or(rest.len(), |i| word_end + i);
        let (word, tail) = rest.split_at(end);
        rest = tail;
        Some(word)
    })
}
