//! [`ClientToolsSession`]: the client side of client-side tools over A2A (design (a)).

use std::time::Duration;

use a2a::{
    Artifact, Message, Part, Role, SendMessageRequest, SendMessageResponse, Task, TaskState,
};

use super::agent::RemoteAgent;
use super::error::A2aClientError;
use super::output::parts_text;
use crate::a2a::parts::{ToolResultEntry, extract_tool_calls, to_data_part, tool_results_part};
use crate::context::ToolContext;
use crate::tool::ToolCall;
use crate::toolkit::Toolkit;

/// Default limit on rounds of tool calls in one turn.
pub const DEFAULT_MAX_ROUNDS: usize = 10;

/// How often a task that is still working is polled (when the agent returned before the task
/// reached a state this loop acts on).
const POLL_INTERVAL: Duration = Duration::from_millis(100);

/// One step of a turn, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum TranscriptEntry {
    /// The user's text as sent.
    User(String),
    /// Tool calls the agent asked for in one round.
    ToolCalls(Vec<ToolCall>),
    /// The results sent back for them.
    ToolResults(Vec<ToolResultEntry>),
    /// The agent's final answer.
    Answer(String),
}

/// The outcome of one turn.
#[derive(Clone, Debug)]
pub struct ClientToolsReply {
    /// The answer: the text of the completed task's artifacts (data parts as JSON), or of the
    /// agent's message when it answered with a message.
    pub answer: String,
    /// The artifacts of the completed task.
    pub artifacts: Vec<Artifact>,
    /// The remote task (empty when the agent answered with a plain message).
    pub task_id: String,
    /// The conversation's context id.
    pub context_id: String,
    /// Rounds of tool calls it took.
    pub rounds: usize,
    /// What happened, in order.
    pub transcript: Vec<TranscriptEntry>,
}

/// A conversation with one A2A agent that uses this client's tools (client-side tools,
/// design (a)): the client owns the tools, the agent owns the model.
///
/// One [`send`](Self::send) is one turn:
///
/// 1. the user text goes out with [`to_data_part`] of the toolkit's active definitions;
/// 2. while the agent answers with the task in `INPUT_REQUIRED` and a `tool-calls` part, the
///    calls run locally through [`Toolkit::call_all`] (in parallel, with the toolkit's
///    timeouts, retries and concurrency cap) and every result — failures included, as
///    `is_error: true` entries — goes back in a `tool-results` part on the same task;
/// 3. when the task completes, its artifacts are the answer.
///
/// A turn that needs more than [`max_rounds`](Self::max_rounds) rounds of tool calls is
/// stopped: the remote task is cancelled and the turn fails with
/// [`A2aClientError::MaxRounds`]; a malformed `tool-calls` part cancels it too and fails the
/// turn with [`A2aClientError::InvalidParts`] listing every problem. A failed, rejected or
/// cancelled task is
/// [`A2aClientError::TaskEnded`] with the agent's message. The `contextId` the agent assigns is
/// kept, so the next `send` continues the same conversation.
///
/// ```no_run
/// # async fn demo(toolkit: agent_toolkit::Toolkit) -> Result<(), agent_toolkit::a2a::client::A2aClientError> {
/// use agent_toolkit::a2a::client::{ClientToolsSession, RemoteAgent};
///
/// let agent = RemoteAgent::connect("http://127.0.0.1:41241").await?;
/// let mut session = ClientToolsSession::new(agent, toolkit).max_rounds(5);
/// let reply = session.send("What's the weather in Paris?").await?;
/// println!("{} (after {} rounds of tool calls)", reply.answer, reply.rounds);
/// let follow_up = session.send("And tomorrow?").await?; // same contextId
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct ClientToolsSession {
    agent: RemoteAgent,
    toolkit: Toolkit,
    ctx: ToolContext,
    max_rounds: usize,
    context_id: Option<String>,
}

impl ClientToolsSession {
    /// A session with `agent`, offering the active tools of `toolkit`.
    pub fn new(agent: RemoteAgent, toolkit: Toolkit) -> Self {
        ClientToolsSession {
            agent,
            toolkit,
            ctx: ToolContext::new(),
            max_rounds: DEFAULT_MAX_ROUNDS,
            context_id: None,
        }
    }

    /// Most rounds of tool calls in one turn (default 10, at least 1).
    pub fn max_rounds(mut self, rounds: usize) -> Self {
        self.max_rounds = rounds.max(1);
        self
    }

    /// The context the local tool calls run with (values, cancellation, progress sink).
    pub fn context(mut self, ctx: ToolContext) -> Self {
        self.ctx = ctx;
        self
    }

    /// Continue an existing conversation.
    pub fn with_context_id(mut self, context_id: impl Into<String>) -> Self {
        self.context_id = Some(context_id.into());
        self
    }

