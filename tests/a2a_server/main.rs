//! Our A2A servers (`A2aToolServer`, `A2aAgentServer`) on 127.0.0.1, driven by the official
//! Python SDKs as clients (a2a-sdk 1.x on the 1.0 wire, a2a-sdk 0.3.26 on the 0.3 wire) and by
//! raw HTTP for bad input: every bad request gets the spec's error code or a model-visible
//! tool error, and the server keeps serving.
//!
//! The modules that start Python or Node peers need the `interop` feature.

#[cfg(all(feature = "postgres", feature = "sqlite"))]
#[path = "../db/mod.rs"]
mod db;
#[path = "../peers/mod.rs"]
mod peers;
#[path = "../tls/mod.rs"]
mod tls;

mod agent;
mod bad_input;
#[cfg(all(feature = "postgres", feature = "sqlite"))]
mod durable;
mod fixtures;
#[cfg(feature = "interop")]
mod js;
mod literal_004;
#[cfg(feature = "interop")]
mod python;
mod tools;
