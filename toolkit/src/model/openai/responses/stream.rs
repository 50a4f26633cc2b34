//! A streamed Responses API response: typed events (`response.output_item.added`,
//! `response.output_text.delta`, `response.function_call_arguments.delta` and `.done`,
//! `response.output_item.done`, then `response.completed`, `.incomplete` or `.failed`; an
//! `error` event for a failure mid-stream), each output item keyed by its `item_id` and its
//! `output_index`.
//!
//! The last event carries the whole response; when its `output` is empty (some servers send
//! none there), the items assembled from the events before it are the output. Live
//! `function_call_arguments.done` events have been seen without `name`: a call's name is
//! taken from its `output_item.added`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use eventsource_stream::Event;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{SEARCH_TOOL_NAME, WireResponse, ensure_call_id, finish_response, response_error};
use crate::dialect::NameMap;
use crate::model::http::{self, sse::StreamAssembler};
use crate::model::{ChatEvent, ModelError};

/// One streaming event, by its `type` field (the SSE `event:` name repeats it).
#[derive(Deserialize)]
#[serde(tag = "type")]
enum WireEvent {
    #[serde(rename = "response.output_item.added")]
    ItemAdded {
        #[serde(default)]
        output_index: Option<u64>,
        item: Value,
    },
    #[serde(rename = "response.output_item.done")]
    ItemDone {
        #[serde(default)]
        output_index: Option<u64>,
        item: Value,
    },
    /// Text, or a refusal, which is the model's answer too.
    #[serde(
        rename = "response.output_text.delta",
        alias = "response.refusal.delta"
    )]
    TextDelta {
        #[serde(default)]
        item_id: Option<String>,
        #[serde(default)]
        output_index: Option<u64>,
        #[serde(default)]
        delta: String,
    },
    #[serde(rename = "response.function_call_arguments.delta")]
    ArgumentsDelta {
        #[serde(default)]
        item_id: Option<String>,
        #[serde(default)]
        output_index: Option<u64>,
        #[serde(default)]
        delta: String,
    },
    #[serde(rename = "response.function_call_arguments.done")]
    ArgumentsDone {
        #[serde(default)]
        item_id: Option<String>,
        #[serde(default)]
        output_index: Option<u64>,
        #[serde(default)]
        arguments: Option<String>,
        #[serde(default)]
        name: Option<String>,
    },
    #[serde(rename = "response.completed")]
    Completed { response: WireResponse },
    #[serde(rename = "response.incomplete")]
    Incomplete { response: WireResponse },
    #[serde(rename = "response.failed")]
    Failed { response: WireResponse },
    /// Its fields are read from the event itself (see [`stream_error`]).
    #[serde(rename = "error")]
    Error {},
    /// `response.created`, reasoning and tool-search progress, and event types added after
    /// this was written.
    #[serde(other)]
    Other,
}

/// One output item being streamed.
#[derive(Default)]
struct Slot {
    /// The item as last sent whole: by `output_item.done`, else by `output_item.added`.
    item: Value,
    /// Text of a message item, from its deltas.
    text: String,
    /// Arguments of a call, from their deltas or their `.done` event.
    arguments: String,
    /// The name of a call, when its item did not carry one.
    name: Option<String>,
}

/// Assembles a streamed response: text deltas pass through, each call is announced when its
/// item is added, and the items are collected by output index for the final response.
pub(crate) struct ResponsesStream {
    names: NameMap,
    slots: BTreeMap<u64, Slot>,
    /// `item_id` → output index.
    by_item: HashMap<String, u64>,
    /// Ids of the calls announced with [`ChatEvent::ToolCallStarted`].
    started: HashSet<String>,
    events: usize,
}

impl ResponsesStream {
    pub(super) fn new(names: NameMap) -> Self {
        ResponsesStream {
            names,
            slots: BTreeMap::new(),
            by_item: HashMap::new(),
            started: HashSet::new(),
            events: 0,
        }
    }

    /// The output index of an event about `item_id` at `output_index`; an item never added
    /// gets a slot holding `placeholder`.
    fn index(
        &mut self,
        item_id: Option<&str>,
        output_index: Option<u64>,
        placeholder: impl FnOnce() -> Value,
    ) -> u64 {
        if let Some(&index) = item_id.and_then(|id| self.by_item.get(id)) {
            return index;
        }
        let index = output_index
            .or_else(|| self.slots.keys().next_back().map(|last| last + 1))
            .unwrap_or(0);
        if let Some(id) = item_id {
            self.by_item.insert(id.to_owned(), index);
        }
        self.slots.entry(index).or_insert_with(|| {
            let mut item = placeholder();
            if let (Some(id), Some(fields)) = (item_id, item.as_object_mut()) {
                fields.insert("id".into(), json!(id));
            }
            Slot {
                item,
                ..Slot::default()
            }
        });
        index
    }

