//! MCP tasks as revision 2025-11-25 defines them: a `background` tool is served as a task, and
//! the task is the tool's background job, kept by the toolkit's job backend — in this process
//! by default, in the database of a durable [`JobQueue`](crate::background::JobQueue) (then
//! a task outlives a restart of the server and any replica sharing the queue answers for it).
//!
//! | wire | here |
//! |---|---|
//! | `initialize` result | `capabilities.tasks`: `list`, `cancel`, `requests.tools.call` |
//! | `tools/list` | `execution.taskSupport: "optional"` on each background tool |
//! | `tools/call` with `params.task` | the call submitted as a background job; `{task}` at once |
//! | `tasks/get` | the job's record as a task: `working`, `completed`, `failed` (the tool's error), `cancelled` |
//! | `tasks/result` | waits until the job ended, then its `CallToolResult` with the related-task `_meta` |
//! | `tasks/list` | the tasks served over MCP by this toolkit's queue, newest first, 100 a page |
//! | `tasks/cancel` | [`BackgroundJobs::cancel`](crate::background::BackgroundJobs::cancel); `-32602` once ended |
//!
//! rmcp models only the later tasks extension (SEP-2663) and drops these fields, so the
//! transports adjust the messages on the way ([`inbound`], [`decorate`]): a task-augmented
//! `tools/call`, `tasks/get` and `tasks/cancel` are renamed to methods of this library, which
//! rmcp hands to [`McpServer`](super::McpServer) as custom requests (as it does `tasks/result`
//! and `tasks/list`, which it does not know), and the `initialize` and `tools/list` answers get
//! the fields above. A request of the stateless era (2026-07-28) is left alone: tasks left the
//! core protocol in that revision. Everything else stays rmcp's.
//!
//! A task's id is the call id of its job (random, not guessable); any client that has it can
//! read or cancel the task, and `tasks/list` lists every task of the queue: one server (its
//! bearer token, or the loopback interface) is one trust domain. A task is kept as long as the
//! job ledger keeps its job, which `ttl` says: a durable queue's
//! [`retention`](crate::background::JobQueue::retention), `null` (unlimited) in process; a
//! client's requested `ttl` does not change it. The session that created a task is sent
//! `notifications/tasks/status` (the task, as `tasks/get` answers it) when the task ends, for
//! as long as the session lasts; clients still poll as `pollInterval` says (the spec has them
//! not rely on the notification), and a task followed from another session or replica is
//! only polled.

use std::time::{Duration, SystemTime};

use rmcp::RoleServer;
use rmcp::model::{CustomNotification, CustomResult, ErrorData, ServerNotification};
use rmcp::service::Peer;
use serde_json::{Map, Value, json};

use super::convert;
use crate::background::{JobId, JobRecord, JobStatus};
use crate::context::ToolContext;
use crate::dialect::Dialect;
use crate::error::ToolErrorKind;
use crate::tool::ToolCall;
use crate::toolkit::Toolkit;

/// A `tools/call` carrying `params.task`, renamed on the way in.
pub(super) const CALL: &str = "agent-toolkit/tasks/call";
/// `tasks/get` of revision 2025-11-25, renamed on the way in (rmcp reads `tasks/get` as SEP-2663's).
pub(super) const GET: &str = "agent-toolkit/tasks/get";
/// `tasks/cancel` of revision 2025-11-25, renamed on the way in.
pub(super) const CANCEL: &str = "agent-toolkit/tasks/cancel";
/// Reach the handler under their own names.
pub(super) const RESULT: &str = "tasks/result";
pub(super) const LIST: &str = "tasks/list";
/// The notification a task's session gets when the task ends.
const STATUS: &str = "notifications/tasks/status";

/// The `_meta` key tying a message to its task.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// The `_meta` key of a stateless-era request's revision.
const STATELESS_REVISION: &str = "io.modelcontextprotocol/protocolVersion";
/// Call ids of the jobs of tasks: what `tasks/list` lists.
const TASK_PREFIX: &str = "mcp-task-";
/// How often clients are asked to poll, in milliseconds.
const POLL_INTERVAL_MS: u64 = 1000;
/// Tasks per `tasks/list` page.
const PAGE: usize = 100;

