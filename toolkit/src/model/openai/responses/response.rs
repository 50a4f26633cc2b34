//! Reading a response: its output items as the text and calls of a [`ChatResponse`], its
//! finish reason, and the errors it reports.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{PROVIDER, SEARCH_TOOL_NAME};
use crate::dialect::NameMap;
use crate::model::http;
use crate::model::openai::finish_call;
use crate::model::{AssistantMessage, ChatResponse, FinishReason, ModelError, NativeItems, Usage};
use crate::tool::ToolCall;

/// A Responses API response body (or the `response` of a stream's last event).
#[derive(Deserialize)]
pub(super) struct WireResponse {
    #[serde(default)]
    pub(super) status: Option<String>,
    #[serde(default)]
    pub(super) output: Option<Vec<Value>>,
    #[serde(default)]
    pub(super) usage: Option<WireUsage>,
    #[serde(default)]
    pub(super) error: Option<Value>,
    #[serde(default)]
    pub(super) incomplete_details: Option<Value>,
}

#[derive(Deserialize, Default, Clone, Copy)]
pub(super) struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
}

/// A [`ChatResponse`] from a Responses API response body.
pub(super) fn parse_response(body: &[u8], names: &NameMap) -> Result<ChatResponse, ModelError> {
    let mut response: WireResponse = http::parse_json("the response", body)?;
    let Some(items) = response.output.take() else {
        return Err(ModelError::Malformed(format!(
            "the response has no `output`: {}",
            http::clip(&String::from_utf8_lossy(body))
        )));
    };
    finish_response(response, items, names)
}

/// The [`ChatResponse`] of a finished response whose output is `items`, or the error it
/// reports.
pub(super) fn finish_response(
    response: WireResponse,
    mut items: Vec<Value>,
    names: &NameMap,
) -> Result<ChatResponse, ModelError> {
    if let Some(error) = response.error.as_ref().filter(|e| !e.is_null()) {
        return Err(response_error(error));
    }
    if response.status.as_deref() == Some("failed") {
        return Err(ModelError::Malformed(
            "the response failed without saying why".into(),
        ));
    }
    let (text, calls) = read_items(&mut items, names)?;
    let finish_reason = finish_reason(
        response.status.as_deref(),
        response.incomplete_details.as_ref(),
        !calls.is_empty(),
    );
    let mut message = AssistantMessage::new(text, calls);
    if !items.is_empty() {
        message.native = Some(Box::new(NativeItems::new(PROVIDER, items)));
    }
    let usage = response.usage.unwrap_or_default();
    Ok(ChatResponse {
        message,
        usage: Usage::new(
            usage.input_tokens.unwrap_or_default(),
            usage.output_tokens.unwrap_or_default(),
        ),
        finish_reason,
    })
}

