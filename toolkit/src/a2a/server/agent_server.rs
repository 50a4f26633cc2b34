//! [`A2aAgentServer`]: a [`ReActAgent`] over A2A whose clients bring their own tools.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use a2a::{
    A2AError, AgentCapabilities, AgentCard, AgentExtension, AgentSkill, Message, Part,
    SendMessageRequest, StreamResponse, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use a2a_server::{AgentExecutor, ExecutorContext};
use futures::FutureExt;
use tokio_util::sync::CancellationToken;

use super::CLIENT_TOOLS_EXTENSION_URI;
use super::emit::{self, EventStream, Events};
use super::http::{CardFn, SendCheck, ServerOptions, a2a_router};
use crate::a2a::parts::{
    TOOL_DEFINITIONS, TOOL_RESULTS, extract_tool_results, extract_tools, has_part, tool_calls_part,
};
use crate::agent::{AgentError, ReActAgent, RunOutcome};
use crate::error::ConfigError;

/// Makes the agent of a new conversation; called with the `contextId`.
pub type AgentFactory = Arc<dyn Fn(&str) -> Result<ReActAgent, ConfigError> + Send + Sync>;

/// A [`ReActAgent`] served over A2A (1.0 and 0.3), one agent (and conversation) per
/// `contextId`, for clients that bring their own tools (design (a)).
///
/// 1. The client sends a message: text for the agent, and optionally a `tool-definitions` data
///    part ([`to_data_part`](crate::a2a::to_data_part)). The tools are validated
///    ([`extract_tools`](crate::a2a::extract_tools)); invalid ones get `-32602` listing every
///    problem, and no task is created.
/// 2. The agent of the message's `contextId` (made by the [`AgentFactory`] on first use, then
///    kept with its conversation) runs with the client's tools bound for this message as
///    definitions without implementations
///    ([`run_with_external_tools`](ReActAgent::run_with_external_tools)). Its own toolkit's
///    tools, if any, run locally as usual.
/// 3. When the model calls client tools, the task goes `INPUT_REQUIRED`; its status message
///    holds the calls in a `tool-calls` data part ([`tool_calls_part`]).
/// 4. The client runs them and answers on the same task (`taskId` set) with a `tool-results`
///    part; the agent continues ([`resume_with_results`](ReActAgent::resume_with_results)).
///    Results that answer no pending call keep the task `INPUT_REQUIRED`, with the error and the
///    pending calls in the status message. A newer message in the same conversation supersedes
///    a waiting task: its calls get error results for the model, and late results for it fail
///    that task.
/// 5. The answer is an artifact named `answer` holding a text part; the task is `COMPLETED`.
///    A failed run (model error, iteration limit) is `FAILED` with the reason as text.
///
/// `CancelTask` stops a running turn (its conversation is rolled back to before the message)
/// or drops the calls a waiting task asked for.
///
/// ```no_run
/// # async fn serve() -> std::io::Result<()> {
/// use agent_toolkit::a2a::server::A2aAgentServer;
/// use agent_toolkit::prelude::*;
///
/// let server = A2aAgentServer::new(|_context_id: &str| {
///     ReActAgent::builder(ScriptedModel::new([ScriptedTurn::text("Hello!")])).build()
/// });
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:41242").await?;
/// server.serve(listener).await
/// # }
/// ```
#[derive(Clone)]
pub struct A2aAgentServer {
    factory: AgentFactory,
    name: String,
    description: String,
    version: String,
    max_contexts: usize,
    options: ServerOptions,
}

