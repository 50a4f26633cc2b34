//! The client side of A2A interop: calling other agents' tools (remote tools), and lending
//! ours to an agent (client-side tools).
//!
//! - [`AgentConfig`]: where an agent is and how to reach it — URL or card, bearer token, HTTP
//!   client, preferred wire version, and how its tools are named locally. The one config of
//!   [`RemoteAgent::connect`] and [`RemoteToolRegistry::add_agent`].
//! - [`RemoteAgent`]: a connection to one agent, made from its card. JSON-RPC 1.x through the
//!   official `a2a-client-lf`; agents that offer only 0.3 are spoken to in 0.3, converted at
//!   the boundary, so callers see the 1.0 types either way ([`WireVersion`]).
//! - [`RemoteToolRegistry`] and [`RemoteTool`] (remote tools): tools discovered from agent
//!   cards (skills tagged `tool`, schemas in the tools extension or on the skill), registered in
//!   a local [`Toolkit`](crate::Toolkit) like any other tool.
//! - [`ClientToolsSession`] (client-side tools): send a message with this client's tool
//!   definitions, run the calls the agent asks for locally, return the results, until the agent
//!   answers; in the project's convention or design document 000's, whichever the agent speaks.
//! - [`A2aClientError`]: connection and protocol failures (retryable) told apart from refusals
//!   and failed remote work.
//!
//! Inside, dependencies point one way: `wire` (the wire version and event stream) and `error`
//! are leaves; `config` and `card` (fetching and reading cards) build on them; `v03` speaks the
//! 0.3 wire; `agent` ([`RemoteAgent`]) uses all of those; `output` reads what a remote tool
//! sends back; `remote_tool`, `registry` and `session` sit on top.
//!
//! # Remote tools on the wire
//!
//! Two forms are in use: this project's own, and the one design document 004 ("remote tool
//! execution") writes literally. Both are read; this crate's servers
//! ([`A2aToolServer`](crate::a2a::server::A2aToolServer)) and clients speak the union, so a
//! peer of either kind finds what it looks for. Same on A2A 1.0 and 0.3 unless the row says.
//!
//! | what | accepted | spoken |
//! |---|---|---|
//! | tool | a skill tagged `tool`; name from the extension entry, else the id without `tool-`, else the skill `name` | skill `id: "tool-<name>"`, `tags: ["tool"]` |
//! | schemas | tools extension `params.tools.<name>.{inputSchema, outputSchema}`; on the skill `input_schema`/`output_schema` (004) or `inputSchema`/`outputSchema`; the extension wins, schema by schema ([`tools_from_card`]); none: `{"type": "object"}` | both: the extension and the skill's `input_schema`/`output_schema` |
//! | call | `_tool_call: {name, params}` in `message.metadata`, else in the request's `metadata` (004's "task metadata"), else a data part `{name, params}` | all three |
//! | result artifact | one marked `metadata._tool_result: true` (else every artifact) | `{_tool_result: true, tool_name, execution_time_ms, is_error}` (+ `wrapped`, `error_kind`, `retryable`) |
//! | result value | `wrapped: true`: the data part's `result` (text if a text part is beside it); else one data part is the JSON result, text parts are text, a mix is a JSON array | always a data part: a JSON object as is, anything else as `{"result": …}` with `wrapped: true`, text with a text part beside it |
//! | part discriminator | 1.0: the member present (`data`, `text`, …); 0.3: `kind`, or the member when `kind` is absent — so 004's `"type": "data"` reads as a data part on both wires, `type` itself is ignored | the version's own: 1.0 members, 0.3 `kind` (never `type`, A2A 0.1's spelling, which a strict 1.0 peer would reject as an unknown field) |
//! | error | `is_error: true` on the artifact (message: the text parts, else the data part's `error`), or a `FAILED`/`REJECTED` task; `error_kind` keeps argument errors and timeouts apart | a `COMPLETED` task, `is_error: true`, data `{"error": message}` and the message as text |
//! | timing | `execution_time_ms` from the artifact, into the output's metadata | the server's own measure of the call |

mod agent;
mod card;
mod config;
mod error;
mod output;
mod registry;
mod remote_tool;
mod session;
mod v03;
mod wire;

pub use agent::RemoteAgent;
pub use card::{RemoteToolInfo, parse_card, tools_from_card};
pub use config::AgentConfig;
pub use error::A2aClientError;
pub use registry::{RefreshChanges, RefreshReport, RemoteToolRegistry, RemoteTools};
pub use remote_tool::RemoteTool;
pub use session::{ClientToolsReply, ClientToolsSession, TranscriptEntry};
pub use wire::{EventStream, WireVersion};
