//! The executor of an [`A2aAgentServer`](super::A2aAgentServer): each message runs as one
//! turn of its conversation; `CancelTask` stops a running turn or drops the calls a waiting
//! task asked for.

use std::sync::Arc;

use a2a::{Part, StreamResponse, TaskState, TaskStatus, TaskStatusUpdateEvent};
use a2a_server::{AgentExecutor, ExecutorContext};
use futures::FutureExt;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::super::emit::{self, EventStream};
use super::conversations::Shared;
use super::turn;
use crate::util::lock;

/// Runs each message as one turn of its conversation.
pub(super) struct ChatExecutor {
    pub(super) shared: Arc<Shared>,
}

impl AgentExecutor for ChatExecutor {
    fn execute(&self, ctx: ExecutorContext) -> EventStream {
        let token = CancellationToken::new();
        let (events, stream) = emit::channel(&ctx.task_id, &ctx.context_id, token.clone());
        let session = self.shared.session(&ctx.context_id);
        lock(&self.shared.state)
            .running
            .insert(ctx.task_id.clone(), token.clone());
        let shared = self.shared.clone();
        let span = crate::trace_context::a2a_server_span(&ctx, "a2a agent turn");
        tokio::spawn(
            async move {
                let restored = match &session {
                    Ok(session) => {
                        let mut guard = tokio::select! {
                            guard = session.lock() => guard,
                            _ = token.cancelled() => {
                                lock(&shared.state).running.remove(&events.task_id);
                                return;
                            }
                        };
                        shared.restore(&ctx.context_id, &mut guard).await
                    }
                    Err(text) => Err(text.clone()),
                };
                match (session, restored) {
                    (Ok(session), Ok(())) => {
                        let run = std::panic::AssertUnwindSafe(turn::turn(
                            &shared,
                            session.clone(),
                            ctx,
                            &events,
                            token,
                        ));
                        if run.catch_unwind().await.is_err() {
                            tracing::error!(task_id = %events.task_id, "the agent panicked");
                            let text = "the agent failed with an internal error";
                            let message = events.agent_message(vec![Part::text(text)]);
                            events.status(TaskState::Failed, Some(message)).await;
                        }
                        shared
                            .save(&events.context_id, &*session.lock().await)
                            .await;
                    }
                    (_, Err(text)) | (Err(text), _) => {
                        let message = events.agent_message(vec![Part::text(text)]);
                        let task = events.new_task(
                            TaskState::Submitted,
                            ctx.message.into_iter().collect(),
                            None,
                        );
                        if events.task(task).await {
                            events.status(TaskState::Failed, Some(message)).await;
                        }
                    }
                }
                lock(&shared.state).running.remove(&events.task_id);
            }
            .instrument(span),
        );
        stream
    }

    fn cancel(&self, ctx: ExecutorContext) -> EventStream {
        let (running, reason) = {
            let mut state = lock(&self.shared.state);
            (
                state.running.remove(&ctx.task_id),
                state.closing.remove(&ctx.task_id),
            )
        };
        match running {
            // The turn rolls the conversation back when it sees the token.
            Some(token) => token.cancel(),
            // The server closing a task it superseded has already settled the conversation.
            None if reason.is_some() => {}
            // A task waiting for tool results: drop the calls it asked for (unless a newer
            // run of the conversation already did, or is running now).
            None => {
                let session = lock(&self.shared.state)
                    .contexts
                    .get(&ctx.context_id)
                    .map(|c| c.session.clone());
                if let Some(session) = session
                    && let Ok(mut session) = session.try_lock()
                    && session.announced_by.as_deref() == Some(ctx.task_id.as_str())
                {
                    session.announced_by = None;
                    session.close_pending();
                    drop(session);
                    // The conversation changed outside a turn: store it.
                    let (shared, context_id) = (self.shared.clone(), ctx.context_id.clone());
                    let session = lock(&shared.state)
                        .contexts
                        .get(&context_id)
                        .map(|c| c.session.clone());
                    if let Some(session) = session {
                        tokio::spawn(async move {
                            shared.save(&context_id, &*session.lock().await).await;
                        });
                    }
                }
            }
        }
        let message = reason.map(|text| {
            let mut message = a2a::Message::new(a2a::Role::Agent, vec![Part::text(text)]);
            message.task_id = Some(ctx.task_id.clone());
            message.context_id = Some(ctx.context_id.clone());
            message
        });
        let event = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: ctx.task_id,
            context_id: ctx.context_id,
            status: TaskStatus {
                state: TaskState::Canceled,
                message,
                timestamp: None,
            },
            metadata: None,
        });
        Box::pin(futures::stream::once(async move { Ok(event) }))
    }
}
