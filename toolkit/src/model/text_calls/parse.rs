//! What counts as a tool call in a reply, and how a found call is checked.
//!
//! The format modules (`json.rs`, `xml.rs`) find call blocks and their raw calls; this module
//! checks every call against the offered tools, assigns ids, and cuts the blocks (with code
//! fences and `<tool_calls>` wrappers that held nothing else) out of the prose.

use std::collections::HashSet;
use std::ops::Range;

use serde_json::Value;

use super::elements::Element;
use super::{TextCallFormat, json, typing, xml};
use crate::tool::ToolCall;
use crate::tool::ToolDefinition;

/// A reply split into prose and tool calls.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParsedReply {
    /// The reply without its call blocks (and without code fences that held nothing but
    /// calls), trimmed; the reply unchanged when it has no call.
    pub text: String,
    /// The calls, in the order written; arguments are compact JSON objects.
    pub calls: Vec<ToolCall>,
}

/// Why the tool calls of a reply cannot be used. The message is written for the model: it
/// says what was wrong and where, so a re-ask can fix exactly that.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TextCallError {
    /// A call block is not well-formed: invalid JSON, an unclosed or garbled XML element, a
    /// call that is not an object, or a call marker outside any complete block.
    #[error("{0}")]
    Malformed(String),
    /// A call (numbered from 1 in the reply) without a tool name.
    #[error(
        "tool call #{call} does not say which tool to call: its name is missing, empty or not a string"
    )]
    MissingName {
        /// Which call, from 1.
        call: usize,
    },
    /// A call whose parameters are not a JSON object.
    #[error(
        "the parameters of tool call #{call} (`{tool}`) must be a JSON object such as {{\"key\": \"value\"}}, but they are {found}"
    )]
    ParametersNotObject {
        /// Which call, from 1.
        call: usize,
        /// The tool it names.
        tool: String,
        /// What the parameters are instead (`"a string"`, `"an array"`, ...).
        found: &'static str,
    },
    /// A call of a tool the request does not offer (or of any tool when none may be called).
    #[error(
        "tool call #{call} names `{tool}`, which is not a tool you may call now; {}",
        available_tools(available)
    )]
    UnknownTool {
        /// Which call, from 1.
        call: usize,
        /// The name it used.
        tool: String,
        /// The tools that may be called.
        available: Vec<String>,
    },
    /// No call although the request requires one ([`ToolChoice::Required`] or
    /// [`ToolChoice::Specific`](crate::ToolChoice::Specific)). Raised by
    /// [`TextToolCalls`](super::TextToolCalls), never by [`parse_tool_calls`].
    ///
    /// [`ToolChoice::Required`]: crate::ToolChoice::Required
    #[error("the reply calls no tool, but it must call {}", match tool { Some(t) => format!("the tool `{t}`"), None => "at least one tool".to_owned() })]
    CallRequired {
        /// The tool that must be called, if one is named.
        tool: Option<String>,
    },
}

fn available_tools(names: &[String]) -> String {
    if names.is_empty() {
        "no tool may be called in this reply".to_owned()
    } else {
        format!("the tools you may call are: {}", names.join(", "))
    }
}

