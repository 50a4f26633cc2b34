//! Bounding what a tool hands to the model.

use crate::tool::{Content, ToolOutput};

/// Cut `output` to at most `max_bytes` of content (on a character boundary) and append a
/// marker saying how much was dropped. JSON that is cut is no longer JSON, so it becomes text.
/// Application metadata is kept whole.
pub(crate) fn truncate_output(output: ToolOutput, max_bytes: usize) -> ToolOutput {
    let len = output.as_text().len();
    if len <= max_bytes {
        return output;
    }
    let shown = crate::util::prefix(output.as_text(), max_bytes);
    let cut = shown.len();
    let mut kept = String::with_capacity(cut + 96);
    kept.push_str(shown);
    kept.push_str(&format!(
        "\n[output truncated: {len} bytes in all, the first {cut} shown]"
    ));
    ToolOutput {
        content: Content::Text(kept),
        metadata: output.metadata,
    }
}
