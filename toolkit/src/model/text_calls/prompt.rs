//! What the text-only model is told: the tool section of the system prompt, the history
//! rewritten without native tool messages, and the re-ask after an unusable call.
//!
//! Earlier calls are rendered in the very format the model is asked to write, so the
//! history itself shows it working examples.

use std::fmt::Write;

use serde_json::{Value, json};

use super::error::TextCallError;
use super::syntax::TextCallFormat;
use crate::model::{Message, ToolChoice, ToolMessage};
use crate::tool::ToolCall;
use crate::tool::ToolDefinition;

/// One call in the expected shape, for the prompt and for re-asks.
fn shape(format: TextCallFormat) -> &'static str {
    match format {
        TextCallFormat::Json => {
            r#"{"tool_calls": [{"name": "TOOL_NAME", "parameters": {"ARGUMENT": "VALUE"}}]}"#
        }
        TextCallFormat::Xml => {
            r#"<tool_call name="TOOL_NAME"><parameters>{"ARGUMENT": "VALUE"}</parameters></tool_call>"#
        }
    }
}

/// The section appended to the system prompt: the tools, how to call them, and the rule of
/// `choice`. With [`ToolChoice::None`] only the rule: a list would invite calls.
pub(super) fn tool_section(
    tools: &[ToolDefinition],
    choice: &ToolChoice,
    parallel: bool,
    format: TextCallFormat,
) -> String {
    let mut s = String::from("# Tools\n\n");
    if *choice == ToolChoice::None {
        s.push_str(
            "No tool may be called in this reply: answer in plain text, without any tool call.",
        );
        return s;
    }
    s.push_str(
        "You can call the tools below. You call a tool by writing a tool call in your reply, \
         exactly as described after the list.\n",
    );
    for tool in tools {
        let _ = write!(s, "\n## {}\n", tool.name());
        if !tool.description().trim().is_empty() {
            let _ = writeln!(s, "{}", tool.description().trim());
        }
        let _ = writeln!(s, "Parameters (JSON Schema): {}", tool.parameters());
    }
    s.push_str("\n## How to call tools\n\n");
    let (what, name, parameters, id, several) = match format {
        TextCallFormat::Json => (
            "a JSON object of exactly this form (a ```json code block around it is fine)",
            "\"name\" is the name of one of the tools above.",
            "\"parameters\" is a JSON object whose keys and values follow that tool's \
             parameter schema; write {} if it takes none.",
            "A call may also have an \"id\" string; otherwise one is assigned.",
            "To call several tools at once, put several calls in the \"tool_calls\" list.",
        ),
        TextCallFormat::Xml => (
            "one element of exactly this form per call (a ```xml code block around them is \
             fine)",
            "The name attribute is the name of one of the tools above.",
            "<parameters> holds a JSON object (plain JSON, not XML-escaped) whose keys and \
             values follow that tool's parameter schema; write {} if it takes none. It may \
             instead hold one element per parameter, such as \
             <parameters><city>Paris</city><days>3</days></parameters>: child elements for \
             an object, the element repeated for each item of a list.",
            "A call may also have an id=\"...\" attribute; otherwise one is assigned.",
            "To call several tools at once, write several <tool_call> elements.",
        ),
    };
    let _ = writeln!(s, "To call a tool, write {what}:\n\n{}\n", shape(format));
    let _ = writeln!(s, "- {name}\n- {parameters}\n- {id}");
    if parallel {
        let _ = writeln!(s, "- {several}");
    } else {
        s.push_str("- Call at most one tool per reply.\n");
    }
    s.push_str(
        "- Text before or after the tool calls is shown to the user as your message.\n\
         - After calling tools, end your reply.\n\n",
    );
    s.push_str(&match choice {
        ToolChoice::Required => "This reply must call at least one tool.".to_owned(),
        ToolChoice::Specific(name) => format!("This reply must call the tool `{name}`."),
        ToolChoice::Auto | ToolChoice::None => {
            "Call a tool only when you need one; otherwise answer in plain text, without any \
             tool call."
                .to_owned()
        }
    });
    s
}