/// Split a model's reply into prose and tool calls written in `format`, accepting only calls
/// of `tools`.
///
/// **What counts as an attempted call.** A reply is a plain answer unless it contains a
/// marker that ordinary prose does not: talking about `tool_calls` or "a tool_call" is fine.
/// - [`TextCallFormat::Json`]: `"tool_calls"` (or `"tool_call"`) written as a JSON key, in
///   double quotes and followed by a colon. The call block is the JSON object holding that
///   key: `{"tool_calls": [{"id": "..", "name": "..", "parameters": {..}}]}`, where `id` is
///   optional, `parameters` (alias `arguments`) may be left out for `{}`, and a single call
///   object may stand in for the list.
/// - [`TextCallFormat::Xml`]: an opening `<tool_call` tag (followed by whitespace, `>` or `/`)
///   or a closing `</tool_call>` tag. Each element is one call:
///   `<tool_call id=".." name=".."><parameters>{json}</parameters></tool_call>`, where `id`
///   is optional and the parameters may be left out for `{}`. The parameters may also be
///   written as one element per parameter, as in `seeds/002`:
///   `<parameters><a>10</a><b>5</b><operation>add</operation></parameters>`. XML text has no
///   types, so each element is typed by the called tool's parameter schema in `tools`: `10`
///   becomes a number where the schema takes a number and stays the string `"10"` where it
///   takes a string; child elements become objects, repeated elements arrays (or
///   `<item>` children), empty elements `null` where allowed. Entities and CDATA are
///   decoded, and whitespace around a value that includes a line break is layout and
///   dropped. Where the schema says nothing about a parameter, text that is exactly a
///   JSON number, `true`, `false` or `null` becomes that value, anything else a string.
///
/// Blocks may sit anywhere in prose and inside Markdown code fences. Every marker must belong
/// to a complete block, and every call must name one of `tools` and carry an object of
/// parameters; otherwise the whole reply is refused with a [`TextCallError`] that says what
/// was wrong, because half a call handed on is worse than asking again.
///
/// The returned text is the reply without the blocks, and without fences or
/// `<tool_calls>` wrappers that held nothing else. Calls without an id (or with one used
/// earlier in the reply) get `call_1`, `call_2`, ...
pub fn parse_tool_calls(
    text: &str,
    format: TextCallFormat,
    tools: &[ToolDefinition],
) -> Result<ParsedReply, TextCallError> {
    let mut n = 0;
    let mut fresh = || {
        n += 1;
        format!("call_{n}")
    };
    parse_reply(text, format, tools, &mut HashSet::new(), &mut fresh)
}

/// [`parse_tool_calls`] with the ids already in use and the source of new ones.
pub(super) fn parse_reply(
    text: &str,
    format: TextCallFormat,
    tools: &[ToolDefinition],
    taken: &mut HashSet<String>,
    fresh: &mut dyn FnMut() -> String,
) -> Result<ParsedReply, TextCallError> {
    let found = match format {
        TextCallFormat::Json => json::find(text)?,
        TextCallFormat::Xml => xml::find(text)?,
    };
    if found.spans.is_empty() {
        return Ok(ParsedReply {
            text: text.to_owned(),
            calls: Vec::new(),
        });
    }
    let calls = found
        .calls
        .into_iter()
        .enumerate()
        .map(|(i, raw)| check(i + 1, raw, tools, taken, fresh))
        .collect::<Result<Vec<_>, _>>()?;
    let spans = absorb_containers(text, found.spans, format);
    Ok(ParsedReply {
        text: remainder(text, &spans),
        calls,
    })
}

/// A call as written, before it is checked.
#[derive(Debug, Default)]
pub(super) struct RawCall {
    pub id: Option<String>,
    pub name: Option<String>,
    pub parameters: Option<Parameters>,
}

/// Parameters as written: a JSON value, or XML elements still to be typed by the tool's
/// schema (which is known only once the name is checked).
#[derive(Debug)]
pub(super) enum Parameters {
    Json(Value),
    Elements(Vec<Element>),
}

/// The call blocks of a reply: their byte ranges, in order, and their calls.
#[derive(Debug, Default)]
pub(super) struct Found {
    pub spans: Vec<Range<usize>>,
    pub calls: Vec<RawCall>,
}

fn check(
    call: usize,
    raw: RawCall,
    tools: &[ToolDefinition],
    taken: &mut HashSet<String>,
    fresh: &mut dyn FnMut() -> String,
) -> Result<ToolCall, TextCallError> {
    let name = raw
        .name
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty())
        .ok_or(TextCallError::MissingName { call })?;
    let Some(tool) = tools.iter().find(|t| t.name() == name) else {
        return Err(TextCallError::UnknownTool {
            call,
            tool: name,
            available: tools.iter().map(|t| t.name().to_owned()).collect(),
        });
    };
    let arguments = match raw.parameters {
        None => "{}".to_owned(),
        Some(Parameters::Elements(elements)) => {
            typing::typed(&elements, tool.parameters()).to_string()
        }
        Some(Parameters::Json(object @ Value::Object(_))) => object.to_string(),
        Some(Parameters::Json(other)) => {
            return Err(TextCallError::ParametersNotObject {
                call,
                tool: name,
                found: kind(&other),
            });
        }
    };
    // A result is matched to its call by id, so a repeated id is replaced, not kept.
    let id = match raw.id.map(|id| id.trim().to_owned()) {
        Some(id) if !id.is_empty() && taken.insert(id.clone()) => id,
        _ => loop {
            let id = fresh();
            if taken.insert(id.clone()) {
                break id;
            }
        },
    };
    Ok(ToolCall::new(id, name, arguments))
}

