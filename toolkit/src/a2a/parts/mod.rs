//! The parts that carry client-side tools over A2A: tool definitions from the client, tool calls
//! from the agent, tool results back.
//!
//! Two dialects travel in the same parts. The project's own convention (protocols.md §1.6) and
//! the literal form of design document 000 differ in the shape of the calls and in how results
//! come back; both are read everywhere, and each is spoken to the peer that uses it.
//!
//! | what | the project's convention | design document 000 |
//! |------|--------------------------|---------------------|
//! | tool definitions, client → agent | data part `{"tools": [{type: "function", function: {name, description, parameters}}]}`, `metadata {type: "tool-definitions", format: "openai"}` | the same part with `format: "langchain"` |
//! | tool calls, agent → client | data part `{"tool_calls": [{id, type: "function", function: {name, arguments: "<JSON text>"}}]}`, `metadata {type: "tool-calls", format: "openai"}` | `{"tool_calls": [{id, name, args: {…}, type: "tool_call"}]}` (LangChain's `ToolCall`), `format: "langchain"` |
//! | tool results, client → agent | data part `{"tool_results": [{tool_call_id, name, content, is_error}]}`, `metadata {type: "tool-results"}` | a text part: `Tool results: [{"name", "result"} \| {"name", "error"}]`, `Tool "NAME" returned: <JSON>` or `Tool NAME failed: <message>` |
//!
//! The `format` of a client's tool definitions names the shape it wants its calls in
//! ([`requested_call_format`]): `"langchain"` gets [`CallFormat::LangChain`], anything else (or
//! no `format`) [`CallFormat::OpenAi`]. [`extract_tool_calls`] reads both shapes, and also a data
//! part holding a `tool_calls` array without any `metadata.type`, as document-style servers may
//! send it. [`extract_text_results`] reads the document's three result texts; those carry no
//! call ids, so a reader matches them to its calls by name.
//!
//! Every reader validates the whole part and lists every problem with its JSON path
//! ([`InvalidToolsPart`]); nothing is silently dropped or guessed.
//!
//! The functions here build and read A2A 1.0 [`Part`](a2a::Part)s (the official `a2a-lf` types); the 0.3
//! form of the same part (`kind: "data"`, no `mediaType`) is produced by the 0.3 conversion
//! layer at the transport boundary.

mod calls;
mod data;
mod definitions;
mod results;

pub(crate) use calls::is_tool_calls_part;
pub use calls::{extract_tool_calls, tool_calls_part, tool_calls_part_as};
pub use data::{
    CallFormat, InvalidToolsPart, TOOL_CALLS, TOOL_DEFINITIONS, TOOL_RESULTS, has_part,
    integral_floats_to_ints,
};
pub use definitions::{extract_tools, requested_call_format, to_data_part, to_data_part_as};
pub use results::{
    ToolResultEntry, extract_text_results, extract_tool_results, tool_results_part,
    tool_results_text,
};
