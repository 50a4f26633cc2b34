//! A2A servers on axum: a toolkit's tools for other agents ([`A2aToolServer`], design (b)), and
//! an agent whose clients bring their own tools ([`A2aAgentServer`], client-side tools).
//!
//! Both are built on `a2a-server-lf`: its [`DefaultRequestHandler`] keeps the tasks and runs
//! an [`AgentExecutor`], its JSON-RPC router serves A2A 1.0. Around it, [`a2a_router`] adds:
//!
//! - the agent card at `/.well-known/agent-card.json` (also `/.well-known/agent.json`, where
//!   0.2-era clients look), built on every request so it follows the toolkit's active groups,
//!   and published as the merged 1.0 + 0.3 card ([`compat::card_to_v03`]), with the schemas of
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
//! when the method is one neither generation has); every JSON-RPC error comes with HTTP 200, as the A2A JSON-RPC binding says, and the
//! server keeps serving.
//!
//! [`DefaultRequestHandler`]: a2a_server::DefaultRequestHandler
//! [`AgentExecutor`]: a2a_server::AgentExecutor
//! [`compat::card_to_v03`]: crate::a2a::compat::card_to_v03

mod agent_server;
mod emit;
mod http;
mod tool_server;
mod v03;
mod validate;

pub use agent_server::{A2aAgentServer, AgentFactory, Replies};
pub use http::{CardFn, SendCheck, ServerOptions, a2a_router};
pub use tool_server::{A2aToolServer, PROGRESS, progress_part};

/// The executor contract of `a2a-server-lf`, re-exported for [`a2a_router`]: implement
/// [`AgentExecutor`] to serve an agent of your own with this module's HTTP layer.
pub use a2a_server::{AgentExecutor, ExecutorContext};

/// The URI of the tools extension in [`A2aToolServer`] cards (the same constant the client
/// side reads).
pub use crate::a2a::client::TOOLS_EXTENSION_URI;

/// The URI of the client-tools extension an [`A2aAgentServer`] card declares: messages may
/// carry tool definitions in a data part (`metadata.type = "tool-definitions"`), calls come
/// back in a `tool-calls` part (by default with the task `INPUT_REQUIRED`, or in a Message for
/// clients of design document 000), results go in a `tool-results` part on the same task or as
/// a new message in the conversation (see [`A2aAgentServer`]).
pub const CLIENT_TOOLS_EXTENSION_URI: &str = "https://agent-toolkit.dev/a2a/ext/client-tools/v1";
