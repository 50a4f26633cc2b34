//! Tool results, client → agent: the project's `tool-results` data part, and the texts design
//! document 000's clients send.

use std::fmt;

use a2a::{Message, Part, PartContent};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::data::{
    InvalidToolsPart, TOOL_RESULTS, data_part, entries, found, object, parts_of_kind, string_field,
};
use crate::util::json_kind;
use crate::{model, tool::ToolResult};

/// One tool result as it travels back to the agent. Made from a [`ToolResult`] (`From`), or
/// with [`ok`](Self::ok) and [`error`](Self::error).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolResultEntry {
    /// The id of the call it answers. Empty for a result read from one of design document
    /// 000's texts that gave no id: such a result answers a call by its name.
    pub tool_call_id: String,
    /// The tool's name.
    pub name: String,
    /// The tool's output as text (or the error message).
    pub content: String,
    /// Whether the call failed.
    #[serde(default)]
    pub is_error: bool,
}

impl From<&ToolResult> for ToolResultEntry {
    fn from(result: &ToolResult) -> Self {
        ToolResultEntry {
            tool_call_id: result.call_id.to_string(),
            name: result.name.clone(),
            content: result.model_text().into_owned(),
            is_error: result.is_error(),
        }
    }
}

impl ToolResultEntry {
    /// The successful result of call `tool_call_id` of tool `name`.
    pub fn ok(
        tool_call_id: impl Into<String>,
        name: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        ToolResultEntry {
            tool_call_id: tool_call_id.into(),
            name: name.into(),
            content: content.into(),
            is_error: false,
        }
    }

    /// The failure of call `tool_call_id` of tool `name`, with the message the model reads.
    pub fn error(
        tool_call_id: impl Into<String>,
        name: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        ToolResultEntry {
            is_error: true,
            ..Self::ok(tool_call_id, name, message)
        }
    }

    /// The tool message a model sees for this result.
    pub fn to_message(&self) -> model::Message {
        let mut result = model::ToolMessage::new(
            self.tool_call_id.as_str(),
            self.name.clone(),
            self.content.clone(),
        );
        result.is_error = self.is_error;
        result.into()
    }
}

impl fmt::Display for ToolResultEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let flag = if self.is_error { " (error)" } else { "" };
        write!(
            f,
            "[{} {}]{} {}",
            self.name, self.tool_call_id, flag, self.content
        )
    }
}

/// The data part returning `results` to the agent (the project's convention).
pub fn tool_results_part<'a>(results: impl IntoIterator<Item = &'a ToolResultEntry>) -> Part {
    let results: Vec<&ToolResultEntry> = results.into_iter().collect();
    data_part(json!({ "tool_results": results }), TOOL_RESULTS, None)
}

/// The tool results a client returned in `message` (parts with `metadata.type =
/// "tool-results"`). `content` may be text or any JSON value (kept as its JSON text).
pub fn extract_tool_results(message: &Message) -> Result<Vec<ToolResultEntry>, InvalidToolsPart> {
    let mut problems = Vec::new();
    let mut results = Vec::new();
    let parts = parts_of_kind(message, TOOL_RESULTS);
    for (path, item) in entries(parts, "tool_results", &mut problems) {
        let Some(obj) = object(item, &path, &mut problems) else {
            continue;
        };
        let id = string_field(obj, "tool_call_id", &path, &mut problems);
        let name = obj.get("name").and_then(Value::as_str).unwrap_or_default();
        let content = match obj.get("content") {
            None | Some(Value::Null) => String::new(),
            Some(other) => text_of(other),
        };
        let is_error = match obj.get("is_error") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(other) => {
                problems.push(format!(
                    "{path}.is_error: must be a boolean, found {}",
                    json_kind(other)
                ));
                false
            }
        };
        if let Some(id) = id {
            results.push(entry(id, name, content, is_error));
        }
    }
    found(results, TOOL_RESULTS, problems)
}

/// A JSON string as its text, any other value as its JSON text.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

const RESULTS_PREFIX: &str = "Tool results:";

