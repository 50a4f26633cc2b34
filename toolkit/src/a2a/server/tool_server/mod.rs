//! [`A2aToolServer`]: a toolkit's active tools as A2A skills another agent can call (remote
//! tools). This file owns the server and its card; `executor` runs the calls.

mod executor;

use std::sync::Arc;

use a2a::{AgentCard, AgentExtension, AgentSkill, SendMessageRequest};
use serde_json::{Map, Value, json};

use self::executor::{JSON, TEXT, ToolExecutor, tool_call_of};
use super::card::server_card;
use super::http::{CardFn, a2a_router, serve};
use super::options::ServerOptions;
use super::validate::SendCheck;
use crate::a2a::extensions::TOOLS_EXTENSION_URI;
use crate::toolkit::Toolkit;

/// The card's name when the options set none.
const DEFAULT_NAME: &str = "agent-toolkit tools";

/// The card's description when the options set none.
const DEFAULT_DESCRIPTION: &str = "Tools served by agent-toolkit: every skill tagged `tool` is \
                                   callable with `_tool_call: {name, params}` in the message \
                                   metadata";

/// A toolkit served over A2A (1.0 and 0.3).
///
/// **Card.** One skill per active tool (`id: "tool-<name>"`, `tags: ["tool"]`, input mode
/// `application/json`, output modes `application/json` plus `text/plain` unless the tool
/// declares an output schema); the schemas and hints in the tools extension of
/// `capabilities.extensions[]` ([`TOOLS_EXTENSION_URI`]): `params.tools.<name> = {skillId,
/// inputSchema, outputSchema?, annotations: {readOnlyHint, idempotentHint, destructiveHint,
/// title?}}`. The served card JSON also puts the schemas on each skill as `input_schema` and
/// `output_schema` (design document 004's form, for peers that read them there; the official SDKs
/// ignore unknown skill fields, and [`card`](Self::card), an [`AgentCard`], cannot hold them).
/// The card is built per request from [`Toolkit::definitions`], so a group toggle changes it at
/// once.
///
/// **Call.** A message with `_tool_call: {name, params}` in `message.metadata`, or in the
/// request's `metadata` (design document 004's "task metadata"), or a data part `{name, params}`. The
/// call runs through [`Toolkit::call`] — the whole execution stack: timeouts, retries,
/// concurrency cap, tracing — after integral floats in `params` are made integers again (1.x
/// peers send `3` as `3.0`). A message without a tool call gets `-32602`.
///
/// **Result.** A `COMPLETED` task whose metadata holds the `_tool_call` and whose one artifact
/// (named after the tool) holds the result. Its metadata is `{_tool_result: true, tool_name,
/// execution_time_ms, is_error}` (design document 004's keys plus `is_error`), and its parts always
/// include a **data** part:
///
/// | the tool returned | data part | text part | more metadata |
/// |---|---|---|---|
/// | a JSON object | the object | — | — |
/// | other JSON (number, string, array, null) | `{"result": value}` | — | `wrapped: true` |
/// | text | `{"result": text}` | the text | `wrapped: true` |
/// | an error | `{"error": message}` | the message | `is_error: true`, `error_kind`, `retryable` |
///
/// The data part is an object on both wires (A2A 0.3 requires one, and a 004 reader expects
/// one); `wrapped` tells a reader the result is its `result` member. A failed call — unknown
/// or switched-off tool, invalid arguments, the tool's own error, a timeout — is a `COMPLETED`
/// task too, with the [`ToolErrorKind`](crate::error::ToolErrorKind) name as `error_kind`, the way
/// MCP reports tool errors (`isError`) as results rather than protocol errors.
/// `execution_time_ms` is the time the call took here (retries included, waiting for a
/// [`max_concurrent_calls`](Self::max_concurrent_calls) slot not). A successful output's
/// [`Attachment`](crate::tool::Attachment)s follow those parts, one each: images, audio and
/// binary documents as file parts (bytes and media type, a document's URI as the file name),
/// text documents as text parts, each with `metadata {attachment: "image" | "audio" | "text" |
/// "blob", mimeType, uri?}`; `RemoteTool` hands them back as attachments.
///
/// **Streaming** (`SendStreamingMessage`, 0.3 `message/stream`): `task` (SUBMITTED) →
/// `statusUpdate` (WORKING) → one WORKING `statusUpdate` per [`ToolEmitter`](crate::ToolEmitter)
/// event, its status message holding a progress data part (`metadata.type = "progress"`,
/// data `{"progress": done, "total"?: total, "message": text}`, `{"chunk": text}` for
/// partial output, or `{"log": level, "message": text}` for a log message) → `artifactUpdate` → `statusUpdate`
/// (COMPLETED). A blocking `SendMessage` (no `returnImmediately`, no push notifications), whose
/// answer is the finished task and which nothing watches step by step, skips the intermediate
/// events: the task is SUBMITTED until it is stored finished in one step (WORKING in between
/// only if the tool reports progress), two stores and task copies in the official handler
/// instead of five; its answer is the same. **`CancelTask`** fires the call's [`CancellationToken`](crate::CancellationToken) (the tool's future is
/// dropped by the engine) and the task ends `CANCELED`.
///
/// ```no_run
/// # async fn serve(toolkit: agent_toolkit::Toolkit) -> std::io::Result<()> {
/// use agent_toolkit::a2a::server::{A2aToolServer, ServerOptions};
///
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:41241").await?;
/// A2aToolServer::new(&toolkit)
///     .options(ServerOptions::new().name("Weather tools").bearer_token("s3cret"))
///     .serve(listener)
///     .await
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct A2aToolServer {
    toolkit: Toolkit,
    max_concurrent_calls: Option<usize>,
    options: ServerOptions,
}

