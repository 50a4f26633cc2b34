//! A2A servers on axum: a toolkit's tools for other agents ([`A2aToolServer`], remote tools),
//! and an agent whose clients bring their own tools ([`A2aAgentServer`], client-side tools),
//! both configured with [`ServerOptions`].
//!
//! Both are built on `a2a-server-lf`: its [`DefaultRequestHandler`] keeps the tasks and runs
//! an [`AgentExecutor`], its JSON-RPC router serves A2A 1.0. Around it, [`a2a_router`] adds:
//!
//! - the agent card at `/.well-known/agent-card.json` (also `/.well-known/agent.json`, where
//!   0.2-era clients look), built on every request so it follows the toolkit's active groups,
//!   and published as the merged 1.0 + 0.3 card (the 0.3 members beside the 1.0 ones), with the schemas of
//!   the tools extension repeated on their skills as `input_schema`/`output_schema` (remote
//!   tools as design 004 writes them; see [`A2aToolServer`] and the table in
//!   [`client`](crate::a2a::client#remote-tools-on-the-wire));
//! - one JSON-RPC endpoint at `/` for both protocol generations: 1.0 methods go to the
//!   official router (which requires `A2A-Version: 1.0` and answers `-32009` otherwise); 0.3
//!   methods (`message/send`, `message/stream`, `tasks/get`, `tasks/cancel`,
//!   `tasks/resubscribe`), sent without `A2A-Version` or with a 0.x one, are converted to 1.0,
//!   run by the same handler, and converted back (invalid 0.3 params get `-32602`);
//! - checks on every `SendMessage` before a task is created: a message needs parts and a role,
//!   plus each server's own checks (a tool call to run, a valid tools part) — `-32602` with
//!   what is wrong;
//! - optional bearer-token auth: HTTP 401 with `WWW-Authenticate: Bearer` and a JSON-RPC error
//!   body (`-32600`), and the card declares the scheme; the card itself stays public;
//! - a request body limit: HTTP 413 with a JSON-RPC error body (`-32600`).
//!
//! Malformed JSON-RPC gets `-32700` (not JSON) or `-32600` (not a request), an unknown method
//! `-32601` on either wire (on the 0.3 wire too: a missing `A2A-Version` is not a version error
//! when the method is one neither generation has); every JSON-RPC error comes with HTTP 200, as
//! the A2A JSON-RPC binding says, and the server keeps serving.
//!
//! # Durable tasks, replicas and cancellation
//!
//! By default the tasks live in memory ([`MemoryTaskStore`]): a restart forgets them, each
//! server knows only its own, and finished tasks are forgotten beyond a count and an age
//! (1,000 and 10 minutes by default; `ServerOptions::keep_finished_tasks`,
//! `keep_finished_tasks_for`), so a busy server's memory stays bounded. With the features `postgres` or `sqlite`,
//! `ServerOptions::task_store` takes a `SqlTaskStore` (`SqlTaskStore::postgres(url)`,
//! `SqlTaskStore::sqlite(path)`), which keeps the tasks — and an [`A2aAgentServer`]'s
//! conversations — in the database:
//!
//! - tasks survive a restart, and every server on the same database (replicas behind a load
//!   balancer) answers `GetTask`, `ListTasks` and `CancelTask` for every task, wherever it runs;
//! - a `CancelTask` answered by one server stops the run on the server that runs it. On
//!   Postgres the cancel is stored and announced in one transaction (`NOTIFY`), and every
//!   server `LISTEN`s (and, after a lost connection, checks the tasks it runs, since
//!   notifications sent meanwhile are lost). On SQLite, meant for the processes of one machine,
//!   each server reads the state of the tasks it runs every half second while any run. Either
//!   way the run's [`CancellationToken`](crate::CancellationToken) fires, as for a local cancel;
//!   a run that reports progress is also stopped at its next event, which the store refuses
//!   for a cancelled task;
//! - an agent server reads a conversation from the database before each turn and writes it
//!   after, so a conversation can move between servers (one turn at a time: two servers
//!   running turns of one conversation at once each write their own result);
//! - a database that cannot be reached fails each request with `-32603` naming the database
//!   problem, and the server recovers when the database is back.
//!
//! Streams (`SendStreamingMessage`, `SubscribeToTask`) stay on the server that runs the task.
//!
//! Inside, dependencies point one way: `options`, `rpc` (JSON-RPC error answers), `validate`
//! (the checks before a task exists, [`SendCheck`]) and `emit` (an executor's events) are
//! leaves; `card` builds the served card; `v03` serves the 0.3 binding; `http`
//! ([`a2a_router`]) puts them together; the two servers are built on it. With a database,
//! `task_store` keeps the tasks and `replicas` carries cancels between servers.
//!
//! [`DefaultRequestHandler`]: a2a_server::DefaultRequestHandler
//! [`AgentExecutor`]: a2a_server::AgentExecutor

mod agent_server;
mod card;
mod emit;
mod http;
mod memory_store;
mod options;
#[cfg(durable)]
mod replicas;
mod rpc;
#[cfg(durable)]
mod task_store;
mod tool_server;
mod v03;
mod validate;

pub use agent_server::{A2aAgentServer, Replies};
pub use http::{CardFn, a2a_router};
pub use memory_store::{
    DEFAULT_KEEP_FINISHED, DEFAULT_KEEP_FINISHED_FOR, FINISHED_GRACE, MemoryTaskStore,
};
pub use options::ServerOptions;
#[cfg(durable)]
pub use task_store::SqlTaskStore;
pub use tool_server::A2aToolServer;
pub use validate::SendCheck;

/// The executor contract of `a2a-server-lf`, re-exported for [`a2a_router`]: implement
/// [`AgentExecutor`] to serve an agent of your own with this module's HTTP layer.
pub use a2a_server::{AgentExecutor, ExecutorContext};

/// The task-store contract of `a2a-server-lf` and its in-memory store (which keeps every task:
/// the servers use [`MemoryTaskStore`] instead), re-exported for the stores that implement it.
pub use a2a_server::task_store::{InMemoryTaskStore, StoredTask, TaskStore, TaskVersion};
