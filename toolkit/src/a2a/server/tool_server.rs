//! [`A2aToolServer`]: a toolkit's active tools as A2A skills another agent can call (design (b)).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use a2a::{
    A2AError, AgentCapabilities, AgentCard, AgentExtension, AgentSkill, Message, Part, PartContent,
    SendMessageRequest, StreamResponse, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use a2a_server::{AgentExecutor, ExecutorContext};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::TOOLS_EXTENSION_URI;
use super::emit::{self, EventStream, Events};
use super::http::{CardFn, SendCheck, ServerOptions, a2a_router};
use crate::a2a::client::RESULT_WRAPPED;
use crate::a2a::parts::integral_floats_to_ints;
use crate::context::{ProgressEvent, ToolContext, ToolProgress};
use crate::tool::{Content, ToolCall, ToolResult};
use crate::toolkit::Toolkit;

/// `metadata.type` of the data part in a WORKING status message that reports progress.
pub const PROGRESS: &str = "progress";

const JSON: &str = "application/json";
const TEXT: &str = "text/plain";

/// The data part reporting one progress event: `{"progress": done, "total": total?,
/// "message": text}` for progress, `{"chunk": text}` for partial output, with
/// `metadata.type = "progress"`.
pub fn progress_part(event: &ProgressEvent) -> Part {
    let data = match event {
        ProgressEvent::Progress {
            done,
            total,
            message,
        } => {
            let mut data = json!({ "progress": done, "message": message });
            if let Some(total) = total {
                data["total"] = json!(total);
            }
            data
        }
        ProgressEvent::Chunk(text) => json!({ "chunk": text }),
    };
    let mut part = Part::data(data).with_media_type(JSON);
    part.metadata = Some([("type".to_string(), Value::from(PROGRESS))].into());
    part
}

/// A toolkit served over A2A (1.0 and 0.3).
///
/// **Card.** One skill per active tool (`id: "tool-<name>"`, `tags: ["tool"]`, input mode
/// `application/json`, output modes `application/json` plus `text/plain` unless the tool
/// declares an output schema); the schemas and hints in the tools extension of
/// `capabilities.extensions[]` ([`TOOLS_EXTENSION_URI`]): `params.tools.<name> = {skillId,
/// inputSchema, outputSchema?, annotations: {readOnlyHint, idempotentHint, destructiveHint,
/// title?}}`. The served card JSON also puts the schemas on each skill as `input_schema` and
/// `output_schema` (design 004's form, for peers that read them there; the official SDKs
/// ignore unknown skill fields, and [`card`](Self::card), an [`AgentCard`], cannot hold them).
/// The card is built per request from [`Toolkit::definitions`], so a group toggle changes it at
/// once.
///
/// **Call.** A message with `_tool_call: {name, params}` in `message.metadata`, or in the
/// request's `metadata` (design 004's "task metadata"), or a data part `{name, params}`. The
/// call runs through [`Toolkit::call`] — the whole execution stack: timeouts, retries,
/// concurrency cap, tracing — after integral floats in `params` are made integers again (1.x
/// peers send `3` as `3.0`). A message without a tool call gets `-32602`.
///
/// **Result.** A `COMPLETED` task whose metadata holds the `_tool_call` and whose one artifact
/// (named after the tool) holds the result. Its metadata is `{_tool_result: true, tool_name,
/// execution_time_ms, is_error}` (design 004's keys plus `is_error`), and its parts always
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
/// [`max_concurrent_calls`](Self::max_concurrent_calls) slot not).
///
/// **Streaming** (`SendStreamingMessage`, 0.3 `message/stream`): `task` (SUBMITTED) →
/// `statusUpdate` (WORKING) → one WORKING `statusUpdate` per [`ToolEmitter`](crate::ToolEmitter)
/// event, its status message holding a [`progress_part`] → `artifactUpdate` → `statusUpdate`
/// (COMPLETED). **`CancelTask`** fires the call's [`CancellationToken`] (the tool's future is
/// dropped by the engine) and the task ends `CANCELED`.
///
/// ```no_run
/// # async fn serve(toolkit: agent_toolkit::Toolkit) -> std::io::Result<()> {
/// use agent_toolkit::a2a::server::A2aToolServer;
///
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:41241").await?;
/// A2aToolServer::new(&toolkit)
///     .name("Weather tools")
///     .bearer_token("s3cret")
///     .serve(listener)
///     .await
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct A2aToolServer {
    toolkit: Toolkit,
    name: String,
    description: String,
    version: String,
    max_concurrent_calls: Option<usize>,
    options: ServerOptions,
}

