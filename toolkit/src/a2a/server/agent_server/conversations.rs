//! The conversations an [`A2aAgentServer`](super::A2aAgentServer) keeps: one agent per
//! `contextId` (made by the factory, the least recently used idle one forgotten past the
//! limit), the tasks whose turns are running, and the closing of tasks whose wait the
//! conversation ended.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use tokio_util::sync::CancellationToken;

use super::reply::Replies;
use crate::a2a::parts::{CallFormat, ToolResultEntry};
use crate::agent::ReActAgent;
use crate::error::ConfigError;
use crate::util::lock;

/// Makes the agent of a new conversation; called with the `contextId`.
pub(super) type AgentFactory = Arc<dyn Fn(&str) -> Result<ReActAgent, ConfigError> + Send + Sync>;

/// One conversation: its agent, and where its waiting run (if any) stands.
pub(super) struct Session {
    pub(super) agent: ReActAgent,
    /// The task whose `INPUT_REQUIRED` status carries the pending calls, when they were sent in
    /// a Task reply.
    pub(super) announced_by: Option<String>,
    /// Results received so far for the pending calls, each with the id of the call it answers.
    pub(super) received: Vec<ToolResultEntry>,
    /// The call format the client asked for last.
    pub(super) format: CallFormat,
}

impl Session {
    /// Ends the waiting run without running the model: received results are kept for the
    /// model, calls without one get an error result.
    pub(super) fn close_pending(&mut self) {
        let received = self.received.drain(..).map(|r| r.to_message()).collect();
        self.agent.close_external_calls(received);
    }
}

pub(super) type SharedSession = Arc<tokio::sync::Mutex<Session>>;

pub(super) struct Conversation {
    pub(super) session: SharedSession,
    pub(super) last_used: u64,
}

pub(super) struct State {
    pub(super) contexts: HashMap<String, Conversation>,
    /// The token of every task whose turn is running, by task id.
    pub(super) running: HashMap<String, CancellationToken>,
    /// Why a waiting task is being closed by the server, by task id (its status message).
    pub(super) closing: HashMap<String, String>,
    pub(super) clock: u64,
    pub(super) max_contexts: usize,
}

/// The router of this server, to close tasks through its own `CancelTask`.
pub(super) struct TaskCloser {
    pub(super) router: OnceLock<axum::Router>,
    pub(super) bearer: Option<crate::endpoint::Secret>,
}

/// What every turn needs.
pub(super) struct Shared {
    pub(super) factory: AgentFactory,
    pub(super) replies: Replies,
    pub(super) closer: Weak<TaskCloser>,
    pub(super) state: Mutex<State>,
    /// Where conversations are kept besides memory (`stored`), when the server has one.
    #[cfg(durable)]
    pub(super) store: Option<crate::a2a::server::SqlTaskStore>,
}

impl Shared {
    /// The agent of `context_id`, made on first use; forgets the least recently used idle
    /// conversation when over the limit. A factory that fails (or panics) is an error to report.
    pub(super) fn session(&self, context_id: &str) -> Result<SharedSession, String> {
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
    pub(super) async fn close_task(&self, task_id: &str, reason: String) {
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
            request = request.header(
                axum::http::header::AUTHORIZATION,
                format!("Bearer {}", token.0),
            );
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
