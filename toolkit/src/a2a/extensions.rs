//! The A2A extensions this crate declares on its cards, and the metadata keys they define:
//! vocabulary the client and the server share, so neither depends on the other for it.

/// The URI of the tools extension (remote tools): [`A2aToolServer`](crate::a2a::server::A2aToolServer)
/// cards declare it, with each tool's schemas and hints in `params.tools`. Cards are read by the
/// shape of the extension's `params` (a `tools` object), so peers using another URI work too.
pub const TOOLS_EXTENSION_URI: &str = "https://agent-toolkit.dev/a2a/ext/tools/v1";

/// The URI of the client-tools extension (client-side tools) an
/// [`A2aAgentServer`](crate::a2a::server::A2aAgentServer) card declares: messages may carry
/// tool definitions in a data part (`metadata.type = "tool-definitions"`), calls come back in a
/// `tool-calls` part (by default with the task `INPUT_REQUIRED`, or in a Message for clients of
/// design document 000), results go in a `tool-results` part on the same task or as a new
/// message in the conversation.
pub const CLIENT_TOOLS_EXTENSION_URI: &str = "https://agent-toolkit.dev/a2a/ext/client-tools/v1";

/// The result-artifact metadata flag of the tools extension saying a call's result is the
/// `result` member of the artifact's data part: a text result (a text part beside it carries
/// the same text) or JSON that is not an object. This crate's servers set it; a peer that
/// does not is read by its parts.
pub(crate) const RESULT_WRAPPED: &str = "wrapped";

/// `metadata.type` of the data part in a WORKING status message that reports a remote tool's
/// progress.
pub(crate) const PROGRESS: &str = "progress";