impl A2aToolServer {
    /// Serve `toolkit`'s active tools. The server shares the toolkit's group state: toggling a
    /// group on `toolkit` changes what the server offers.
    pub fn new(toolkit: &Toolkit) -> Self {
        A2aToolServer {
            toolkit: toolkit.clone(),
            name: "agent-toolkit tools".into(),
            description: "Tools served by agent-toolkit: every skill tagged `tool` is callable \
                          with `_tool_call: {name, params}` in the message metadata"
                .into(),
            version: env!("CARGO_PKG_VERSION").into(),
            max_concurrent_calls: None,
            options: ServerOptions::default(),
        }
    }

    /// Run at most `n` tool calls at once; more wait their turn (their tasks stay `WORKING`,
    /// and can be cancelled while waiting). The toolkit's own
    /// [`max_concurrency`](crate::toolkit::ToolkitBuilder::max_concurrency) bounds one batch; requests
    /// from many clients are separate calls, which this bounds. Default: no limit.
    pub fn max_concurrent_calls(mut self, n: usize) -> Self {
        self.max_concurrent_calls = Some(n.max(1));
        self
    }

    /// The agent's name on its card.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The agent's description on its card.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// The agent's version on its card (default: this crate's version).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// Require `Authorization: Bearer <token>` on calls.
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.options.bearer_token = Some(token.into());
        self
    }

    /// The largest request body accepted, in bytes (see [`ServerOptions::max_body_bytes`]).
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.options.max_body_bytes = bytes;
        self
    }

    /// The URL clients reach the server at (see [`ServerOptions::public_url`]).
    pub fn public_url(mut self, url: impl Into<String>) -> Self {
        self.options.public_url = Some(url.into());
        self
    }

    /// The card as it is now (without interfaces and security, which the router adds per
    /// request).
    pub fn card(&self) -> AgentCard {
        tool_card(&self.toolkit, &self.name, &self.description, &self.version)
    }

    /// The axum router: card routes and the JSON-RPC endpoint at `/`.
    ///
    /// When serving it yourself, set `TCP_NODELAY` on accepted connections (as
    /// [`serve`](Self::serve) does, e.g. with `axum::serve::ListenerExt::tap_io`): streamed
    /// answers otherwise wait on Nagle's algorithm, about 40 ms per call.
    pub fn router(&self) -> axum::Router {
        let (toolkit, name, description, version) = (
            self.toolkit.clone(),
            self.name.clone(),
            self.description.clone(),
            self.version.clone(),
        );
        let card: CardFn = Arc::new(move || tool_card(&toolkit, &name, &description, &version));
        let check: SendCheck = Arc::new(|req: &SendMessageRequest| {
            tool_call_of(&req.message, req.metadata.as_ref()).map(drop)
        });
        let executor = ToolExecutor {
            toolkit: self.toolkit.clone(),
            running: Arc::default(),
            slots: self
                .max_concurrent_calls
                .map(|n| Arc::new(tokio::sync::Semaphore::new(n))),
        };
        a2a_router(executor, card, Some(check), self.options.clone())
    }

    /// Serve on `listener` until the process ends (or the future is dropped).
    pub async fn serve(self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        super::http::serve(listener, self.router()).await
    }
}

fn tool_card(toolkit: &Toolkit, name: &str, description: &str, version: &str) -> AgentCard {
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
    AgentCard {
        name: name.to_string(),
        description: description.to_string(),
        version: version.to_string(),
        supported_interfaces: Vec::new(),
        capabilities: AgentCapabilities {
            streaming: Some(true),
            push_notifications: Some(false),
            extensions: Some(vec![AgentExtension {
                uri: TOOLS_EXTENSION_URI.into(),
                description: Some(
                    "Skills tagged `tool` are callable tools: send `_tool_call: {name, params}` \
                     in message.metadata; schemas and hints are in params.tools"
                        .into(),
                ),
                required: Some(false),
                params: Some([("tools".to_string(), Value::Object(tools))].into()),
            }]),
            extended_agent_card: None,
        },
        default_input_modes: vec![JSON.into()],
        default_output_modes: vec![JSON.into(), TEXT.into()],
        skills,
        provider: None,
        documentation_url: None,
        icon_url: None,
        security_schemes: None,
        security_requirements: None,
        signatures: None,
    }
}

