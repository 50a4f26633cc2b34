//! [`A2aAgentServer`]: a [`ReActAgent`] over A2A whose clients bring their own tools
//! (client-side tools).
//!
//! This module owns the conversations (one agent per `contextId`), the reply kind of each turn
//! ([`Replies`]), and how tool results are matched to the calls that wait for them; the wire
//! rules are on [`A2aAgentServer`].

mod pending;
mod reply;
mod turn;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use a2a::{
    A2AError, AgentCapabilities, AgentCard, AgentExtension, AgentSkill, Part, SendMessageRequest,
    StreamResponse, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use a2a_server::{AgentExecutor, ExecutorContext};
use futures::FutureExt;
use tokio_util::sync::CancellationToken;

use super::CLIENT_TOOLS_EXTENSION_URI;
use super::emit::{self, EventStream};
use super::http::{CardFn, SendCheck, ServerOptions, a2a_router};
use crate::a2a::parts::{CallFormat, TOOL_DEFINITIONS, ToolResultEntry, extract_tools, has_part};
use crate::agent::ReActAgent;
use crate::error::ConfigError;

/// Makes the agent of a new conversation; called with the `contextId`.
pub type AgentFactory = Arc<dyn Fn(&str) -> Result<ReActAgent, ConfigError> + Send + Sync>;

/// Whether [`A2aAgentServer`] answers a message with a Task or with a Message.
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
    fn kind_for(self, format: CallFormat) -> reply::Kind {
        match (self, format) {
            (Replies::Auto, CallFormat::LangChain) | (Replies::Message, _) => reply::Kind::Message,
            (Replies::Auto, CallFormat::OpenAi) | (Replies::Task, _) => reply::Kind::Task,
        }
    }
}

/// A [`ReActAgent`] served over A2A (1.0 and 0.3), one agent (and conversation) per
/// `contextId`, for clients that bring their own tools.
///
/// 1. The client sends a message: text for the agent, and optionally a `tool-definitions` data
///    part ([`to_data_part`](crate::a2a::to_data_part)). The tools are validated
///    ([`extract_tools`]); invalid ones get `-32602` listing every problem, and no task is
///    created.
/// 2. The agent of the message's `contextId` (made by the [`AgentFactory`] on first use, then
///    kept with its conversation) runs with the client's tools bound for this message as
///    definitions without implementations
///    ([`run_with_external_tools`](ReActAgent::run_with_external_tools)). Its own toolkit's
///    tools, if any, run locally as usual.
/// 3. When the model calls client tools, the reply carries the calls, in the shape the client
///    asked for ([`CallFormat`]): by default a Task in `INPUT_REQUIRED` with the calls in its
///    status message, or a Message for a client of design document 000 ([`Replies`]).
/// 4. The client runs them and sends the results, on the same task or as a new message in the
///    conversation, as a `tool-results` part or as the document's text; they are matched to the
///    calls and the agent continues
///    ([`resume_with_results`](ReActAgent::resume_with_results)). See
///    [below](#on-the-wire) for every case, including results that cannot be used.
/// 5. The answer is an artifact named `answer` holding a text part, the task `COMPLETED` (or a
///    Message whose first part is the text). A failed run (model error, iteration limit) is
///    `FAILED` with the reason as text.
///
/// `CancelTask` stops a running turn (its conversation is rolled back to before the message)
/// or drops the calls a waiting task asked for.
///
/// ```no_run
/// # async fn serve() -> std::io::Result<()> {
/// use agent_toolkit::ReActAgent;
/// use agent_toolkit::a2a::server::A2aAgentServer;
/// use agent_toolkit::testing::{ScriptedModel, ScriptedTurn};
///
/// let server = A2aAgentServer::new(|_context_id: &str| {
///     ReActAgent::builder(ScriptedModel::new([ScriptedTurn::text("Hello!")])).build()
/// });
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:41242").await?;
/// server.serve(listener).await
/// # }
/// ```
///
/// # On the wire
///
/// Both dialects of [`parts`](crate::a2a::parts) are served, from one server, on A2A 1.0 and
/// 0.3:
///
/// | the client | its calls come | in a | its results go back as |
/// |------------|----------------|------|------------------------|
/// | the project's convention (`format: "openai"` or none) | OpenAI wire shape | Task, `INPUT_REQUIRED`, calls in the status message | a `tool-results` part on the same task (`taskId`) |
/// | design document 000 (`format: "langchain"`) | LangChain shape | Message: `parts[0]` is the answer text, or the calls' data part | a new message in the conversation (`contextId`, no `taskId`), text `Tool results: […]` (or one `Tool "X" returned: …` / `Tool X failed: …` per call), with or without the tools part and a `tool-results` part |
///
/// Any mix is accepted: results in either form, on the task or in a new message of the same
/// conversation, are matched to the waiting calls (by call id, else by tool name in call order)
/// and reach the model as tool results; results may come over several messages, and the run
/// resumes when every call has one. What the server does with results it cannot use:
///
/// - no `contextId` and no `taskId` (design document 000's client as printed): there is no
///   conversation whose calls they could answer, so the message starts a new one, as it does
///   on the document's own server: the model reads the results text as the message's question
///   (with the tools of the message bound), and answers from it. Results are never attached
///   to another client's conversation. Keep the reply's `contextId` to have them reach the
///   model as the results of its calls instead;
/// - a conversation that waits for no results, or a result that answers no open call (a name
///   or id with no open call, a call answered twice): refused (`-32602`) with the open calls
///   listed, and nothing is applied. On the task itself (the project's convention) the task
///   stays `INPUT_REQUIRED` instead, with the same explanation and the open calls;
/// - a text that claims to be results but cannot be read (`Tool results: not json`): `-32602`
///   listing every problem.
///
/// A task left `INPUT_REQUIRED` is closed when its conversation moves on: when its calls are
/// answered from another message, or a newer message starts another run, it is cancelled with
/// a status message saying which task took over; results that came for it before are kept for
/// the model, and a call that never got one gets an error result saying so.
#[derive(Clone)]
pub struct A2aAgentServer {
    factory: AgentFactory,
    name: String,
    description: String,
    version: String,
    max_contexts: usize,
    replies: Replies,
    options: ServerOptions,
}

