//! One turn of a conversation: a new question, or tool results for the waiting run.

use a2a::{A2AError, Message};
use a2a_server::ExecutorContext;
use tokio_util::sync::CancellationToken;

use super::super::emit::{self, Events};
use super::conversations::{Session, Shared, SharedSession};
use super::pending::{describe, match_results, unanswered};
use super::reply::{Kind, Reply};
use crate::a2a::parts::{
    InvalidToolsPart, TOOL_RESULTS, ToolResultEntry, extract_text_results, extract_tool_results,
    extract_tools, has_part, requested_call_format, tool_results_text,
};
use crate::agent::RunOutcome;

/// The tool results `message` carries, if any: the `tool-results` part when there is one (a
/// document text beside it is its readable copy), else the document's result texts.
pub(super) fn incoming_results(
    message: &Message,
) -> Result<Option<Vec<ToolResultEntry>>, InvalidToolsPart> {
    if has_part(message, TOOL_RESULTS) {
        return extract_tool_results(message).map(Some);
    }
    let texts = extract_text_results(message)?;
    Ok((!texts.is_empty()).then_some(texts))
}

/// What a message brings to its conversation.
enum Incoming {
    /// Something for the model to answer.
    Question(String),
    /// Results for the calls the conversation waits for.
    Results(Vec<ToolResultEntry>),
}

/// Runs one message to its reply (see the [module docs](super) for the cases).
pub(super) async fn turn(
    shared: &Shared,
    session: SharedSession,
    ctx: ExecutorContext,
    events: &Events,
    token: CancellationToken,
) {
    let Some(message) = events.require_message(ctx.message).await else {
        return;
    };
    let continuation = message.task_id.is_some();
    let mut session = tokio::select! {
        session = session.lock() => session,
        _ = token.cancelled() => return,
    };
    let session = &mut *session;
    if let Some(format) = requested_call_format(&message) {
        session.format = format;
    }
    let kind = if continuation {
        Kind::Task
    } else {
        shared.replies.kind_for(session.format)
    };
    let stored = ctx.stored_task.filter(|_| continuation);
    let mut reply = Reply::new(events, kind, session.format, message.clone(), stored);
    let incoming = match incoming_results(&message) {
        Ok(incoming) => incoming,
        // Checked before the task was created; said plainly should it ever get here.
        Err(e) => return reply.refuse(A2AError::invalid_params(e.to_string())).await,
    };
    // Results from a client that named no conversation (design document 000's client as
    // printed): nothing can wait for them, so they are the question of a new conversation, in
    // words the model reads.
    let incoming = match incoming {
        Some(results) if message.context_id.is_none() && !continuation => {
            let question = emit::text_of(&message);
            let question = if question.trim().is_empty() {
                tool_results_text(&results)
            } else {
                question
            };
            Incoming::Question(question)
        }
        Some(results) => Incoming::Results(results),
        None => Incoming::Question(emit::text_of(&message)),
    };
    let memory_len;
    let outcome = match incoming {
        Incoming::Results(results) => {
            let Some(results) =
                take_results(shared, session, &mut reply, continuation, results).await
            else {
                return;
            };
            if !reply.start().await {
                return;
            }
            memory_len = session.agent.memory().len();
            let run = session.agent.resume_with_results(results);
            tokio::select! {
                outcome = run => Some(outcome),
                _ = token.cancelled() => None,
            }
        }
        Incoming::Question(question) => {
            // A new question: the conversation moves on from any run still waiting.
            if let Some(asked) = session.announced_by.take()
                && asked != events.task_id
            {
                let why = format!(
                    "closed: the conversation moved on (task {}) before the tool results came",
                    events.task_id
                );
                shared.close_task(&asked, why).await;
            }
            session.close_pending();
            let tools = match extract_tools(&message) {
                Ok(tools) => tools,
                Err(e) => return reply.refuse(A2AError::invalid_params(e.to_string())).await,
            };
            if !reply.start().await {
                return;
            }
            memory_len = session.agent.memory().len();
            let run = session.agent.run_with_external_tools(question, tools);
            tokio::select! {
                outcome = run => Some(outcome),
                _ = token.cancelled() => None,
            }
        }
    };
    let Some(outcome) = outcome else {
        // Cancelled: `cancel` reported CANCELED; undo the half-done turn.
        session.agent.interrupt(memory_len);
        return;
    };
    match outcome {
        Ok(RunOutcome::Final(answer)) => reply.answer(answer).await,
        Ok(RunOutcome::ToolCalls(calls)) => {
            if reply.kind() == Kind::Task {
                session.announced_by = Some(events.task_id.clone());
            }
            reply.calls(&calls, None).await;
        }
        Ok(RunOutcome::Paused(run)) => {
            // Nobody on the wire can approve: close the waiting calls so the conversation
            // stays valid, and say why.
            session.close_pending();
            let why = format!(
                "the run paused at {} call(s) that wait for approval and {} whose tool asked a \
                 question; an agent served over A2A needs an approver \
                 (ReActAgentBuilder::approver) and a Caller in its context instead of \
                 pause_at_approvals",
                run.pending_approvals().len(),
                run.pending_questions().len()
            );
            reply.fail(why).await;
        }
        Err(e) => reply.fail(e.to_string()).await,
    }
}