/// An answer of rmcp's that gets the task fields on its way out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Decorate {
    /// The `initialize` result: the `tasks` capability.
    Initialize,
    /// The `tools/list` result: `execution.taskSupport` of the background tools.
    ToolsList,
}

/// What a transport does with one incoming message.
#[derive(Debug, PartialEq)]
pub(super) enum Inbound {
    /// Pass it to rmcp as it is.
    Unchanged,
    /// Pass these bytes instead (a request renamed to one of this module's methods).
    Renamed(Vec<u8>),
    /// Pass it as it is, and decorate the answer to request `id`.
    Decorate(Value, Decorate),
}

/// Look at one incoming JSON-RPC message (its bytes); most are left alone without parsing.
pub(super) fn inbound(bytes: &[u8]) -> Inbound {
    // Every message this layer adjusts names one of these; most (calls) name none.
    let mentions = |word: &[u8]| memchr::memmem::find(bytes, word).is_some();
    let interesting = mentions(b"task") || mentions(b"initialize") || mentions(b"tools/list");
    if !interesting {
        return Inbound::Unchanged;
    }
    let Ok(Value::Object(mut message)) = serde_json::from_slice::<Value>(bytes) else {
        return Inbound::Unchanged;
    };
    let Some(id) = message.get("id").cloned() else {
        return Inbound::Unchanged;
    };
    let params = message.get("params").and_then(Value::as_object);
    if params
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object)
        .is_some_and(|meta| meta.contains_key(STATELESS_REVISION))
    {
        return Inbound::Unchanged;
    }
    let renamed = match message.get("method").and_then(Value::as_str) {
        Some("initialize") => {
            // Tasks came with 2025-11-25; revisions are dates, ordered as text.
            let revision = params.and_then(|p| p.get("protocolVersion"));
            return match revision.and_then(Value::as_str) {
                Some(revision) if revision >= "2025-11-25" => {
                    Inbound::Decorate(id, Decorate::Initialize)
                }
                _ => Inbound::Unchanged,
            };
        }
        Some("tools/list") => return Inbound::Decorate(id, Decorate::ToolsList),
        Some("tools/call")
            if params.is_some_and(|p| p.get("task").is_some_and(Value::is_object)) =>
        {
            CALL
        }
        Some("tasks/get") => GET,
        Some("tasks/cancel") => CANCEL,
        _ => return Inbound::Unchanged,
    };
    message.insert("method".into(), renamed.into());
    match serde_json::to_vec(&message) {
        Ok(bytes) => Inbound::Renamed(bytes),
        Err(_) => Inbound::Unchanged,
    }
}

/// Add the task fields to rmcp's answer `message` (a JSON-RPC response) to a request marked
/// [`Inbound::Decorate`]. An error answer is left alone.
pub(super) fn decorate(toolkit: &Toolkit, what: Decorate, message: &mut Value) {
    let Some(result) = message.get_mut("result").and_then(Value::as_object_mut) else {
        return;
    };
    decorate_result(toolkit, what, result);
}

/// [`decorate`] on the `result` object itself.
pub(super) fn decorate_result(toolkit: &Toolkit, what: Decorate, result: &mut Map<String, Value>) {
    match what {
        Decorate::Initialize => {
            if let Some(Value::Object(capabilities)) = result.get_mut("capabilities") {
                capabilities.insert(
                    "tasks".into(),
                    json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
                );
            }
        }
        Decorate::ToolsList => {
            let Some(Value::Array(tools)) = result.get_mut("tools") else {
                return;
            };
            for tool in tools.iter_mut().filter_map(Value::as_object_mut) {
                let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
                if is_background(toolkit, name) {
                    tool.insert("execution".into(), json!({"taskSupport": "optional"}));
                }
            }
        }
    }
}

/// Whether the tool `wire` names (in the MCP dialect) is a background tool.
pub(super) fn is_background(toolkit: &Toolkit, wire: &str) -> bool {
    let name = toolkit.original_name(Dialect::Mcp, wire).unwrap_or(wire);
    toolkit.options(name).is_some_and(|o| o.background)
}

