//! [`ClientToolsSession`]: the client side of client-side tools over A2A. It owns how a reply
//! is classified (answer, tool calls, or neither) and how results go back to the agent.

use std::time::Duration;

use a2a::{
    Artifact, Message, Part, PartContent, Role, SendMessageRequest, SendMessageResponse, Task,
    TaskState,
};

use super::agent::RemoteAgent;
use super::error::A2aClientError;
use super::output::parts_text;
use crate::a2a::parts::{
    CallFormat, ToolResultEntry, extract_tool_calls, is_tool_calls_part, to_data_part_as,
    tool_results_part, tool_results_text,
};
use crate::context::ToolContext;
use crate::tool::ToolCall;
use crate::toolkit::Toolkit;

/// Default limit on rounds of tool calls in one turn.
const DEFAULT_MAX_ROUNDS: usize = 10;

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
#[non_exhaustive]
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

/// A conversation with one A2A agent that uses this client's tools (client-side tools): the
/// client owns the tools, the agent owns the model.
///
/// One [`send`](Self::send) is one turn:
///
/// 1. the user text goes out with [`to_data_part`](crate::a2a::parts::to_data_part) of the toolkit's active definitions, in a
///    conversation (`contextId`) this session picks unless it continues one;
/// 2. while the agent asks for tool calls — in a task waiting for input, or in a message, in
///    the OpenAI or the LangChain shape — they run locally through [`Toolkit::call_all`] (in
///    parallel, with the toolkit's timeouts, retries and concurrency cap) and every result,
///    failures included, goes back in the form the agent used (see
///    [below](#on-the-wire));
/// 3. the first reply without tool calls is the answer: a completed task's artifacts, or a
///    message's text.
///
/// A turn that needs more than [`max_rounds`](Self::max_rounds) rounds of tool calls is
/// stopped: a remote task waiting for them is cancelled and the turn fails with
/// [`A2aClientError::MaxRounds`]; a malformed `tool-calls` part cancels it too and fails the
/// turn with [`A2aClientError::InvalidParts`] listing every problem. A failed, rejected or
/// cancelled task is [`A2aClientError::TaskEnded`] with the agent's message. The `contextId`
/// is kept, so the next `send` continues the same conversation.
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
///
/// # On the wire
///
/// The session reads an agent's replies in both dialects of [`parts`](crate::a2a::parts) and
/// answers each agent in the form it used:
///
/// | the agent asked for calls in | call shapes read | the results go back as |
/// |------------------------------|------------------|------------------------|
/// | a Task, `INPUT_REQUIRED` (the project's convention) | OpenAI, LangChain | a `tool-results` part on that task (`taskId`) |
/// | a Message (design document 000), or a task that already ended | OpenAI, LangChain | a new message in the conversation (`contextId`): the document's `Tool results: […]` text, the tools part again, and the `tool-results` part with the call ids |
///
/// A reply is an answer only when it carries no tool calls: a tool-call part is never read as
/// an answer, even with text beside it. Calls in a shape neither dialect has are an
/// [`A2aClientError::InvalidParts`] listing every problem; a reply with neither calls nor an
/// answer (a message with no text, a completed task with nothing in it) is an
/// [`A2aClientError::UnexpectedReply`] saying what it held.
#[derive(Debug)]
pub struct ClientToolsSession {
    agent: RemoteAgent,
    toolkit: Toolkit,
    ctx: ToolContext,
    format: CallFormat,
    max_rounds: usize,
    context_id: Option<String>,
}

/// What one reply asked for.
enum Step {
    Answer {
        answer: String,
        artifacts: Vec<Artifact>,
        task_id: String,
    },
    Calls {
        calls: Vec<ToolCall>,
        /// The task waiting for the results (the project's convention), or `None`: they go in
        /// a new message of the conversation. `ended` names a task that asked and ended.
        waiting: Option<String>,
        ended: String,
    },
}

