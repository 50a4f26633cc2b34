//! The vocabulary every part of the parser shares: the [`TextCallFormat`]s calls are written
//! in, and a call as the reply wrote it ([`RawCall`]), before it is checked against the
//! offered tools. A leaf: the format readers (`json.rs`, `xml.rs`, `elements/`) produce these
//! types and `parse.rs` and `typing.rs` consume them, so dependencies point one way.

use std::ops::Range;

use serde_json::Value;

/// How a text-only model writes tool calls.
///
/// **What counts as an attempted call.** A reply is a plain answer unless it contains a
/// marker that ordinary prose does not: talking about `tool_calls` or "a tool_call" is fine.
/// Every marker must belong to a complete call block, and every call must name one of the
/// offered tools and carry an object of parameters; otherwise the whole reply is refused and
/// the model asked again ([`TextToolCalls`](super::TextToolCalls)), because half a call
/// handed on is worse than asking again.
///
/// Blocks may sit anywhere in prose and inside Markdown code fences. The text the agent sees
/// is the reply without the blocks, and without fences or `<tool_calls>` wrappers that held
/// nothing else. Calls without an id (or with one used before) get a fresh one.
///
/// **Lenient reading.** Small local models slip when they write JSON. The JSON of a
/// `{"tool_calls": ..}` block, of a Hermes `<tool_call>{..}</tool_call>` and of a bare
/// `{"name": .., "arguments": ..}` object that is not valid as written is read again with
/// exactly these repairs: strings and keys in single quotes, Python's `True`, `False` and
/// `None`, a trailing comma before `}` or `]`, and objects and arrays left open after a
/// complete value (the last `}` missing, at the end of the reply or before prose, a next call
/// or a closing tag or fence). Nothing else is guessed: a reply cut off inside a string or
/// after `:` stays unreadable. A bare object read this way is a call only when it names an
/// offered tool, and an object that starts `{"name": "<an offered tool>"` but cannot be read
/// even so is an attempted call that is refused with the reason, never prose. Objects in
/// code — a fence with a language other than JSON, or after `(`, `=`, `[` or `,` — are not
/// read leniently. The JSON in seed 002's `<parameters>` element is read strictly. Every call
/// read leniently is then checked like any other.
///
/// **Copied schemas.** Arguments that are a piece of the tool's JSON Schema rather than values
/// (an object with `"type": "object"` and `"properties"`, for a tool that declares its
/// properties and none named `type` or `properties`) are read as no arguments, `{}`, so that
/// the tool's validation names the missing ones.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TextCallFormat {
    /// One JSON object: `{"tool_calls": [{"id": "..", "name": "..", "parameters": {..}}]}`.
    ///
    /// The marker is `"tool_calls"` (or `"tool_call"`) written as a JSON key, in double quotes
    /// and followed by a colon; the call block is the JSON object holding that key. `id` is
    /// optional, `parameters` (alias `arguments`) may be left out for `{}`, and a single call
    /// object may stand in for the list.
    #[default]
    Json,
    /// One element per call:
    /// `<tool_call id=".." name=".."><parameters>{json}</parameters></tool_call>`.
    ///
    /// The marker is an opening `<tool_call` tag (followed by whitespace, `>` or `/`) or a
    /// closing `</tool_call>` tag; each element is one call. `id` is optional and the
    /// parameters may be left out for `{}`. The parameters may also be written as one element
    /// per parameter, as in `seeds/002`:
    /// `<parameters><a>10</a><b>5</b><operation>add</operation></parameters>`. XML text has
    /// no types, so each element is typed by the called tool's parameter schema: `10` becomes
    /// a number where the schema takes a number and stays the string `"10"` where it takes a
    /// string; child elements become objects, repeated elements arrays (or `<item>`
    /// children), empty elements `null` where allowed. Entities and CDATA are decoded, and
    /// whitespace around a value that includes a line break is layout and dropped. Where the
    /// schema says nothing about a parameter, text that is exactly a JSON number, `true`,
    /// `false` or `null` becomes that value, anything else a string.
    Xml,
}

/// A call as written, before it is checked.
#[derive(Debug, Default)]
pub(super) struct RawCall {
    pub id: Option<String>,
    pub name: Option<String>,
    pub parameters: Option<Parameters>,
    /// Which written form it came in, for traces.
    pub form: Form,
    /// Why an attempted call could not be read even leniently, in words for the model (then
    /// it has no name and no parameters); `None` for a call that was read.
    pub unreadable: Option<String>,
}

/// The written forms a call is read in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Form {
    /// `{"tool_calls": [..]}` (seed 002's JSON form).
    #[default]
    ToolCallsKey,
    /// `<tool_call name="..">` (seed 002's XML form).
    Element,
    /// `<tool_call>{"name": .., "arguments": ..}</tool_call>` (Hermes, Qwen's template).
    Hermes,
    /// A bare `{"name": .., "arguments": ..}` object.
    Bare,
    /// A bare call object only a lenient reading can read (`lenient.rs`).
    Lenient,
}

impl Form {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Form::ToolCallsKey => "tool_calls JSON",
            Form::Element => "<tool_call> element",
            Form::Hermes => "Hermes <tool_call>",
            Form::Bare => "bare JSON object",
            Form::Lenient => "bare JSON object, read leniently",
        }
    }
}

/// Parameters as written: a JSON value, or XML elements still to be typed by the tool's
/// schema (which is known only once the name is checked).
#[derive(Debug)]
pub(super) enum Parameters {
    Json(Value),
    Elements(Vec<Element>),
}

/// The call blocks of a reply, in order.
#[derive(Debug, Default)]
pub(super) struct Found {
    pub blocks: Vec<Block>,
}

/// One call block: its byte range in the reply and the calls it holds, in order.
#[derive(Debug)]
pub(super) struct Block {
    pub span: Range<usize>,
    pub calls: Vec<RawCall>,
}

impl Found {
    /// Add the block at `span`, after every block found so far.
    pub fn push(&mut self, span: Range<usize>, calls: Vec<RawCall>) {
        self.blocks.push(Block { span, calls });
    }

    /// How many calls the blocks hold.
    pub fn calls(&self) -> usize {
        self.blocks.iter().map(|b| b.calls.len()).sum()
    }

    /// Whether `at` lies in one of the blocks.
    pub fn covers(&self, at: usize) -> bool {
        self.blocks.iter().any(|b| b.span.contains(&at))
    }
}

/// A parameter element as written: its name and what it holds.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Element {
    pub name: String,
    pub body: Body,
}

/// What an element holds.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Body {
    /// Nothing but (layout) whitespace, or a self-closing tag.
    Empty,
    /// Text, entities decoded, layout whitespace removed.
    Text(String),
    /// Child elements, in order.
    Children(Vec<Element>),
}