impl A2aToolServer {
    /// Serve `toolkit`'s active tools. The server shares the toolkit's group state: toggling a
    /// group on `toolkit` changes what the server offers.
    pub fn new(toolkit: &Toolkit) -> Self {
        A2aToolServer {
            toolkit: toolkit.clone(),
            max_concurrent_calls: None,
            options: ServerOptions::default(),
        }
    }

    crate::util::setters! {
        /// The card's name and the endpoint's settings (auth, body limit, public URL).
        pub fn options(options: ServerOptions) => options = options;

        /// Run at most `n` tool calls at once; more wait their turn (their tasks stay `WORKING`,
        /// and can be cancelled while waiting). The toolkit's own
        /// [`max_concurrency`](crate::toolkit::ToolkitBuilder::max_concurrency) bounds one batch;
        /// requests from many clients are separate calls, which this bounds. Default: no limit.
        pub fn max_concurrent_calls(n: usize) => max_concurrent_calls = Some(n.max(1));
    }

    /// The card as it is now (without interfaces and security, which the router adds per
    /// request).
    pub fn card(&self) -> AgentCard {
        tool_card(&self.toolkit, &self.options)
    }

    /// The axum router: card routes and the JSON-RPC endpoint at `/`.
    ///
    /// When serving it yourself, set `TCP_NODELAY` on accepted connections (as
    /// [`serve`](Self::serve) does, e.g. with `axum::serve::ListenerExt::tap_io`): streamed
    /// answers otherwise wait on Nagle's algorithm, about 40 ms per call.
    pub fn router(&self) -> axum::Router {
        let (toolkit, options) = (self.toolkit.clone(), self.options.clone());
        let card: CardFn = Arc::new(move || tool_card(&toolkit, &options));
        let check: SendCheck = Arc::new(|req: &SendMessageRequest| {
            tool_call_of(&req.message, req.metadata.as_ref()).map(drop)
        });
        let executor = ToolExecutor::new(self.toolkit.clone(), self.max_concurrent_calls);
        a2a_router(executor, card, Some(check), self.options.clone())
    }

    /// Serve on `listener` until the process ends (or the future is dropped).
    pub async fn serve(self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        serve(listener, self.router()).await
    }
}

fn tool_card(toolkit: &Toolkit, options: &ServerOptions) -> AgentCard {
    let defs = toolkit.definitions();
    let mut tools = Map::new();
    let mut skills = Vec::with_capacity(defs.len());
    for def in &defs {
        let skill_id = format!("tool-{}", def.name());
        let hints = def.annotations();
        let mut annotations = json!({
            "readOnlyHint": hints.read_only,
            "idempotentHint": hints.idempotent,
            "destructiveHint": hints.destructive,
        });
        if let Some(title) = &hints.title {
            annotations["title"] = json!(title);
        }
        let mut entry = json!({
            "skillId": skill_id,
            "inputSchema": def.parameters(),
            "annotations": annotations,
        });
        if let Some(output) = def.output_schema() {
            entry["outputSchema"] = output.clone();
        }
        tools.insert(def.name().to_string(), entry);
        skills.push(AgentSkill {
            id: skill_id,
            name: def.name().to_string(),
            description: def.description().to_string(),
            tags: vec!["tool".into()],
            examples: None,
            input_modes: Some(vec![JSON.into()]),
            // A declared output schema means JSON; otherwise the output may be text.
            output_modes: Some(if def.output_schema().is_some() {
                vec![JSON.into()]
            } else {
                vec![JSON.into(), TEXT.into()]
            }),
            security_requirements: None,
        });
    }
    let extension = AgentExtension {
        uri: TOOLS_EXTENSION_URI.into(),
        description: Some(
            "Skills tagged `tool` are callable tools: send `_tool_call: {name, params}` \
             in message.metadata; schemas and hints are in params.tools"
                .into(),
        ),
        required: Some(false),
        params: Some([("tools".to_string(), Value::Object(tools))].into()),
    };
    let mut card = server_card(
        DEFAULT_NAME.into(),
        DEFAULT_DESCRIPTION.into(),
        env!("CARGO_PKG_VERSION").into(),
        extension,
        vec![JSON.into()],
        vec![JSON.into(), TEXT.into()],
        skills,
    );
    options.apply_to(&mut card);
    card
}
