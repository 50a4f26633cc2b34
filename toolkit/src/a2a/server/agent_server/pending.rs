//! Matching tool results to the calls a waiting run asked for, as they arrive.
//!
//! Results come by call id (the project's `tool-results` part, or a document text that names
//! one) or by tool name only (design document 000's texts). A result without an id answers the
//! first open call of that name, in the order the calls were made, which is the order the
//! document's clients send them in. A batch is taken whole or not at all: one result that
//! answers no open call refuses the batch, listing every such result and the calls still open,
//! so nothing is half-applied and nothing is dropped. Results may arrive over several messages
//! (the document's clients send one message per call); the run resumes once every call has one.

use std::collections::HashSet;

use crate::a2a::parts::ToolResultEntry;
use crate::tool::ToolCall;

/// Matches `incoming` to the calls of `pending` that `received` has not answered. Each
/// returned entry carries the id and name of the call it answers.
pub(super) fn match_results(
    pending: &[ToolCall],
    received: &[ToolResultEntry],
    incoming: Vec<ToolResultEntry>,
) -> Result<Vec<ToolResultEntry>, String> {
    let mut answered: HashSet<&str> = received.iter().map(|r| r.tool_call_id.as_str()).collect();
    let mut matched = Vec::with_capacity(incoming.len());
    let mut problems = Vec::new();
    for entry in incoming {
        let call = if entry.tool_call_id.is_empty() {
            let call = pending
                .iter()
                .find(|c| c.name == entry.name && !answered.contains(&*c.id));
            if call.is_none() {
                problems.push(format!(
                    "the result for `{}` answers no open call of that name",
                    entry.name
                ));
            }
            call
        } else {
            match pending.iter().find(|c| *c.id == *entry.tool_call_id) {
                Some(c) if answered.contains(&*c.id) => {
                    problems.push(format!("call `{}` was answered twice", c.id));
                    None
                }
                Some(c) => Some(c),
                None => {
                    problems.push(format!(
                        "the result for call `{}` answers no pending call",
                        entry.tool_call_id
                    ));
                    None
                }
            }
        };
        if let Some(call) = call {
            answered.insert(&call.id);
            matched.push(ToolResultEntry {
                tool_call_id: call.id.to_string(),
                name: call.name.clone(),
                ..entry
            });
        }
    }
    if problems.is_empty() {
        Ok(matched)
    } else {
        Err(format!(
            "{}; open calls: {}",
            problems.join("; "),
            describe(&unanswered(pending, received))
        ))
    }
}

/// The calls of `pending` that `received` has no result for, in call order.
pub(super) fn unanswered(pending: &[ToolCall], received: &[ToolResultEntry]) -> Vec<ToolCall> {
    pending
        .iter()
        .filter(|c| !received.iter().any(|r| *r.tool_call_id == *c.id))
        .cloned()
        .collect()
}

/// `name (id), …`, or `none`.
pub(super) fn describe(calls: &[ToolCall]) -> String {
    if calls.is_empty() {
        return "none".into();
    }
    calls
        .iter()
        .map(|c| format!("{} ({})", c.name, c.id))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str, name: &str) -> ToolCall {
        ToolCall::new(id, name, "{}")
    }

    fn result(id: &str, name: &str, content: &str) -> ToolResultEntry {
        ToolResultEntry {
            tool_call_id: id.into(),
            name: name.into(),
            content: content.into(),
            is_error: false,
        }
    }

    /// A batch of results, each `(id, name, content)`.
    fn results(entries: &[(&str, &str, &str)]) -> Vec<ToolResultEntry> {
        entries
            .iter()
            .map(|(id, name, content)| result(id, name, content))
            .collect()
    }

    #[test]
    fn results_by_name_answer_open_calls_in_call_order() {
        let pending = [call("c1", "w"), call("c2", "f"), call("c3", "w")];
        let received = results(&[("", "w", "1"), ("", "f", "2"), ("", "w", "3")]);
        let matched = match_results(&pending, &[], received).unwrap();
        let expected = results(&[("c1", "w", "1"), ("c2", "f", "2"), ("c3", "w", "3")]);
        assert_eq!(matched, expected);
    }

    #[test]
    fn results_may_come_one_message_at_a_time() {
        let pending = [call("c1", "w"), call("c2", "w")];
        let first = match_results(&pending, &[], vec![result("", "w", "1")]).unwrap();
        assert_eq!(unanswered(&pending, &first), [call("c2", "w")]);
        let second = match_results(&pending, &first, vec![result("", "w", "2")]).unwrap();
        assert_eq!(second, [result("c2", "w", "2")]);
        let all: Vec<_> = first.into_iter().chain(second).collect();
        assert!(unanswered(&pending, &all).is_empty());
    }

    #[test]
    fn a_batch_with_an_unmatched_result_is_refused_whole() {
        let pending = [call("c1", "w"), call("c2", "f")];
        let received = [result("c1", "w", "1")];
        let batch = results(&[
            ("", "f", "ok"),
            ("", "w", "again"),
            ("c1", "w", "twice"),
            ("zz", "w", "?"),
        ]);
        let err = match_results(&pending, &received, batch).unwrap_err();
        assert_eq!(
            err,
            "the result for `w` answers no open call of that name; call `c1` was answered \
             twice; the result for call `zz` answers no pending call; open calls: f (c2)"
        );
    }
}
