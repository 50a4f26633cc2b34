//! Constrained tool calls: for local servers that can hold a model's output to a JSON schema
//! (llama.cpp's server, vLLM and Ollama take OpenAI's `response_format` with a `json_schema`),
//! a request with tools is sent with the tools described in the prompt, as when the server
//! refused the model's output ([`recovery`](super::recovery)), and a schema built from the
//! offered tools: the reply can only be `{"tool_calls": [...]}` naming offered tools with
//! arguments their schemas accept, or `{"answer": "..."}` — only the answer when `tool_choice`
//! is `none`, so that a model which writes calls whatever it is told (small models do, when an
//! agent asks them for their answer) cannot. The calls are read from that JSON
//! through the usual reading of calls written as text (so every rule of the toolkit still
//! applies); an answer becomes the reply's text.
//!
//! Only what the model sees goes into the schema: the definitions' `parameters`, which never
//! hold hidden parameters. `tool_choice` shapes it: `required` leaves out the answer, a named
//! tool leaves only that tool, parallel calls off allows one call. A request is not streamed
//! while constrained (its reply is one JSON value): it is asked whole and its events follow.
//! A reply cut at the token limit inside its list of calls keeps the calls it finished (a
//! small model can write calls with no end).

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::recovery::{self, Ask};
use crate::model::text_calls::as_text_request;
use crate::model::{ChatRequest, ChatResponse, FinishReason, Message, ModelError, ToolChoice};

/// Whether `request` is sent constrained: it has tools (with `tool_choice: none`, held to an
/// answer).
pub(crate) fn applies(request: &ChatRequest) -> bool {
    !request.tools.is_empty()
}

/// `request` asked constrained (see the module docs).
pub(crate) async fn chat(request: ChatRequest, ask: Ask<'_>) -> Result<ChatResponse, ModelError> {
    let constrained = Arc::new(constrain(&request));
    let (mut response, names) = ask(constrained).await?;
    keep_complete_calls(&mut response);
    answer_as_text(&mut response);
    recovery::read_calls(true, &request, &names, &mut response);
    Ok(response)
}

/// The text request with the reply's schema, and a line saying what to write.
fn constrain(request: &ChatRequest) -> ChatRequest {
    let mut text = as_text_request(request);
    let line = match request.tool_choice {
        ToolChoice::Auto => {
            "Reply with one JSON object: {\"tool_calls\": [{\"name\": ..., \"arguments\": {...}}]} \
             to call tools, or {\"answer\": \"...\"} to answer the user."
        }
        ToolChoice::None => "Reply with one JSON object: {\"answer\": \"...\"} to answer the user.",
        ToolChoice::Required | ToolChoice::Specific(_) => {
            "Reply with one JSON object: {\"tool_calls\": [{\"name\": ..., \"arguments\": {...}}]}."
        }
    };
    match text.messages.first_mut() {
        Some(Message::System { content }) => {
            content.push_str("\n\n");
            content.push_str(line);
        }
        _ => text.messages.insert(0, Message::system(line)),
    }
    text.output_schema = Some(reply_schema(request));
    text
}

/// The schema of a reply to `request`: calls of its tools, or an answer.
pub(crate) fn reply_schema(request: &ChatRequest) -> Value {
    let mut defs = Map::new();
    let tools: Vec<Value> = request
        .tools
        .iter()
        .filter(|tool| match &request.tool_choice {
            ToolChoice::Specific(name) => tool.name() == name,
            ToolChoice::None => false,
            ToolChoice::Auto | ToolChoice::Required => true,
        })
        .enumerate()
        .map(|(i, tool)| {
            let mut arguments = tool.parameters().clone();
            hoist_definitions(&mut arguments, &format!("t{i}_"), &mut defs);
            json!({
                "type": "object",
                "properties": {"name": {"const": tool.name()}, "arguments": arguments},
                "required": ["name", "arguments"],
                "additionalProperties": false,
            })
        })
        .collect();
    let mut calls = json!({"type": "array", "items": {"anyOf": tools}, "minItems": 1});
    if !request.parallel_tool_calls {
        calls["maxItems"] = json!(1);
    }
    let mut branches = Vec::new();
    if request.tool_choice != ToolChoice::None {
        branches.push(json!({
            "type": "object",
            "properties": {"tool_calls": calls},
            "required": ["tool_calls"],
            "additionalProperties": false,
        }));
    }
    if matches!(request.tool_choice, ToolChoice::Auto | ToolChoice::None) {
        branches.push(json!({
            "type": "object",
            "properties": {"answer": {"type": "string"}},
            "required": ["answer"],
            "additionalProperties": false,
        }));
    }
    let mut schema = json!({"anyOf": branches});
    if !defs.is_empty() {
        schema["$defs"] = Value::Object(defs);
    }
    schema
}

