//! [`RemoteTool`]: one tool of another agent, called over A2A.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use a2a::{
    Artifact, Message, Part, Role, SendMessageConfiguration, SendMessageRequest,
    SendMessageResponse, StreamResponse, Task, TaskState, TaskStatus,
};
use futures::StreamExt;
use serde_json::{Value, json};

use super::agent::RemoteAgent;
use super::card::RemoteToolInfo;
use super::error::A2aClientError;
use super::output::{
    add_artifact, error_message, forward_progress, meta_flag, parts_output, parts_text,
    remote_tool_error, result_output, with_artifact_metadata,
};
use crate::a2a::attachments::part_attachment;
use crate::a2a::extensions::TOOLS_EXTENSION_URI;
use crate::args::ToolArgs;
use crate::context::{FromToolContext, ToolContext, ToolEmitter};
use crate::error::{ToolError, ToolErrorKind};
use crate::tool::{AgentTool, ToolFuture, ToolOptions, ToolOutput, ToolSpec};
use crate::util::{self, OnDrop};

/// How long a best-effort `CancelTask` may take after a call was abandoned.
const CANCEL_TIMEOUT: Duration = Duration::from_secs(5);

/// How often a task still running is polled when the agent does not stream and answered
/// before the task was done.
const POLL_INTERVAL: Duration = Duration::from_millis(100);

/// What the tools of one agent share: the connection (replaced on refresh) and the set of
/// tools the agent currently offers.
pub(crate) struct AgentSlot {
    pub(crate) alias: String,
    state: RwLock<SlotState>,
}

struct SlotState {
    agent: RemoteAgent,
    offered: HashSet<String>,
}

impl AgentSlot {
    pub(crate) fn new(alias: String, agent: RemoteAgent, offered: HashSet<String>) -> Self {
        AgentSlot {
            alias,
            state: RwLock::new(SlotState { agent, offered }),
        }
    }

    pub(crate) fn agent(&self) -> RemoteAgent {
        self.read(|s| s.agent.clone())
    }

    pub(crate) fn update(&self, agent: RemoteAgent, offered: HashSet<String>) {
        *util::write(&self.state) = SlotState { agent, offered };
    }

    fn offers(&self, name: &str) -> bool {
        self.read(|s| s.offered.contains(name))
    }

    fn read<T>(&self, f: impl FnOnce(&SlotState) -> T) -> T {
        f(&util::read(&self.state))
    }
}

/// A tool of another agent, called over A2A, that sits in a local [`Toolkit`](crate::Toolkit)
/// like any other tool — same groups, timeouts, retries, progress and cancellation. Implements
/// [`AgentTool`]; the [`RemoteToolRegistry`](super::RemoteToolRegistry) makes them. Cheap to
/// clone.
///
/// One call is one A2A task: the arguments go out as `_tool_call: {name, params}` in the
/// message metadata and the request metadata, plus a duplicate data part; the result comes back
/// as the task's artifact marked `_tool_result`, read as the [module docs](super) say (this
/// crate's servers, design 004's data part, or plain parts). The output's
/// [metadata](ToolOutput::metadata), for the application and never shown to the model, holds
/// `a2a_agent` (the alias), `a2a_task_id`, `a2a_artifact_metadata` (the result artifact's
/// metadata, e.g. `tool_name`) and `execution_time_ms` when the agent reported it. With a
/// streaming agent the call uses `SendStreamingMessage`, so the
/// remote tool's progress (WORKING status updates carrying a progress data part) reaches the
/// local [`ToolEmitter`], and the task id is known early enough to cancel: when the local call
/// is dropped — its timeout fired, its `CancellationToken` was cancelled, its batch was dropped —
/// a `CancelTask` goes to the agent.
///
/// Errors keep the distinction the engine needs: a tool that ran and failed (`is_error` on the
/// artifact, a failed task) is a model-visible execution error, never retried; a connection or
/// protocol failure is a retryable error, so the toolkit's [`RetryPolicy`](crate::RetryPolicy)
/// decides. When the server says what kind of failure it was (this crate's servers put
/// `error_kind` and `retryable` in the artifact metadata), an argument error stays an argument
/// error and a remote timeout stays a timeout. The hints on the card (`readOnlyHint`,
/// `idempotentHint`, `destructiveHint`) become the tool's options, so retries of timeouts
/// apply as they would to a local tool.
///
/// A call abandoned before the agent named its task cannot be cancelled remotely: with a
/// streaming agent the task id comes with the first event, almost at once; with one that does
/// not stream, only when `SendMessage` returns (a blocking agent answers when the task is done,
/// so such calls are in practice not cancelled remotely).
#[derive(Clone)]
pub struct RemoteTool {
    inner: Arc<ToolInner>,
}