/// Answer one of this module's methods for a session working on `toolkit`, whose calls get
/// `context`; `cancelled` ends a `tasks/result` that waits.
pub(super) async fn handle(
    toolkit: &Toolkit,
    context: &ToolContext,
    method: &str,
    params: Option<Value>,
    cancelled: &tokio_util::sync::CancellationToken,
    peer: &Peer<RoleServer>,
) -> Result<CustomResult, ErrorData> {
    let params = match params {
        Some(Value::Object(params)) => params,
        None | Some(Value::Null) => Map::new(),
        Some(_) => return Err(ErrorData::invalid_params("params must be an object", None)),
    };
    let answer = match method {
        CALL => {
            let (job, task) = create(toolkit, context, params).await?;
            notify_when_ended(toolkit.clone(), job, peer.clone());
            task
        }
        GET => task_of(toolkit, &find(toolkit, &params).await?),
        RESULT => result(toolkit, &params, cancelled).await?,
        LIST => list(toolkit, &params).await?,
        CANCEL => cancel(toolkit, &params).await?,
        other => {
            return Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!("Method not found: {other}"),
                None,
            ));
        }
    };
    Ok(CustomResult::new(answer))
}

/// A task-augmented `tools/call`: submit the call as a background job, answer with its task.
async fn create(
    toolkit: &Toolkit,
    context: &ToolContext,
    mut params: Map<String, Value>,
) -> Result<(JobId, Value), ErrorData> {
    let Some(Value::String(name)) = params.remove("name") else {
        return Err(ErrorData::invalid_params(
            "tools/call needs a tool `name`",
            None,
        ));
    };
    let arguments = match params.remove("arguments") {
        None | Some(Value::Null) => "{}".to_string(),
        Some(arguments @ Value::Object(_)) => arguments.to_string(),
        Some(_) => {
            return Err(ErrorData::invalid_params(
                "tools/call `arguments` must be an object",
                None,
            ));
        }
    };
    let known = toolkit
        .definitions_for(Dialect::Mcp)
        .iter()
        .any(|d| d.get("name").and_then(Value::as_str) == Some(name.as_str()));
    if !known {
        return Err(ErrorData::invalid_params(
            format!("Unknown tool: {name}"),
            None,
        ));
    }
    if !is_background(toolkit, &name) {
        return Err(ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            format!(
                "tool `{name}` does not run as a task (its execution.taskSupport is \"forbidden\"); \
                 call it without `task`, or make it a background tool (#[tool(background)])"
            ),
            None,
        ));
    }
    let task_id = format!("{TASK_PREFIX}{:032x}", fastrand::u128(..));
    let call = ToolCall::new(task_id.as_str(), name.as_str(), arguments);
    let result = toolkit.call(call, context).await;
    if let Err(error) = &result.outcome {
        // Refused before a job existed: bad arguments, a full queue, a database that is down.
        let message = error.message().to_string();
        return Err(match error.kind() {
            ToolErrorKind::UnknownTool | ToolErrorKind::Unavailable => {
                ErrorData::invalid_params(message, None)
            }
            ToolErrorKind::InvalidArguments => ErrorData::invalid_params(message, None),
            _ => ErrorData::internal_error(message, None),
        });
    }
    let Some(job) = result.job_id() else {
        return Err(ErrorData::internal_error(
            format!("tool `{name}` did not start a background job"),
            None,
        ));
    };
    let record = toolkit
        .background()
        .get(job)
        .await
        .map_err(|e| ErrorData::internal_error(format!("the task's job: {e}"), None))?
        .ok_or_else(|| ErrorData::internal_error("the task's job is not in the ledger", None))?;
    Ok((record.id, json!({"task": task_of(toolkit, &record)})))
}

/// Send the session that created the task of `job` a `notifications/tasks/status` when the
/// task ends: its record is read as `tasks/result` waits for it (more and more seldom, at
/// most every `pollInterval`), until the task ends, the session closes, or the record cannot
/// be read (the client's polling still finds out then).
fn notify_when_ended(toolkit: Toolkit, job: JobId, peer: Peer<RoleServer>) {
    tokio::spawn(async move {
        let mut wait = Duration::from_millis(20);
        loop {
            tokio::time::sleep(wait).await;
            if peer.is_transport_closed() {
                return;
            }
            let record = match toolkit.background().get(job).await {
                Ok(Some(record)) => record,
                Ok(None) | Err(_) => return,
            };
            if record.status != JobStatus::Pending {
                let task = task_of(&toolkit, &record);
                let status = CustomNotification::new(STATUS, Some(task));
                let _ = peer
                    .send_notification(ServerNotification::CustomNotification(status))
                    .await;
                return;
            }
            wait = (wait * 2).min(Duration::from_millis(POLL_INTERVAL_MS));
        }
    });
}