    /// The conversation's context id, once the agent assigned one.
    pub fn context_id(&self) -> Option<&str> {
        self.context_id.as_deref()
    }

    /// The agent this session talks to.
    pub fn agent(&self) -> &RemoteAgent {
        &self.agent
    }

    /// One turn: send `text` with the tool definitions, run the tool calls the agent asks for
    /// until it answers.
    pub async fn send(
        &mut self,
        text: impl Into<String>,
    ) -> Result<ClientToolsReply, A2aClientError> {
        let text = text.into();
        let mut transcript = vec![TranscriptEntry::User(text.clone())];
        let definitions = self.toolkit.definitions();
        let mut parts = vec![Part::text(text)];
        if !definitions.is_empty() {
            parts.push(to_data_part(&definitions));
        }
        let mut message = Message::new(Role::User, parts);
        message.context_id = self.context_id.clone();
        let mut response = self.agent.send_message(&request(message)).await?;
        let mut rounds = 0;
        loop {
            let mut task = match response {
                SendMessageResponse::Message(message) => {
                    if let Some(context_id) = &message.context_id {
                        self.context_id = Some(context_id.clone());
                    }
                    let answer = parts_text(&message.parts);
                    transcript.push(TranscriptEntry::Answer(answer.clone()));
                    return Ok(ClientToolsReply {
                        answer,
                        artifacts: Vec::new(),
                        task_id: message.task_id.unwrap_or_default(),
                        context_id: message.context_id.unwrap_or_default(),
                        rounds,
                        transcript,
                    });
                }
                SendMessageResponse::Task(task) => task,
            };
            self.context_id = Some(task.context_id.clone());
            while matches!(
                task.status.state,
                TaskState::Submitted | TaskState::Working | TaskState::Unspecified
            ) {
                tokio::time::sleep(POLL_INTERVAL).await;
                task = self.agent.get_task(&task.id).await?;
            }
            match task.status.state.clone() {
                TaskState::Completed => {
                    let artifacts = task.artifacts.take().unwrap_or_default();
                    let answer = artifacts
                        .iter()
                        .map(|a| parts_text(&a.parts))
                        .filter(|t| !t.is_empty())
                        .collect::<Vec<_>>()
                        .join("\n");
                    transcript.push(TranscriptEntry::Answer(answer.clone()));
                    return Ok(ClientToolsReply {
                        answer,
                        artifacts,
                        task_id: task.id,
                        context_id: task.context_id,
                        rounds,
                        transcript,
                    });
                }
                TaskState::InputRequired => {}
                state => return Err(ended(&task, state)),
            }
            let calls = match task.status.message.as_ref().map(extract_tool_calls) {
                Some(Ok(calls)) => calls,
                Some(Err(invalid)) => {
                    // The agent's request cannot be answered: do not leave it waiting.
                    self.cancel(&task.id).await;
                    return Err(invalid.into());
                }
                None => Vec::new(),
            };
            if calls.is_empty() {
                // The agent wants input that is not tool results (a question, say): the task is
                // left as it is, for the application to answer through `agent()`.
                return Err(ended(&task, TaskState::InputRequired));
            }
            rounds += 1;
            if rounds > self.max_rounds {
                self.cancel(&task.id).await;
                return Err(A2aClientError::MaxRounds {
                    max_rounds: self.max_rounds,
                    task_id: task.id,
                });
            }
            transcript.push(TranscriptEntry::ToolCalls(calls.clone()));
            let results = self.toolkit.call_all(calls, &self.ctx).await;
            let entries: Vec<ToolResultEntry> = results.iter().map(ToolResultEntry::from).collect();
            let mut message = Message::new(Role::User, vec![tool_results_part(&entries)]);
            message.task_id = Some(task.id.clone());
            message.context_id = Some(task.context_id.clone());
            transcript.push(TranscriptEntry::ToolResults(entries));
            response = self.agent.send_message(&request(message)).await?;
        }
    }

    async fn cancel(&self, task_id: &str) {
        if let Err(error) = self.agent.cancel_task(task_id).await {
            tracing::warn!(task_id, %error, "cancelling the remote task failed");
        }
    }
}

fn request(message: Message) -> SendMessageRequest {
    SendMessageRequest {
        message,
        configuration: None,
        metadata: None,
        tenant: None,
    }
}

fn ended(task: &Task, state: TaskState) -> A2aClientError {
    let state = serde_json::to_value(&state)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| format!("{state:?}"));
    A2aClientError::TaskEnded {
        task_id: task.id.clone(),
        state,
        message: task
            .status
            .message
            .as_ref()
            .map(|m| parts_text(&m.parts))
            .unwrap_or_default(),
    }
}