struct ToolInner {
    local_name: String,
    info: RemoteToolInfo,
    slot: Arc<AgentSlot>,
    options: ToolOptions,
}

impl std::fmt::Debug for RemoteTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteTool")
            .field("name", &self.inner.local_name)
            .field("remote_name", &self.inner.info.name)
            .field("agent", &self.inner.slot.alias)
            .finish()
    }
}

impl RemoteTool {
    pub(crate) fn new(
        local_name: String,
        info: RemoteToolInfo,
        slot: Arc<AgentSlot>,
        mut options: ToolOptions,
    ) -> Self {
        options.annotations.read_only |= info.annotations.read_only;
        options.annotations.idempotent |= info.annotations.idempotent;
        options.annotations.destructive |= info.annotations.destructive;
        RemoteTool {
            inner: Arc::new(ToolInner {
                local_name,
                info,
                slot,
                options,
            }),
        }
    }

    /// The name the tool is registered under locally (prefixed with its agent's alias unless
    /// configured otherwise).
    pub fn name(&self) -> &str {
        &self.inner.local_name
    }

    /// The tool's name on the remote agent.
    pub fn remote_name(&self) -> &str {
        &self.inner.info.name
    }

    /// The alias of the agent that offers it.
    pub fn agent_alias(&self) -> &str {
        &self.inner.slot.alias
    }

    /// What the card said about the tool.
    pub fn info(&self) -> &RemoteToolInfo {
        &self.inner.info
    }

    /// Call the tool directly, outside a toolkit: `arguments` is the argument object. Progress
    /// and cancellation come from `ctx` as in a toolkit call.
    pub async fn invoke(
        &self,
        arguments: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        // Outside a toolkit the context serves no call yet; bind it to this one so the tool's
        // progress reaches `ctx`'s progress channel (an emitter drops events without a call).
        let ctx = match ctx.call_info() {
            Some(_) => ctx.clone(),
            None => ctx.for_call(
                crate::context::CallInfo {
                    call_id: Arc::from("invoke"),
                    tool_name: Arc::from(self.inner.local_name.as_str()),
                },
                None,
                None,
            ),
        };
        self.inner.run(arguments.to_string(), ctx).await
    }
}

impl AgentTool for RemoteTool {
    fn spec(&self) -> ToolSpec {
        let info = &self.inner.info;
        let mut spec = ToolSpec::new(self.inner.local_name.clone(), info.description.clone())
            .with_input_schema(info.input_schema.clone());
        spec.output_schema = info.output_schema.clone();
        spec.options = self.inner.options.clone();
        spec
    }

    fn call(&self, args: ToolArgs) -> ToolFuture {
        let inner = self.inner.clone();
        let arguments = args.raw().to_string();
        let ctx = args.context().clone();
        Box::pin(async move { inner.run(arguments, ctx).await })
    }
}

