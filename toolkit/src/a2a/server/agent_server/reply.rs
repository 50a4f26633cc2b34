//! How one turn answers: as a Task or as a Message ([`Replies`] chooses), with tool calls in
//! the client's format.
//!
//! A Task reply opens its stream with the task (and `WORKING`) before the model runs, then ends
//! it with the answer artifact (`COMPLETED`), the calls (`INPUT_REQUIRED`, calls in the status
//! message) or the failure (`FAILED`). A Message reply sends nothing until the turn is over,
//! then exactly one Message: the answer as its first part (text), or the calls in a data part.
//! A Message cannot say that something failed, and a failure must never read as an answer, so
//! a failed turn is a `FAILED` task whichever kind was chosen.

use a2a::{A2AError, Message, Part, Role, StreamResponse, Task, TaskState, TaskStatus};

use super::super::emit::{self, Events};
use crate::a2a::parts::{CallFormat, tool_calls_part_as};
use crate::tool::ToolCall;

/// Whether [`A2aAgentServer`](super::A2aAgentServer) answers a message with a Task or with a Message.
///
/// A continuation of a task (a message with `taskId`) is always answered on that task, and a
/// failed turn is always a `FAILED` task: a Message can carry neither.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Replies {
    /// Follow the client (the default): a client that asks for LangChain-shaped calls
    /// (`format: "langchain"` on its tools part, as design document 000's clients do) reads
    /// Messages, so it gets Messages; every other client gets Tasks. The latest tools part of a
    /// conversation decides for the messages that carry none. One server thus serves both
    /// kinds of clients, each in the form it reads, and a client that reads one kind never
    /// gets the other.
    #[default]
    Auto,
    /// Always a Task: tool calls in an `INPUT_REQUIRED` status message, the answer as an
    /// artifact. A2A's own mechanism for "the agent needs input" (the project's convention).
    Task,
    /// Always a Message: the calls in a data part, the answer as text (design document 000).
    /// The official handler still records a task per message, which stays `SUBMITTED`.
    Message,
}

impl Replies {
    /// The reply kind for a client that asks for calls in `format`.
    pub(super) fn kind_for(self, format: CallFormat) -> Kind {
        match (self, format) {
            (Replies::Auto, CallFormat::LangChain) | (Replies::Message, _) => Kind::Message,
            (Replies::Auto, _) | (Replies::Task, _) => Kind::Task,
        }
    }
}

/// Task or Message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Task,
    Message,
}

/// The answer of one turn, sent once.
pub(super) struct Reply<'a> {
    events: &'a Events,
    kind: Kind,
    format: CallFormat,
    /// The incoming message (the history of a new task).
    incoming: Message,
    /// The stored task this message continues, if it does.
    continues: Option<Task>,
    started: bool,
}

impl<'a> Reply<'a> {
    pub(super) fn new(
        events: &'a Events,
        kind: Kind,
        format: CallFormat,
        incoming: Message,
        continues: Option<Task>,
    ) -> Self {
        Reply {
            events,
            kind,
            format,
            incoming,
            continues,
            started: false,
        }
    }

    pub(super) fn kind(&self) -> Kind {
        self.kind
    }

    /// The task the handler made for this message.
    pub(super) fn task_id(&self) -> &str {
        &self.events.task_id
    }

    /// Opens a Task reply's stream: the task (a continued task with its history and the new
    /// message), then `WORKING` for a new one. A Message reply has nothing to open. False when
    /// nobody listens any more.
    pub(super) async fn start(&mut self) -> bool {
        if self.kind == Kind::Message || self.started {
            return true;
        }
        self.started = true;
        match self.continues.take() {
            Some(mut task) => {
                let history = task.history.get_or_insert_with(Vec::new);
                if history.last().map(|m| &m.message_id) != Some(&self.incoming.message_id) {
                    history.push(self.incoming.clone());
                }
                task.status = TaskStatus {
                    state: TaskState::Working,
                    message: None,
                    timestamp: None,
                };
                self.events.task(task).await
            }
            None => {
                let task =
                    self.events
                        .new_task(TaskState::Submitted, vec![self.incoming.clone()], None);
                self.events.task(task).await && self.events.status(TaskState::Working, None).await
            }
        }
    }

    /// Refuses the request before anything was sent: the client gets this JSON-RPC error.
    pub(super) async fn refuse(&self, error: A2AError) {
        self.events.send(Err(error)).await;
    }

    /// The model's answer.
    pub(super) async fn answer(&mut self, answer: String) {
        let part = Part::text(answer).with_media_type("text/plain");
        match self.kind {
            Kind::Task => {
                if !self.start().await {
                    return;
                }
                let artifact = emit::artifact("answer", vec![part], None);
                if self.events.artifact(artifact).await {
                    self.events.status(TaskState::Completed, None).await;
                }
            }
            Kind::Message => self.message(vec![part]).await,
        }
    }

    /// Calls for the client to run, with a note before them (why they are asked again).
    pub(super) async fn calls(&mut self, calls: &[ToolCall], note: Option<String>) {
        let mut parts: Vec<Part> = note.into_iter().map(Part::text).collect();
        parts.push(tool_calls_part_as(calls, self.format));
        match self.kind {
            Kind::Task => {
                if self.start().await {
                    let message = self.events.agent_message(parts);
                    self.events
                        .status(TaskState::InputRequired, Some(message))
                        .await;
                }
            }
            Kind::Message => self.message(parts).await,
        }
    }

    /// The turn failed: a `FAILED` task saying why, for either kind.
    pub(super) async fn fail(&mut self, why: String) {
        let message = self.events.agent_message(vec![Part::text(why)]);
        if self.kind == Kind::Task {
            if self.start().await {
                self.events.status(TaskState::Failed, Some(message)).await;
            }
            return;
        }
        let mut task = self
            .events
            .new_task(TaskState::Failed, vec![self.incoming.clone()], None);
        task.status.message = Some(message);
        self.events.task(task).await;
    }

    /// The one Message of a Message reply: in the conversation, not tied to a task (the client
    /// was shown none).
    async fn message(&self, parts: Vec<Part>) {
        let mut message = Message::new(Role::Agent, parts);
        message.context_id = Some(self.events.context_id.clone());
        self.events.send(Ok(StreamResponse::Message(message))).await;
    }
}