/// Matches `results` to the waiting run's calls. `Some` with the tool messages for every call
/// when the run can resume; `None` when the turn has been answered already (refused, or still
/// waiting for more results).
async fn take_results(
    shared: &Shared,
    session: &mut Session,
    reply: &mut Reply<'_>,
    continuation: bool,
    results: Vec<ToolResultEntry>,
) -> Option<Vec<crate::model::Message>> {
    let events_task = reply.task_id().to_string();
    if continuation && session.announced_by.as_deref() != Some(events_task.as_str()) {
        // The run that superseded this task may itself be waiting: leave it be.
        reply
            .fail(
                "this task no longer waits for tool results: a newer message in the \
                 conversation started another run"
                    .into(),
            )
            .await;
        return None;
    }
    let pending = session.agent.pending_external_calls().to_vec();
    if pending.is_empty() {
        let error = A2AError::invalid_params(
            "the message carries tool results, but its conversation waits for none (no run is \
             waiting for tool calls, or it ended); send a question instead",
        );
        reply.refuse(error).await;
        return None;
    }
    let matched = match match_results(&pending, &session.received, results) {
        Ok(matched) => matched,
        Err(problem) => {
            let why = format!("the tool results were refused: {problem}");
            if continuation {
                // The task keeps waiting and says why, with the calls still open.
                let open = unanswered(&pending, &session.received);
                reply.calls(&open, Some(why)).await;
            } else {
                reply.refuse(A2AError::invalid_params(why)).await;
            }
            return None;
        }
    };
    // Results that came in another task than the one that asked: that one's wait is over.
    if let Some(asked) = session.announced_by.take()
        && asked != events_task
    {
        let why = format!("closed: its tool calls were answered in task {events_task}");
        shared.close_task(&asked, why).await;
    }
    session.received.extend(matched);
    let open = unanswered(&pending, &session.received);
    if !open.is_empty() {
        if reply.kind() == Kind::Task {
            session.announced_by = Some(events_task);
        }
        let note = format!(
            "{} of {} tool results received; still waiting for: {}",
            pending.len() - open.len(),
            pending.len(),
            describe(&open)
        );
        reply.calls(&open, Some(note)).await;
        return None;
    }
    let results = pending
        .iter()
        .filter_map(|call| {
            session
                .received
                .iter()
                .find(|r| *r.tool_call_id == *call.id)
                .map(ToolResultEntry::to_message)
        })
        .collect();
    session.received.clear();
    Some(results)
}