/// The history for a text-only model: `section` appended to the first system message (or
/// sent as a new first message), assistant calls rendered into their text, and each run of
/// tool results merged into one user message in plain words ([`results_text`]; chat templates
/// of text-only models often insist that user and assistant alternate).
pub(super) fn history(
    messages: Vec<Message>,
    section: Option<String>,
    format: TextCallFormat,
) -> Vec<Message> {
    let mut section = section;
    let mut out: Vec<Message> = Vec::with_capacity(messages.len() + 1);
    // The run of tool messages being gathered into one user message.
    let mut results: Vec<ToolMessage> = Vec::new();
    let flush = |results: &mut Vec<ToolMessage>, out: &mut Vec<Message>| {
        if !results.is_empty() {
            out.push(Message::user(results_text(
                &results.iter().collect::<Vec<_>>(),
            )));
            results.clear();
        }
    };
    for message in messages {
        if !matches!(message, Message::Tool(_)) {
            flush(&mut results, &mut out);
        }
        match message {
            Message::System { mut content } => {
                if let Some(section) = section.take() {
                    if !content.trim().is_empty() {
                        content.push_str("\n\n");
                    }
                    content.push_str(&section);
                }
                out.push(Message::system(content));
            }
            Message::Assistant(turn) => {
                let mut content = turn.content;
                if !turn.tool_calls.is_empty() {
                    if !content.trim().is_empty() {
                        content.push_str("\n\n");
                    }
                    content.push_str(&render_calls(&turn.tool_calls, format));
                }
                out.push(Message::assistant(content, Vec::new()));
            }
            Message::Tool(result) => results.push(result),
            Message::ToolChange(change) => out.push(Message::system(change.describe())),
            other => out.push(other),
        }
    }
    flush(&mut results, &mut out);
    if let Some(section) = section {
        out.insert(0, Message::system(section));
    }
    out
}

/// The results of calls written as text, as the words of a user message. The wording follows
/// the chat templates that do this for structured calls (one is in the project's real-model
/// notes): a result alone, then what to do with it. Rewording it is measured, not guessed: a
/// sentence naming a fixed prefix for results made small models write invented results in
/// that shape instead of calling.
pub(super) fn results_text(results: &[&ToolMessage]) -> String {
    let failed = results.iter().any(|m| m.is_error);
    let mut text = String::new();
    if let [result] = results {
        let verb = if result.is_error {
            "call failed"
        } else {
            "returned"
        };
        text.push_str(&format!("The function {verb}: {}", result.content));
    } else {
        text.push_str("The functions returned:");
        for (i, result) in results.iter().enumerate() {
            let name = if result.name.is_empty() {
                "function"
            } else {
                result.name.as_str()
            };
            let failed = if result.is_error { " (failed)" } else { "" };
            text.push_str(&format!("\n{}. {name}{failed}: {}", i + 1, result.content));
        }
    }
    text.push_str(if failed {
        "\nCorrect the call and try again, or answer my previous question in plain text."
    } else if results.len() == 1 {
        "\nUse this result to answer my previous question in plain text."
    } else {
        "\nUse these results to answer my previous question in plain text."
    });
    text
}

/// `calls` written as the model is asked to write them.
pub(super) fn render_calls(calls: &[ToolCall], format: TextCallFormat) -> String {
    match format {
        TextCallFormat::Json => {
            let calls: Vec<Value> = calls
                .iter()
                .map(|c| json!({"id": &*c.id, "name": c.name, "parameters": arguments(c)}))
                .collect();
            json!({ "tool_calls": calls }).to_string()
        }
        TextCallFormat::Xml => calls
            .iter()
            .map(|c| {
                format!(
                    "<tool_call id=\"{}\" name=\"{}\"><parameters>{}</parameters></tool_call>",
                    escape(&c.id),
                    escape(&c.name),
                    arguments(c)
                )
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// The call's arguments as JSON; text that is not JSON (a native model's malformed call)
/// is kept as a string rather than dropped, so the history stays truthful.
fn arguments(call: &ToolCall) -> Value {
    if call.arguments.trim().is_empty() {
        return json!({});
    }
    serde_json::from_str(&call.arguments).unwrap_or_else(|_| Value::String(call.arguments.clone()))
}

fn escape(value: &str) -> String {
    value
        .replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The user message after an unusable reply: what was wrong, the expected shape, and which
/// tools may be called.
pub(super) fn repair(
    error: &TextCallError,
    format: TextCallFormat,
    allowed: &[ToolDefinition],
) -> String {
    if allowed.is_empty() {
        return format!(
            "Your last reply could not be used: {error}.\n\nNo tool may be called now: write \
             your reply again in plain text, without any tool call."
        );
    }
    let redo = match error {
        TextCallError::CallRequired { .. } => "Call it now, writing the call in exactly this form",
        _ => "Write your reply again, with each tool call in exactly this form",
    };
    let names: Vec<&str> = allowed.iter().map(ToolDefinition::name).collect();
    format!(
        "Your last reply could not be used: {error}.\n\n{redo}:\n\n{}\n\nTools you may call: {}.",
        shape(format),
        names.join(", ")
    )
}
