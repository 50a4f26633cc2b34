//! The events an executor sends: a channel from the worker that runs a task to the stream the
//! official handler reads, with helpers for the task's status and artifact events.

use std::collections::HashMap;

use a2a::{
    A2AError, Artifact, Message, Part, Role, StreamResponse, Task, TaskArtifactUpdateEvent,
    TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use futures::stream::BoxStream;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};

pub(super) type EventStream = BoxStream<'static, Result<StreamResponse, A2AError>>;

/// The sending side: one task's events.
pub(super) struct Events {
    tx: mpsc::Sender<Result<StreamResponse, A2AError>>,
    pub(super) task_id: String,
    pub(super) context_id: String,
}

/// A channel for one task's events, and the stream to hand the handler. Dropping the stream
/// (the handler stopped listening, e.g. after a cancel) cancels `token`, so the worker stops.
pub(super) fn channel(
    task_id: &str,
    context_id: &str,
    token: CancellationToken,
) -> (Events, EventStream) {
    let (tx, rx) = mpsc::channel(64);
    let events = Events {
        tx,
        task_id: task_id.to_string(),
        context_id: context_id.to_string(),
    };
    let stream = futures::stream::unfold(
        (rx, token.drop_guard()),
        |(mut rx, guard): (_, DropGuard)| async move {
            rx.recv().await.map(|event| (event, (rx, guard)))
        },
    );
    (events, Box::pin(stream))
}

impl Events {
    /// Sends one event; false when nobody listens any more.
    pub(super) async fn send(&self, event: Result<StreamResponse, A2AError>) -> bool {
        self.tx.send(event).await.is_ok()
    }

    /// The request's message, or `-32602` sent and `None` when it has none (the executor
    /// context lets it be absent).
    pub(super) async fn require_message(&self, message: Option<Message>) -> Option<Message> {
        if message.is_none() {
            self.send(Err(A2AError::invalid_params("invalid params: no message")))
                .await;
        }
        message
    }

    /// The task as a whole (the first event of a stream).
    pub(super) async fn task(&self, task: Task) -> bool {
        self.send(Ok(StreamResponse::Task(task))).await
    }

    /// A status update.
    pub(super) async fn status(&self, state: TaskState, message: Option<Message>) -> bool {
        self.send(Ok(StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: self.task_id.clone(),
            context_id: self.context_id.clone(),
            status: TaskStatus {
                state,
                message,
                timestamp: None,
            },
            metadata: None,
        })))
        .await
    }

    /// A whole artifact in one update.
    pub(super) async fn artifact(&self, artifact: Artifact) -> bool {
        self.send(Ok(StreamResponse::ArtifactUpdate(
            TaskArtifactUpdateEvent {
                task_id: self.task_id.clone(),
                context_id: self.context_id.clone(),
                artifact,
                append: Some(false),
                last_chunk: Some(true),
                metadata: None,
            },
        )))
        .await
    }

    /// A message from the agent about this task.
    pub(super) fn agent_message(&self, parts: Vec<Part>) -> Message {
        let mut message = Message::new(Role::Agent, parts);
        message.task_id = Some(self.task_id.clone());
        message.context_id = Some(self.context_id.clone());
        message
    }

    /// A new task in `state`, with `history` and `metadata`.
    pub(super) fn new_task(
        &self,
        state: TaskState,
        history: Vec<Message>,
        metadata: Option<HashMap<String, Value>>,
    ) -> Task {
        Task {
            id: self.task_id.clone(),
            context_id: self.context_id.clone(),
            status: TaskStatus {
                state,
                message: None,
                timestamp: None,
            },
            artifacts: None,
            history: Some(history),
            metadata,
        }
    }
}

/// An artifact with a fresh id.
pub(super) fn artifact(
    name: &str,
    parts: Vec<Part>,
    metadata: Option<HashMap<String, Value>>,
) -> Artifact {
    Artifact {
        artifact_id: a2a::new_artifact_id(),
        name: Some(name.to_string()),
        description: None,
        parts,
        metadata,
        extensions: None,
    }
}

/// The text parts of `message`, joined by blank lines.
pub(super) fn text_of(message: &Message) -> String {
    message
        .parts
        .iter()
        .filter_map(Part::as_text)
        .collect::<Vec<_>>()
        .join("\n\n")
}