impl std::fmt::Debug for A2aAgentServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aAgentServer")
            .field("name", &self.name)
            .field("max_contexts", &self.max_contexts)
            .field("replies", &self.replies)
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
            replies: Replies::Auto,
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

    /// Answer with Tasks, Messages, or whichever the client reads (the default,
    /// [`Replies::Auto`]).
    pub fn replies(mut self, replies: Replies) -> Self {
        self.replies = replies;
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
        // A task whose wait the conversation ended is closed through the server's own
        // `CancelTask` (the official handler owns the task store). The executor reaches the
        // router weakly: the router returned here keeps it alive, so there is no cycle.
        let closer = Arc::new(TaskCloser {
            router: OnceLock::new(),
            bearer: self.options.bearer_token.clone(),
        });
        let shared = Arc::new(Shared {
            factory: self.factory.clone(),
            replies: self.replies,
            closer: Arc::downgrade(&closer),
            state: Mutex::new(State {
                contexts: HashMap::new(),
                running: HashMap::new(),
                closing: HashMap::new(),
                clock: 0,
                max_contexts: self.max_contexts,
            }),
        });
        let router = a2a_router(
            ChatExecutor { shared },
            card,
            Some(check),
            self.options.clone(),
        );
        // Set once, just made: it cannot be set already.
        let _ = closer.router.set(router.clone());
        router.layer(axum::Extension(closer))
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
                     function format). With format = openai, calls come back in a tool-calls \
                     part with the task INPUT_REQUIRED; answer on the same task with a \
                     tool-results part. With format = langchain, calls come back LangChain-shaped \
                     in a Message; answer with a new message in the same context, e.g. the text \
                     `Tool results: [{\"name\":…,\"result\":…}]`"
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
    match turn::incoming_results(message) {
        Err(e) => Err(A2AError::invalid_params(e.to_string())),
        Ok(Some(results))
            if results.is_empty()
                && message.task_id.is_none()
                && emit::text_of(message).trim().is_empty() =>
        {
            Err(A2AError::invalid_params(
                "the message carries an empty list of tool results and no text for the agent",
            ))
        }
        Ok(Some(_)) => Ok(()),
        Ok(None) if emit::text_of(message).trim().is_empty() => Err(A2AError::invalid_params(
            "the message has no text for the agent (and no tool results)",
        )),
        Ok(None) => Ok(()),
    }
}

