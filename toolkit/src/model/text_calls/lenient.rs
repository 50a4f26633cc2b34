//! Lenient reading: call objects as small local models write them, with the slips a JSON
//! parser refuses (Qwen2.5-Coder 0.5B and 1.5B behind llama.cpp drop the last `}`, quote in
//! single quotes, write Python's `True`).
//!
//! [`value`] reads one JSON value that starts with `{`, with these repairs and no others:
//!
//! 1. a string or key in single quotes is read as if in double quotes (`'it\'s'` is `"it's"`);
//! 2. `True`, `False` and `None` outside strings are read as `true`, `false` and `null`;
//! 3. a comma right before `}` or `]` is dropped;
//! 4. objects and arrays still open where the value stops are closed, innermost first. The
//!    value stops at the end of the text, or where, right after a complete value (a string,
//!    number, literal, `}` or `]`), comes the `{` of a next call, the `<` of `</tool_call>`,
//!    a code fence's backtick, or after whitespace a letter of prose.
//!
//! It never guesses anything else: a text cut off inside a string, after `:` or `,`, or right
//! after an opening brace; a missing comma, colon, quote or value; a closer of the wrong kind;
//! unquoted keys, comments, `NaN` or hexadecimal numbers — all stay unreadable, with the reason.
//! Nothing inside a double-quoted string is changed, and JSON that parses as it is was never
//! repaired (the strict readers read it first). The repaired text is read by `serde_json`.
//!
//! [`find`] is the reader that uses it on the text the strict readers left: a bare call object
//! (the shape of `bare.rs`) that only a lenient reading can read is a call when it names an
//! offered tool; an object that starts `{"name": "<an offered tool>"` and cannot be read even
//! so is an attempted call that could not be read (an error for the model, never prose).
//! Objects inside code (a fence with a language other than JSON, or after `(`, `=`, `[`, `,`)
//! are not read. The `tool_calls` and Hermes readers use [`value`] when their block is not
//! valid JSON as written; the JSON in seed 002's `<parameters>` element is read strictly.

use std::ops::Range;

use serde_json::Value;

use super::bare;
use super::error::snippet;
use super::syntax::{Form, Found, RawCall};
use crate::tool::ToolDefinition;

/// A value read leniently: the value, and how many bytes of the text it spans (without the
/// whitespace before where it stopped).
#[derive(Debug)]
pub(super) struct Read {
    pub value: Value,
    pub len: usize,
}

/// Why a value cannot be read even leniently, in words for the model, and the byte offset
/// in the text where reading stopped.
#[derive(Debug)]
pub(super) struct Unreadable {
    pub why: String,
    pub at: usize,
}

/// What the scanner expects next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// A value: at the start, after `:`.
    Value,
    /// A value or `]`, right after `[`.
    FirstItem,
    /// A value after `,` in an array (or `]`: a trailing comma).
    Item,
    /// A key or `}`, right after `{`.
    FirstKey,
    /// A key after `,` in an object (or `}`: a trailing comma).
    Key,
    /// `:` after a key.
    Colon,
    /// `,` or a closer, after a complete value.
    After,
}

