//! What counts as a tool call in a reply, and how a found call is checked.
//!
//! The format readers (`json.rs`, `xml.rs`) find call blocks and their raw calls; this module
//! checks every call against the offered tools, assigns ids, and cuts the blocks (with code
//! fences and `<tool_calls>` wrappers that held nothing else) out of the prose. The rules of
//! each format are documented on [`TextCallFormat`].

use std::collections::HashSet;
use std::ops::Range;

use serde_json::Value;

use super::error::TextCallError;
use super::syntax::{Found, Parameters, RawCall, TextCallFormat};
use super::{bare, json, lenient, typing, xml};
use crate::tool::ToolCall;
use crate::tool::ToolDefinition;
use crate::util::json_kind as kind;

/// A reply split into prose and tool calls.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParsedReply {
    /// The reply without its call blocks (and without code fences that held nothing but
    /// calls), trimmed; the reply unchanged when it has no call.
    pub text: String,
    /// The calls, in the order written; arguments are compact JSON objects.
    pub calls: Vec<ToolCall>,
}

/// Split a model's reply into prose and tool calls written in `format`, accepting only calls
/// of `tools`; calls without a usable id get `call_1`, `call_2`, ... XML element parameters
/// are typed by each tool's input schema. This is the parser [`TextToolCalls`] runs on every
/// reply (there with ids unique across the conversation), for text that comes from somewhere
/// else than a [`ChatModel`](crate::ChatModel).
///
/// [`TextToolCalls`]: super::TextToolCalls
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
    parse_reply(
        text,
        format,
        tools,
        Strictness::Refuse,
        &mut HashSet::new(),
        &mut fresh,
    )
}

/// What to do with a found call that cannot be used as it is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Strictness {
    /// Refuse the whole reply with the reason, so the model can be asked again
    /// ([`TextToolCalls`](super::TextToolCalls)).
    Refuse,
    /// Keep the call as written (a missing name as `""`, parameters that are not an object as
    /// their JSON text): the agent refuses what cannot run with a result the model sees, so
    /// the call is answered instead of being taken for prose.
    Keep,
}

/// Split `text` into prose and the calls written in it, in any form the parser reads (the one
/// of `format` first). `taken` holds the ids already in use (they are not given again) and
/// `fresh` makes a new id for a call without a usable one.
pub(super) fn parse_reply(
    text: &str,
    format: TextCallFormat,
    tools: &[ToolDefinition],
    strictness: Strictness,
    taken: &mut HashSet<String>,
    fresh: &mut dyn FnMut() -> String,
) -> Result<ParsedReply, TextCallError> {
    let found = find(text, format, tools)?;
    if found.blocks.is_empty() {
        return Ok(ParsedReply {
            text: text.to_owned(),
            calls: Vec::new(),
        });
    }
    let mut spans = Vec::with_capacity(found.blocks.len());
    let mut calls = Vec::new();
    for block in found.blocks {
        spans.push(block.span);
        for raw in block.calls {
            let number = calls.len() + 1;
            calls.push(check(number, raw, tools, strictness, taken, fresh)?);
        }
    }
    let spans = absorb_containers(text, spans);
    let mut text = remainder(text, &spans);
    // A fence left without its call (a model that closes a fence it never opened).
    if text
        .lines()
        .all(|line| line.trim_start().starts_with("```"))
    {
        text.clear();
    }
    Ok(ParsedReply { text, calls })
}

/// Every call block of `text`, in order: the readers of `format`'s own syntax first, then the
/// other marked syntax, the bare call objects and last the call objects of `tools` only a
/// lenient reading can read, each in what is left between the blocks found, so that nothing
/// inside one block (a string argument that quotes a call) is read as another.
fn find(
    text: &str,
    format: TextCallFormat,
    tools: &[ToolDefinition],
) -> Result<Found, TextCallError> {
    type Reader = fn(&str) -> Result<Found, TextCallError>;
    let bare: Reader = |text| Ok(bare::find(text));
    let readers: [Reader; 3] = match format {
        TextCallFormat::Json => [json::find, xml::find, bare],
        TextCallFormat::Xml => [xml::find, json::find, bare],
    };
    let mut found = Found::default();
    for reader in readers {
        found = between(text, found, |range: Range<usize>| {
            let mut read = reader(&text[range.clone()])?;
            for block in &mut read.blocks {
                block.span = block.span.start + range.start..block.span.end + range.start;
            }
            Ok(read)
        })?;
    }
    let code = code(text);
    between(text, found, |range| {
        Ok(lenient::find(text, range, tools, &code))
    })
}

