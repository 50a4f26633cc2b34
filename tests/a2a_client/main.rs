//! The A2A client side against real peers: `RemoteToolRegistry` and `RemoteTool` with the
//! official Python SDK (1.x, its 0.3 compatibility layer, and 0.3.26) as tool servers, inside a
//! local `Toolkit` (groups, timeouts, retries, progress, cancellation); the client-side-tools
//! loop (`ClientToolsSession`) against a Python 1.x agent; and Rust ↔ Rust end to end with this
//! crate's own servers.
//!
//! The modules that start Python or Node peers need the `interop` feature.

#[path = "../peers/mod.rs"]
mod peers;
#[path = "../tls/mod.rs"]
mod tls;

#[cfg(feature = "interop")]
mod calls;
#[cfg(feature = "interop")]
mod discovery;
mod errors;
mod https;
#[cfg(feature = "interop")]
mod js;
mod literal_004;
#[cfg(feature = "interop")]
mod python_https;
mod rust_peers;
#[cfg(feature = "interop")]
mod session;
// Starting the Python peers (used by the `interop` modules) and small helpers.
#[cfg_attr(not(feature = "interop"), allow(dead_code, unused_imports))]
mod support;