/// Read the JSON value at the start of `text` (which starts with `{`) with the repairs listed
/// in the module docs.
pub(super) fn value(text: &str) -> Result<Read, Unreadable> {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 8);
    // The closers of the open objects and arrays, innermost last.
    let mut open: Vec<u8> = Vec::new();
    let mut expect = Expect::Value;
    // Where in `out` the last comma was written, to drop it before a closer.
    let mut comma = 0;
    let mut pos = 0;
    let unreadable = |why: String, at: usize| Unreadable { why, at };
    let near = |at: usize| snippet(&text[..at.min(text.len())]);
    loop {
        let blank = pos;
        while pos < bytes.len() && bytes[pos].is_ascii_whitespace() {
            pos += 1;
        }
        let Some(&byte) = bytes.get(pos) else {
            if expect == Expect::After {
                return close(out, open, blank);
            }
            return Err(unreadable(
                format!(
                    "it ends after `{}`, before the call is complete",
                    near(pos).trim_end()
                ),
                pos,
            ));
        };
        let value_here = matches!(expect, Expect::Value | Expect::FirstItem | Expect::Item);
        let key_here = matches!(expect, Expect::FirstKey | Expect::Key);
        match byte {
            b'{' | b'[' if value_here => {
                out.push(byte as char);
                open.push(if byte == b'{' { b'}' } else { b']' });
                expect = if byte == b'{' {
                    Expect::FirstKey
                } else {
                    Expect::FirstItem
                };
                pos += 1;
            }
            b'}' | b']' if open.last() == Some(&byte) => {
                let closes_object = byte == b'}';
                match (expect, closes_object) {
                    (Expect::After, _) | (Expect::FirstKey, true) | (Expect::FirstItem, false) => {}
                    (Expect::Key, true) | (Expect::Item, false) => {
                        out.remove(comma);
                    }
                    _ => {
                        return Err(unreadable(
                            format!("a value is missing before `{}`", byte as char),
                            pos,
                        ));
                    }
                }
                out.push(byte as char);
                open.pop();
                pos += 1;
                if open.is_empty() {
                    return parse(&out, pos);
                }
                expect = Expect::After;
            }
            b',' if expect == Expect::After => {
                comma = out.len();
                out.push(',');
                expect = if open.last() == Some(&b'}') {
                    Expect::Key
                } else {
                    Expect::Item
                };
                pos += 1;
            }
            b':' if expect == Expect::Colon => {
                out.push(':');
                expect = Expect::Value;
                pos += 1;
            }
            b'"' | b'\'' if value_here || key_here => {
                pos = string(text, pos, &mut out).ok_or_else(|| {
                    unreadable(
                        format!(
                            "a string that starts at `{}` is not closed",
                            snippet(&text[..(pos + 1).min(text.len())])
                        ),
                        text.len(),
                    )
                })?;
                expect = if key_here {
                    Expect::Colon
                } else {
                    Expect::After
                };
            }
            b'-' | b'0'..=b'9' if value_here => {
                let end = text[pos..]
                    .find(|c: char| !matches!(c, '0'..='9' | '-' | '+' | '.' | 'e' | 'E'))
                    .map_or(text.len(), |n| pos + n);
                out.push_str(&text[pos..end]);
                pos = end;
                expect = Expect::After;
            }
            _ if value_here && byte.is_ascii_alphabetic() => {
                let end = text[pos..]
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .map_or(text.len(), |n| pos + n);
                let literal = match &text[pos..end] {
                    "true" | "True" => "true",
                    "false" | "False" => "false",
                    "null" | "None" => "null",
                    word => {
                        return Err(unreadable(
                            format!(
                                "`{word}` after `{}` is not a JSON value (strings go in double quotes)",
                                near(pos).trim_end()
                            ),
                            pos,
                        ));
                    }
                };
                out.push_str(literal);
                pos = end;
                expect = Expect::After;
            }
            // Prose, the next call, a closing tag or fence: the value stopped where it ended.
            _ if expect == Expect::After && stops(byte, pos > blank) => {
                return close(out, open, blank);
            }
            b'}' | b']' => {
                let wanted = open.last().map_or(String::new(), |&b| {
                    format!(" where `{}` was due", b as char)
                });
                return Err(unreadable(
                    format!(
                        "`{}` after `{}` closes nothing that is open{wanted}",
                        byte as char,
                        near(pos).trim_end()
                    ),
                    pos,
                ));
            }
            _ => {
                let found: String = text[pos..].chars().take(12).collect();
                let wanted = match expect {
                    Expect::Colon => "`:` after the key",
                    Expect::After => "`,` or a closing brace",
                    Expect::FirstKey | Expect::Key => "a key in double quotes",
                    _ => "a value",
                };
                return Err(unreadable(
                    format!(
                        "expected {wanted} after `{}`, found `{}`",
                        near(pos).trim_end(),
                        found.replace(['\n', '\r'], " ")
                    ),
                    pos,
                ));
            }
        }
    }
}

