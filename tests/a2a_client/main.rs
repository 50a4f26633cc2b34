//! The A2A client side against real peers: `RemoteToolRegistry` and `RemoteTool` with the
//! official Python SDK (1.x, its 0.3 compatibility layer, and 0.3.26) as tool servers, inside a
//! local `Toolkit` (groups, timeouts, retries, progress, cancellation); the client-side-tools
//! loop (`ClientToolsSession`) against a Python 1.x agent; and Rust ↔ Rust end to end with this
//! crate's own servers.

#[path = "../peers/mod.rs"]
mod peers;

mod calls;
mod discovery;
mod errors;
mod js;
mod literal_004;
mod rust_peers;
mod session;
mod support;
