//! MCP (Model Context Protocol) interop through `rmcp`, the official Rust MCP SDK: serve a
//! toolkit to MCP clients, and import the tools of MCP servers into a toolkit.
//!
//! | module | owns | depends on |
//! |---|---|---|
//! | `error` | [`McpError`] | — |
//! | `convert` | the toolkit's types to and from rmcp's wire types | — |
//! | `server` | [`McpServer`] (one session's handler) and [`McpSession`] | `convert` |
//! | `polling` | [`CallStream`]: a call's event stream closed mid-call and resumed with `Last-Event-ID` (SEP-1699) | — |
//! | `stdio`, `http` | the stdio transport ([`McpServer::serve_stdio`]) and [`McpHttpService`] | `server`, `error`, `polling` |
//! | `toolkit` | [`Toolkit::serve_mcp_stdio`] and [`Toolkit::mcp_http_service`] | `server`, `stdio`, `http` |
//! | `target`, `progress` | where a server is ([`McpTarget`], [`McpClientOptions`]); call progress ([`McpProgress`]) | — |
//! | `forwarding` | which call a server's question belongs to ([`McpClientOptions::forward_questions`]) | — |
//! | `client` | [`McpClient`]: connection, listing, calls, reconnection | `target`, `progress`, `forwarding`, `error` |
//! | `import` | [`McpImport`]: a server's tools as a toolkit's dynamic set | `client`, `convert`, `error` |
//! | `tasks` | MCP tasks (2025-11-25): background tools served as tasks, and the task fields rmcp drops, added on the way | `convert` |
//! | [`types`] | the MCP wire types the API above hands out (re-exported from `rmcp`) | — |
//!
//! The protocol (framing, the lifecycle, sessions, SSE) is rmcp's; this module maps it onto the
//! toolkit. Both eras of MCP are spoken, by the server and the client:
//!
//! - **2025-11-25, the handshake era** (and the older revisions): `initialize`, then a session;
//!   over HTTP the session has an `Mcp-Session-Id` and, here, a [`view`](Toolkit::view) of the
//!   toolkit of its own; the server pushes `notifications/tools/list_changed`.
//! - **2026-07-28, the stateless era**: no handshake (`server/discover` says what the server
//!   speaks), every request carries its revision and client info in `_meta`, and tool-list
//!   changes go to clients that opened a `subscriptions/listen` stream. Over HTTP any replica
//!   behind a load balancer can answer any request. What changes for per-session state: a
//!   stateless HTTP request belongs to no session, so its calls get no [`McpSession`] (a tool
//!   that needs one fails with a message saying so, and a tool taking
//!   `Option<Ctx<McpSession>>` runs without); group switches of the served toolkit reach every
//!   client as before. Over stdio the process serves one client, so nothing changes.
//!
//! One server serves both eras from the same endpoint or process; the client uses the newest
//! revision the server offers and falls back to the handshake ([`McpEra`] pins one).
//!
//! **Serve** ([`McpServer`]): [`Toolkit::serve_mcp_stdio`] for stdio, and
//! [`Toolkit::mcp_http_service`] for streamable HTTP (an axum-mountable service, one
//! [`view`](Toolkit::view) of the toolkit per session).
//!
//! - `tools/list` lists the tools active in the session, in registration order, in the MCP
//!   dialect, with `outputSchema` for `Json<T>` returns and the `read_only` / `idempotent` /
//!   `destructive` hints as annotations.
//! - `tools/call` runs through [`Toolkit::call`] — the whole execution stack — and at most
//!   [`Toolkit::max_concurrency`] calls run at once across all requests. A tool's failure
//!   (bad arguments included) is an `isError: true` result carrying the model-visible message;
//!   an unknown or switched-off tool is a `-32602` protocol error. JSON objects a tool returns
//!   are also sent as `structuredContent`, which every tool declaring an output schema gets.
//! - [`ToolEmitter`](crate::ToolEmitter) progress becomes `notifications/progress` when the
//!   request carried a progress token; `notifications/cancelled` cancels the call.
//! - A change of the session's active tools (a group switched toolkit-wide or in the session,
//!   a [`DynamicTools`](crate::toolkit::DynamicTools) set replaced) sends
//!   `notifications/tools/list_changed` (in the stateless era, on the client's listen stream).
//! - Tools reach their session through [`McpSession`] in the call context.
//! - A `background` tool is served as an MCP task (2025-11-25: `tasks/get`, `tasks/result`,
//!   `tasks/list`, `tasks/cancel`), kept by the toolkit's job backend; called without `task`,
//!   it answers with its result when its job ends. The session that created a task hears
//!   `notifications/tasks/status` when it ends.
//! - Over HTTP a call's event stream can be closed while the call runs ([`CallStream`],
//!   [`McpHttpService::close_streams_after`]); the client resumes it with `Last-Event-ID`.
//!
//! **Import** ([`McpImport`], built on [`McpClient`]): connect to a server — a child process
//! over stdio or a streamable-HTTP URL ([`McpTarget`]) — and keep its tools in a
//! [`DynamicTools`](crate::toolkit::DynamicTools) set, named `<prefix>__<tool>` so the names are valid
//! for every model provider. Register the set in a group of a toolkit; calls go through the
//! toolkit's stack, progress comes back to the tool's emitter, a cancelled call is cancelled on
//! the server, the set follows the server's `list_changed` notifications, and a lost
//! connection is re-established (a dead child process restarted) on the next call. Tools named
//! in [`McpClientOptions::run_as_tasks`] are called as MCP tasks and imported as background
//! tools. With [`McpClientOptions::forward_questions`] the server's questions during a call go
//! to whoever the call can ask (an agent run pauses at them).
//! [`McpClient`] alone lists and calls tools without any toolkit.

mod caller;
mod client;
mod convert;
mod error;
mod forwarding;
mod http;
mod import;
mod oauth;
mod polling;
mod progress;
mod server;
mod stdio;
mod target;
mod tasks;
mod toolkit;
pub mod types;

pub use client::McpClient;
pub use error::McpError;
pub use http::{LOOPBACK_ORIGINS, McpHttpService};
pub use import::McpImport;
pub use oauth::McpOAuth;
pub use polling::CallStream;
pub use progress::McpProgress;
pub use server::{McpServer, McpSession};
pub use target::{McpClientOptions, McpEra, McpTarget};

#[cfg(doc)]
use crate::toolkit::Toolkit;