/// Whether `byte`, after a complete value (and after whitespace when `after_blank`), ends the
/// value: the `{` of a next call, the `<` of a closing tag, the backtick of a fence, or prose
/// (a letter after whitespace).
fn stops(byte: u8, after_blank: bool) -> bool {
    matches!(byte, b'{' | b'<' | b'`') || (after_blank && byte.is_ascii_alphabetic())
}

/// The string at `start` (quoted with `"` or `'`) written to `out` in double quotes; the byte
/// offset after it, or `None` when it is not closed.
fn string(text: &str, start: usize, out: &mut String) -> Option<usize> {
    let quote = text[start..].chars().next()?;
    out.push('"');
    let mut chars = text[start + 1..].char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                let (_, escaped) = chars.next()?;
                // `\'` means nothing in JSON; in a single-quoted string it is a quote.
                if escaped == '\'' {
                    out.push('\'');
                } else {
                    out.push('\\');
                    out.push(escaped);
                }
            }
            c if c == quote => {
                out.push('"');
                return Some(start + 1 + i + 1);
            }
            '"' => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    None
}

/// `out` with the closers of `open` added, read; it spans `len` bytes of the text.
fn close(mut out: String, open: Vec<u8>, len: usize) -> Result<Read, Unreadable> {
    out.extend(open.iter().rev().map(|&b| b as char));
    parse(&out, len)
}

fn parse(out: &str, len: usize) -> Result<Read, Unreadable> {
    match serde_json::from_str(out) {
        Ok(value) => Ok(Read { value, len }),
        Err(error) => {
            let message = error.to_string();
            let message = message
                .rfind(" at line ")
                .map_or(message.as_str(), |i| &message[..i]);
            Err(Unreadable {
                why: message.to_owned(),
                at: len,
            })
        }
    }
}

/// The call objects in `range` of `text` that only a lenient reading can read, and the
/// attempted calls of offered tools that cannot be read even so (see the module docs).
/// `code` holds the byte ranges of code fences whose content is code, not calls.
pub(super) fn find(
    text: &str,
    range: Range<usize>,
    tools: &[ToolDefinition],
    code: &[Range<usize>],
) -> Found {
    let offered = |name: &str| tools.iter().any(|t| t.name() == name.trim());
    let mut found = Found::default();
    let mut pos = range.start;
    while let Some(offset) = text[pos..range.end].find('{') {
        let start = pos + offset;
        if code.iter().any(|c| c.contains(&start)) || in_expression(&text[..start]) {
            pos = start + 1;
            continue;
        }
        let rest = &text[start..range.end];
        match value(rest) {
            Ok(read) => {
                let end = start + read.len;
                let call = match &read.value {
                    Value::Object(object) => bare::call(object),
                    _ => None,
                };
                if let Some(call) = call.filter(|c| c.name.as_deref().is_some_and(offered)) {
                    found.push(
                        start..end,
                        vec![RawCall {
                            form: Form::Lenient,
                            ..call
                        }],
                    );
                }
                // Whatever it was, its inside is data, not calls of this reply.
                pos = end.max(start + 1);
            }
            Err(unreadable) => match named(rest).filter(|name| offered(name)) {
                Some(name) => {
                    // The rest of the line where reading stopped belongs to the broken call.
                    let at = start + unreadable.at.min(rest.len());
                    let end = text[at..range.end].find('\n').map_or(range.end, |n| at + n);
                    let why = unreadable.why;
                    found.push(
                        start..end,
                        vec![RawCall {
                            unreadable: Some(format!(
                                "your call of `{name}` could not be read: {why}; write it as \
                                 {{\"name\": \"{name}\", \"arguments\": {{...}}}} in valid JSON \
                                 (double quotes, every brace closed)"
                            )),
                            form: Form::Lenient,
                            ..RawCall::default()
                        }],
                    );
                    pos = end.max(start + 1);
                }
                None => pos = start + 1,
            },
        }
    }
    found
}

