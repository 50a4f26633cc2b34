//! Bounding what a tool hands to the model: the result budget.

use crate::tool::{Content, ToolOutput};

/// Cut `output` to about `max_bytes` of content: its head (two thirds of the budget) and its
/// tail (one third), cut on character boundaries, with a note between them saying how much was
/// cut and how to see it. JSON that is cut is no longer JSON, so it becomes text. Application
/// metadata is kept whole. The note is counted in the budget when the budget leaves room for
/// it; a smaller budget keeps the head alone and the note.
pub(crate) fn truncate_output(output: ToolOutput, max_bytes: usize) -> ToolOutput {
    let text = output.as_text();
    let len = text.len();
    if len <= max_bytes {
        return output;
    }
    let note = |cut: usize| {
        format!(
            "\n[… {cut} of {len} bytes cut here to fit the result budget; to see them, call the \
             tool again asking for less: a narrower query, a range or a page …]\n"
        )
    };
    // The note's length depends on the number it carries; the longest it can be is with `len`.
    let room = max_bytes.saturating_sub(note(len).len());
    let (head, tail) = if room >= 64 {
        let head = crate::util::prefix(text, room * 2 / 3);
        let tail = suffix(text, room - head.len());
        (head, tail)
    } else {
        (crate::util::prefix(text, max_bytes), "")
    };
    let cut = len - head.len() - tail.len();
    let mut kept = String::with_capacity(head.len() + tail.len() + 160);
    kept.push_str(head);
    kept.push_str(&note(cut));
    kept.push_str(tail);
    ToolOutput {
        content: Content::Text(kept),
        metadata: output.metadata,
    }
}

/// The longest suffix of `text` of at most `max` bytes that starts on a character boundary.
fn suffix(text: &str, max: usize) -> &str {
    let mut start = text.len().saturating_sub(max);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(text: &str, max: usize) -> String {
        truncate_output(ToolOutput::text(text), max)
            .as_text()
            .to_owned()
    }

    #[test]
    fn short_output_is_untouched() {
        assert_eq!(cut("hello", 5), "hello");
    }

    #[test]
    fn long_output_keeps_its_head_and_tail_within_the_budget() {
        let text: String = (0..5000).map(|i| format!("line {i}\n")).collect();
        let kept = cut(&text, 1000);
        assert!(kept.len() <= 1000, "{}", kept.len());
        assert!(kept.starts_with("line 0\nline 1\n"), "{kept}");
        assert!(kept.ends_with("line 4998\nline 4999\n"), "{kept}");
        let cut_bytes = text.len()
            - (kept.len() - kept.lines().find(|l| l.starts_with("[…")).unwrap().len() - 2);
        assert!(
            kept.contains(&format!("{cut_bytes} of {} bytes cut", text.len())),
            "{kept}"
        );
        assert!(
            kept.contains("call the tool again asking for less"),
            "{kept}"
        );
    }

    #[test]
    fn characters_are_never_split_and_tiny_budgets_keep_the_head() {
        let text = "é".repeat(3000);
        let kept = cut(&text, 701);
        assert!(kept.starts_with('é') && kept.ends_with('é'));
        let kept = cut(&text, 10);
        assert!(kept.starts_with("ééééé"), "{kept}");
        assert!(kept.contains("bytes cut here"), "{kept}");
    }
}
