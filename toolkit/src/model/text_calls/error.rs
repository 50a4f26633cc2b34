//! [`TextCallError`]: why the calls of a reply cannot be used, and the helpers that quote the
//! reply in its messages. A leaf, shared by every reader.

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
    /// [`ToolChoice::Specific`]). Raised by [`TextToolCalls`](super::TextToolCalls), never
    /// by the parser.
    ///
    /// [`ToolChoice::Required`]: crate::ToolChoice::Required
    /// [`ToolChoice::Specific`]: crate::ToolChoice::Specific
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