/// The `{name, params}` a message asks to run: `message.metadata._tool_call`, else the
/// request's `metadata._tool_call`, else the first data part with a string `name`.
fn tool_call_of(
    message: &Message,
    request_metadata: Option<&HashMap<String, Value>>,
) -> Result<(String, Value, Value), A2AError> {
    let call = message
        .metadata
        .as_ref()
        .and_then(|m| m.get("_tool_call"))
        .or_else(|| request_metadata.and_then(|m| m.get("_tool_call")))
        .or_else(|| {
            message.parts.iter().find_map(|p| match &p.content {
                PartContent::Data(d) if d.get("name").is_some_and(Value::is_string) => Some(d),
                _ => None,
            })
        });
    let Some(call) = call else {
        return Err(A2AError::invalid_params(
            "invalid params: no tool call in the message; send `_tool_call: {\"name\": …, \
             \"params\": {…}}` in message.metadata (this agent's skills tagged `tool` are its \
             tools)",
        ));
    };
    let Some(name) = call.get("name").and_then(Value::as_str) else {
        return Err(A2AError::invalid_params(
            "invalid params: `_tool_call.name` must be the tool's name as a string",
        ));
    };
    let mut params = match call.get("params") {
        None | Some(Value::Null) => json!({}),
        Some(p) => p.clone(),
    };
    integral_floats_to_ints(&mut params);
    Ok((name.to_string(), params, call.clone()))
}

type Running = Arc<Mutex<HashMap<String, CancellationToken>>>;

fn lock(running: &Running) -> std::sync::MutexGuard<'_, HashMap<String, CancellationToken>> {
    running.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs one tool call per task.
struct ToolExecutor {
    toolkit: Toolkit,
    /// The cancellation token of every call still running, by task id.
    running: Running,
    /// Permits for concurrent calls, when limited.
    slots: Option<Arc<tokio::sync::Semaphore>>,
}

impl AgentExecutor for ToolExecutor {
    fn execute(&self, ctx: ExecutorContext) -> EventStream {
        let token = CancellationToken::new();
        let (events, stream) = emit::channel(&ctx.task_id, &ctx.context_id, token.clone());
        lock(&self.running).insert(ctx.task_id.clone(), token.clone());
        let toolkit = self.toolkit.clone();
        let running = self.running.clone();
        let slots = self.slots.clone();
        tokio::spawn(async move {
            run_call(&toolkit, slots, ctx, &events, token).await;
            lock(&running).remove(&events.task_id);
        });
        stream
    }

    fn cancel(&self, ctx: ExecutorContext) -> EventStream {
        if let Some(token) = lock(&self.running).remove(&ctx.task_id) {
            token.cancel();
        }
        let event = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: ctx.task_id,
            context_id: ctx.context_id,
            status: TaskStatus {
                state: TaskState::Canceled,
                message: None,
                timestamp: None,
            },
            metadata: None,
        });
        Box::pin(futures::stream::once(async move { Ok(event) }))
    }
}

async fn run_call(
    toolkit: &Toolkit,
    slots: Option<Arc<tokio::sync::Semaphore>>,
    ctx: ExecutorContext,
    events: &Events,
    token: CancellationToken,
) {
    let Some(message) = ctx.message else {
        events
            .send(Err(A2AError::invalid_params("invalid params: no message")))
            .await;
        return;
    };
    let (name, params, raw_call) = match tool_call_of(&message, ctx.metadata.as_ref()) {
        Ok(call) => call,
        Err(e) => {
            events.send(Err(e)).await;
            return;
        }
    };
    let metadata = Some([("_tool_call".to_string(), raw_call)].into());
    let task = events.new_task(TaskState::Submitted, vec![message], metadata);
    if !events.task(task).await || !events.status(TaskState::Working, None).await {
        return;
    }

    // Wait for a slot (if limited); a cancel while waiting ends the call here.
    let _permit = match slots {
        Some(slots) => tokio::select! {
            permit = slots.acquire_owned() => match permit {
                Ok(permit) => Some(permit),
                Err(_) => return,
            },
            _ = token.cancelled() => return,
        },
        None => None,
    };
    let (call_ctx, mut progress) = ToolContext::new()
        .with_cancellation(token.clone())
        .progress_channel(64);
    let call = ToolCall::new(events.task_id.as_str(), name, params.to_string());
    let started = Instant::now();
    let result = {
        let run = toolkit.call(call, &call_ctx);
        tokio::pin!(run);
        loop {
            tokio::select! {
                result = &mut run => break result,
                Some(p) = progress.recv() => report(events, &p).await,
            }
        }
    };
    drop(call_ctx);
    while let Ok(p) = progress.try_recv() {
        report(events, &p).await;
    }
    // A cancelled call was reported CANCELED by `cancel`; nothing more to say.
    if token.is_cancelled() {
        return;
    }
    let artifact = result_artifact(&result, started.elapsed());
    if events.artifact(artifact).await {
        events.status(TaskState::Completed, None).await;
    }
}

