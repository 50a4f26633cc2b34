//! The history a provider sends after the model wrote its calls as text (read back by
//! [`recover`](super::recover)): those turns go back as the text the model wrote, and their
//! results as plain words, since the model's chat template evidently has no tool-call syntax.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;

use super::prompt::results_text;
use crate::model::{Message, ToolMessage};

/// `messages` as a provider sends them: an assistant message whose calls were written as text
/// ([`calls_in_text`](crate::model::AssistantMessage::calls_in_text)) goes back as that text alone, and
/// the tool messages answering its calls as one user message in plain words
/// ([`results_text`]), since the model's chat template evidently has no tool-call syntax.
/// Borrowed unchanged when there is no such message.
pub(crate) fn plain_history(messages: &[Message]) -> Cow<'_, [Message]> {
    let in_text = |m: &Message| m.as_assistant().is_some_and(|turn| turn.calls_in_text);
    if !messages.iter().any(in_text) {
        return Cow::Borrowed(messages);
    }
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    let mut answering: HashSet<Arc<str>> = HashSet::new();
    let mut results: Vec<&ToolMessage> = Vec::new();
    let flush = |results: &mut Vec<&ToolMessage>, out: &mut Vec<Message>| {
        if !results.is_empty() {
            out.push(Message::user(results_text(results)));
            results.clear();
        }
    };
    for message in messages {
        if let Message::Tool(result) = message
            && answering.contains(&result.call_id)
        {
            results.push(result);
            continue;
        }
        flush(&mut results, &mut out);
        answering.clear();
        match message {
            Message::Assistant(turn) if turn.calls_in_text => {
                answering.extend(turn.tool_calls.iter().map(|c| c.id.clone()));
                out.push(Message::assistant(turn.content.clone(), Vec::new()));
            }
            _ => out.push(message.clone()),
        }
    }
    flush(&mut results, &mut out);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::AssistantMessage;
    use crate::tool::ToolCall;

    #[test]
    fn the_history_goes_back_as_the_model_wrote_it() {
        let call = ToolCall::new("c1", "get_weather", r#"{"city":"Paris"}"#);
        let mut written = AssistantMessage::new(
            r#"{"name": "get_weather", "arguments": {"city": "Paris"}}"#,
            vec![call],
        );
        written.calls_in_text = true;
        let messages = vec![
            Message::user("Weather in Paris?"),
            written.into(),
            Message::tool("c1", "get_weather", "21°C"),
            Message::user("And tomorrow?"),
        ];
        let plain = plain_history(&messages);
        assert_eq!(plain.len(), 4);
        assert!(plain[1].tool_calls().is_empty());
        assert_eq!(plain[1].content(), messages[1].content());
        assert_eq!(plain[2].role(), crate::model::Role::User);
        assert_eq!(
            plain[2].content(),
            "The function returned: 21°C\nUse this result to answer my previous question in plain text."
        );
        assert_eq!(plain[3].content(), "And tomorrow?");
        // Without such a message, the history is sent as it is.
        let native = vec![Message::user("hi")];
        assert!(matches!(plain_history(&native), Cow::Borrowed(_)));
    }

    #[test]
    fn several_results_and_failures_in_words() {
        let mut failed = ToolMessage::new("b", "get_weather", "unknown city");
        failed.is_error = true;
        let results = [ToolMessage::new("a", "get_weather", "Paris: 21°C"), failed];
        let text = results_text(&results.iter().collect::<Vec<_>>());
        assert_eq!(
            text,
            "The functions returned:\n1. get_weather: Paris: 21°C\n2. get_weather (failed): unknown city\n\
             Correct the call and try again, or answer my previous question in plain text."
        );
    }
}
