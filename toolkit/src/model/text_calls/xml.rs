//! Call blocks written as `<tool_call>` elements: seed 002's form, whose `<parameters>` hold a
//! JSON object or one element per parameter ([`TextCallFormat::Xml`]), and the Hermes form of
//! Qwen's and many other chat templates, the whole call as JSON inside the element.
//!
//! [`TextCallFormat::Xml`]: super::syntax::TextCallFormat::Xml
//!
//! The `<tool_call>` tags are found with a scanner, not an XML parser: they sit in prose,
//! which is not XML (a stray `<` or `&` is fine there). JSON parameters are read with a JSON
//! parser, so that a string value containing `</parameters>` cannot end them early; element
//! parameters are real XML and read by `elements/`. The Hermes form's JSON is read leniently
//! (`lenient.rs`) when it is not valid as written; the JSON in `<parameters>` is read strictly.

use std::ops::Range;

use serde_json::Value;

use super::elements;
use super::error::{TextCallError, json_error, snippet};
use super::lenient;
use super::syntax::{Form, Found, Parameters, RawCall};

const OPEN: &str = "<tool_call";
const CLOSE: &str = "</tool_call";

/// The `<tool_call>` elements of `text`. Every opening or closing tag must belong to one.
pub(super) fn find(text: &str) -> Result<Found, TextCallError> {
    let mut found = Found::default();
    let mut pos = 0;
    loop {
        let open = tag(text, pos, OPEN, &[">", "/"]);
        let close = tag(text, pos, CLOSE, &[">"]);
        match (open, close) {
            (None, None) => break,
            (Some(open), close) if close.is_none_or(|close| open < close) => {
                let (end, call) = element(text, open, found.calls() + 1)?;
                found.push(open..end, vec![call]);
                pos = end;
            }
            _ => {
                return Err(TextCallError::Malformed(
                    "the reply has a closing </tool_call> tag without an opening \
                     <tool_call name=\"...\"> tag before it"
                        .to_owned(),
                ));
            }
        }
    }
    Ok(found)
}

/// The next `name` tag at or after `from`: `name` followed by whitespace or one of `ends`
/// (so `<tool_call` does not match `<tool_calls>`).
fn tag(text: &str, from: usize, name: &str, ends: &[&str]) -> Option<usize> {
    let mut from = from;
    while let Some(offset) = text[from..].find(name) {
        let start = from + offset;
        let rest = &text[start + name.len()..];
        if rest.starts_with(char::is_whitespace) || ends.iter().any(|e| rest.starts_with(e)) {
            return Some(start);
        }
        from = start + 1;
    }
    None
}

/// `<tool_calls>` wrappers as (whole wrapper, content) byte ranges.
pub(super) fn wrappers(text: &str) -> Vec<(Range<usize>, Range<usize>)> {
    let mut wrappers = Vec::new();
    let mut from = 0;
    while let Some(offset) = text[from..].find("<tool_calls>") {
        let start = from + offset;
        let inner = start + "<tool_calls>".len();
        let Some(close) = text[inner..].find("</tool_calls>") else {
            break;
        };
        let end = inner + close + "</tool_calls>".len();
        wrappers.push((start..end, inner..inner + close));
        from = end;
    }
    wrappers
}

struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn skip_ws(&mut self) {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start().len();
    }

    fn eat(&mut self, s: &str) -> bool {
        let found = self.rest().starts_with(s);
        if found {
            self.pos += s.len();
        }
        found
    }

    /// `</name>`, with optional whitespace before `>`.
    fn eat_close(&mut self, name: &str) -> bool {
        let start = self.pos;
        if self.eat("</") && self.eat(name) {
            self.skip_ws();
            if self.eat(">") {
                return true;
            }
        }
        self.pos = start;
        false
    }

    /// What comes next, for messages.
    fn ahead(&self) -> String {
        let ahead: String = self.rest().chars().take(20).collect();
        if ahead.is_empty() {
            "the end of the reply".to_owned()
        } else {
            format!("`{}`", ahead.replace(['\n', '\r'], " "))
        }
    }
}