/// One conversation: its agent, and where its waiting run (if any) stands.
struct Session {
    agent: ReActAgent,
    /// The task whose `INPUT_REQUIRED` status carries the pending calls, when they were sent in
    /// a Task reply.
    announced_by: Option<String>,
    /// Results received so far for the pending calls, each with the id of the call it answers.
    received: Vec<ToolResultEntry>,
    /// The call format the client asked for last.
    format: CallFormat,
}

impl Session {
    /// Ends the waiting run without running the model: received results are kept for the
    /// model, calls without one get an error result.
    fn close_pending(&mut self) {
        let received = self.received.drain(..).map(|r| r.to_message()).collect();
        self.agent.close_external_calls(received);
    }
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
    /// Why a waiting task is being closed by the server, by task id (its status message).
    closing: HashMap<String, String>,
    clock: u64,
    max_contexts: usize,
}

/// The router of this server, to close tasks through its own `CancelTask`.
struct TaskCloser {
    router: OnceLock<axum::Router>,
    bearer: Option<String>,
}

/// What every turn needs.
struct Shared {
    factory: AgentFactory,
    replies: Replies,
    closer: Weak<TaskCloser>,
    state: Mutex<State>,
}

struct ChatExecutor {
    shared: Arc<Shared>,
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shared {
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
                    announced_by: None,
                    received: Vec::new(),
                    format: CallFormat::OpenAi,
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

    /// Cancels `task_id` (waiting for tool results) through this server's own `CancelTask`,
    /// with `reason` as its status message. Called with the conversation locked, which the
    /// cancel path only `try_lock`s.
    async fn close_task(&self, task_id: &str, reason: String) {
        use tower::ServiceExt;

        let Some(router) = self.closer.upgrade().and_then(|c| {
            let router = c.router.get().cloned()?;
            Some((router, c.bearer.clone()))
        }) else {
            return;
        };
        let (router, bearer) = router;
        lock(&self.state)
            .closing
            .insert(task_id.to_string(), reason);
        let body = serde_json::json!({"jsonrpc": "2.0", "id": "close", "method": "CancelTask",
                                      "params": {"id": task_id}});
        let mut request = axum::http::Request::post("/")
            .header(axum::http::header::CONTENT_TYPE, "application/json")
            .header("a2a-version", "1.0");
        if let Some(token) = bearer {
            request = request.header(axum::http::header::AUTHORIZATION, format!("Bearer {token}"));
        }
        let outcome = match request.body(axum::body::Body::from(body.to_string())) {
            Ok(request) => match router.oneshot(request).await {
                Ok(response) => axum::body::to_bytes(response.into_body(), 64 * 1024)
                    .await
                    .map_err(|e| e.to_string())
                    .and_then(|b| {
                        let v: serde_json::Value =
                            serde_json::from_slice(&b).map_err(|e| e.to_string())?;
                        match v.get("error") {
                            Some(error) => Err(error.to_string()),
                            None => Ok(()),
                        }
                    }),
                Err(never) => match never {},
            },
            Err(e) => Err(e.to_string()),
        };
        if let Err(error) = outcome {
            // The task may have been cancelled by its client meanwhile; nothing is lost.
            tracing::warn!(task_id, %error, "closing a task that waited for tool results failed");
        }
        lock(&self.state).closing.remove(task_id);
    }
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
        tokio::spawn(async move {
            match session {
                Ok(session) => {
                    let run = std::panic::AssertUnwindSafe(turn::turn(
                        &shared, session, ctx, &events, token,
                    ));
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
            lock(&shared.state).running.remove(&events.task_id);
        });
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