/// The job of the task named by `params.taskId`, or the `-32602` error saying it is unknown.
async fn find(toolkit: &Toolkit, params: &Map<String, Value>) -> Result<JobRecord, ErrorData> {
    let Some(task_id) = params.get("taskId").and_then(Value::as_str) else {
        return Err(ErrorData::invalid_params("`taskId` is required", None));
    };
    let not_found = || {
        ErrorData::invalid_params(
            format!("Failed to retrieve task: Task not found ({task_id})"),
            None,
        )
    };
    if !task_id.starts_with(TASK_PREFIX) {
        return Err(not_found());
    }
    let records = toolkit
        .background()
        .by_call_id(task_id)
        .await
        .map_err(|e| ErrorData::internal_error(format!("the task store: {e}"), None))?;
    records.into_iter().next_back().ok_or_else(not_found)
}

/// `tasks/result`: wait until the task ended, then answer what its `tools/call` would have.
async fn result(
    toolkit: &Toolkit,
    params: &Map<String, Value>,
    cancelled: &tokio_util::sync::CancellationToken,
) -> Result<Value, ErrorData> {
    let mut wait = Duration::from_millis(20);
    let record = loop {
        let record = find(toolkit, params).await?;
        if record.status != JobStatus::Pending {
            break record;
        }
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = cancelled.cancelled() => {
                return Err(ErrorData::internal_error("the request was cancelled", None));
            }
        }
        wait = (wait * 2).min(Duration::from_millis(POLL_INTERVAL_MS));
    };
    let Some(result) = &record.result else {
        return Err(ErrorData::internal_error(
            "the task ended without a stored result",
            None,
        ));
    };
    let declares_output = || {
        let name = toolkit
            .original_name(Dialect::Mcp, &result.name)
            .unwrap_or(&result.name);
        toolkit
            .snapshot()
            .get(name)
            .is_some_and(convert::declares_output)
    };
    let answer = convert::call_result(result, declares_output);
    let mut answer = serde_json::to_value(answer)
        .map_err(|e| ErrorData::internal_error(format!("the task's result: {e}"), None))?;
    if let Value::Object(answer) = &mut answer {
        let meta = answer
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.insert(
                RELATED_TASK.into(),
                json!({"taskId": record.call.id.to_string()}),
            );
        }
    }
    Ok(answer)
}

/// `tasks/list`: the tasks of this queue, newest first; `cursor` is where the page starts.
async fn list(toolkit: &Toolkit, params: &Map<String, Value>) -> Result<Value, ErrorData> {
    let start = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(Value::String(cursor)) => cursor
            .parse::<usize>()
            .map_err(|_| ErrorData::invalid_params(format!("invalid cursor `{cursor}`"), None))?,
        Some(_) => return Err(ErrorData::invalid_params("`cursor` must be a string", None)),
    };
    let jobs = toolkit.background();
    let store = |e: crate::background::JobError| {
        ErrorData::internal_error(format!("the task store: {e}"), None)
    };
    let mut records = jobs.pending().await.map_err(store)?;
    records.extend(jobs.finished().await.map_err(store)?);
    records.extend(jobs.failed().await.map_err(store)?);
    records.retain(|r| r.call.id.starts_with(TASK_PREFIX));
    records.sort_by_key(|r| std::cmp::Reverse(r.id));
    let tasks: Vec<Value> = records
        .iter()
        .skip(start)
        .take(PAGE)
        .map(|r| task_of(toolkit, r))
        .collect();
    let mut answer = json!({"tasks": tasks});
    if records.len() > start + PAGE {
        answer["nextCursor"] = json!((start + PAGE).to_string());
    }
    Ok(answer)
}