/// One element starting at `start` (at its `<tool_call`): where it ends and its call.
fn element(text: &str, start: usize, call: usize) -> Result<(usize, RawCall), TextCallError> {
    let bad = |what: String| {
        TextCallError::Malformed(format!(
            "tool call #{call} is not a well-formed <tool_call> element: {what}"
        ))
    };
    let mut c = Cursor {
        text,
        pos: start + OPEN.len(),
    };
    let mut raw = RawCall {
        form: Form::Element,
        ..RawCall::default()
    };
    loop {
        c.skip_ws();
        if c.eat("/>") {
            return Ok((c.pos, raw));
        }
        if c.eat(">") {
            break;
        }
        let rest = c.rest();
        let len = rest
            .find(|ch: char| !(ch.is_alphanumeric() || matches!(ch, '_' | '-' | ':')))
            .unwrap_or(rest.len());
        if len == 0 {
            return Err(bad(format!(
                "expected an attribute or `>` in the tag, found {}",
                c.ahead()
            )));
        }
        let attribute = &rest[..len];
        c.pos += len;
        c.skip_ws();
        if !c.eat("=") {
            return Err(bad(format!(
                "attribute `{attribute}` has no value; write {attribute}=\"...\""
            )));
        }
        c.skip_ws();
        let quote = match c.rest().chars().next() {
            Some(q @ ('"' | '\'')) => q,
            _ => {
                return Err(bad(format!(
                    "the value of attribute `{attribute}` must be in double quotes"
                )));
            }
        };
        c.pos += 1;
        let Some(len) = c.rest().find(quote) else {
            return Err(bad(format!(
                "the value of attribute `{attribute}` has no closing quote"
            )));
        };
        let value = unescape(&c.rest()[..len]);
        c.pos += len + 1;
        match attribute {
            "name" => raw.name = Some(value),
            "id" => raw.id = Some(value),
            _ => {}
        }
    }

    c.skip_ws();
    let parameters_start = c.pos;
    let mut bare_json = false;
    if c.eat("<parameters") {
        c.skip_ws();
        if !c.eat("/>") {
            if !c.eat(">") {
                return Err(bad(format!(
                    "expected `>` to end the <parameters> tag, found {}",
                    c.ahead()
                )));
            }
            c.skip_ws();
            let rest = c.rest();
            if rest.starts_with('<') && !rest.starts_with("</") {
                let (elements, end) = elements::read(text, parameters_start, call)?;
                raw.parameters = Some(Parameters::Elements(elements));
                c.pos = end;
            } else {
                if !rest.starts_with("</") {
                    raw.parameters = Some(Parameters::Json(parameters(&mut c, call)?));
                    c.skip_ws();
                }
                if !c.eat_close("parameters") {
                    return Err(bad(format!(
                        "expected </parameters> after the JSON object of parameters, found {}",
                        c.ahead()
                    )));
                }
            }
        }
        c.skip_ws();
    } else if c.rest().starts_with('{') {
        // Parameters without their <parameters> tag are unambiguous enough to accept. This is
        // the Hermes form, whose JSON small models write with slips: read it leniently.
        let value = match parameters(&mut c, call) {
            Ok(value) => value,
            Err(error) => match lenient::value(c.rest()) {
                Ok(read) => {
                    c.pos += read.len;
                    read.value
                }
                Err(unreadable) => {
                    tracing::debug!(%error, "a Hermes tool call that cannot be read");
                    return Err(TextCallError::Malformed(format!(
                        "tool call #{call} could not be read: {}; write it as \
                         <tool_call>{{\"name\": \"TOOL\", \"arguments\": {{...}}}}</tool_call> \
                         in valid JSON (double quotes, every brace closed)",
                        unreadable.why
                    )));
                }
            },
        };
        raw.parameters = Some(Parameters::Json(value));
        c.skip_ws();
        bare_json = true;
    }
    if !c.eat_close("tool_call") {
        return Err(bad(format!(
            "expected <parameters>...</parameters> (a JSON object, or one element per \
             parameter) and then </tool_call>, found {}",
            c.ahead()
        )));
    }
    Ok((c.pos, if bare_json { hermes(raw) } else { raw }))
}

/// The Hermes form (Qwen's and many others' chat templates): no `name` attribute, and the
/// whole call as one JSON object right inside the element (no `<parameters>` tag),
/// `<tool_call>{"name": .., "arguments": {..}}</tool_call>`. Any other call is returned as it
/// was.
fn hermes(raw: RawCall) -> RawCall {
    let Some(Parameters::Json(Value::Object(object))) = &raw.parameters else {
        return raw;
    };
    let Some(Value::String(name)) = object.get("name") else {
        return raw;
    };
    if raw.name.is_some() {
        return raw;
    }
    let id = match object.get("id") {
        Some(Value::String(id)) => Some(id.clone()),
        Some(Value::Number(id)) => Some(id.to_string()),
        _ => raw.id.clone(),
    };
    let parameters = match object.get("arguments").or_else(|| object.get("parameters")) {
        // Some models write the arguments as JSON text, as the Chat Completions wire does.
        Some(Value::String(text)) => Some(Parameters::Json(
            serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone())),
        )),
        Some(value) => Some(Parameters::Json(value.clone())),
        None => None,
    };
    RawCall {
        id,
        name: Some(name.clone()),
        parameters,
        form: Form::Hermes,
        unreadable: None,
    }
}

/// The JSON value at the cursor.
fn parameters(c: &mut Cursor<'_>, call: usize) -> Result<Value, TextCallError> {
    let rest = c.rest();
    let mut values = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
    match values.next() {
        Some(Ok(value)) => {
            c.pos += values.byte_offset();
            Ok(value)
        }
        Some(Err(error)) => Err(TextCallError::Malformed(format!(
            "the <parameters> of tool call #{call} are not valid JSON: {}; write a JSON \
             object, or one element per parameter such as <city>Paris</city>",
            json_error(rest, &error)
        ))),
        None => Err(TextCallError::Malformed(format!(
            "the <parameters> of tool call #{call} are empty, near `{}`",
            snippet(&c.text[..c.pos])
        ))),
    }
}

/// The five predefined XML entities; anything else is kept as written.
fn unescape(value: &str) -> String {
    if !value.contains('&') {
        return value.to_owned();
    }
    value
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}