/// Move a tool schema's own definitions (`$defs`, `definitions`) into the reply schema's
/// `$defs`, named with `prefix`, and point its references there: a reference is read from the
/// root of the schema it is in, which is no longer the tool's.
fn hoist_definitions(schema: &mut Value, prefix: &str, defs: &mut Map<String, Value>) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(own)) = object.remove(key) {
            for (name, mut def) in own {
                rename_references(&mut def, prefix);
                defs.insert(format!("{prefix}{name}"), def);
            }
        }
    }
    rename_references(schema, prefix);
}

/// Point every local reference in `schema` at the hoisted definitions.
fn rename_references(schema: &mut Value, prefix: &str) {
    match schema {
        Value::Object(object) => {
            for (key, value) in object.iter_mut() {
                match (key.as_str(), value) {
                    ("$ref", Value::String(target)) => {
                        let name = target
                            .strip_prefix("#/$defs/")
                            .or_else(|| target.strip_prefix("#/definitions/"));
                        if let Some(name) = name {
                            *target = format!("#/$defs/{prefix}{name}");
                        }
                    }
                    (_, value) => rename_references(value, prefix),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rename_references(v, prefix)),
        _ => {}
    }
}

/// A reply cut at the token limit in the middle of its list of calls (a small model can write
/// calls with no end: the same tool for one city after another) keeps the calls it finished:
/// held to the schema, everything before the cut is what the model meant, and only the call
/// being written is lost. That call never got an id, so nothing goes unanswered; a warning is
/// traced. A reply cut anywhere else, or with no finished call, stays as it was (and reads as
/// an unreadable call, an error the model sees).
fn keep_complete_calls(response: &mut ChatResponse) {
    let message = &mut response.message;
    if response.finish_reason != FinishReason::Length || !message.tool_calls.is_empty() {
        return;
    }
    let text = message.content.trim();
    if serde_json::from_str::<Value>(text).is_ok() {
        return;
    }
    let calls = complete_calls(text);
    if calls.is_empty() {
        return;
    }
    tracing::warn!(
        target: "agent_toolkit::model",
        kept = calls.len(),
        "a constrained reply was cut at the token limit in its list of calls; the finished \
         calls are read, the one being written is dropped"
    );
    message.content = json!({ "tool_calls": calls }).to_string();
}

/// The finished items of the `tool_calls` list at the start of `text`, a reply cut short.
fn complete_calls(text: &str) -> Vec<Value> {
    let Some(rest) = text.strip_prefix('{') else {
        return Vec::new();
    };
    let rest = rest.trim_start();
    let Some(rest) = rest.strip_prefix("\"tool_calls\"") else {
        return Vec::new();
    };
    let Some(rest) = rest.trim_start().strip_prefix(':') else {
        return Vec::new();
    };
    let Some(mut rest) = rest.trim_start().strip_prefix('[') else {
        return Vec::new();
    };
    let mut calls = Vec::new();
    loop {
        rest = rest.trim_start();
        if !rest.starts_with('{') {
            return calls;
        }
        let mut items = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        match items.next() {
            Some(Ok(call)) => {
                let end = items.byte_offset();
                calls.push(call);
                rest = rest[end..].trim_start();
                match rest.strip_prefix(',') {
                    Some(after) => rest = after,
                    None => return calls,
                }
            }
            _ => return calls,
        }
    }
}

/// A reply `{"answer": "..."}` becomes its text.
fn answer_as_text(response: &mut ChatResponse) {
    let message = &mut response.message;
    if !message.tool_calls.is_empty() {
        return;
    }
    let answer = match serde_json::from_str::<Value>(message.content.trim()) {
        Ok(Value::Object(reply)) if reply.len() == 1 => match reply.get("answer") {
            Some(Value::String(answer)) => answer.clone(),
            _ => return,
        },
        _ => return,
    };
    message.content = answer;
}

#[cfg(all(test, feature = "validate"))]
mod schema_tests {
    use serde_json::json;

    use super::reply_schema;
    use crate::model::{ChatRequest, Message, ToolChoice};
    use crate::tool::ToolDefinition;

    fn tools() -> Vec<ToolDefinition> {
        vec![
            ToolDefinition::new(
                "get_weather",
                "Weather.",
                json!({"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"]}),
            ),
            ToolDefinition::new(
                "order",
                "Order.",
                json!({"type": "object", "properties": {"item": {"$ref": "#/$defs/Item"}},
                       "$defs": {"Item": {"type": "object", "properties": {
                           "size": {"$ref": "#/$defs/Size"}}},
                                 "Size": {"enum": ["s", "m"]}}}),
            ),
        ]
    }

    fn request() -> ChatRequest {
        ChatRequest::new(vec![Message::user("hi")]).with_tools(tools())
    }

    fn valid(schema: &serde_json::Value, reply: serde_json::Value) -> bool {
        jsonschema::validator_for(schema)
            .expect("the reply schema compiles")
            .is_valid(&reply)
    }

    #[test]
    fn the_reply_schema_admits_offered_calls_with_valid_arguments_or_an_answer() {
        let schema = reply_schema(&request().with_parallel_tool_calls(true));
        let call = |name: &str, arguments| json!({"name": name, "arguments": arguments});
        let weather = call("get_weather", json!({"city": "Oslo"}));
        let order = call("order", json!({"item": {"size": "m"}}));
        assert!(valid(
            &schema,
            json!({"tool_calls": [weather.clone(), order]})
        ));
        assert!(valid(&schema, json!({"answer": "Hello."})));
        // Not offered, arguments the schema refuses, a hoisted definition refusing, no call.
        assert!(!valid(
            &schema,
            json!({"tool_calls": [call("delete", json!({}))]})
        ));
        assert!(!valid(
            &schema,
            json!({"tool_calls": [call("get_weather", json!({}))]})
        ));
        let bad_size = call("order", json!({"item": {"size": "xl"}}));
        assert!(!valid(&schema, json!({"tool_calls": [bad_size]})));
        assert!(!valid(&schema, json!({"tool_calls": []})));
        assert!(!valid(
            &schema,
            json!({"answer": "x", "tool_calls": [weather]})
        ));
    }

    #[test]
    fn tool_choice_and_parallel_calls_shape_the_schema() {
        let weather = json!({"name": "get_weather", "arguments": {"city": "Oslo"}});
        let serial = reply_schema(&request());
        assert!(!valid(
            &serial,
            json!({"tool_calls": [weather.clone(), weather.clone()]})
        ));
        let required = reply_schema(&request().with_tool_choice(ToolChoice::Required));
        assert!(!valid(&required, json!({"answer": "no"})));
        assert!(valid(&required, json!({"tool_calls": [weather.clone()]})));
        let named = reply_schema(&request().with_tool_choice(ToolChoice::Specific("order".into())));
        assert!(!valid(&named, json!({"tool_calls": [weather.clone()]})));
        // `none` (an agent asking a looping model for its answer): an answer and nothing else.
        let none = reply_schema(&request().with_tool_choice(ToolChoice::None));
        assert!(valid(&none, json!({"answer": "It is 21 C."})));
        assert!(!valid(&none, json!({"tool_calls": [weather]})));
        assert!(none.get("$defs").is_none(), "{none}");
    }
}

#[cfg(test)]
mod tests {
    use super::{answer_as_text, keep_complete_calls};
    use crate::model::{AssistantMessage, ChatResponse, FinishReason};

    #[test]
    fn a_reply_cut_in_its_calls_keeps_the_finished_ones() {
        let cut = |text: &str, reason: FinishReason| {
            let mut response = ChatResponse::new(AssistantMessage::new(text, Vec::new()));
            response.finish_reason = reason;
            keep_complete_calls(&mut response);
            response.message.content
        };
        // What the 1.5B wrote: a call, then the same tool for one city after another.
        let runaway = "{\n  \"tool_calls\": [\n    {\n      \"name\": \"equip\",\n      \"arguments\": {\"groups\": [\"finance\"]}\n    },\n    {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lo, {nd}\"}},\n    {\n      \"name\": \"get_weather\",\n      \"arguments\": {\n       ";
        assert_eq!(
            cut(runaway, FinishReason::Length),
            r#"{"tool_calls":[{"name":"equip","arguments":{"groups":["finance"]}},{"name":"get_weather","arguments":{"city":"Lo, {nd}"}}]}"#
        );
        // Cut after a finished call and its comma, or right after it.
        let two = r#"{"tool_calls": [{"name": "a", "arguments": {}},"#;
        assert_eq!(
            cut(two, FinishReason::Length),
            r#"{"tool_calls":[{"name":"a","arguments":{}}]}"#
        );
        // Not cut by the limit, nothing finished, or a whole reply: as it was.
        assert_eq!(cut(runaway, FinishReason::Stop), runaway);
        let none = r#"{"tool_calls": [{"name": "a", "argu"#;
        assert_eq!(cut(none, FinishReason::Length), none);
        let answer = r#"{"answer": "It is 21"#;
        assert_eq!(cut(answer, FinishReason::Length), answer);
        let whole = r#"{"tool_calls": [{"name": "a", "arguments": {}}]}"#;
        assert_eq!(cut(whole, FinishReason::Length), whole);
    }

    #[test]
    fn an_answer_becomes_the_text_and_anything_else_stays() {
        let reply = |text: &str| ChatResponse::new(AssistantMessage::new(text, Vec::new()));
        let mut answer = reply(r#" {"answer": "It is 21 C."} "#);
        answer_as_text(&mut answer);
        assert_eq!(answer.message.content, "It is 21 C.");
        for text in [r#"{"answer": 3}"#, r#"{"answer": "a", "b": 1}"#, "plain"] {
            let mut other = reply(text);
            answer_as_text(&mut other);
            assert_eq!(other.message.content, text);
        }
    }
}
