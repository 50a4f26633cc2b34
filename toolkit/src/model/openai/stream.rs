//! Streamed Chat Completions: `data:` chunks whose `delta` carries text and tool-call
//! fragments keyed by `index`, a usage chunk without choices, then `data: [DONE]`.

use std::collections::BTreeMap;
use std::sync::Arc;

use eventsource_stream::Event;
use serde::Deserialize;
use serde_json::Value;

use super::{WireUsage, finish_call, finish_reason};
use crate::dialect::NameMap;
use crate::model::http::{self, sse::StreamAssembler};
use crate::model::{AssistantMessage, ChatEvent, ChatResponse, ModelError, Usage};

#[derive(Deserialize)]
struct WireChunk {
    #[serde(default)]
    choices: Vec<WireChunkChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct WireChunkChoice {
    #[serde(default)]
    index: u32,
    #[serde(default)]
    delta: Option<WireDelta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireDelta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<WireCallDelta>>,
}

#[derive(Deserialize)]
struct WireCallDelta {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<WireFunctionDelta>,
}

#[derive(Deserialize)]
struct WireFunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

/// A tool call being streamed: `id` and `name` come first, `arguments` in fragments.
#[derive(Default)]
struct PartialCall {
    id: Option<String>,
    name: String,
    arguments: String,
    started: bool,
}

/// Assembles a streamed completion: text deltas pass through, tool calls are collected by
/// their `index`, usage comes in a last chunk without choices.
pub(crate) struct StreamState {
    names: NameMap,
    text: String,
    calls: BTreeMap<usize, PartialCall>,
    finish_reason: Option<String>,
    usage: Usage,
    chunks: usize,
}

impl StreamState {
    pub(super) fn new(names: NameMap) -> Self {
        StreamState {
            names,
            text: String::new(),
            calls: BTreeMap::new(),
            finish_reason: None,
            usage: Usage::default(),
            chunks: 0,
        }
    }

    fn call_delta(&mut self, position: usize, delta: WireCallDelta, out: &mut Vec<ChatEvent>) {
        let call = self
            .calls
            .entry(delta.index.unwrap_or(position))
            .or_default();
        // Some servers repeat `id` and `name` in every chunk of a call: the first wins.
        if let Some(id) = delta.id.filter(|id| !id.is_empty())
            && call.id.is_none()
        {
            call.id = Some(id);
        }
        if let Some(function) = delta.function {
            if let Some(name) = function.name.filter(|n| !n.is_empty())
                && call.name.is_empty()
            {
                call.name = name;
            }
            if let Some(fragment) = function.arguments {
                call.arguments.push_str(&fragment);
            }
        }
        if !call.started
            && let Some(id) = &call.id
            && !call.name.is_empty()
        {
            call.started = true;
            out.push(ChatEvent::ToolCallStarted {
                id: Arc::from(id.as_str()),
                name: self
                    .names
                    .original_name(&call.name)
                    .unwrap_or(&call.name)
                    .to_owned(),
            });
        }
    }

    fn done(&mut self, out: &mut Vec<ChatEvent>) {
        let mut calls = Vec::with_capacity(self.calls.len());
        for partial in std::mem::take(&mut self.calls).into_values() {
            let call = finish_call(partial.id, &partial.name, partial.arguments, &self.names);
            // A call whose id never came gets its generated id announced now, so that every
            // call is started before `Done`.
            if !partial.started {
                out.push(ChatEvent::ToolCallStarted {
                    id: call.id.clone(),
                    name: call.name.clone(),
                });
            }
            calls.push(call);
        }
        let finish_reason = finish_reason(self.finish_reason.as_deref(), !calls.is_empty());
        out.push(ChatEvent::Done(ChatResponse {
            message: AssistantMessage::new(std::mem::take(&mut self.text), calls),
            usage: self.usage,
            finish_reason,
        }));
    }
}

impl StreamAssembler for StreamState {
    fn event(&mut self, event: &Event, out: &mut Vec<ChatEvent>) -> Result<bool, ModelError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.done(out);
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        self.chunks += 1;
        let what = format!("stream chunk #{}", self.chunks);
        let chunk: WireChunk = http::parse_json(&what, data.as_bytes())?;
        if let Some(error) = chunk.error {
            return Err(stream_error(error));
        }
        if let Some(usage) = chunk.usage {
            self.usage = usage.into();
        }
        // Only the first choice is read: requests never ask for `n > 1`.
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            if let Some(delta) = choice.delta {
                if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                    self.text.push_str(&text);
                    out.push(ChatEvent::TextDelta(text));
                }
                for (position, call) in delta.tool_calls.unwrap_or_default().into_iter().enumerate()
                {
                    self.call_delta(position, call, out);
                }
            }
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                self.finish_reason = Some(reason);
            }
        }
        Ok(false)
    }

    fn end(&mut self, out: &mut Vec<ChatEvent>) -> Result<(), ModelError> {
        // Some servers close the stream without `[DONE]`; a `finish_reason` already seen
        // means the answer is whole. Without one, the connection was cut mid-answer.
        if self.finish_reason.is_some() {
            self.done(out);
            Ok(())
        } else {
            Err(ModelError::Transport(
                "the event stream ended before the response was complete".into(),
            ))
        }
    }
}

/// An error object sent inside the stream (OpenRouter and vLLM report upstream failures
/// this way, after a success status): an HTTP error when it carries a status code.
fn stream_error(error: Value) -> ModelError {
    http::status_error(&error).unwrap_or_else(|| {
        ModelError::Malformed(format!(
            "the event stream carried an error: {}",
            http::clip(&error.to_string())
        ))
    })
}