/// "a string", "an array", ... for messages.
pub(super) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A JSON error as the model can use it: serde's message without its position (which counts
/// from the block, not the reply) but with the text just before the error.
pub(super) fn json_error(block: &str, error: &serde_json::Error) -> String {
    let message = error.to_string();
    let message = message
        .rfind(" at line ")
        .map_or(message.as_str(), |i| &message[..i]);
    let end = json_error_offset(block, error);
    format!("{message}, near `{}`", snippet(&block[..end]))
}

/// Byte offset just past the character a JSON error points at.
pub(super) fn json_error_offset(block: &str, error: &serde_json::Error) -> usize {
    if error.line() == 0 {
        return block.len();
    }
    let line_start: usize = block
        .split_inclusive('\n')
        .take(error.line() - 1)
        .map(str::len)
        .sum();
    let mut end = (line_start + error.column()).min(block.len());
    while !block.is_char_boundary(end) {
        end += 1;
    }
    end
}

/// The last 40 characters of `text`, on one line.
pub(super) fn snippet(text: &str) -> String {
    const MAX: usize = 40;
    let count = text.chars().count();
    let tail: String = text.chars().skip(count.saturating_sub(MAX)).collect();
    let tail = tail.replace(['\n', '\r'], " ");
    if count > MAX {
        format!("…{tail}")
    } else {
        tail
    }
}

/// Widen the spans to whole code fences (and, for XML, `<tool_calls>` wrappers) whose
/// content is nothing but calls, so no empty fence is left in the prose.
fn absorb_containers(
    text: &str,
    mut spans: Vec<Range<usize>>,
    format: TextCallFormat,
) -> Vec<Range<usize>> {
    if format == TextCallFormat::Xml {
        for (outer, inner) in xml::wrappers(text) {
            absorb(text, &mut spans, outer, inner);
        }
    }
    for (outer, inner) in fences(text) {
        absorb(text, &mut spans, outer, inner);
    }
    spans
}

fn absorb(text: &str, spans: &mut Vec<Range<usize>>, outer: Range<usize>, inner: Range<usize>) {
    let within = |s: &Range<usize>| inner.start <= s.start && s.end <= inner.end;
    let mut cursor = inner.start;
    let mut any = false;
    for span in spans.iter().filter(|s| within(s)) {
        if !text[cursor..span.start].trim().is_empty() {
            return;
        }
        cursor = span.end;
        any = true;
    }
    if !any || !text[cursor..inner.end].trim().is_empty() {
        return;
    }
    spans.retain(|s| !within(s));
    spans.push(outer);
    spans.sort_by_key(|s| s.start);
}

/// Markdown code fences as (whole fence, content) byte ranges: lines starting with three
/// backticks, paired in order.
fn fences(text: &str) -> Vec<(Range<usize>, Range<usize>)> {
    let mut fences = Vec::new();
    let mut open: Option<(usize, usize)> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        if !line.trim_start().starts_with("```") {
            continue;
        }
        match open.take() {
            None => open = Some((start, offset)),
            Some((outer_start, inner_start)) => fences.push((
                outer_start..start + line.trim_end().len(),
                inner_start..start,
            )),
        }
    }
    fences
}

/// The text outside `spans`, trimmed; where spans were cut out, the pieces are joined by a
/// space, a newline or a blank line: the widest break in the whitespace around the cut.
fn remainder(text: &str, spans: &[Range<usize>]) -> String {
    let mut pieces = Vec::with_capacity(spans.len() + 1);
    let mut last = 0;
    for span in spans {
        pieces.push(&text[last..span.start]);
        last = span.end;
    }
    pieces.push(&text[last..]);

    let mut out = String::new();
    let mut newlines = 0;
    for piece in pieces {
        let trimmed = piece.trim();
        if trimmed.is_empty() {
            newlines = newlines.max(piece.matches('\n').count());
            continue;
        }
        let lead = &piece[..piece.len() - piece.trim_start().len()];
        newlines = newlines.max(lead.matches('\n').count());
        if !out.is_empty() {
            out.push_str(match newlines {
                0 => " ",
                1 => "\n",
                _ => "\n\n",
            });
        }
        out.push_str(trimmed);
        newlines = piece[piece.trim_end().len()..].matches('\n').count();
    }
    out
}