    fn added(&mut self, output_index: Option<u64>, mut item: Value, out: &mut Vec<ChatEvent>) {
        let index = output_index
            .or_else(|| self.slots.keys().next_back().map(|last| last + 1))
            .unwrap_or(0);
        if let Some(id) = item.get("id").and_then(Value::as_str) {
            self.by_item.insert(id.to_owned(), index);
        }
        if is_call(&item) {
            // The id is decided now, so that the call is announced with the id it ends with.
            ensure_call_id(&mut item);
        }
        // Deltas that came before their item (not seen, but harmless) are kept.
        let slot = self.slots.entry(index).or_default();
        slot.item = item;
        self.announce(index, out);
    }

    fn item_done(&mut self, output_index: Option<u64>, mut item: Value, out: &mut Vec<ChatEvent>) {
        let id = item.get("id").and_then(Value::as_str).map(str::to_owned);
        let index = self.index(id.as_deref(), output_index, || Value::Null);
        if let Some(slot) = self.slots.get_mut(&index) {
            if is_call(&item) {
                keep_call_id(&slot.item, &mut item);
                if item.get("call_id").is_none() {
                    ensure_call_id(&mut item);
                }
            }
            slot.item = item;
        }
        self.announce(index, out);
    }

    /// Announce the call of slot `index` once its id and name are known.
    fn announce(&mut self, index: u64, out: &mut Vec<ChatEvent>) {
        let Some(slot) = self.slots.get(&index) else {
            return;
        };
        let item = &slot.item;
        let name = match item.get("type").and_then(Value::as_str) {
            Some("function_call") => {
                let Some(wire) = item
                    .get("name")
                    .and_then(Value::as_str)
                    .filter(|n| !n.is_empty())
                    .or(slot.name.as_deref())
                else {
                    return;
                };
                self.names.original_name(wire).unwrap_or(wire).to_owned()
            }
            Some("tool_search_call") if is_call(item) => SEARCH_TOOL_NAME.to_owned(),
            _ => return,
        };
        let Some(id) = item.get("call_id").and_then(Value::as_str) else {
            return;
        };
        if self.started.insert(id.to_owned()) {
            out.push(ChatEvent::ToolCallStarted {
                id: Arc::from(id),
                name,
            });
        }
    }

    /// The items of the response: those the last event carries when it carries any, else
    /// those assembled; completed with what only the events said (a call's id, name and
    /// arguments, a message's text).
    fn items(&mut self, output: Option<Vec<Value>>) -> Vec<Value> {
        let slots = std::mem::take(&mut self.slots);
        match output.filter(|items| !items.is_empty()) {
            Some(mut items) => {
                for (index, item) in items.iter_mut().enumerate() {
                    let slot = u64::try_from(index).ok().and_then(|i| slots.get(&i));
                    if let Some(slot) = slot {
                        complete(slot, item);
                    }
                }
                items
            }
            None => slots
                .into_values()
                .filter(|slot| !slot.item.is_null())
                .map(|slot| {
                    let mut item = slot.item.clone();
                    complete(&slot, &mut item);
                    item
                })
                .collect(),
        }
    }

    fn finish(
        &mut self,
        mut response: WireResponse,
        out: &mut Vec<ChatEvent>,
    ) -> Result<(), ModelError> {
        let items = self.items(response.output.take());
        let response = finish_response(response, items, &self.names)?;
        // Calls whose item was never added (or had no name until the end) are announced now,
        // so that every call is started before `Done`.
        for call in &response.message.tool_calls {
            if self.started.insert(call.id.to_string()) {
                out.push(ChatEvent::ToolCallStarted {
                    id: call.id.clone(),
                    name: call.name.clone(),
                });
            }
        }
        out.push(ChatEvent::Done(response));
        Ok(())
    }
}