/// The text and the calls of output items. A call item without a `call_id` (some compatible
/// servers send none) is given one, written into the item as well so that the item sent back
/// and the call's result agree.
fn read_items(items: &mut [Value], names: &NameMap) -> Result<(String, Vec<ToolCall>), ModelError> {
    let mut text = String::new();
    let mut calls = Vec::new();
    for (index, item) in items.iter_mut().enumerate() {
        let kind = match item.get("type").and_then(Value::as_str) {
            Some(kind) => kind.to_owned(),
            // A compatible server that leaves the type out of a message.
            None if item.get("content").is_some() => "message".to_owned(),
            None => continue,
        };
        match kind.as_str() {
            "message" => text.push_str(&message_text(item.get("content"))),
            "function_call" => {
                let Some(name) = item.get("name").and_then(Value::as_str) else {
                    return Err(ModelError::Malformed(format!(
                        "output item #{index} is a function call without a name: {}",
                        http::clip(&item.to_string())
                    )));
                };
                let name = name.to_owned();
                let arguments = match item.get("arguments") {
                    None | Some(Value::Null) => String::new(),
                    Some(Value::String(text)) => text.clone(),
                    // Some servers send the object itself.
                    Some(object) => object.to_string(),
                };
                check_caller(index, item)?;
                let id = ensure_call_id(item);
                calls.push(finish_call(Some(id), &name, arguments, names));
            }
            // A program the provider runs ([`ChatRequest::hosted_code`]): its calls of our
            // tools name it by its `call_id`, and it goes back as it came.
            "program" => {
                let has_id = item
                    .get("call_id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| !id.is_empty());
                if !has_id {
                    return Err(ModelError::Malformed(format!(
                        "output item #{index} is a program without a `call_id`: {}",
                        http::clip(&item.to_string())
                    )));
                }
            }
            "tool_search_call"
                if item.get("execution").and_then(Value::as_str) == Some("client") =>
            {
                let arguments = match item.get("arguments") {
                    None | Some(Value::Null) => "{}".to_owned(),
                    Some(Value::String(text)) => text.clone(),
                    Some(object) => object.to_string(),
                };
                let id = ensure_call_id(item);
                calls.push(ToolCall::new(id, SEARCH_TOOL_NAME, arguments));
            }
            // Reasoning, hosted tool search, a program's output, and what comes later: kept for
            // the replay only.
            _ => {}
        }
    }
    Ok((text, calls))
}

/// Checks the `caller` of a function call item: absent, `{"type": "direct"}`, or
/// `{"type": "program", "caller_id": "<the program's call_id>"}` for a call made by a hosted
/// program ([`ChatRequest::hosted_code`]). The call itself is an ordinary [`ToolCall`]; its
/// caller stays in the item, which goes back unchanged.
fn check_caller(index: usize, item: &Value) -> Result<(), ModelError> {
    let caller = match item.get("caller") {
        None | Some(Value::Null) => return Ok(()),
        Some(caller) => caller,
    };
    let valid = match caller.get("type").and_then(Value::as_str) {
        Some("direct") => true,
        Some("program") => caller
            .get("caller_id")
            .and_then(Value::as_str)
            .is_some_and(|id| !id.is_empty()),
        _ => false,
    };
    if valid {
        return Ok(());
    }
    Err(ModelError::Malformed(format!(
        "output item #{index} is a function call with a caller that is neither `direct` nor a \
         `program` with a `caller_id`: {}",
        http::clip(&caller.to_string())
    )))
}

/// The item's `call_id`, else its `id`, else a new one; written into the item when it had
/// none.
pub(super) fn ensure_call_id(item: &mut Value) -> String {
    if let Some(id) = item
        .get("call_id")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
    {
        return id.to_owned();
    }
    let id = item
        .get("id")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .map_or_else(|| format!("call_{:016x}", fastrand::u64(..)), str::to_owned);
    if let Some(fields) = item.as_object_mut() {
        fields.insert("call_id".into(), json!(id));
    }
    id
}

/// The text of a message item's content: its `output_text` parts (and refusals, which are the
/// model's answer too), or the content itself when a server sends a string.
fn message_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| match part.get("type").and_then(Value::as_str) {
                Some("refusal") => part.get("refusal").and_then(Value::as_str),
                Some("output_text" | "text") | None => part.get("text").and_then(Value::as_str),
                Some(_) => None,
            })
            .collect(),
        _ => String::new(),
    }
}

fn finish_reason(
    status: Option<&str>,
    incomplete: Option<&Value>,
    has_calls: bool,
) -> FinishReason {
    match status {
        Some("incomplete") => {
            let reason = incomplete
                .and_then(|d| d.get("reason"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            match reason {
                "max_output_tokens" => FinishReason::Length,
                "content_filter" => FinishReason::ContentFilter,
                "" => FinishReason::Other("incomplete".into()),
                other => FinishReason::Other(other.to_owned()),
            }
        }
        // Compatible servers may leave the status out.
        Some("completed" | "") | None => {
            if has_calls {
                FinishReason::ToolCalls
            } else {
                FinishReason::Stop
            }
        }
        Some(other) => FinishReason::Other(other.to_owned()),
    }
}

/// The error a response or a stream reports (`error` of a failed response, or an `error`
/// event): an HTTP error of the status its `code` stands for, so that
/// [`ModelError::is_retryable`] judges it like the same error sent up front, and a server's
/// refusal of the model's own output is [`ModelError::OutputRejected`]. A numeric `code`
/// (llama.cpp's) is that status.
pub(super) fn response_error(error: &Value) -> ModelError {
    let body = http::clip(&error.to_string());
    let code = error.get("code");
    if let Some(status) = code
        .and_then(Value::as_u64)
        .and_then(|code| u16::try_from(code).ok())
        .filter(|code| (400..=599).contains(code))
    {
        return ModelError::from_status(status, body);
    }
    let code = code
        .and_then(Value::as_str)
        .or_else(|| error.get("type").and_then(Value::as_str))
        .unwrap_or_default();
    let status = match code {
        "rate_limit_exceeded" | "rate_limit_error" => {
            return ModelError::RateLimited { retry_after: None };
        }
        "server_error" | "api_error" => 500,
        "vector_store_timeout" | "timeout" => 504,
        "invalid_prompt"
        | "invalid_request_error"
        | "data_residency_mismatch"
        | "bio_policy"
        | "misalignment_policy_violation"
        | "invalid_image"
        | "invalid_image_format"
        | "invalid_base64_image"
        | "invalid_image_url"
        | "image_too_large"
        | "image_too_small"
        | "image_parse_error"
        | "image_content_policy_violation"
        | "invalid_image_mode"
        | "image_file_too_large"
        | "unsupported_image_media_type"
        | "empty_image_file"
        | "failed_to_download_image"
        | "image_file_not_found" => 400,
        _ => {
            return ModelError::Malformed(format!("the response reports an error: {body}"));
        }
    };
    ModelError::from_status(status, body)
}
