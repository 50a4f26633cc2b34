//! A2A (Agent2Agent) interop: client-side tools over A2A and remote tools between agents.
//!
//! Built on the official A2A Rust crates (`a2a-lf`, `a2a-client-lf`, `a2a-server-lf`), which
//! speak A2A 1.0; peers still on 0.3 are served and called through a small conversion layer.
//!
//! - [`parts`]: the parts that carry tool definitions, tool calls and tool results, in the
//!   project's convention and in design document 000's (LangChain-shaped calls, text results).
//! - [`compat`]: A2A 0.3 JSON to and from the 1.0 types.
//! - [`server`]: a toolkit served to other agents, and an agent serving clients that bring their
//!   own tools.
//! - [`client`]: remote tools from other agents' cards, and the client loop of client-side tools.

pub mod client;
pub mod compat;
pub mod parts;
pub mod server;

pub use parts::{
    InvalidToolsPart, ToolResultEntry, extract_tool_calls, extract_tool_results, extract_tools,
    integral_floats_to_ints, to_data_part, tool_calls_part, tool_results_part,
};

/// The official A2A 1.0 wire types (`a2a-lf`), re-exported so users need no version of their own.
pub use a2a as types;