async fn report(events: &Events, progress: &ToolProgress) {
    let message = events.agent_message(vec![progress_part(&progress.event)]);
    events.status(TaskState::Working, Some(message)).await;
}

/// The artifact carrying a call's result (the [`A2aToolServer`] docs give the shapes).
fn result_artifact(result: &ToolResult, elapsed: Duration) -> a2a::Artifact {
    let mut metadata: HashMap<String, Value> = HashMap::new();
    metadata.insert("_tool_result".into(), true.into());
    metadata.insert("tool_name".into(), result.name.clone().into());
    let millis = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
    metadata.insert("execution_time_ms".into(), millis.into());
    let data = |value: Value| Part::data(value).with_media_type(JSON);
    let text = |text: &str| Part::text(text).with_media_type(TEXT);
    let parts = match &result.outcome {
        Ok(output) => {
            metadata.insert("is_error".into(), false.into());
            let value = match &output.content {
                Content::Json(raw) => serde_json::from_str::<Value>(raw.get()).ok(),
                Content::Text(_) => None,
            };
            match value {
                Some(object @ Value::Object(_)) => vec![data(object)],
                // A2A 0.3 data must be an object, and a 004 reader expects one: other JSON is
                // wrapped the same way on both wires, and `wrapped` says so.
                Some(other) => {
                    metadata.insert(RESULT_WRAPPED.into(), true.into());
                    vec![data(json!({ "result": other }))]
                }
                None => {
                    let output_text = output.as_text();
                    metadata.insert(RESULT_WRAPPED.into(), true.into());
                    vec![data(json!({ "result": output_text })), text(output_text)]
                }
            }
        }
        Err(error) => {
            metadata.insert("is_error".into(), true.into());
            metadata.insert("error_kind".into(), error.kind().as_str().into());
            metadata.insert("retryable".into(), error.is_retryable().into());
            vec![
                data(json!({ "error": error.message() })),
                text(error.message()),
            ]
        }
    };
    emit::artifact(&result.name, parts, Some(metadata))
}

/// Puts each tool's schemas from the tools extension on its skill as well, as `input_schema`
/// and `output_schema` (remote tools as design 004 writes them), in a card already in JSON:
/// the official skill type has no such fields. Peers that read them (JSON-level readers, 004
/// clients) get the schemas on the skill; the official SDKs ignore unknown skill fields. A card
/// without the tools extension is left as it is.
pub(super) fn skill_schemas_on_card(card: &mut Value) {
    let Some(tools) = card
        .pointer("/capabilities/extensions")
        .and_then(Value::as_array)
        .and_then(|exts| {
            exts.iter()
                .find(|e| e.get("uri").and_then(Value::as_str) == Some(TOOLS_EXTENSION_URI))
        })
        .and_then(|e| e.pointer("/params/tools"))
        .and_then(Value::as_object)
        .cloned()
    else {
        return;
    };
    let Some(skills) = card.get_mut("skills").and_then(Value::as_array_mut) else {
        return;
    };
    for skill in skills.iter_mut().filter_map(Value::as_object_mut) {
        let id = skill.get("id").and_then(Value::as_str);
        let Some(entry) = tools
            .values()
            .find(|t| t.get("skillId").and_then(Value::as_str) == id && id.is_some())
        else {
            continue;
        };
        for (from, to) in [
            ("inputSchema", "input_schema"),
            ("outputSchema", "output_schema"),
        ] {
            if let Some(schema) = entry.get(from) {
                skill.insert(to.into(), schema.clone());
            }
        }
    }
}