impl StreamAssembler for ResponsesStream {
    fn event(&mut self, event: &Event, out: &mut Vec<ChatEvent>) -> Result<bool, ModelError> {
        let data = event.data.trim();
        // Some compatible servers end with Chat Completions' `[DONE]`; the terminal event
        // has been read by then.
        if data.is_empty() || data == "[DONE]" {
            return Ok(false);
        }
        self.events += 1;
        let what = format!("stream event #{}", self.events);
        let parsed: WireEvent = http::parse_json(&what, data.as_bytes())?;
        match parsed {
            WireEvent::ItemAdded { output_index, item } => self.added(output_index, item, out),
            WireEvent::ItemDone { output_index, item } => self.item_done(output_index, item, out),
            WireEvent::TextDelta {
                item_id,
                output_index,
                delta,
            } => {
                if !delta.is_empty() {
                    let index = self.index(
                        item_id.as_deref(),
                        output_index,
                        || json!({"type": "message", "role": "assistant", "content": []}),
                    );
                    if let Some(slot) = self.slots.get_mut(&index) {
                        slot.text.push_str(&delta);
                    }
                    out.push(ChatEvent::TextDelta(delta));
                }
            }
            WireEvent::ArgumentsDelta {
                item_id,
                output_index,
                delta,
            } => {
                let index = self.index(item_id.as_deref(), output_index, placeholder_call);
                if let Some(slot) = self.slots.get_mut(&index) {
                    slot.arguments.push_str(&delta);
                }
            }
            WireEvent::ArgumentsDone {
                item_id,
                output_index,
                arguments,
                name,
            } => {
                let index = self.index(item_id.as_deref(), output_index, placeholder_call);
                if let Some(slot) = self.slots.get_mut(&index) {
                    if let Some(arguments) = arguments {
                        slot.arguments = arguments;
                    }
                    if let Some(name) = name.filter(|n| !n.is_empty()) {
                        slot.name.get_or_insert(name);
                    }
                }
                self.announce(index, out);
            }
            WireEvent::Completed { response } => {
                self.finish(response, out)?;
                return Ok(true);
            }
            WireEvent::Incomplete { mut response } => {
                response.status.get_or_insert_with(|| "incomplete".into());
                self.finish(response, out)?;
                return Ok(true);
            }
            WireEvent::Failed { mut response } => {
                response.status = Some("failed".into());
                let error = match finish_response(response, Vec::new(), &self.names) {
                    Err(error) => error,
                    Ok(_) => ModelError::Malformed("the response failed".into()),
                };
                return Err(error);
            }
            WireEvent::Error {} => {
                let event: Value = http::parse_json(&what, data.as_bytes())?;
                return Err(stream_error(event));
            }
            WireEvent::Other => {}
        }
        Ok(false)
    }

    fn end(&mut self, _: &mut Vec<ChatEvent>) -> Result<(), ModelError> {
        Err(ModelError::Transport(
            "the event stream ended before `response.completed`".into(),
        ))
    }
}

/// The item of a call whose `output_item.added` never came.
fn placeholder_call() -> Value {
    json!({"type": "function_call"})
}

/// Whether an item is one of the turn's calls: a function call, or a client-side tool search.
fn is_call(item: &Value) -> bool {
    match item.get("type").and_then(Value::as_str) {
        Some("function_call") => true,
        Some("tool_search_call") => item.get("execution").and_then(Value::as_str) == Some("client"),
        _ => false,
    }
}

/// `item` with the call id `earlier` was given, when it carries none.
fn keep_call_id(earlier: &Value, item: &mut Value) {
    let has_id = item
        .get("call_id")
        .and_then(Value::as_str)
        .is_some_and(|id| !id.is_empty());
    if !has_id && let (Some(id), Some(fields)) = (earlier.get("call_id"), item.as_object_mut()) {
        fields.insert("call_id".into(), id.clone());
    }
}

/// `item` completed with what only the events of its slot said.
fn complete(slot: &Slot, item: &mut Value) {
    let kind = item
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if is_call(item) {
        keep_call_id(&slot.item, item);
    }
    let Some(fields) = item.as_object_mut() else {
        return;
    };
    match kind.as_str() {
        "function_call" => {
            let named = fields
                .get("name")
                .and_then(Value::as_str)
                .is_some_and(|n| !n.is_empty());
            if !named {
                let name = slot.name.clone().or_else(|| {
                    slot.item
                        .get("name")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                });
                if let Some(name) = name {
                    fields.insert("name".into(), json!(name));
                }
            }
            let empty = fields
                .get("arguments")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty);
            if empty && !slot.arguments.is_empty() {
                fields.insert("arguments".into(), json!(slot.arguments));
            }
        }
        "message" => {
            let empty = match fields.get("content") {
                None | Some(Value::Null) => true,
                Some(Value::Array(parts)) => parts.is_empty(),
                Some(Value::String(text)) => text.is_empty(),
                Some(_) => false,
            };
            if empty && !slot.text.is_empty() {
                fields.insert(
                    "content".into(),
                    json!([{"type": "output_text", "text": slot.text, "annotations": []}]),
                );
            }
        }
        _ => {}
    }
}

/// An `error` event: `{"type":"error","code","message","param"}`, or the same nested in an
/// `error` object on some servers.
fn stream_error(event: Value) -> ModelError {
    let error = match event.get("error") {
        Some(inner) if inner.is_object() => inner.clone(),
        _ => event,
    };
    response_error(&error)
}
