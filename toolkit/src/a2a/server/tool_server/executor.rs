//! Running the calls: one tool call per task, its progress as WORKING status updates, its
//! result (or failure) as the task's artifact, in the shapes the [`A2aToolServer`](super::A2aToolServer)
//! docs give.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use a2a::{
    A2AError, Message, Part, PartContent, StreamResponse, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};
use a2a_server::{AgentExecutor, ExecutorContext};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::super::emit::{self, EventStream, Events};
use super::super::validate::ANSWER_ONCE;
use crate::a2a::attachments::attachment_part;
use crate::a2a::extensions::{PROGRESS, RESULT_WRAPPED};
use crate::a2a::parts::integral_floats_to_ints;
use crate::context::{ProgressEvent, ToolContext, ToolProgress};
use crate::tool::{Content, ToolCall, ToolResult};
use crate::toolkit::Toolkit;
use crate::util::lock;

/// The media types of the parts a tool server sends (and of its card's modes).
pub(super) const JSON: &str = "application/json";
/// See [`JSON`].
pub(super) const TEXT: &str = "text/plain";

/// The data part reporting one progress event: `{"progress": done, "total": total?,
/// "message": text}` for progress, `{"chunk": text}` for partial output, `{"log": level,
/// "message": text}` for a log message (`level` as MCP spells it: `"info"`, `"warning"`, …),
/// with `metadata.type = "progress"`.
fn progress_part(event: &ProgressEvent) -> Part {
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
        ProgressEvent::Log { level, message } => {
            json!({ "log": level.as_str(), "message": message })
        }
    };
    let mut part = Part::data(data).with_media_type(JSON);
    part.metadata = Some([("type".to_string(), Value::from(PROGRESS))].into());
    part
}

/// The `{name, params}` a message asks to run: `message.metadata._tool_call`, else the
/// request's `metadata._tool_call`, else the first data part with a string `name`.
pub(super) fn tool_call_of(
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

/// Runs one tool call per task.
pub(super) struct ToolExecutor {
    toolkit: Toolkit,
    /// The cancellation token of every call still running, by task id.
    running: Running,
    /// Permits for concurrent calls, when limited.
    slots: Option<Arc<tokio::sync::Semaphore>>,
}

impl ToolExecutor {
    /// Runs `toolkit`'s calls, at most `max_concurrent` at once when given.
    pub(super) fn new(toolkit: Toolkit, max_concurrent: Option<usize>) -> Self {
        ToolExecutor {
            toolkit,
            running: Arc::default(),
            slots: max_concurrent.map(|n| Arc::new(tokio::sync::Semaphore::new(n))),
        }
    }
}

impl AgentExecutor for ToolExecutor {
    fn execute(&self, ctx: ExecutorContext) -> EventStream {
        let token = CancellationToken::new();
        let (events, stream) = emit::channel(&ctx.task_id, &ctx.context_id, token.clone());
        lock(&self.running).insert(ctx.task_id.clone(), token.clone());
        let toolkit = self.toolkit.clone();
        let running = self.running.clone();
        let slots = self.slots.clone();
        let span = crate::trace_context::a2a_server_span(&ctx, "a2a tool call");
        tokio::spawn(
            async move {
                run_call(&toolkit, slots, ctx, &events, token).await;
                lock(&running).remove(&events.task_id);
            }
            .instrument(span),
        );
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
    let Some(message) = events.require_message(ctx.message).await else {
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
    // Answered once (see `ANSWER_ONCE`): the official handler has stored the task SUBMITTED,
    // and the finished task follows as one event (progress events, if any, come between).
    // Otherwise every step is an event: SUBMITTED, WORKING, the artifact, COMPLETED.
    let once = ctx.service_params.contains_key(ANSWER_ONCE);
    let task = events.new_task(TaskState::Submitted, vec![message], metadata);
    let (finished, started) = if once {
        (Some(task), true)
    } else {
        let started = events.task(task).await && events.status(TaskState::Working, None).await;
        (None, started)
    };
    if !started {
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
    match finished {
        Some(mut task) => {
            task.status.state = TaskState::Completed;
            task.artifacts = Some(vec![artifact]);
            events.task(task).await;
        }
        None => {
            if events.artifact(artifact).await {
                events.status(TaskState::Completed, None).await;
            }
        }
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
    let parts = match &result.outcome {
        Ok(output) => {
            metadata.insert("is_error".into(), false.into());
            let mut parts = result_parts(output, &mut metadata);
            parts.extend(output.attachments().iter().map(attachment_part));
            parts
        }
        Err(error) => {
            metadata.insert("is_error".into(), true.into());
            metadata.insert("error_kind".into(), error.kind().as_str().into());
            metadata.insert("retryable".into(), error.is_retryable().into());
            vec![
                Part::data(json!({ "error": error.message() })).with_media_type(JSON),
                Part::text(error.message()).with_media_type(TEXT),
            ]
        }
    };
    emit::artifact(&result.name, parts, Some(metadata))
}

/// The parts carrying a successful output (its attachments follow them).
fn result_parts(
    output: &crate::tool::ToolOutput,
    metadata: &mut HashMap<String, Value>,
) -> Vec<Part> {
    let data = |value: Value| Part::data(value).with_media_type(JSON);
    let text = |text: &str| Part::text(text).with_media_type(TEXT);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::LogLevel;

    /// Each kind of event has its own data shape, tagged as progress.
    #[test]
    fn progress_parts_say_what_kind_of_event_they_carry() {
        let data = |event: ProgressEvent| {
            let part = progress_part(&event);
            assert_eq!(
                part.metadata.as_ref().and_then(|m| m.get("type")),
                Some(&Value::from(PROGRESS))
            );
            serde_json::to_value(&part).unwrap()
        };
        let log = data(ProgressEvent::Log {
            level: LogLevel::Warning,
            message: "careful".into(),
        });
        assert!(
            log.to_string()
                .contains(r#"{"log":"warning","message":"careful"}"#),
            "{log}"
        );
        let chunk = data(ProgressEvent::Chunk("abc".into()));
        assert!(chunk.to_string().contains(r#"{"chunk":"abc"}"#), "{chunk}");
    }
}
