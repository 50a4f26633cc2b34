//! A2A (Agent2Agent) interop: remote tools between agents, and client-side tools over A2A.
//!
//! Built on the official A2A Rust crates (`a2a-lf`, `a2a-client-lf`, `a2a-server-lf`), which
//! speak A2A 1.0; peers still on 0.3 are served and called through a small conversion layer.
//! Two uses, each with a client and a server:
//!
//! - **Remote tools**: a toolkit's tools offered to other agents as skills
//!   ([`A2aToolServer`](server::A2aToolServer)), and another agent's tools in a local toolkit
//!   ([`RemoteToolRegistry`](client::RemoteToolRegistry), [`RemoteTool`](client::RemoteTool)).
//! - **Client-side tools**: a client sends its tool definitions with a message and runs the
//!   calls the agent sends back ([`ClientToolsSession`](client::ClientToolsSession)); the
//!   agent's side is [`A2aAgentServer`](server::A2aAgentServer).
//!
//! Two design documents are named throughout, because peers are written from them and both
//! ends here speak their literal forms as well as this project's own: **design document 000**
//! (client-side tools: LangChain-shaped calls in a Message, results as `Tool results: […]`
//! text) and **design document 004** (remote tool execution: schemas on the skill as
//! `input_schema`/`output_schema`, `_tool_call` in the task metadata, results as a data part).
//!
//! # Modules
//!
//! | module | owns | depends on |
//! |---|---|---|
//! | [`parts`] | the data parts of client-side tools — definitions, calls, results — in both dialects | — |
//! | `extensions` | the extension URIs on our cards ([`TOOLS_EXTENSION_URI`], [`CLIENT_TOOLS_EXTENSION_URI`]) and their metadata keys | — |
//! | `compat` (crate-private) | A2A 0.3 JSON to and from the 1.0 types, at the transport boundary | — |
//! | `attachments` (crate-private) | a result's [`Attachment`](crate::tool::Attachment)s as parts after the result, both ways | — |
//! | [`client`] | [`AgentConfig`](client::AgentConfig), connections, remote tools, the client-side tools loop | `parts`, `extensions`, `compat` |
//! | [`server`] | the HTTP layer ([`a2a_router`](server::a2a_router)) and the two servers | `parts`, `extensions`, `compat` |
//!
//! The client and the server never depend on each other: what both need is in the first three.

mod attachments;
pub mod client;
pub(crate) mod compat;
mod extensions;
pub mod parts;
pub mod server;

pub use extensions::{CLIENT_TOOLS_EXTENSION_URI, TOOLS_EXTENSION_URI};

/// The official A2A 1.0 wire types (`a2a-lf`), re-exported so users need no version of their own.
pub use a2a as types;