impl std::fmt::Debug for A2aAgentServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aAgentServer")
            .field("name", &self.name)
            .field("max_contexts", &self.max_contexts)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl A2aAgentServer {
    /// Serve the agents `factory` makes, one per conversation (`contextId`).
    pub fn new(
        factory: impl Fn(&str) -> Result<ReActAgent, ConfigError> + Send + Sync + 'static,
    ) -> Self {
        A2aAgentServer {
            factory: Arc::new(factory),
            name: "agent-toolkit agent".into(),
            description: "A ReAct agent; send your own tools in a `tool-definitions` data part \
                          and run the calls it returns"
                .into(),
            version: env!("CARGO_PKG_VERSION").into(),
            max_contexts: 1024,
            options: ServerOptions::default(),
        }
    }

    /// The agent's name on its card.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The agent's description on its card.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// The agent's version on its card (default: this crate's version).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// How many conversations to keep (default 1024); past it, the least recently used idle
    /// one is forgotten.
    pub fn max_contexts(mut self, n: usize) -> Self {
        self.max_contexts = n.max(1);
        self
    }

    /// Require `Authorization: Bearer <token>` on calls.
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.options.bearer_token = Some(token.into());
        self
    }

    /// The largest request body accepted, in bytes (see [`ServerOptions::max_body_bytes`]).
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.options.max_body_bytes = bytes;
        self
    }

    /// The URL clients reach the server at (see [`ServerOptions::public_url`]).
    pub fn public_url(mut self, url: impl Into<String>) -> Self {
        self.options.public_url = Some(url.into());
        self
    }

    /// The card (without interfaces and security, which the router adds per request).
    pub fn card(&self) -> AgentCard {
        agent_card(&self.name, &self.description, &self.version)
    }

    /// The axum router: card routes and the JSON-RPC endpoint at `/`.
    ///
    /// When serving it yourself, set `TCP_NODELAY` on accepted connections (as
    /// [`serve`](Self::serve) does, e.g. with `axum::serve::ListenerExt::tap_io`): streamed
    /// answers otherwise wait on Nagle's algorithm, about 40 ms per call.
    pub fn router(&self) -> axum::Router {
        let card_value = self.card();
        let card: CardFn = Arc::new(move || card_value.clone());
        let check: SendCheck = Arc::new(check_message);
        let executor = ChatExecutor {
            factory: self.factory.clone(),
            state: Arc::new(Mutex::new(State {
                contexts: HashMap::new(),
                running: HashMap::new(),
                clock: 0,
                max_contexts: self.max_contexts,
            })),
        };
        a2a_router(executor, card, Some(check), self.options.clone())
    }

    /// Serve on `listener` until the process ends (or the future is dropped).
    pub async fn serve(self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        super::http::serve(listener, self.router()).await
    }
}

fn agent_card(name: &str, description: &str, version: &str) -> AgentCard {
    AgentCard {
        name: name.to_string(),
        description: description.to_string(),
        version: version.to_string(),
        supported_interfaces: Vec::new(),
        capabilities: AgentCapabilities {
            streaming: Some(true),
            push_notifications: Some(false),
            extensions: Some(vec![AgentExtension {
                uri: CLIENT_TOOLS_EXTENSION_URI.into(),
                description: Some(
                    "Send tools in a data part with metadata.type = tool-definitions (OpenAI \
                     function format); calls come back in a tool-calls part with the task \
                     INPUT_REQUIRED; answer on the same task with a tool-results part"
                        .into(),
                ),
                required: Some(false),
                params: None,
            }]),
            extended_agent_card: None,
        },
        default_input_modes: vec!["text/plain".into(), "application/json".into()],
        default_output_modes: vec!["text/plain".into(), "application/json".into()],
        skills: vec![AgentSkill {
            id: "chat".into(),
            name: "chat".into(),
            description: description.to_string(),
            tags: vec!["agent".into(), "client-tools".into()],
            examples: None,
            input_modes: None,
            output_modes: None,
            security_requirements: None,
        }],
        provider: None,
        documentation_url: None,
        icon_url: None,
        security_schemes: None,
        security_requirements: None,
        signatures: None,
    }
}

/// What makes a message unusable, answered with `-32602` before a task exists.
fn check_message(req: &SendMessageRequest) -> Result<(), A2AError> {
    let message = &req.message;
    if has_part(message, TOOL_DEFINITIONS) {
        extract_tools(message).map_err(|e| A2AError::invalid_params(e.to_string()))?;
    }
    if has_part(message, TOOL_RESULTS) {
        extract_tool_results(message).map_err(|e| A2AError::invalid_params(e.to_string()))?;
        if message.task_id.is_none() {
            return Err(A2AError::invalid_params(
                "tool results must continue the task that asked for them: set message.taskId",
            ));
        }
    } else if emit::text_of(message).trim().is_empty() {
        return Err(A2AError::invalid_params(
            "the message has no text for the agent (and no tool results)",
        ));
    }
    Ok(())
}

