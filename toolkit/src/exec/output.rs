//! Bounding what a tool hands to the model.

use crate::tool::{Content, ToolOutput};

/// Cut `output` to at most `max_bytes` of content (on a character boundary) and append a
/// marker saying how much was dropped. JSON that is cut is no longer JSON, so it becomes text.
/// Application metadata is kept whole.
pub fn truncate_output(output: ToolOutput, max_bytes: usize) -> ToolOutput {
    let len = output.as_text().len();
    if len <= max_bytes {
        return output;
    }
    let text = output.as_text();
    let mut cut = max_bytes;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut kept = String::with_capacity(cut + 96);
    kept.push_str(&text[..cut]);
    kept.push_str(&format!(
        "\n[output truncated: {len} bytes in all, the first {cut} shown]"
    ));
    ToolOutput {
        content: Content::Text(kept),
        metadata: output.metadata,
    }
}
