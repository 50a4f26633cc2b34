//! Streamed Messages: typed events (`message_start`, `content_block_start`,
//! `content_block_delta`, `content_block_stop`, `message_delta`, `message_stop`, `error`),
//! tool arguments as `partial_json` fragments per content block.

use std::collections::BTreeMap;
use std::sync::Arc;

use eventsource_stream::Event;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{WireBlock, WireUsage, call, check_caller, native_items, read_container, stop_reason};
use crate::dialect::NameMap;
use crate::model::http::{self, sse::StreamAssembler};
use crate::model::{AssistantMessage, ChatEvent, ChatResponse, ModelError, Usage};

/// One streaming event, by its `type` field (the SSE `event:` name repeats it).
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireEvent {
    MessageStart {
        message: WireStart,
    },
    ContentBlockStart {
        index: usize,
        content_block: Value,
    },
    ContentBlockDelta {
        index: usize,
        delta: WireDelta,
    },
    /// Carries only the block's `index`; extra fields are ignored.
    ContentBlockStop {},
    MessageDelta {
        delta: WireStop,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop {},
    Error {
        error: Value,
    },
    /// `ping` and event types added after this was written.
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct WireStart {
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    container: Option<Value>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireDelta {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    ThinkingDelta {
        thinking: String,
    },
    SignatureDelta {
        signature: String,
    },
    /// Deltas of kinds added after this was written.
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct WireStop {
    #[serde(default)]
    stop_reason: Option<String>,
    /// The container hosted code ran in, when it ran.
    #[serde(default)]
    container: Option<Value>,
}

/// A `tool_use` block being streamed.
struct PartialCall {
    id: String,
    name: String,
    /// The `input` of `content_block_start`, used when no `partial_json` follows.
    initial: Option<Value>,
    json: String,
}

/// A content block as it arrives: its start, and what the deltas added (input JSON, text,
/// thinking, signature), to keep the blocks a provider needs back ([`native_items`]).
struct RawBlock {
    start: Value,
    json: String,
    text: String,
    thinking: String,
    signature: String,
}

impl RawBlock {
    fn finish(mut self) -> Value {
        if !self.json.trim().is_empty() {
            self.start["input"] = serde_json::from_str(&self.json).unwrap_or_else(|_| json!({}));
        }
        let kind = self
            .start
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let mut append = |field: &str, more: String| {
            if !more.is_empty() {
                let before = self
                    .start
                    .get(field)
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                self.start[field] = json!(format!("{before}{more}"));
            }
        };
        match kind.as_str() {
            "text" => append("text", self.text),
            "thinking" => {
                append("thinking", self.thinking);
                append("signature", self.signature);
            }
            _ => {}
        }
        self.start
    }
}

/// Assembles a streamed message: tool calls by block index, text as it comes, usage from
/// `message_start` (input) and `message_delta` (output, cumulative).
pub(crate) struct StreamState {
    names: NameMap,
    text: String,
    calls: BTreeMap<usize, PartialCall>,
    raw: BTreeMap<usize, RawBlock>,
    stop_reason: Option<String>,
    /// The container hosted code ran in: from `message_start`, or a later `message_delta`.
    container: Option<Value>,
    usage: Usage,
    events: usize,
}

impl StreamState {
    pub(super) fn new(names: NameMap) -> Self {
        StreamState {
            names,
            text: String::new(),
            calls: BTreeMap::new(),
            raw: BTreeMap::new(),
            stop_reason: None,
            container: None,
            usage: Usage::default(),
            events: 0,
        }
    }

    fn update_usage(&mut self, usage: Option<WireUsage>) {
        if let Some(usage) = usage {
            if let Some(input) = usage.input_tokens {
                self.usage.input_tokens = input;
            }
            if let Some(output) = usage.output_tokens {
                self.usage.output_tokens = output;
            }
        }
    }

    fn done(&mut self, out: &mut Vec<ChatEvent>) {
        let calls = std::mem::take(&mut self.calls)
            .into_values()
            .map(|partial| {
                let arguments = if partial.json.trim().is_empty() {
                    partial.initial.unwrap_or_else(|| json!({})).to_string()
                } else {
                    partial.json
                };
                call(partial.id, &partial.name, arguments, &self.names)
            })
            .collect();
        let blocks = std::mem::take(&mut self.raw)
            .into_values()
            .map(RawBlock::finish)
            .collect();
        let mut message = AssistantMessage::new(std::mem::take(&mut self.text), calls);
        message.native = native_items(blocks, self.container.take());
        out.push(ChatEvent::Done(ChatResponse {
            message,
            usage: self.usage,
            finish_reason: stop_reason(self.stop_reason.as_deref()),
        }));
    }
}

impl StreamAssembler for StreamState {
    fn event(&mut self, event: &Event, out: &mut Vec<ChatEvent>) -> Result<bool, ModelError> {
        if event.data.trim().is_empty() {
            return Ok(false);
        }
        self.events += 1;
        let what = format!("stream event #{} (`{}`)", self.events, event.event);
        // An `error` event is the server's error, whatever shape its data has: Anthropic sends
        // `{"type": "error", "error": {..}}`, llama.cpp the error object itself.
        if event.event == "error" {
            let data: Value = http::parse_json(&what, event.data.as_bytes())?;
            return Err(stream_error(data.get("error").cloned().unwrap_or(data)));
        }
        match http::parse_json::<WireEvent>(&what, event.data.as_bytes())? {
            WireEvent::MessageStart { message } => {
                self.update_usage(message.usage);
                if let Some(container) = read_container(&what, message.container)? {
                    self.container = Some(container);
                }
            }
            WireEvent::ContentBlockStart {
                index,
                content_block,
            } => {
                let block: WireBlock = serde_json::from_value(content_block.clone())
                    .map_err(|e| ModelError::Malformed(format!("{what}: {e}")))?;
                if matches!(block, WireBlock::ToolUse { .. }) {
                    check_caller(&format!("{what}: block {index}"), &content_block)?;
                }
                self.raw.insert(
                    index,
                    RawBlock {
                        start: content_block,
                        json: String::new(),
                        text: String::new(),
                        thinking: String::new(),
                        signature: String::new(),
                    },
                );
                match block {
                    WireBlock::Text { text } if !text.is_empty() => {
                        self.text.push_str(&text);
                        out.push(ChatEvent::TextDelta(text));
                    }
                    WireBlock::ToolUse { id, name, input } => {
                        out.push(ChatEvent::ToolCallStarted {
                            id: Arc::from(id.as_str()),
                            name: self.names.original_name(&name).unwrap_or(&name).to_owned(),
                        });
                        self.calls.insert(
                            index,
                            PartialCall {
                                id,
                                name,
                                initial: input,
                                json: String::new(),
                            },
                        );
                    }
                    _ => {}
                }
            }
            WireEvent::ContentBlockDelta { index, delta } => match delta {
                WireDelta::TextDelta { text } => {
                    if !text.is_empty() {
                        if let Some(raw) = self.raw.get_mut(&index) {
                            raw.text.push_str(&text);
                        }
                        self.text.push_str(&text);
                        out.push(ChatEvent::TextDelta(text));
                    }
                }
                WireDelta::InputJsonDelta { partial_json } => {
                    // A tool_use block's input is the call's arguments; a server tool's
                    // (`server_tool_use`) is only kept to send back.
                    let Some(raw) = self.raw.get_mut(&index) else {
                        return Err(ModelError::Malformed(format!(
                            "{what}: `input_json_delta` for block {index}, which was never \
                             started"
                        )));
                    };
                    raw.json.push_str(&partial_json);
                    if let Some(call) = self.calls.get_mut(&index) {
                        call.json.push_str(&partial_json);
                    }
                }
                WireDelta::ThinkingDelta { thinking } => {
                    if let Some(raw) = self.raw.get_mut(&index) {
                        raw.thinking.push_str(&thinking);
                    }
                }
                WireDelta::SignatureDelta { signature } => {
                    if let Some(raw) = self.raw.get_mut(&index) {
                        raw.signature.push_str(&signature);
                    }
                }
                WireDelta::Other => {}
            },
            // Arguments are kept as text until the end: they are the call's `arguments`.
            WireEvent::ContentBlockStop {} => {}
            WireEvent::MessageDelta { delta, usage } => {
                if delta.stop_reason.is_some() {
                    self.stop_reason = delta.stop_reason;
                }
                if let Some(container) = read_container(&what, delta.container)? {
                    self.container = Some(container);
                }
                self.update_usage(usage);
            }
            WireEvent::MessageStop {} => {
                self.done(out);
                return Ok(true);
            }
            WireEvent::Error { error } => return Err(stream_error(error)),
            WireEvent::Other => {}
        }
        Ok(false)
    }

    fn end(&mut self, _: &mut Vec<ChatEvent>) -> Result<(), ModelError> {
        Err(ModelError::Transport(
            "the event stream ended before `message_stop`".into(),
        ))
    }
}

/// An `error` event, sent after a success status when the failure happens mid-stream. An
/// error with an HTTP status in `code` (llama.cpp's) is that status; otherwise its `type` is one
/// of Anthropic's error types, each documented with an HTTP status. Mapping back to the status
/// lets [`ModelError::is_retryable`] judge it like the same error sent up front.
fn stream_error(error: Value) -> ModelError {
    if let Some(error) = http::status_error(&error) {
        return error;
    }
    let kind = error
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let status = match kind {
        "rate_limit_error" => return ModelError::RateLimited { retry_after: None },
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "billing_error" => 402,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "timeout_error" => 504,
        "overloaded_error" => 529,
        "api_error" => 500,
        _ => {
            return ModelError::Malformed(format!(
                "the event stream carried an error: {}",
                http::clip(&error.to_string())
            ));
        }
    };
    ModelError::from_status(status, http::clip(&error.to_string()))
}