/// One conversation: its agent, and the task (if any) whose tool calls the agent waits for.
struct Session {
    agent: ReActAgent,
    waiting: Option<String>,
}

type SharedSession = Arc<tokio::sync::Mutex<Session>>;

struct Conversation {
    session: SharedSession,
    last_used: u64,
}

struct State {
    contexts: HashMap<String, Conversation>,
    /// The token of every task whose turn is running, by task id.
    running: HashMap<String, CancellationToken>,
    clock: u64,
    max_contexts: usize,
}

struct ChatExecutor {
    factory: AgentFactory,
    state: Arc<Mutex<State>>,
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}

impl ChatExecutor {
    /// The agent of `context_id`, made on first use; forgets the least recently used idle
    /// conversation when over the limit. A factory that fails (or panics) is an error to report.
    fn session(&self, context_id: &str) -> Result<SharedSession, String> {
        {
            let mut state = lock(&self.state);
            state.clock += 1;
            let now = state.clock;
            if let Some(c) = state.contexts.get_mut(context_id) {
                c.last_used = now;
                return Ok(c.session.clone());
            }
        }
        // Made outside the lock: a slow factory must not hold up other conversations.
        let made =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (self.factory)(context_id)));
        let agent = match made {
            Ok(Ok(agent)) => agent,
            Ok(Err(e)) => return Err(format!("the agent could not be created: {e}")),
            Err(_) => return Err("the agent could not be created: its factory panicked".into()),
        };
        let mut state = lock(&self.state);
        state.clock += 1;
        let now = state.clock;
        // Another request for the same new context may have made one meanwhile: keep the first.
        let session = state
            .contexts
            .entry(context_id.to_string())
            .or_insert_with(|| Conversation {
                session: Arc::new(tokio::sync::Mutex::new(Session {
                    agent,
                    waiting: None,
                })),
                last_used: now,
            })
            .session
            .clone();
        if state.contexts.len() > state.max_contexts {
            let idle = state
                .contexts
                .iter()
                .filter(|(id, c)| id.as_str() != context_id && Arc::strong_count(&c.session) == 1)
                .min_by_key(|(_, c)| c.last_used)
                .map(|(id, _)| id.clone());
            if let Some(id) = idle {
                state.contexts.remove(&id);
            }
        }
        Ok(session)
    }
}

impl AgentExecutor for ChatExecutor {
    fn execute(&self, ctx: ExecutorContext) -> EventStream {
        let token = CancellationToken::new();
        let (events, stream) = emit::channel(&ctx.task_id, &ctx.context_id, token.clone());
        let session = self.session(&ctx.context_id);
        lock(&self.state)
            .running
            .insert(ctx.task_id.clone(), token.clone());
        let state = self.state.clone();
        tokio::spawn(async move {
            match session {
                Ok(session) => {
                    let run = std::panic::AssertUnwindSafe(turn(session, ctx, &events, token));
                    if run.catch_unwind().await.is_err() {
                        tracing::error!(task_id = %events.task_id, "the agent panicked");
                        let text = "the agent failed with an internal error";
                        let message = events.agent_message(vec![Part::text(text)]);
                        events.status(TaskState::Failed, Some(message)).await;
                    }
                }
                Err(text) => {
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
            lock(&state).running.remove(&events.task_id);
        });
        stream
    }

    fn cancel(&self, ctx: ExecutorContext) -> EventStream {
        let running = lock(&self.state).running.remove(&ctx.task_id);
        match running {
            // The turn rolls the conversation back when it sees the token.
            Some(token) => token.cancel(),
            // A task waiting for tool results: drop the calls it asked for (unless a newer
            // run of the conversation already did, or is running now).
            None => {
                let session = lock(&self.state)
                    .contexts
                    .get(&ctx.context_id)
                    .map(|c| c.session.clone());
                if let Some(session) = session
                    && let Ok(mut session) = session.try_lock()
                    && session.waiting.as_deref() == Some(ctx.task_id.as_str())
                {
                    session.waiting = None;
                    session.agent.abandon_external_calls();
                }
            }
        }
        let event = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: ctx.task_id,
            context_id: ctx.context_id,
            status: TaskStatus {
                state: TaskState::Canceled,
                message: None,
                timestamp: None,
            },
            metadata: None,
        });
        Box::pin(futures::stream::once(async move { Ok(event) }))
    }
}

