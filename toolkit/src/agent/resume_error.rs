//! [`ResumeError`]: why a [`PausedRun`](super::PausedRun) could not be read, given a decision
//! or a result, or resumed by an agent.

/// Why a paused run could not be read, given a decision or a result, or resumed. Resuming
/// fails before anything runs: the agent is left as it was.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResumeError {
    /// The stored text is not a paused run (not JSON, a field missing or of the wrong type),
    /// or its parts contradict each other (a waiting call that is not a call of the paused turn,
    /// or one answered already).
    #[error("not a valid paused run: {0}")]
    Malformed(String),
    /// The state was written in another format version.
    #[error(
        "the paused run is in format version {found}, and this build reads version {supported} only; resume it with the release that paused it"
    )]
    UnsupportedVersion {
        /// The version of the state.
        found: u64,
        /// The version this build reads ([`PausedRun::FORMAT_VERSION`](super::PausedRun::FORMAT_VERSION)).
        supported: u32,
    },
    /// A decision was given for a call that does not wait for one.
    #[error("no call `{call_id}` waits for a decision; waiting: {}", list(waiting))]
    UnknownDecision {
        /// The call id of the decision.
        call_id: String,
        /// The calls that do wait for a decision.
        waiting: Vec<String>,
    },
    /// Calls still wait for a decision or an answer: give one for each, then resume.
    #[error(
        "no decision or answer was given for the calls {}; approve or deny each waiting call and answer each question before resuming",
        list(call_ids)
    )]
    MissingDecisions {
        /// The calls without a decision or an answer.
        call_ids: Vec<String>,
    },
    /// An answer was given for a call that asked no question.
    #[error("no call `{call_id}` waits for an answer; asking: {}", list(asking))]
    UnknownQuestion {
        /// The call id of the answer.
        call_id: String,
        /// The calls that do wait for an answer.
        asking: Vec<String>,
    },
    /// An answer does not fit the question: a form answered with a completion or the other
    /// way round, or an accepted form whose content is not a JSON object.
    #[error("the answer for call `{call_id}` does not fit its question: {why}")]
    WrongAnswer {
        /// The call id of the answer.
        call_id: String,
        /// What is wrong.
        why: String,
    },
    /// A result was given for a call that is not a pending external call.
    #[error(
        "the result for call `{call_id}` answers no pending call; pending: {}",
        list(pending)
    )]
    UnknownResult {
        /// The call id of the result.
        call_id: String,
        /// The pending external calls.
        pending: Vec<String>,
    },
    /// Two results were given for one external call.
    #[error("call `{call_id}` was answered twice")]
    DuplicateResult {
        /// The call answered twice.
        call_id: String,
    },
    /// A result was not a tool message with the id of the call it answers.
    #[error("a tool result must be a tool message with the id of the call it answers")]
    NotAToolResult,
    /// The state does not fit the agent given to resume it: an approved call of a tool its
    /// toolkit does not have (or that no longer requires approval), a managed group it does
    /// not manage, or an external tool with the name of one of its tools. Build the agent the
    /// way the one that paused was built.
    #[error("the paused run does not fit this agent: {0}")]
    DoesNotFit(String),
}

fn list(ids: &[String]) -> String {
    if ids.is_empty() {
        return "none".into();
    }
    ids.iter()
        .map(|id| format!("`{id}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