impl ToolInner {
    async fn run(&self, arguments: String, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let params: Value = serde_json::from_str(&arguments).map_err(|e| {
            ToolError::invalid_arguments(format!("the arguments are not valid JSON: {e}"))
        })?;
        if !params.is_object() {
            return Err(ToolError::invalid_arguments(
                "the arguments must be a JSON object",
            ));
        }
        let alias = &self.slot.alias;
        let name = &self.info.name;
        if !self.slot.offers(name) {
            return Err(ToolError::new(
                ToolErrorKind::Unavailable,
                format!(
                    "tool `{}` is no longer offered by agent `{alias}`",
                    self.local_name
                ),
            ));
        }
        let agent = self.slot.agent();
        let request = tool_call_request(name, params);
        let outcome = if agent.supports_streaming() {
            self.run_streaming(&agent, &request, &ctx).await
        } else {
            self.run_blocking(&agent, &request).await
        }?;
        self.output(outcome)
            .map(|o| o.with_metadata("a2a_agent", Value::from(alias.as_str())))
    }

    /// `SendMessage`, then `GetTask` until the task is done if the agent answered early.
    async fn run_blocking(
        &self,
        agent: &RemoteAgent,
        request: &SendMessageRequest,
    ) -> Result<Finished, ToolError> {
        let response = agent
            .send_message(request)
            .await
            .map_err(|e| self.transport_error(e))?;
        let mut task = match response {
            SendMessageResponse::Task(task) => task,
            SendMessageResponse::Message(message) => return Ok(Finished::Message(message)),
        };
        let guard = cancel_on_drop(agent, task.id.clone());
        while !finished(&task.status.state) {
            tokio::time::sleep(POLL_INTERVAL).await;
            task = agent
                .get_task(&task.id)
                .await
                .map_err(|e| self.transport_error(e))?;
        }
        // A task waiting for input this call cannot give stays armed: dropping the guard
        // cancels it rather than leaving it waiting on the server.
        if task.status.state.is_terminal() {
            guard.defuse();
        }
        Ok(Finished::Task(task))
    }

    async fn run_streaming(
        &self,
        agent: &RemoteAgent,
        request: &SendMessageRequest,
        ctx: &ToolContext,
    ) -> Result<Finished, ToolError> {
        let mut stream = agent
            .send_streaming_message(request)
            .await
            .map_err(|e| self.transport_error(e))?;
        let emitter = ToolEmitter::from_tool_context(ctx).ok();
        let token = ctx.cancellation().cloned().unwrap_or_default();
        // Armed once the agent names the task (the first event that carries its id).
        let mut guard = None;
        let mut task: Option<Task> = None;
        loop {
            let event = tokio::select! {
                event = stream.next() => event,
                () = token.cancelled() => {
                    return Err(ToolError::new(
                        ToolErrorKind::Cancelled,
                        format!("tool `{}` was cancelled before it finished", self.local_name),
                    ));
                }
            };
            let Some(event) = event else { break };
            match event.map_err(|e| self.transport_error(e))? {
                StreamResponse::Message(message) => {
                    defuse(&mut guard);
                    return Ok(Finished::Message(message));
                }
                StreamResponse::Task(t) => {
                    guard.get_or_insert_with(|| cancel_on_drop(agent, t.id.clone()));
                    task = Some(t);
                }
                StreamResponse::StatusUpdate(update) => {
                    guard.get_or_insert_with(|| cancel_on_drop(agent, update.task_id.clone()));
                    if update.status.state == TaskState::Working
                        && let (Some(emitter), Some(message)) = (&emitter, &update.status.message)
                    {
                        forward_progress(emitter, message);
                    }
                    let t = task.get_or_insert_with(|| Task {
                        id: update.task_id.clone(),
                        context_id: update.context_id.clone(),
                        status: TaskStatus {
                            state: TaskState::Submitted,
                            message: None,
                            timestamp: None,
                        },
                        artifacts: None,
                        history: None,
                        metadata: None,
                    });
                    t.status = update.status;
                }
                StreamResponse::ArtifactUpdate(update) => {
                    guard.get_or_insert_with(|| cancel_on_drop(agent, update.task_id.clone()));
                    if let Some(t) = task.as_mut() {
                        add_artifact(t, update.artifact, update.append == Some(true));
                    } else {
                        return Err(
                            self.protocol_error(agent, "an artifact arrived before the task")
                        );
                    }
                }
            }
            if let Some(t) = task.take_if(|t| finished(&t.status.state)) {
                // A task waiting for input this call cannot give stays armed: dropping the
                // guard cancels it rather than leaving it waiting on the server.
                if t.status.state.is_terminal() {
                    defuse(&mut guard);
                }
                return Ok(Finished::Task(t));
            }
        }
        Err(self.transport_error(A2aClientError::Connection {
            url: agent.endpoint().to_string(),
            source: "the event stream ended before the task finished".into(),
        }))
    }

