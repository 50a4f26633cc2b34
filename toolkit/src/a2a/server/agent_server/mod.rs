//! [`A2aAgentServer`]: a [`ReActAgent`] over A2A whose clients bring their own tools
//! (client-side tools).
//!
//! This file owns the server, its card and the checks a message passes before a task exists;
//! the wire rules are on [`A2aAgentServer`]. Inside, dependencies point one way: `pending`
//! (matching results to calls) and `reply` (the reply kind of each turn, [`Replies`]) are
//! leaves; `conversations` keeps one agent per `contextId`, and `stored` keeps them in the
//! durable task store when there is one; `turn` runs one message to its reply; `executor`
//! runs turns and cancels them.

mod conversations;
mod executor;
mod pending;
mod reply;
mod stored;
mod turn;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use a2a::{A2AError, AgentCard, AgentExtension, AgentSkill, SendMessageRequest};

use self::conversations::{AgentFactory, Shared, State, TaskCloser};
use self::executor::ChatExecutor;
use super::card::server_card;
use super::emit;
use super::http::{CardFn, a2a_router, serve};
use super::options::ServerOptions;
use super::validate::SendCheck;
use crate::a2a::extensions::CLIENT_TOOLS_EXTENSION_URI;
use crate::a2a::parts::{TOOL_DEFINITIONS, extract_tools, has_part};
use crate::agent::ReActAgent;
use crate::error::ConfigError;

pub use self::reply::Replies;

/// The card's name when the options set none.
const DEFAULT_NAME: &str = "agent-toolkit agent";

/// The card's description (and its skill's) when the options set none.
const DEFAULT_DESCRIPTION: &str = "A ReAct agent; send your own tools in a `tool-definitions` \
                                   data part and run the calls it returns";

/// A [`ReActAgent`] served over A2A (1.0 and 0.3), one agent (and conversation) per
/// `contextId`, for clients that bring their own tools.
///
/// 1. The client sends a message: text for the agent, and optionally a `tool-definitions` data
///    part ([`to_data_part`](crate::a2a::parts::to_data_part)). The tools are validated
///    ([`extract_tools`]); invalid ones get `-32602` listing every problem, and no task is
///    created.
/// 2. The agent of the message's `contextId` (made by the factory given to [`new`](Self::new) on first use, then
///    kept with its conversation) runs with the client's tools bound for this message as
///    definitions without implementations
///    ([`run_with_external_tools`](ReActAgent::run_with_external_tools)). Its own toolkit's
///    tools, if any, run locally as usual.
/// 3. When the model calls client tools, the reply carries the calls, in the shape the client
///    asked for ([`CallFormat`](crate::a2a::parts::CallFormat)): by default a Task in `INPUT_REQUIRED` with the calls in its
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
    max_contexts: usize,
    replies: Replies,
    options: ServerOptions,
}

impl std::fmt::Debug for A2aAgentServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aAgentServer")
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
            max_contexts: 1024,
            replies: Replies::Auto,
            options: ServerOptions::default(),
        }
    }

    crate::util::setters! {
        /// The card's name and the endpoint's settings (auth, body limit, public URL).
        pub fn options(options: ServerOptions) => options = options;

        /// How many conversations to keep (default 1024); past it, the least recently used idle
        /// one is forgotten. With a durable task store (`ServerOptions::task_store`) this bounds
        /// the memory only: a forgotten conversation is read back from the database when it
        /// continues.
        pub fn max_contexts(n: usize) => max_contexts = n.max(1);

        /// Answer with Tasks, Messages, or whichever the client reads (the default,
        /// [`Replies::Auto`]).
        pub fn replies(replies: Replies) => replies = replies;
    }

    /// The card (without interfaces and security, which the router adds per request).
    pub fn card(&self) -> AgentCard {
        agent_card(&self.options)
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
            #[cfg(durable)]
            store: self.options.durable_store().cloned(),
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
        serve(listener, self.router()).await
    }
}

fn agent_card(options: &ServerOptions) -> AgentCard {
    let description = options
        .description
        .as_deref()
        .unwrap_or(DEFAULT_DESCRIPTION);
    let version = options
        .version
        .as_deref()
        .unwrap_or(env!("CARGO_PKG_VERSION"));
    let extension = AgentExtension {
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
    };
    let modes = || vec!["text/plain".into(), "application/json".into()];
    let skill = AgentSkill {
        id: "chat".into(),
        name: "chat".into(),
        description: description.to_string(),
        tags: vec!["agent".into(), "client-tools".into()],
        examples: None,
        input_modes: None,
        output_modes: None,
        security_requirements: None,
    };
    server_card(
        options.name.as_deref().unwrap_or(DEFAULT_NAME).to_string(),
        description.to_string(),
        version.to_string(),
        extension,
        modes(),
        modes(),
        vec![skill],
    )
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