/// Design document 000's text for `results`: `Tool results: [{"name":…,"result":…}, …]`, with
/// `"error"` in place of `"result"` for a failed call, in the order given. Call ids are not part
/// of that text; send [`tool_results_part`] beside it for readers that match by id.
pub fn tool_results_text(results: &[ToolResultEntry]) -> String {
    let entries: Vec<Value> = results
        .iter()
        .map(|r| {
            let key = if r.is_error { "error" } else { "result" };
            json!({ "name": r.name, key: r.content })
        })
        .collect();
    format!("{RESULTS_PREFIX} {}", Value::Array(entries))
}

/// The tool results in the text parts of `message`, in any of design document 000's forms:
///
/// - `Tool results: [{"name": N, "result": R} | {"name": N, "error": E}, …]` (a JSON array;
///   an entry may add `"id"` or `"tool_call_id"`);
/// - `Tool "N" returned: R` (R is JSON; text that is not JSON is kept as it is);
/// - `Tool N failed: E` (an error result).
///
/// A string `R`/`E` is the content as it is, any other JSON value its JSON text. The entries
/// have an empty [`tool_call_id`](ToolResultEntry::tool_call_id) unless the text gave one.
/// Text that is none of these forms is not a result: the list is empty when no text part is
/// one. A text that starts like `Tool results:` but does not hold readable results is an error
/// listing every problem, never taken for a question.
pub fn extract_text_results(message: &Message) -> Result<Vec<ToolResultEntry>, InvalidToolsPart> {
    let mut problems = Vec::new();
    let mut results = Vec::new();
    let texts = message.parts.iter().filter_map(|p| match &p.content {
        PartContent::Text(t) => Some(t.trim()),
        _ => None,
    });
    for (p, text) in texts.enumerate() {
        if let Some(rest) = text.strip_prefix(RESULTS_PREFIX) {
            results_list(rest, &format!("text part {p}"), &mut results, &mut problems);
        } else if let Some((name, rest)) = text
            .strip_prefix("Tool \"")
            .and_then(|t| t.split_once("\" returned:"))
        {
            if name.is_empty() {
                problems.push(format!(
                    "text part {p}: `Tool \"\" returned:` names no tool"
                ));
                continue;
            }
            let rest = rest.trim();
            let content = serde_json::from_str::<Value>(rest)
                .map(|v| text_of(&v))
                .unwrap_or_else(|_| rest.to_string());
            results.push(entry("", name, content, false));
        } else if let Some((name, error)) = text
            .strip_prefix("Tool ")
            .and_then(|t| t.split_once(" failed:"))
            .filter(|(name, _)| !name.is_empty() && !name.contains(char::is_whitespace))
        {
            results.push(entry("", name, error.trim().to_string(), true));
        }
    }
    found(results, TOOL_RESULTS, problems)
}

fn entry(id: &str, name: &str, content: String, is_error: bool) -> ToolResultEntry {
    ToolResultEntry {
        tool_call_id: id.to_string(),
        name: name.to_string(),
        content,
        is_error,
    }
}

/// The entries of a `Tool results: [...]` text.
fn results_list(
    json_text: &str,
    at: &str,
    results: &mut Vec<ToolResultEntry>,
    problems: &mut Vec<String>,
) {
    let items = match serde_json::from_str::<Value>(json_text) {
        Ok(Value::Array(items)) => items,
        Ok(other) => {
            problems.push(format!(
                "{at}: `{RESULTS_PREFIX}` must be followed by a JSON array, found {}",
                json_kind(&other)
            ));
            return;
        }
        Err(e) => {
            problems.push(format!(
                "{at}: `{RESULTS_PREFIX}` must be followed by a JSON array: {e}"
            ));
            return;
        }
    };
    for (i, item) in items.iter().enumerate() {
        let path = format!("{at}: results[{i}]");
        let Some(obj) = object(item, &path, problems) else {
            continue;
        };
        let name = string_field(obj, "name", &path, problems);
        let id = optional_id(obj, &path, problems);
        let (content, is_error) = match (obj.get("error"), obj.get("result")) {
            (Some(e), _) if !e.is_null() => (text_of(e), true),
            (_, Some(r)) => (text_of(r), false),
            // `JSON.stringify` drops a result that is `undefined`: the tool returned nothing.
            (_, None) => (String::new(), false),
        };
        if let (Some(name), Some(id)) = (name, id) {
            results.push(entry(id, name, content, is_error));
        }
    }
}

