//! The loop guard of a [`Turn`](super::Turn): a call that repeats one of the model's previous
//! step (same tool, same arguments), whose result the model already has, is not run again.
//!
//! Small models often make the call they just made, step after step, until the run's
//! iteration limit. The turn answers such a call without running the tool: with the earlier
//! result and a line saying it is the same (a read-only or idempotent tool, whose result cannot
//! have changed by the repeat), or with a refusal saying the call was made and what it
//! returned (any other tool, which must not take effect twice). Each time is traced
//! (`agent_toolkit::loop_guard`, a `warn` event). On by default;
//! [`ToolkitBuilder::loop_guard`](super::ToolkitBuilder::loop_guard) switches it off.
//!
//! What counts as the previous step is the caller's to say ([`Turn::after`](super::Turn::after)):
//! an agent gives the calls of the model's last step, if nothing but their results (and its
//! own notes on background jobs) came after it — a new user message starts afresh — or, for a
//! call the guard refused there, the answer of the step before that made it. A call whose
//! earlier answers were all errors is run again: a retry after a failure is not a loop — except
//! a denial (an approver's or a policy's, [`ToolErrorKind::Denied`]): a call refused in the
//! last step is refused again with that reason, and the approver is not asked twice. An agent
//! gives a background call whose job it has reported finished with the job's result, not the
//! "running in the background" the call first got (a failed job's repeat is a retry, and runs).
//! The guard's own answers are of the kind
//! [`ToolErrorKind::Repeated`].

use crate::error::{ToolError, ToolErrorKind};
use crate::tool::{ToolCall, ToolOutput, ToolResult};

/// A call of the model's previous step and the text of its result (a success, or a denial):
/// what the loop guard compares a turn's calls with ([`Turn::after`](super::Turn::after)).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct AnsweredCall {
    /// The call as the model made it.
    pub call: ToolCall,
    /// The text its result gave the model.
    pub answer: String,
    /// It was refused ([`ToolErrorKind::Denied`]), `answer` saying why: a repeat is refused
    /// with that reason, whatever the tool.
    pub denied: bool,
}

impl AnsweredCall {
    /// `call`, answered with `answer`.
    pub fn new(call: ToolCall, answer: impl Into<String>) -> Self {
        AnsweredCall {
            call,
            answer: answer.into(),
            denied: false,
        }
    }

    /// `call`, refused (by an approver or a policy) with `reason`.
    pub fn denied(call: ToolCall, reason: impl Into<String>) -> Self {
        AnsweredCall {
            denied: true,
            ..AnsweredCall::new(call, reason)
        }
    }

    /// Whether `call` repeats this one: the same tool name and the same arguments (as written,
    /// white space between JSON tokens aside; no arguments and `{}` are the same).
    pub fn is_repeated_by(&self, call: &ToolCall) -> bool {
        repeats(call, &self.call)
    }
}

/// Whether `call` repeats `earlier` (see [`AnsweredCall::is_repeated_by`]).
pub(crate) fn repeats(call: &ToolCall, earlier: &ToolCall) -> bool {
    earlier.name == call.name && same_arguments(&earlier.arguments, &call.arguments)
}

/// The line added to an earlier result given again. Fixed text, so that a result given again
/// twice carries it once.
const GIVEN_AGAIN: &str = "\n\n[You made this same call in your last step; this is its result \
again, the tool was not run twice. Use it and go on, or call with other arguments.]";

/// The answer to `call`, which repeats `earlier`: the earlier result given again (`repeatable`:
/// a read-only or idempotent tool) or a refusal (any other tool, or an earlier denial).
pub(super) fn answer(call: ToolCall, earlier: &AnsweredCall, repeatable: bool) -> ToolResult {
    let text = earlier
        .answer
        .strip_suffix(GIVEN_AGAIN)
        .unwrap_or(&earlier.answer);
    // Quoted inside a sentence: without the "Error: " a failed result is shown with, and
    // without its last full stop.
    let quoted = text
        .strip_prefix("Error: ")
        .unwrap_or(text)
        .trim_end_matches('.');
    tracing::warn!(
        target: "agent_toolkit::loop_guard",
        tool = %call.name,
        call_id = %call.id,
        earlier_call_id = %earlier.call.id,
        given_again = repeatable && !earlier.denied,
        denied_before = earlier.denied,
        "a call repeating the last step's was not run again"
    );
    let outcome = if earlier.denied {
        Err(ToolError::new(
            ToolErrorKind::Repeated,
            format!(
                "not run: you made this same call in your last step and it was refused: {quoted}. \
                 Do not make it again; answer without it, or do something else."
            ),
        ))
    } else if repeatable {
        Ok(ToolOutput::text(format!("{text}{GIVEN_AGAIN}")))
    } else {
        Err(ToolError::new(
            ToolErrorKind::Repeated,
            format!(
                "not run again: you made this same call in your last step, and it returned: \
                 {quoted}. Use that result, or call with other arguments if you need something \
                 else."
            ),
        ))
    };
    ToolResult::new(call.id, call.name, outcome, 0)
}