    /// The tool's output, or the model-visible error, from the finished task or message.
    fn output(&self, finished: Finished) -> Result<ToolOutput, ToolError> {
        let task = match finished {
            Finished::Message(message) => return Ok(parts_output(&message.parts)),
            Finished::Task(task) => task,
        };
        let status_text = task
            .status
            .message
            .as_ref()
            .map(|m| parts_text(&m.parts))
            .unwrap_or_default();
        let name = &self.local_name;
        match task.status.state {
            TaskState::Completed => {}
            TaskState::Canceled => {
                return Err(ToolError::new(
                    ToolErrorKind::Cancelled,
                    format!("tool `{name}` was cancelled by the remote agent"),
                ));
            }
            TaskState::InputRequired | TaskState::AuthRequired => {
                return Err(ToolError::execution(format!(
                    "tool `{name}` asked for more input, which a tool call cannot give{}",
                    with_colon(&status_text)
                )));
            }
            _ => {
                return Err(ToolError::execution(format!(
                    "tool `{name}` failed{}",
                    with_colon(&status_text)
                )));
            }
        }
        let artifacts = task.artifacts.unwrap_or_default();
        let marked: Vec<&Artifact> = artifacts
            .iter()
            .filter(|a| meta_flag(a.metadata.as_ref(), "_tool_result"))
            .collect();
        let chosen: Vec<&Artifact> = if marked.is_empty() {
            artifacts.iter().collect()
        } else {
            marked
        };
        // The result's attachments (file parts, marked text parts) come off before it is read.
        let mut attachments = Vec::new();
        let stripped: Vec<Artifact> = chosen
            .iter()
            .map(|artifact| {
                let mut artifact = (*artifact).clone();
                artifact.parts.retain(|part| match part_attachment(part) {
                    Some(attachment) => {
                        attachments.push(attachment);
                        false
                    }
                    None => true,
                });
                artifact
            })
            .collect();
        let chosen: Vec<&Artifact> = stripped.iter().collect();
        let is_error = chosen
            .iter()
            .any(|a| meta_flag(a.metadata.as_ref(), "is_error"));
        let parts: Vec<Part> = chosen.iter().flat_map(|a| a.parts.clone()).collect();
        if is_error {
            let text = error_message(&parts);
            let message = if text.is_empty() {
                format!("tool `{name}` failed")
            } else {
                text
            };
            return Err(remote_tool_error(&chosen, message));
        }
        let output = if parts.is_empty() {
            // A task completed without an artifact: its status message is the answer.
            task.status
                .message
                .as_ref()
                .map(|m| parts_output(&m.parts))
                .unwrap_or_else(|| ToolOutput::text(""))
        } else {
            result_output(&chosen)
        };
        let mut output = with_artifact_metadata(output, &chosen);
        for attachment in attachments {
            output = output.with_attachment(attachment);
        }
        Ok(output.with_metadata("a2a_task_id", Value::from(task.id)))
    }