/// One turn: a new message or tool results, run to the answer, an error, or more calls.
async fn turn(
    session: SharedSession,
    ctx: ExecutorContext,
    events: &Events,
    token: CancellationToken,
) {
    let Some(message) = ctx.message else {
        events
            .send(Err(A2AError::invalid_params("invalid params: no message")))
            .await;
        return;
    };
    let continuation = message.task_id.is_some();
    // Every stream starts with the task (A2A 1.0); a continuation's task already has history.
    let task = match ctx.stored_task.filter(|_| continuation) {
        Some(mut task) => {
            let history = task.history.get_or_insert_with(Vec::new);
            if history.last().map(|m| &m.message_id) != Some(&message.message_id) {
                history.push(message.clone());
            }
            task.status = TaskStatus {
                state: TaskState::Working,
                message: None,
                timestamp: None,
            };
            task
        }
        None => events.new_task(TaskState::Submitted, vec![message.clone()], None),
    };
    if !events.task(task).await {
        return;
    }
    if !continuation && !events.status(TaskState::Working, None).await {
        return;
    }

    let mut session = session.lock().await;
    let waited_for = session.waiting.take();
    if has_part(&message, TOOL_RESULTS) && waited_for.as_deref() != Some(events.task_id.as_str()) {
        let text = "this task no longer waits for tool results: a newer message in the \
                    conversation started another run";
        // The run that superseded this task may itself be waiting: leave it be.
        session.waiting = waited_for;
        let message = events.agent_message(vec![Part::text(text)]);
        events.status(TaskState::Failed, Some(message)).await;
        return;
    }
    let agent = &mut session.agent;
    let memory_len = agent.memory().len();
    let outcome = {
        let run = run_message(agent, &message);
        tokio::select! {
            outcome = run => Some(outcome),
            _ = token.cancelled() => None,
        }
    };
    let Some(outcome) = outcome else {
        // Cancelled: `cancel` reported CANCELED; undo the half-done turn.
        agent.interrupt(memory_len);
        return;
    };
    match outcome {
        Ok(RunOutcome::Final(answer)) => {
            let artifact = emit::artifact(
                "answer",
                vec![Part::text(answer).with_media_type("text/plain")],
                None,
            );
            if events.artifact(artifact).await {
                events.status(TaskState::Completed, None).await;
            }
        }
        Ok(RunOutcome::ToolCalls(calls)) => {
            session.waiting = Some(events.task_id.clone());
            let message = events.agent_message(vec![tool_calls_part(&calls)]);
            events.status(TaskState::InputRequired, Some(message)).await;
        }
        Err(AgentError::External(problem)) if continuation => {
            // Bad results: the run still waits, so the task does too, and says why.
            let pending = agent.pending_external_calls().to_vec();
            let mut parts = vec![Part::text(format!(
                "the tool results were refused: {problem}"
            ))];
            if !pending.is_empty() {
                parts.push(tool_calls_part(&pending));
            }
            let state = if pending.is_empty() {
                TaskState::Failed
            } else {
                session.waiting = waited_for;
                TaskState::InputRequired
            };
            events
                .status(state, Some(events.agent_message(parts)))
                .await;
        }
        Err(e) => {
            let message = events.agent_message(vec![Part::text(e.to_string())]);
            events.status(TaskState::Failed, Some(message)).await;
        }
    }
}

/// Runs `message` on `agent`: resume with its tool results, or a new run on its text with its
/// tools.
async fn run_message(agent: &mut ReActAgent, message: &Message) -> Result<RunOutcome, AgentError> {
    if has_part(message, TOOL_RESULTS) {
        // Checked before the task was created; a failure here would be a bug, said plainly.
        let results =
            extract_tool_results(message).map_err(|e| AgentError::External(e.to_string()))?;
        return agent
            .resume_with_results(results.iter().map(|r| r.to_message()).collect())
            .await;
    }
    let tools = extract_tools(message).map_err(|e| AgentError::External(e.to_string()))?;
    agent
        .run_with_external_tools(emit::text_of(message), tools)
        .await
}
