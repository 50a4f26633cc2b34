//! The client side of A2A interop: calling other agents' tools, and lending ours to an agent.
//!
//! - [`RemoteAgent`]: a connection to one agent, made from its card. JSON-RPC 1.x through the
//!   official `a2a-client-lf`; agents that offer only 0.3 are spoken to in 0.3 through
//!   [`compat`](crate::a2a::compat).
//! - [`RemoteToolRegistry`] and [`RemoteTool`] (design (b)): tools discovered from agent cards
//!   (skills tagged `tool`, schemas in the tools extension), registered in a local
//!   [`Toolkit`](crate::Toolkit) like any other tool.
//! - [`ClientToolsSession`] (client-side tools): send a message with this client's tool
//!   definitions, run the calls the agent asks for locally, return the results, until the agent
//!   answers; in the project's convention or design document 000's, whichever the agent speaks.
//! - [`A2aClientError`]: connection and protocol failures (retryable) told apart from refusals
//!   and failed remote work.

mod agent;
mod card;
mod config;
mod error;
mod output;
mod registry;
mod remote_tool;
mod session;
mod v03;

pub use agent::{
    AGENT_CARD_PATH, EventStream, RemoteAgent, RemoteAgentBuilder, WireVersion, parse_card,
};
pub use card::{RemoteToolInfo, TOOLS_EXTENSION_URI, tools_from_card};
pub use config::{AgentConfig, local_name};
pub use error::A2aClientError;
pub use registry::{RefreshChanges, RefreshReport, RemoteToolRegistry, RemoteTools};
pub use remote_tool::RemoteTool;
pub use session::{ClientToolsReply, ClientToolsSession, DEFAULT_MAX_ROUNDS, TranscriptEntry};