/// `tasks/cancel`: end a task that has not ended; `-32602` for one that has.
async fn cancel(toolkit: &Toolkit, params: &Map<String, Value>) -> Result<Value, ErrorData> {
    let record = find(toolkit, params).await?;
    let refused = |record: &JobRecord| {
        ErrorData::invalid_params(
            format!(
                "Cannot cancel task: already in terminal status '{}'",
                status_of(record).0
            ),
            None,
        )
    };
    if record.status != JobStatus::Pending {
        return Err(refused(&record));
    }
    let jobs = toolkit.background();
    let store = |e: crate::background::JobError| {
        ErrorData::internal_error(format!("the task store: {e}"), None)
    };
    let ended = jobs.cancel(record.id).await.map_err(store)?;
    let now = jobs.get(record.id).await.map_err(store)?.unwrap_or(record);
    if !ended {
        // It ended on its own meanwhile.
        return Err(refused(&now));
    }
    Ok(task_of(toolkit, &now))
}

/// A task's status and status message, from its job's record.
fn status_of(record: &JobRecord) -> (&'static str, Option<String>) {
    match record.status {
        JobStatus::Pending => ("working", None),
        JobStatus::Finished => ("completed", None),
        JobStatus::Failed => match record.result.as_ref().map(|r| &r.outcome) {
            Some(Err(e)) if e.kind() == ToolErrorKind::Cancelled => {
                ("cancelled", Some(e.message().to_string()))
            }
            Some(Err(e)) => ("failed", Some(e.message().to_string())),
            _ => ("failed", None),
        },
    }
}

/// A job's record as an MCP `Task`.
fn task_of(toolkit: &Toolkit, record: &JobRecord) -> Value {
    let (status, message) = status_of(record);
    let ttl = toolkit
        .background()
        .retention()
        .map(|kept| u64::try_from(kept.as_millis()).unwrap_or(u64::MAX));
    let mut task = json!({
        "taskId": record.call.id.to_string(),
        "status": status,
        "createdAt": timestamp(record.submitted),
        "lastUpdatedAt": timestamp(record.finished.unwrap_or(record.submitted)),
        "ttl": ttl,
        "pollInterval": POLL_INTERVAL_MS,
    });
    if let Some(message) = message {
        task["statusMessage"] = message.into();
    }
    task
}

/// RFC 3339, in UTC, to the millisecond.
fn timestamp(at: SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(at).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn renamed(message: Value) -> Value {
        match inbound(message.to_string().as_bytes()) {
            Inbound::Renamed(bytes) => serde_json::from_slice(&bytes).unwrap(),
            other => panic!("not renamed: {other:?}"),
        }
    }

    #[test]
    fn task_requests_of_the_handshake_era_are_renamed_and_nothing_else() {
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "report", "arguments": {}, "task": {"ttl": 60000}}});
        assert_eq!(renamed(call)["method"], CALL);
        let get =
            json!({"jsonrpc": "2.0", "id": "a", "method": "tasks/get", "params": {"taskId": "x"}});
        assert_eq!(renamed(get)["method"], GET);
        let cancel =
            json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/cancel", "params": {"taskId": "x"}});
        assert_eq!(renamed(cancel)["method"], CANCEL);
        for unchanged in [
            // No `task`: an ordinary call, even when an argument is named so.
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "report", "arguments": {"task": "x"}}}),
            // The stateless era's tasks are another protocol (SEP-2663): rmcp's.
            json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get",
                "params": {"taskId": "x", "_meta": {STATELESS_REVISION: "2026-07-28"}}}),
            // Known to rmcp under its own name: reaches the handler as it is.
            json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/result", "params": {"taskId": "x"}}),
            // A notification has no answer to decorate.
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ] {
            assert_eq!(
                inbound(unchanged.to_string().as_bytes()),
                Inbound::Unchanged,
                "{unchanged}"
            );
        }
        assert_eq!(inbound(b"not json, tasks/get"), Inbound::Unchanged);
    }

    #[test]
    fn initialize_of_2025_11_25_and_tools_list_answers_are_decorated() {
        let init = |revision: &str| {
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": revision, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}})
        };
        assert_eq!(
            inbound(init("2025-11-25").to_string().as_bytes()),
            Inbound::Decorate(json!(0), Decorate::Initialize)
        );
        assert_eq!(
            inbound(init("2025-06-18").to_string().as_bytes()),
            Inbound::Unchanged
        );
        let list = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list"});
        assert_eq!(
            inbound(list.to_string().as_bytes()),
            Inbound::Decorate(json!(7), Decorate::ToolsList)
        );
    }
}