/// `a` and `b` are the same JSON text, white space outside strings aside (an empty text is
/// `{}`).
fn same_arguments(a: &str, b: &str) -> bool {
    a == b || significant(a).eq(significant(b))
}

/// The characters of a JSON text that matter: white space outside strings skipped.
fn significant(text: &str) -> impl Iterator<Item = char> + '_ {
    let text = match text.trim() {
        "" => "{}",
        text => text,
    };
    let (mut in_string, mut escaped) = (false, false);
    text.chars().filter(move |&c| {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            true
        } else {
            in_string = c == '"';
            !c.is_whitespace()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::{AnsweredCall, GIVEN_AGAIN, answer};
    use crate::tool::ToolCall;

    fn earlier(arguments: &str) -> AnsweredCall {
        AnsweredCall::new(ToolCall::new("c1", "weather", arguments), "sunny")
    }

    #[test]
    fn the_same_arguments_are_the_same_whatever_the_spacing_outside_strings() {
        let same = |a: &str, b: &str| earlier(a).is_repeated_by(&ToolCall::new("c2", "weather", b));
        assert!(same(r#"{"city":"Oslo"}"#, r#"{ "city" : "Oslo" }"#));
        assert!(same("", "{}"));
        assert!(same(" {}\n", ""));
        assert!(!same(r#"{"city":"Oslo"}"#, r#"{"city":"O slo"}"#));
        assert!(!same(r#"{"city":"Oslo "}"#, r#"{"city":"Oslo"}"#));
        assert!(!same(r#"{"a":"\" x"}"#, r#"{"a":"\"x"}"#));
        assert!(!same(r#"{"n":1}"#, r#"{"n":2}"#));
        let other_tool = ToolCall::new("c2", "forecast", r#"{"city":"Oslo"}"#);
        assert!(!earlier(r#"{"city":"Oslo"}"#).is_repeated_by(&other_tool));
    }

    #[test]
    fn a_result_given_again_twice_says_so_once() {
        let first = answer(ToolCall::new("c2", "weather", "{}"), &earlier("{}"), true);
        let text = first.model_text().into_owned();
        assert_eq!(text, format!("sunny{GIVEN_AGAIN}"));
        let again = AnsweredCall::new(ToolCall::new("c2", "weather", "{}"), text);
        let second = answer(ToolCall::new("c3", "weather", "{}"), &again, true);
        assert_eq!(second.model_text(), format!("sunny{GIVEN_AGAIN}"));
        assert_eq!(second.call_id.as_ref(), "c3");
    }

    #[test]
    fn a_repeat_of_a_tool_that_may_act_is_refused_with_the_earlier_result() {
        let result = answer(ToolCall::new("c2", "weather", "{}"), &earlier("{}"), false);
        let error = result.error().expect("refused");
        assert_eq!(error.kind(), crate::error::ToolErrorKind::Repeated);
        assert!(
            error.message().contains("returned: sunny"),
            "{}",
            error.message()
        );
    }

    #[test]
    fn a_repeat_of_a_denied_call_is_refused_with_the_reason_even_for_a_read_only_tool() {
        let denied = AnsweredCall::denied(ToolCall::new("c1", "weather", "{}"), "not today");
        let result = answer(ToolCall::new("c2", "weather", "{}"), &denied, true);
        let error = result.error().expect("refused");
        assert_eq!(error.kind(), crate::error::ToolErrorKind::Repeated);
        assert!(
            error.message().contains("it was refused: not today"),
            "{}",
            error.message()
        );
    }
}