    fn transport_error(&self, error: A2aClientError) -> ToolError {
        let alias = &self.slot.alias;
        let name = &self.local_name;
        let retryable = error.is_retryable();
        let tool_error = match &error {
            A2aClientError::Rpc {
                code: a2a::error_code::INVALID_PARAMS,
                message,
                ..
            } => ToolError::invalid_arguments(format!(
                "agent `{alias}` refused the arguments of `{name}`: {message}"
            )),
            A2aClientError::Connection { .. } => ToolError::execution(format!(
                "tool `{name}` could not reach agent `{alias}`; it may be down"
            )),
            A2aClientError::Unauthorized { .. } => ToolError::execution(format!(
                "agent `{alias}` refused this client's credentials for `{name}`"
            )),
            A2aClientError::Rpc { message, .. } => ToolError::execution(format!(
                "agent `{alias}` refused the call of `{name}`: {message}"
            )),
            _ => ToolError::execution(format!(
                "agent `{alias}` gave an invalid answer to the call of `{name}`"
            )),
        };
        tool_error.with_retryable(retryable).with_source(error)
    }

    fn protocol_error(&self, agent: &RemoteAgent, message: &str) -> ToolError {
        self.transport_error(A2aClientError::Protocol {
            url: agent.endpoint().to_string(),
            message: message.to_string(),
        })
    }
}

/// The request that calls tool `name` with `params`: `_tool_call` in the message metadata
/// (where this project's servers look first, kept in the task history) and in the request's
/// own metadata (the "task metadata" of design 004, where a server written from it looks), and
/// the same call as a data part (a message needs a part, and generic agents can read it there).
pub(crate) fn tool_call_request(name: &str, params: Value) -> SendMessageRequest {
    let call = json!({ "name": name, "params": params });
    let mut message = Message::new(
        Role::User,
        vec![Part::data(call.clone()).with_media_type("application/json")],
    );
    let metadata = HashMap::from([("_tool_call".to_string(), call)]);
    message.metadata = Some(metadata.clone());
    message.extensions = Some(vec![TOOLS_EXTENSION_URI.to_string()]);
    SendMessageRequest {
        message,
        configuration: Some(SendMessageConfiguration {
            accepted_output_modes: Some(vec!["application/json".into(), "text/plain".into()]),
            task_push_notification_config: None,
            history_length: None,
            return_immediately: None,
        }),
        metadata: Some(metadata),
        tenant: None,
    }
}

enum Finished {
    Task(Task),
    Message(Message),
}

/// Terminal, or interrupted (the remote tool cannot continue without us).
fn finished(state: &TaskState) -> bool {
    state.is_terminal() || matches!(state, TaskState::InputRequired | TaskState::AuthRequired)
}

/// A guard that sends `CancelTask` for `task_id` if the call is abandoned while the task still
/// runs (its future dropped by a timeout, a cancellation token or a dropped batch). Best
/// effort, in the background.
fn cancel_on_drop(agent: &RemoteAgent, task_id: String) -> OnDrop<impl FnOnce() + use<>> {
    let agent = agent.clone();
    OnDrop::new(move || {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            match tokio::time::timeout(CANCEL_TIMEOUT, agent.cancel_task(&task_id)).await {
                Ok(Ok(_)) => tracing::debug!(task_id, "remote task cancelled"),
                Ok(Err(error)) => tracing::warn!(task_id, %error, "CancelTask failed"),
                Err(_) => tracing::warn!(task_id, "CancelTask timed out"),
            }
        });
    })
}

/// The task is over (or was never created): nothing to cancel.
fn defuse<F: FnOnce()>(guard: &mut Option<OnDrop<F>>) {
    if let Some(guard) = guard.take() {
        guard.defuse();
    }
}

fn with_colon(text: &str) -> String {
    if text.is_empty() {
        String::new()
    } else {
        format!(": {text}")
    }
}

/// The options of a remote tool that the registry sets before the card's hints.
pub(crate) fn base_options(groups: &[String], timeout: Option<Duration>) -> ToolOptions {
    ToolOptions {
        groups: groups.iter().cloned().map(Into::into).collect(),
        timeout,
        ..ToolOptions::default()
    }
}