/// `id` or `tool_call_id` when the entry has one (`""` when not); a non-string is a problem.
fn optional_id<'v>(
    obj: &'v Map<String, Value>,
    path: &str,
    problems: &mut Vec<String>,
) -> Option<&'v str> {
    for key in ["tool_call_id", "id"] {
        match obj.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => return Some(s),
            Some(other) => {
                problems.push(format!(
                    "{path}.{key}: must be a string, found {}",
                    json_kind(other)
                ));
                return None;
            }
        }
    }
    Some("")
}

#[cfg(test)]
mod tests {
    use super::super::data::message;
    use super::*;

    fn texts(texts: &[&str]) -> Message {
        message(texts.iter().map(|t| Part::text(*t)).collect())
    }

    #[test]
    fn structured_results_round_trip() {
        let entries = vec![
            entry("c1", "get_weather", "18C".into(), false),
            entry("c2", "add", "Error: boom".into(), true),
        ];
        let part = tool_results_part(&entries);
        assert_eq!(
            serde_json::to_value(&part).unwrap()["metadata"],
            json!({"type": "tool-results"})
        );
        assert_eq!(extract_tool_results(&message(vec![part])).unwrap(), entries);
        let msg = entries[1].to_message();
        let result = msg.as_tool().expect("a tool result");
        assert!(result.is_error);
        assert_eq!(&*result.call_id, "c2");
    }

    #[test]
    fn the_documents_results_text_round_trips_without_ids() {
        let entries = vec![
            entry("c1", "get_weather", r#"{"temp":18}"#.into(), false),
            entry("c2", "read_file", "Error: no such file".into(), true),
        ];
        let text = tool_results_text(&entries);
        assert_eq!(
            text,
            r#"Tool results: [{"name":"get_weather","result":"{\"temp\":18}"},{"name":"read_file","error":"Error: no such file"}]"#
        );
        let back = extract_text_results(&texts(&[&text])).unwrap();
        assert_eq!(
            back,
            vec![
                entry("", "get_weather", r#"{"temp":18}"#.into(), false),
                entry("", "read_file", "Error: no such file".into(), true),
            ]
        );
    }

    #[test]
    fn every_form_of_the_document_is_read() {
        let msg = texts(&[
            r#"Tool results: [{"name":"a","result":{"x":1}},{"name":"b","error":"nope"},{"id":"c9","name":"c"},{"name":"d","result":null,"error":null}]"#,
            r#"Tool "get_weather" returned: {"temp":18}"#,
            r#"Tool "echo" returned: "hi""#,
            "Tool \"void\" returned: undefined",
            "Tool read_file failed: ENOENT: no such file",
            "What's the weather in Paris?",
            "Tool use is fun",
        ]);
        assert_eq!(
            extract_text_results(&msg).unwrap(),
            vec![
                entry("", "a", r#"{"x":1}"#.into(), false),
                entry("", "b", "nope".into(), true),
                entry("c9", "c", String::new(), false),
                entry("", "d", "null".into(), false),
                entry("", "get_weather", r#"{"temp":18}"#.into(), false),
                entry("", "echo", "hi".into(), false),
                entry("", "void", "undefined".into(), false),
                entry("", "read_file", "ENOENT: no such file".into(), true),
            ]
        );
        assert!(
            extract_text_results(&texts(&["Hello", "Tool use is fun"]))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn a_text_that_claims_results_but_holds_none_lists_every_problem() {
        let msg = texts(&[
            "Tool results: not json",
            r#"Tool results: {"name": "a"}"#,
            r#"Tool results: [{"result": 1}, 3, {"name": "b", "id": 4}]"#,
            r#"Tool "" returned: 1"#,
        ]);
        let err = extract_text_results(&msg).unwrap_err();
        assert_eq!(err.problems.len(), 6, "{err}");
        assert!(err.problems[0].starts_with(
            "text part 0: `Tool results:` must be followed by a JSON array: expected ident"
        ));
        assert_eq!(
            err.problems[1..],
            [
                "text part 1: `Tool results:` must be followed by a JSON array, found an object",
                "text part 2: results[0].name: missing",
                "text part 2: results[1]: must be an object, found a number",
                "text part 2: results[2].id: must be a string, found a number",
                "text part 3: `Tool \"\" returned:` names no tool",
            ]
        );
        assert!(err.to_string().starts_with("invalid tool-results part: "));
    }
}