impl ClientToolsSession {
    /// A session with `agent`, offering the active tools of `toolkit`.
    pub fn new(agent: RemoteAgent, toolkit: Toolkit) -> Self {
        ClientToolsSession {
            agent,
            toolkit,
            ctx: ToolContext::new(),
            format: CallFormat::OpenAi,
            max_rounds: DEFAULT_MAX_ROUNDS,
            context_id: None,
        }
    }

    crate::util::setters! {
        /// The shape of calls to ask the agent for, written as the tools part's `format`:
        /// [`CallFormat::OpenAi`] (`"openai"`, the default: the project's convention) or
        /// [`CallFormat::LangChain`] (`"langchain"`, what an agent written from design document 000
        /// expects). Calls are read in either shape whichever is asked for.
        pub fn call_format(format: CallFormat) => format = format;

        /// Most rounds of tool calls in one turn (default 10, at least 1).
        pub fn max_rounds(rounds: usize) => max_rounds = rounds.max(1);

        /// The context the local tool calls run with (values, cancellation, progress sink).
        pub fn context(ctx: ToolContext) => ctx = ctx;

        /// Continue an existing conversation.
        pub fn with_context_id(context_id: impl Into<String>)
            => context_id = Some(context_id.into());
    }

    /// The conversation's context id: the one this session picked for its first message, or
    /// the one the agent assigned.
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
        let tools_part =
            (!definitions.is_empty()).then(|| to_data_part_as(&definitions, self.format));
        // Picked here rather than left to the agent: results sent as a new message must name
        // the conversation, and an agent that answers with messages may not say which it is.
        let context_id = self
            .context_id
            .get_or_insert_with(a2a::new_context_id)
            .clone();
        let mut parts = vec![Part::text(text)];
        parts.extend(tools_part.clone());
        let mut message = Message::new(Role::User, parts);
        message.context_id = Some(context_id);
        let mut response = self.agent.send_message(&request(message)).await?;
        let mut rounds = 0;
        loop {
            let (calls, waiting, ended) = match self.read(response).await? {
                Step::Answer {
                    answer,
                    artifacts,
                    task_id,
                } => {
                    transcript.push(TranscriptEntry::Answer(answer.clone()));
                    return Ok(ClientToolsReply {
                        answer,
                        artifacts,
                        task_id,
                        context_id: self.context_id.clone().unwrap_or_default(),
                        rounds,
                        transcript,
                    });
                }
                Step::Calls {
                    calls,
                    waiting,
                    ended,
                } => (calls, waiting, ended),
            };
            rounds += 1;
            if rounds > self.max_rounds {
                if let Some(task_id) = &waiting {
                    self.cancel(task_id).await;
                }
                return Err(A2aClientError::MaxRounds {
                    max_rounds: self.max_rounds,
                    task_id: waiting.unwrap_or(ended),
                });
            }
            transcript.push(TranscriptEntry::ToolCalls(calls.clone()));
            let results = self.toolkit.call_all(calls, &self.ctx).await;
            let entries: Vec<ToolResultEntry> = results.iter().map(ToolResultEntry::from).collect();
            let message = match waiting {
                Some(task_id) => {
                    let mut message = Message::new(Role::User, vec![tool_results_part(&entries)]);
                    message.task_id = Some(task_id);
                    message
                }
                None => {
                    let mut parts = vec![Part::text(tool_results_text(&entries))];
                    parts.extend(tools_part.clone());
                    parts.push(tool_results_part(&entries));
                    Message::new(Role::User, parts)
                }
            };
            let mut message = message;
            message.context_id = self.context_id.clone();
            transcript.push(TranscriptEntry::ToolResults(entries));
            response = self.agent.send_message(&request(message)).await?;
        }
    }

    /// What `response` asks for (a task still working is polled until it is not).
    async fn read(&mut self, response: SendMessageResponse) -> Result<Step, A2aClientError> {
        let mut task = match response {
            SendMessageResponse::Message(message) => {
                if let Some(context_id) = &message.context_id {
                    self.context_id = Some(context_id.clone());
                }
                let calls = extract_tool_calls(&message)?;
                if !calls.is_empty() {
                    return Ok(Step::Calls {
                        calls,
                        waiting: None,
                        ended: String::new(),
                    });
                }
                let answer = answer_text(&message.parts).ok_or_else(|| {
                    self.unexpected(format!(
                        "a message with no text or data besides tool calls (parts: {})",
                        describe_parts(&message.parts)
                    ))
                })?;
                return Ok(Step::Answer {
                    answer,
                    artifacts: Vec::new(),
                    task_id: message.task_id.unwrap_or_default(),
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
            TaskState::InputRequired => {
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
                    // The agent wants input that is not tool results (a question, say): the
                    // task is left as it is, for the application to answer through `agent()`.
                    return Err(ended(&task, TaskState::InputRequired));
                }
                Ok(Step::Calls {
                    calls,
                    waiting: Some(task.id),
                    ended: String::new(),
                })
            }
            TaskState::Completed => {
                // A task that ended with tool calls in it (a document-style agent on tasks):
                // they are calls all the same, answered in a new message.
                let mut calls = Vec::new();
                for message in task.status.message.iter() {
                    calls.extend(extract_tool_calls(message)?);
                }
                for artifact in task.artifacts.iter().flatten() {
                    let holder = Message::new(Role::Agent, artifact.parts.clone());
                    calls.extend(extract_tool_calls(&holder)?);
                }
                if !calls.is_empty() {
                    return Ok(Step::Calls {
                        calls,
                        waiting: None,
                        ended: task.id,
                    });
                }
                let artifacts = task.artifacts.take().unwrap_or_default();
                let answer = if artifacts.is_empty() {
                    task.status
                        .message
                        .as_ref()
                        .and_then(|m| answer_text(&m.parts))
                } else {
                    Some(
                        artifacts
                            .iter()
                            .map(|a| parts_text(&a.parts))
                            .filter(|t| !t.is_empty())
                            .collect::<Vec<_>>()
                            .join("\n"),
                    )
                };
                let answer = answer.ok_or_else(|| {
                    self.unexpected(format!(
                        "task {} completed with no artifacts and no status message text",
                        task.id
                    ))
                })?;
                Ok(Step::Answer {
                    answer,
                    artifacts,
                    task_id: task.id,
                })
            }
            state => Err(ended(&task, state)),
        }
    }

    fn unexpected(&self, what: String) -> A2aClientError {
        A2aClientError::UnexpectedReply {
            url: self.agent.endpoint().to_string(),
            what,
        }
    }

    async fn cancel(&self, task_id: &str) {
        if let Err(error) = self.agent.cancel_task(task_id).await {
            tracing::warn!(task_id, %error, "cancelling the remote task failed");
        }
    }
}

/// The answer in `parts`: their text (data parts as JSON), leaving out tool-call parts and raw
/// bytes; `None` when nothing is left.
fn answer_text(parts: &[Part]) -> Option<String> {
    let answer: Vec<Part> = parts
        .iter()
        .filter(|p| !is_tool_calls_part(p) && !matches!(p.content, PartContent::Raw(_)))
        .cloned()
        .collect();
    (!answer.is_empty()).then(|| parts_text(&answer))
}

/// `text, data, url, raw` for each part, or `none`.
fn describe_parts(parts: &[Part]) -> String {
    if parts.is_empty() {
        return "none".into();
    }
    parts
        .iter()
        .map(|p| match &p.content {
            PartContent::Text(_) => "text",
            PartContent::Data(_) if is_tool_calls_part(p) => "tool calls (empty)",
            PartContent::Data(_) => "data",
            PartContent::Url(_) => "url",
            PartContent::Raw(_) => "raw bytes",
        })
        .collect::<Vec<_>>()
        .join(", ")
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