/// `found` with the blocks `read` finds in each stretch of `text` between them (byte ranges
/// in, spans in `text` out), in order.
fn between(
    text: &str,
    found: Found,
    mut read: impl FnMut(Range<usize>) -> Result<Found, TextCallError>,
) -> Result<Found, TextCallError> {
    let mut merged = Found::default();
    let mut blocks = found.blocks.into_iter().peekable();
    let mut from = 0;
    loop {
        let to = blocks.peek().map_or(text.len(), |b| b.span.start);
        merged.blocks.extend(read(from..to)?.blocks);
        match blocks.next() {
            Some(block) => {
                from = block.span.end;
                merged.blocks.push(block);
            }
            None => break,
        }
    }
    Ok(merged)
}

fn check(
    call: usize,
    raw: RawCall,
    tools: &[ToolDefinition],
    strictness: Strictness,
    taken: &mut HashSet<String>,
    fresh: &mut dyn FnMut() -> String,
) -> Result<ToolCall, TextCallError> {
    let keep = strictness == Strictness::Keep;
    if let Some(why) = raw.unreadable
        && !keep
    {
        return Err(TextCallError::Malformed(format!(
            "tool call #{call}: {why}"
        )));
    }
    let name = raw
        .name
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty());
    let name = match name {
        Some(name) => name,
        None if keep => String::new(),
        None => return Err(TextCallError::MissingName { call }),
    };
    let tool = tools.iter().find(|t| t.name() == name);
    if tool.is_none() && !keep {
        return Err(TextCallError::UnknownTool {
            call,
            tool: name,
            available: tools.iter().map(|t| t.name().to_owned()).collect(),
        });
    }
    let arguments = match raw.parameters {
        None => "{}".to_owned(),
        Some(Parameters::Elements(elements)) => {
            let schema = tool.map_or(&Value::Null, |t| t.parameters());
            typing::typed(&elements, schema).to_string()
        }
        Some(Parameters::Json(object @ Value::Object(_))) => {
            if tool.is_some_and(|t| copied_schema(&object, t.parameters())) {
                // Validation then says which arguments are missing, which the model can act on.
                tracing::debug!(tool = %name, "the arguments of a text call are a copy of the tool's schema: read as none");
                "{}".to_owned()
            } else {
                object.to_string()
            }
        }
        Some(Parameters::Json(other)) if keep => other.to_string(),
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
    tracing::debug!(tool = %name, id = %id, form = raw.form.as_str(), "read a tool call written as text");
    Ok(ToolCall::new(id, name, arguments))
}

/// Whether `arguments` is a piece of the tool's JSON Schema that the model copied instead of
/// giving values: an object with `"type": "object"` and an object of `"properties"`, for a
/// tool whose `schema` declares its properties and none named `type` or `properties`.
fn copied_schema(arguments: &Value, schema: &Value) -> bool {
    let Some(Value::Object(declared)) = schema.get("properties") else {
        return false;
    };
    !declared.contains_key("type")
        && !declared.contains_key("properties")
        && arguments.get("type").and_then(Value::as_str) == Some("object")
        && arguments.get("properties").is_some_and(Value::is_object)
}

/// Widen the spans to whole code fences (and `<tool_calls>` wrappers) whose content is
/// nothing but calls, so no empty fence is left in the prose.
fn absorb_containers(text: &str, mut spans: Vec<Range<usize>>) -> Vec<Range<usize>> {
    for (outer, inner) in xml::wrappers(text) {
        absorb(text, &mut spans, outer, inner);
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

/// The byte ranges of code fences whose content is code: fences with a language other than
/// JSON (` ```json `, ` ```json5 `, ` ```jsonc `) or none.
fn code(text: &str) -> Vec<Range<usize>> {
    fences(text)
        .into_iter()
        .filter(|(outer, inner)| {
            let language = text[outer.start..inner.start]
                .trim()
                .trim_start_matches('`');
            !matches!(language.trim(), "" | "json" | "json5" | "jsonc" | "JSON")
        })
        .map(|(outer, _)| outer)
        .collect()
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
