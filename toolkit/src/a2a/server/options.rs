//! [`ServerOptions`]: what every A2A server here is configured with — the name on its card and
//! the HTTP settings of its endpoint.

use std::fmt;

use a2a::AgentCard;

use crate::endpoint::Secret;

/// The settings [`A2aToolServer`](super::A2aToolServer), [`A2aAgentServer`](super::A2aAgentServer)
/// and [`a2a_router`](super::a2a_router) share: who the agent says it is on its card, and how
/// its endpoint is protected and reached. Pass them with each server's `options`.
///
/// ```no_run
/// # async fn serve(toolkit: agent_toolkit::Toolkit) -> std::io::Result<()> {
/// use agent_toolkit::a2a::server::{A2aToolServer, ServerOptions};
///
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:41241").await?;
/// A2aToolServer::new(&toolkit)
///     .options(ServerOptions::new().name("Weather tools").bearer_token("s3cret"))
///     .serve(listener)
///     .await
/// # }
/// ```
#[derive(Clone, Default)]
#[must_use = "pass them to a server's `options`"]
pub struct ServerOptions {
    pub(crate) name: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) version: Option<String>,
    pub(crate) bearer_token: Option<Secret>,
    pub(crate) max_body_bytes: Option<usize>,
    pub(crate) public_url: Option<String>,
    /// The in-memory store's limits on finished tasks, where set.
    pub(crate) keep_finished: Option<usize>,
    pub(crate) keep_finished_for: Option<std::time::Duration>,
    #[cfg(durable)]
    pub(crate) task_store: Option<super::SqlTaskStore>,
}

/// The default request body limit: 2 MiB.
const DEFAULT_MAX_BODY_BYTES: usize = 2 * 1024 * 1024;

impl ServerOptions {
    /// The defaults: each server's own name and description, this crate's version, no auth, a
    /// 2 MiB body limit, and URLs taken from the request's `Host` header.
    pub fn new() -> Self {
        Self::default()
    }

    crate::util::setters! {
        /// The agent's name on its card (default: the server's own, e.g. `agent-toolkit tools`).
        pub fn name(name: impl Into<String>) => name = Some(name.into());

        /// The agent's description on its card (default: the server's own, saying how to use it).
        pub fn description(description: impl Into<String>)
            => description = Some(description.into());

        /// The agent's version on its card (default: this crate's version).
        pub fn version(version: impl Into<String>) => version = Some(version.into());

        /// Require `Authorization: Bearer <token>` on the JSON-RPC endpoint (the card stays public
        /// and declares the scheme). Default: no auth.
        pub fn bearer_token(token: impl Into<String>) => bearer_token = Some(Secret(token.into()));

        /// The largest request body accepted, in bytes (default 2 MiB; at most
        /// [`MAX_REQUEST_BODY_BYTES`](a2a_server::jsonrpc::MAX_REQUEST_BODY_BYTES), 10 MiB, the
        /// official router's own limit). A larger body gets HTTP 413.
        pub fn max_body_bytes(bytes: usize) => max_body_bytes = Some(bytes);

        /// The URL clients reach the server at, e.g. `https://tools.example.com/`, for the card's
        /// interfaces. Default: `http://` plus the request's `Host` header.
        pub fn public_url(url: impl Into<String>) => public_url = Some(url.into());

        /// With tasks in memory (the default), keep at most `count` finished tasks — completed,
        /// failed, cancelled, rejected — forgetting the oldest finished first (default 1,000; see
        /// [`MemoryTaskStore`](super::MemoryTaskStore)). Running tasks and tasks waiting for input
        /// are always kept. A durable [`task_store`](Self::task_store) keeps every task instead.
        pub fn keep_finished_tasks(count: usize) => keep_finished = Some(count);

        /// With tasks in memory (the default), forget a finished task once it has been finished
        /// for `age` (default 10 minutes).
        pub fn keep_finished_tasks_for(age: std::time::Duration) => keep_finished_for = Some(age);
    }

    /// The in-memory store a server built with these options uses.
    pub(crate) fn memory_store(&self) -> super::MemoryTaskStore {
        let mut store = super::MemoryTaskStore::new();
        if let Some(count) = self.keep_finished {
            store = store.keep_finished(count);
        }
        if let Some(age) = self.keep_finished_for {
            store = store.keep_finished_for(age);
        }
        store
    }

    /// Keep the tasks (and an agent server's conversations) in `store`, a Postgres or SQLite
    /// database, instead of in memory (the default): they survive a restart, and every server
    /// given a store on the same database serves the same tasks, cancels included (see
    /// [`SqlTaskStore`](super::SqlTaskStore)).
    #[cfg(durable)]
    pub fn task_store(mut self, store: super::SqlTaskStore) -> Self {
        self.task_store = Some(store);
        self
    }

    /// The durable store set, if any (always `None` without the database features).
    #[cfg(durable)]
    pub(crate) fn durable_store(&self) -> Option<&super::SqlTaskStore> {
        self.task_store.as_ref()
    }

    /// The durable store set, if any (always `None` without the database features).
    #[cfg(not(durable))]
    pub(crate) fn durable_store(&self) -> Option<std::convert::Infallible> {
        None
    }

    /// The body limit in force: the one set (capped at the official router's), or 2 MiB.
    pub(crate) fn body_limit(&self) -> usize {
        self.max_body_bytes
            .unwrap_or(DEFAULT_MAX_BODY_BYTES)
            .min(a2a_server::jsonrpc::MAX_REQUEST_BODY_BYTES)
    }

    /// `card` with the name, description and version set here, where set.
    pub(crate) fn apply_to(&self, card: &mut AgentCard) {
        if let Some(name) = &self.name {
            card.name.clone_from(name);
        }
        if let Some(description) = &self.description {
            card.description.clone_from(description);
        }
        if let Some(version) = &self.version {
            card.version.clone_from(version);
        }
    }
}

impl fmt::Debug for ServerOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut f = f.debug_struct("ServerOptions");
        f.field("name", &self.name)
            .field("description", &self.description)
            .field("version", &self.version)
            .field("bearer_token", &self.bearer_token)
            .field("max_body_bytes", &self.body_limit())
            .field("public_url", &self.public_url)
            .field("keep_finished_tasks", &self.keep_finished)
            .field("keep_finished_tasks_for", &self.keep_finished_for);
        #[cfg(durable)]
        f.field("task_store", &self.task_store);
        f.finish()
    }
}
