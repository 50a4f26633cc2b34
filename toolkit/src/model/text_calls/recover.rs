//! Tool calls that a model with native tool calling wrote as text: the providers read them out
//! of a reply that has no calls through the API, and the agent out of a reply to a request that
//! allowed no calls, so that such a reply is never taken for the answer.
//!
//! Small local models behind llama.cpp, Ollama and other OpenAI- or Anthropic-compatible
//! servers often write `{"name": "get_weather", "arguments": {"city": "Paris"}}` (bare, in a
//! fenced block, or in Hermes `<tool_call>` tags) into the text of the reply when their chat
//! template gives the server no tool-call syntax to recognise. Every form the parser reads is
//! accepted here (see [`TextCallFormat`](super::TextCallFormat)), and nothing is refused:
//! a call of a tool that was not offered, or without a name, is kept, so the agent answers
//! it with an error the model reads rather than taking the reply for prose.

use super::parse::{Strictness, parse_reply};
use super::syntax::TextCallFormat;
use crate::model::message::call_ids;
use crate::model::{ChatRequest, ChatResponse, FinishReason, ToolChoice};
use crate::tool::ToolCall;

/// Make the calls written as text in `response` its calls, when it has none through the API
/// and `request` let the model call tools. `original_name` maps a name as the model saw it on
/// the wire back to the tool's name. Returns how many calls were read.
///
/// The message keeps its text as the model wrote it and is marked
/// [`calls_in_text`](crate::model::AssistantMessage::calls_in_text), so that providers send it back the
/// same way. A block that looks like a call but cannot be read becomes one call without a name,
/// which the agent refuses with a result saying how to write a call; so does an object that
/// starts `{"name": "<an offered tool>"` but cannot be read even leniently (next to the calls of
/// the reply that could be read).
pub(crate) fn recover(
    response: &mut ChatResponse,
    request: &ChatRequest,
    original_name: &dyn Fn(&str) -> String,
) -> usize {
    let message = &mut response.message;
    if !message.tool_calls.is_empty()
        || request.tools.is_empty()
        || request.tool_choice == ToolChoice::None
        || message.content.trim().is_empty()
    {
        return 0;
    }
    let mut taken = call_ids(&request.messages);
    let mut fresh = || format!("call_{:016x}", fastrand::u64(..));
    let calls = match parse_reply(
        &message.content,
        TextCallFormat::Json,
        &request.tools,
        Strictness::Keep,
        &mut taken,
        &mut fresh,
    ) {
        Ok(parsed) => parsed.calls,
        Err(error) => {
            tracing::warn!(%error, "the model wrote a tool call as text that cannot be read");
            vec![ToolCall::new(fresh(), "", "{}")]
        }
    };
    if calls.is_empty() {
        return 0;
    }
    for call in &calls {
        tracing::info!(
            tool = %call.name,
            call_id = %call.id,
            "recovered a tool call the model wrote as text"
        );
    }
    let count = calls.len();
    message.tool_calls = calls
        .into_iter()
        .map(|call| ToolCall {
            name: original_name(&call.name),
            ..call
        })
        .collect();
    message.calls_in_text = true;
    response.finish_reason = FinishReason::ToolCalls;
    count
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::model::{AssistantMessage, Message};
    use crate::tool::ToolDefinition;

    fn request(choice: ToolChoice) -> ChatRequest {
        let weather = ToolDefinition::new("get_weather", "Weather.", json!({"type": "object"}));
        ChatRequest::new(vec![Message::user("Weather in Paris?")])
            .with_tools(vec![weather])
            .with_tool_choice(choice)
    }

    fn reply(text: &str) -> ChatResponse {
        ChatResponse::new(AssistantMessage::new(text, Vec::new()))
    }

    fn same(name: &str) -> String {
        name.to_owned()
    }

    #[test]
    fn a_call_written_as_text_becomes_the_responses_call() {
        let text = r#"{"name": "get_weather", "arguments": {"city": "Paris"}}"#;
        let mut response = reply(text);
        assert_eq!(recover(&mut response, &request(ToolChoice::Auto), &same), 1);
        let message = &response.message;
        assert!(message.calls_in_text);
        assert_eq!(
            message.content, text,
            "the text stays as the model wrote it"
        );
        assert_eq!(message.tool_calls[0].name, "get_weather");
        assert_eq!(message.tool_calls[0].arguments, r#"{"city":"Paris"}"#);
        assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    }

    #[test]
    fn prose_and_refusals_to_call_stay_answers() {
        for text in [
            "It is sunny in Paris.",
            "",
            r#"{"name": "Paris", "population": 2}"#,
        ] {
            let mut response = reply(text);
            assert_eq!(
                recover(&mut response, &request(ToolChoice::Auto), &same),
                0,
                "{text}"
            );
            assert!(!response.message.calls_in_text);
        }
        // With tool choice `none` the model was told not to call: its text is its answer.
        let text = r#"{"name": "get_weather", "arguments": {"city": "Paris"}}"#;
        let mut response = reply(text);
        assert_eq!(recover(&mut response, &request(ToolChoice::None), &same), 0);
        // Native calls are never second-guessed.
        let call = ToolCall::new("c1", "get_weather", "{}");
        let mut response = ChatResponse::new(AssistantMessage::new(text, vec![call]));
        assert_eq!(recover(&mut response, &request(ToolChoice::Auto), &same), 0);
        assert_eq!(response.message.tool_calls.len(), 1);
    }

    #[test]
    fn calls_that_cannot_run_are_kept_for_the_agent_to_refuse() {
        // A tool that is not offered: a call all the same, which the agent answers with an error.
        let mut response = reply(r#"<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>"#);
        assert_eq!(recover(&mut response, &request(ToolChoice::Auto), &same), 1);
        assert_eq!(response.message.tool_calls[0].name, "rm_rf");
        // A block that cannot be read: one call without a name.
        let mut response = reply(
            r#"<tool_call name="get_weather"><parameters>{"city": </parameters></tool_call>"#,
        );
        assert_eq!(recover(&mut response, &request(ToolChoice::Auto), &same), 1);
        assert_eq!(response.message.tool_calls[0].name, "");
        // A bare call of an offered tool cut off mid-way: not the answer, but a call without a
        // name after the calls that could be read.
        let mut response = reply(
            "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n\
             {\"name\": \"get_weather\", \"arguments\": {\"city\":",
        );
        assert_eq!(recover(&mut response, &request(ToolChoice::Auto), &same), 2);
        let names: Vec<&str> = response
            .message
            .tool_calls
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(names, ["get_weather", ""]);
    }

    #[test]
    fn calls_written_with_slips_are_read() {
        let mut response =
            reply("Checking.\n{'name': 'get_weather', 'arguments': {'city': 'Paris',}");
        assert_eq!(recover(&mut response, &request(ToolChoice::Auto), &same), 1);
        assert_eq!(
            response.message.tool_calls[0].arguments,
            r#"{"city":"Paris"}"#
        );
    }

    #[test]
    fn names_map_back_and_ids_do_not_clash_with_the_history() {
        let mut request = request(ToolChoice::Auto);
        request
            .messages
            .push(Message::tool("call_x", "get_weather", "sunny"));
        let mut response = reply(r#"{"id": "call_x", "name": "get.weather", "arguments": {}}"#);
        recover(&mut response, &request, &|n| n.replace('.', "_"));
        let call = &response.message.tool_calls[0];
        assert_eq!(call.name, "get_weather");
        assert_ne!(&*call.id, "call_x");
    }
}