/// The tool an object names when it starts `{"name": "..."` (or with single quotes).
fn named(object: &str) -> Option<String> {
    let rest = object.strip_prefix('{')?.trim_start();
    let quote = rest.chars().next().filter(|&q| q == '"' || q == '\'')?;
    let rest = rest[1..].strip_prefix("name")?.strip_prefix(quote)?;
    let rest = rest.trim_start().strip_prefix(':')?.trim_start();
    let value_quote = rest.chars().next().filter(|&q| q == '"' || q == '\'')?;
    let rest = &rest[1..];
    let end = rest.find(value_quote)?;
    Some(rest[..end].to_owned())
}

/// Whether a `{` after `before` is part of an expression of code (`f({`, `x = {`, `[{`, `, {`)
/// rather than written on its own.
fn in_expression(before: &str) -> bool {
    before.trim_end().ends_with(['(', '=', '[', ','])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(text: &str) -> Result<Value, String> {
        value(text).map(|r| r.value).map_err(|u| u.why)
    }

    #[test]
    fn each_repair() {
        // A missing closer at the end, and before prose, a next call or a closing tag.
        let call = json!({"name": "f", "arguments": {"a": "x"}});
        for text in [
            r#"{"name": "f", "arguments": {"a": "x"}"#,
            r#"{"name": "f", "arguments": {"a": "x"}  I'll wait."#,
            "{\"name\": \"f\", \"arguments\": {\"a\": \"x\"}\n{\"name\": \"g\"}",
            r#"{"name": "f", "arguments": {"a": "x"}</tool_call>"#,
            "{\"name\": \"f\", \"arguments\": {\"a\": \"x\"}\n```",
            r#"{"name": "f", "arguments": {"a": "x""#,
        ] {
            assert_eq!(read(text), Ok(call.clone()), "{text}");
        }
        assert_eq!(
            value(r#"{"name": "f", "arguments": {"a": "x"} then"#)
                .unwrap()
                .len,
            37
        );
        assert_eq!(
            read(r#"{'name': 'f', 'arguments': {'q': 'it\'s "x"', "b": [1, 2,],},}"#),
            Ok(json!({"name": "f", "arguments": {"q": "it's \"x\"", "b": [1, 2]}}))
        );
        assert_eq!(
            read(r#"{"a": True, "b": False, "c": None, "d": "True"}"#),
            Ok(json!({"a": true, "b": false, "c": null, "d": "True"}))
        );
    }

    #[test]
    fn what_is_never_guessed() {
        for (text, why) in [
            (
                r#"{"name": "f", "arguments": {"a":"#,
                "before the call is complete",
            ),
            (
                r#"{"name": "f", "arguments": {"#,
                "before the call is complete",
            ),
            (r#"{"name": "f", "arguments": {"a": "x"#, "is not closed"),
            (
                r#"{"name": "f", "arguments": {"a": "x"]}"#,
                "closes nothing that is open",
            ),
            (r#"{"name": "f" "arguments": {}}"#, "expected `,`"),
            (r#"{name: "f"}"#, "a key in double quotes"),
            (r#"{"a": NaN}"#, "not a JSON value"),
            (r#"{"a": 0x1f}"#, "expected `,`"),
            (r#"{"a": 1 // one"#, "expected `,`"),
            (r#"{"a": , "b": 1}"#, "expected a value"),
        ] {
            let error = read(text).unwrap_err();
            assert!(error.contains(why), "{text}: {error}");
        }
    }

    #[test]
    fn the_named_tool() {
        assert_eq!(named(r#"{ "name" : "f", "#).as_deref(), Some("f"));
        assert_eq!(named(r#"{'name': 'f'"#).as_deref(), Some("f"));
        assert_eq!(named(r#"{"arguments": {}, "name": "f"}"#), None);
        assert_eq!(named(r#"{"names": "f"}"#), None);
    }
}
