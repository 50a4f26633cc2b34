//! [`McpServer`]: rmcp's `ServerHandler`, written by hand over a [`Toolkit`] (the rmcp macros
//! describe a fixed set of methods; a toolkit's tools change at run time).

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, Implementation, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ProgressToken, ProtocolVersion,
    ServerCapabilities, ServerConfig, ServerNotification, SubscriptionFilter,
    ToolListChangedNotification,
};
use rmcp::service::{NotificationContext, Peer, RequestContext, SubscriptionContext};
use rmcp::{RoleServer, ServerHandler};
use tokio::sync::Semaphore;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::caller::McpCaller;
use super::convert;
use super::tasks;
use crate::context::{Caller, LogLevel, ProgressEvent, ToolContext, ToolProgress};
use crate::dialect::Dialect;
use crate::error::ToolErrorKind;
use crate::tool::{ToolCall, ToolDefinition};
use crate::toolkit::Toolkit;
use crate::util::lock;

/// How many progress events of one call may wait to be sent before further ones are dropped
/// (the tool never waits for the client).
const PROGRESS_BUFFER: usize = 64;

/// Serves a [`Toolkit`] over MCP: the rmcp `ServerHandler` of one client session.
///
/// Most users never name it: [`Toolkit::serve_mcp_stdio`] and [`Toolkit::mcp_http_service`]
/// build it. Build one yourself to set the name and instructions the server announces, or to
/// run it over another rmcp transport (`rmcp::ServiceExt::serve`).
///
/// ```no_run
/// use agent_toolkit::mcp::McpServer;
/// use agent_toolkit::prelude::*;
///
/// /// Add two numbers.
/// #[tool(read_only)]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// # async fn run() -> Result<(), agent_toolkit::mcp::McpError> {
/// let toolkit = Toolkit::builder().register(Add).build().unwrap();
/// McpServer::new(&toolkit)
///     .name("calculator", "1.0.0")
///     .instructions("Arithmetic on integers.")
///     .serve_stdio()
///     .await
/// # }
/// ```
pub struct McpServer {
    /// The toolkit this session works on (the served toolkit itself, or a view of it).
    toolkit: Toolkit,
    identity: Arc<Identity>,
    /// The toolkit's concurrency cap, shared by every session of one server.
    limit: Arc<Semaphore>,
    /// What every call of the session starts from: the [`McpSession`] in the call layer.
    call_context: ToolContext,
    watch: Arc<Watch>,
    /// Whether this handler serves streamable HTTP, where sessions exist only in the handshake
    /// era: a stateless (2026-07-28) request there has no session to put into the call.
    http: bool,
    /// The least severe log level the session's client wants (`logging/setLevel`); every
    /// level until it sets one.
    log_level: Arc<Mutex<Option<LogLevel>>>,
}

#[derive(Clone)]
struct Identity {
    name: String,
    version: String,
    instructions: Option<String>,
}

/// The list-changed watcher of one session: started once, stopped when the session's handler
/// is dropped (rmcp drops it when the session ends).
struct Watch {
    started: AtomicBool,
    stop: CancellationToken,
    _guard: DropGuard,
    /// The tool list as it was when each `subscriptions/listen` not yet running was accepted,
    /// oldest first. rmcp acknowledges a subscription before it runs
    /// [`listen`](ServerHandler::listen), so a change made in between (the client's next
    /// request may make it) would otherwise be missed; `listen` compares against the list of
    /// the oldest accepted subscription (an older one can only cause an extra notification).
    baselines: Mutex<VecDeque<Vec<ToolDefinition>>>,
}

/// Most accepted subscriptions whose baseline is kept (those that failed before `listen` ran
/// leave theirs behind; older ones are dropped).
const MAX_BASELINES: usize = 16;

impl Watch {
    fn new() -> Arc<Self> {
        let stop = CancellationToken::new();
        Arc::new(Watch {
            started: AtomicBool::new(false),
            baselines: Mutex::new(VecDeque::new()),
            _guard: stop.clone().drop_guard(),
            stop,
        })
    }
}

/// The MCP session a call is served in, put into the call's context: a tool taking
/// `#[ctx] session: Ctx<McpSession>` (or `Option<Ctx<McpSession>>`, to run outside MCP too)
/// can switch groups for its session only.
///
/// ```
/// use agent_toolkit::mcp::McpSession;
/// use agent_toolkit::prelude::*;
///
/// /// Unlock the admin tools for this session.
/// #[tool]
/// fn unlock(#[ctx] session: Ctx<McpSession>) -> Result<&'static str, ToolError> {
///     session
///         .toolkit()
///         .set_group_active("admin", true)
///         .map_err(|e| ToolError::execution(e.to_string()))?;
///     Ok("unlocked")
/// }
/// ```
#[derive(Clone, Debug)]
pub struct McpSession {
    toolkit: Toolkit,
}

impl McpSession {
    /// The session's toolkit: a [`view`](Toolkit::view) of the served toolkit for a
    /// streamable-HTTP session, the served toolkit itself over stdio (one process, one
    /// session). Its group switches are what the session's client sees.
    pub fn toolkit(&self) -> &Toolkit {
        &self.toolkit
    }
}

impl McpServer {
    /// A server for `toolkit`, announcing itself as `agent-toolkit` with this crate's version.
    /// The session works on `toolkit` itself; [`McpHttpService`](crate::mcp::McpHttpService) gives
    /// each HTTP session a view of its own.
    pub fn new(toolkit: &Toolkit) -> Self {
        let identity = Arc::new(Identity {
            name: "agent-toolkit".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            instructions: None,
        });
        let limit = Arc::new(Semaphore::new(toolkit.max_concurrency()));
        Self::with_identity(toolkit.clone(), identity, limit, false)
    }

    fn with_identity(
        toolkit: Toolkit,
        identity: Arc<Identity>,
        limit: Arc<Semaphore>,
        http: bool,
    ) -> Self {
        let session = McpSession {
            toolkit: toolkit.clone(),
        };
        McpServer {
            call_context: ToolContext::new().with(session),
            toolkit,
            identity,
            limit,
            watch: Watch::new(),
            http,
            log_level: Arc::default(),
        }
    }

    /// The name and version announced in the `initialize` result.
    pub fn name(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        let identity = Arc::make_mut(&mut self.identity);
        identity.name = name.into();
        identity.version = version.into();
        self
    }

    /// Instructions for the client's model, announced in the `initialize` result.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.identity).instructions = Some(instructions.into());
        self
    }

    /// The handler of a new streamable-HTTP session (or of one stateless request), with group
    /// state of its own (a view of the toolkit).
    pub(super) fn new_session(&self) -> McpServer {
        Self::with_identity(
            self.toolkit.view(),
            self.identity.clone(),
            self.limit.clone(),
            true,
        )
    }

    /// The toolkit this handler serves.
    pub fn toolkit(&self) -> &Toolkit {
        &self.toolkit
    }

    /// Send `notifications/tools/list_changed` to `peer` whenever the tools this session sees
    /// change, until the session ends (the handshake era's pushed notifications).
    fn watch_tool_list(&self, peer: Peer<RoleServer>) {
        if self.watch.started.swap(true, Ordering::AcqRel) {
            return;
        }
        let stop = self.watch.stop.clone();
        let changes = follow_tool_list(self.toolkit.clone(), None, move || {
            let peer = peer.clone();
            async move { peer.notify_tool_list_changed().await.is_ok() }
        });
        tokio::spawn(async move {
            tokio::select! {
                _ = stop.cancelled() => {}
                _ = changes => {}
            }
        });
    }
}

/// Call `notify` whenever the tools `toolkit` lists change, until `notify` says the client is
/// gone (`false`) or the toolkit is dropped.
async fn follow_tool_list<F, Fut>(
    toolkit: Toolkit,
    seen: Option<Vec<ToolDefinition>>,
    mut notify: F,
) where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    // Subscribe before taking the first snapshot, so no change falls in between.
    let mut changes = toolkit.watch_changes();
    let mut listed = toolkit.definitions();
    // A change since the list the client was promised to hear about from.
    if seen.is_some_and(|seen| seen != listed) && !notify().await {
        return;
    }
    while changes.changed().await {
        let now = toolkit.definitions();
        if now == listed {
            continue;
        }
        listed = now;
        if !notify().await {
            break;
        }
    }
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.identity.name)
            .field("toolkit", &self.toolkit)
            .finish_non_exhaustive()
    }
}

impl ServerHandler for McpServer {
    #[allow(deprecated)] // MCP logging: the 2025-11-25 era (SEP-2577 drops it later)
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        let config = ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(
                self.identity.name.clone(),
                self.identity.version.clone(),
            ))
            .with_protocol_version(ProtocolVersion::V_2025_11_25);
        match &self.identity.instructions {
            Some(text) => config.with_instructions(text.clone()),
            None => config,
        }
    }

    /// Both eras: the handshake revisions up to 2025-11-25 (`initialize`, sessions) and the
    /// stateless 2026-07-28 (`server/discover`, per-request `_meta`). Named up to a fixed
    /// revision, so that a newer rmcp does not announce a revision nobody here has tested.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2026_07_28))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.watch_tool_list(context.peer);
    }

    /// 2026-07-28 has no pushed notifications: a client hears of tool-list changes on a
    /// `subscriptions/listen` request that asked for them.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        accepted.tools_list_changed = requested.tools_list_changed;
        if accepted.tools_list_changed == Some(true) {
            let mut baselines = lock(&self.watch.baselines);
            if baselines.len() == MAX_BASELINES {
                baselines.pop_front();
            }
            baselines.push_back(self.toolkit.definitions());
        }
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        if context.accepted().tools_list_changed == Some(true) {
            let sink = context.sink().clone();
            let seen = lock(&self.watch.baselines).pop_front();
            let changes = follow_tool_list(self.toolkit.clone(), seen, move || {
                let sink = sink.clone();
                async move {
                    let changed = ToolListChangedNotification::default();
                    sink.send(ServerNotification::ToolListChangedNotification(changed))
                        .await
                        .is_ok()
                }
            });
            tokio::select! {
                _ = context.cancelled() => {}
                _ = changes => {}
            }
        } else {
            context.cancelled().await;
        }
        Ok(())
    }

    /// `logging/setLevel`: the least severe level of the log messages this session's tools
    /// send from now on.
    #[allow(deprecated)] // MCP logging: the 2025-11-25 era (SEP-2577 drops it later)
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        *lock(&self.log_level) = Some(log_level_from(request.level));
        Ok(())
    }

    /// The MCP tasks of revision 2025-11-25 (see `tasks.rs`): requests rmcp does not know, or
    /// that the transports renamed so that it passes them on.
    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, ErrorData> {
        tasks::handle(
            &self.toolkit,
            &self.call_context,
            &request.method,
            request.params,
            &context.ct,
            &context.peer,
        )
        .await
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(convert::listed_tools(
            &self.toolkit,
        )))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.into_owned();
        let arguments = match request.arguments {
            Some(map) => serde_json::Value::Object(map).to_string(),
            None => "{}".to_string(),
        };
        // The toolkit's cap on calls running at once holds across requests and sessions; a
        // request cancelled while it waits never runs.
        let _permit = tokio::select! {
            permit = self.limit.clone().acquire_owned() => permit.ok(),
            _ = context.ct.cancelled() => {
                return Ok(CallToolResponse::Complete(convert::cancelled_result()));
            }
        };
        let call = ToolCall::new(context.id.to_string(), name, arguments);
        // A stateless (2026-07-28) request over HTTP belongs to no session: its handler and
        // toolkit view last for the request only, so a group switch through `McpSession` would
        // be lost unseen. The call gets no session; a tool that needs one says so.
        let stateless = self.http
            && context
                .protocol_version()
                .is_some_and(|version| !version.has_initialize());
        let call_context = if stateless {
            ToolContext::new()
        } else {
            self.call_context.clone()
        };
        // The tool can ask the client (elicitation, sampling) while it runs — in the handshake
        // era; 2026-07-28 sends no requests to the client during a call.
        let caller: Arc<dyn Caller> = Arc::new(McpCaller {
            peer: context.peer.clone(),
            stateless_revision: context
                .protocol_version()
                .filter(|version| !version.has_initialize())
                .map(|version| version.to_string()),
        });
        let mut ctx = call_context
            .with(caller)
            .with_cancellation(context.ct.clone());
        // Over HTTP, the stream the answer goes out on, which the tool may close (SEP-1699).
        if let Some(stream) = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<super::CallStream>())
        {
            ctx = ctx.with(stream.clone());
        }
        // Every call gets the channel: progress goes out when the request carries a token,
        // log messages at or above the session's level always.
        let (ctx, progress) = ctx.progress_channel(PROGRESS_BUFFER);
        let reporter = Reporter {
            peer: &context.peer,
            token: context.meta.get_progress_token(),
            cancelled: &context.ct,
            last: None,
            log_level: *lock(&self.log_level),
        };
        // The call's spans go on with the client's trace when the request carries one.
        let span = tracing::info_span!(
            "tools/call",
            otel.name = format!("tools/call {}", call.name),
            otel.kind = "server",
            rpc.system = "mcp",
        );
        crate::trace_context::adopt(
            &span,
            context.meta.get_traceparent(),
            context.meta.get_tracestate(),
        );
        let call_future = tracing::Instrument::instrument(self.toolkit.call(call, &ctx), span);
        let mut result = reporter.run(call_future, progress).await;
        if let Some(job) = result.job_id() {
            // A background tool called without `task`: the client waits for the result.
            result = self.wait_for(job, result, &context.ct).await;
        }
        if stateless {
            explain_missing_session(&mut result);
        }
        if let Err(error) = &result.outcome
            && matches!(
                error.kind(),
                ToolErrorKind::UnknownTool | ToolErrorKind::Unavailable
            )
        {
            return Err(ErrorData::invalid_params(error.message().to_string(), None));
        }
        // Asked only when the output is no JSON object (rare): did `tools/list` promise one?
        let declares_output = || {
            let name = &result.name;
            let original = self
                .toolkit
                .original_name(Dialect::Mcp, name)
                .unwrap_or(name);
            self.toolkit
                .snapshot()
                .get(original)
                .is_some_and(convert::declares_output)
        };
        Ok(CallToolResponse::Complete(convert::call_result(
            &result,
            declares_output,
        )))
    }
}

impl McpServer {
    /// The result of background job `job` once it ends (a plain `tools/call` of a background
    /// tool answers with it, as MCP's `taskSupport: "optional"` asks). Never the pending note,
    /// which an MCP client would read as the result: a job that cannot be followed (its record
    /// gone, its database down) is an error saying so, and a request cancelled first cancels
    /// the job.
    async fn wait_for(
        &self,
        job: crate::background::JobId,
        mut pending: crate::tool::ToolResult,
        cancelled: &CancellationToken,
    ) -> crate::tool::ToolResult {
        let jobs = self.toolkit.background();
        let tool = pending.name.clone();
        let mut wait = std::time::Duration::from_millis(5);
        loop {
            let failure = match jobs.get(job).await {
                Ok(Some(record)) => match record.result {
                    Some(result) => return result,
                    None => None,
                },
                Ok(None) => Some(crate::ToolError::execution(format!(
                    "tool `{tool}` ran as background job {job}, whose record is gone"
                ))),
                Err(e) => Some(
                    crate::ToolError::execution(format!(
                        "tool `{tool}` runs as background job {job}, whose result cannot be read now"
                    ))
                    .with_detail(e.to_string())
                    .with_retryable(true),
                ),
            };
            if let Some(error) = failure {
                pending.outcome = Err(error);
                return pending;
            }
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = cancelled.cancelled() => {
                    // The client gave up: so does the job.
                    let _ = jobs.cancel(job).await;
                    pending.outcome = Err(crate::ToolError::new(
                        ToolErrorKind::Cancelled,
                        "the call was cancelled",
                    ));
                    return pending;
                }
            }
            wait = (wait * 2).min(std::time::Duration::from_millis(500));
        }
    }
}

/// A tool that needs the [`McpSession`] failed in a stateless request, which has none: say so
/// to the client in place of the general "not configured correctly", and how to get one.
fn explain_missing_session(result: &mut crate::tool::ToolResult) {
    let Err(error) = &result.outcome else {
        return;
    };
    let about_session = error.kind() == ToolErrorKind::MissingContext
        && error
            .source()
            .is_some_and(|source| source.to_string().contains("McpSession"));
    if about_session {
        let message = format!(
            "tool `{}` works on the client's MCP session, and a stateless (2026-07-28) request \
             has none; connect with the 2025-11-25 `initialize` handshake to use it",
            result.name
        );
        let explained = crate::ToolError::new(ToolErrorKind::MissingContext, message);
        result.outcome = Err(match error.source() {
            Some(source) => explained.with_detail(source.to_string()),
            None => explained,
        });
    }
}

/// Forwards one call's [`ToolEmitter`](crate::ToolEmitter) events while the call runs:
/// progress as `notifications/progress` (when the request carries a token), log messages as
/// `notifications/message`.
struct Reporter<'a> {
    peer: &'a Peer<RoleServer>,
    token: Option<ProgressToken>,
    cancelled: &'a CancellationToken,
    /// The last `progress` value sent: MCP requires it to increase.
    last: Option<f64>,
    /// The least severe log level the client wants, when it set one.
    log_level: Option<LogLevel>,
}

impl Reporter<'_> {
    async fn run<F: Future<Output = crate::tool::ToolResult>>(
        mut self,
        call: F,
        mut progress: tokio::sync::mpsc::Receiver<ToolProgress>,
    ) -> crate::tool::ToolResult {
        let result = {
            let mut call = std::pin::pin!(call);
            loop {
                tokio::select! {
                    result = &mut call => break result,
                    Some(event) = progress.recv() => self.send(event).await,
                }
            }
        };
        // Events sent before the tool returned still belong before the response.
        while let Ok(event) = progress.try_recv() {
            self.send(event).await;
        }
        result
    }

    /// Chunks of partial output have no equivalent in MCP 2025-11-25 and are not sent; nor is
    /// a progress value that does not increase, a log message below the client's level, nor
    /// anything after a cancellation.
    async fn send(&mut self, event: ToolProgress) {
        if self.cancelled.is_cancelled() {
            return;
        }
        let (done, total, message) = match event.event {
            ProgressEvent::Progress {
                done,
                total,
                message,
            } => (done, total, message),
            ProgressEvent::Log { level, message } => {
                if self.log_level.is_none_or(|least| level >= least) {
                    log_message(self.peer, level, &event.tool_name, message).await;
                }
                return;
            }
            _ => return,
        };
        let Some(token) = &self.token else {
            return;
        };
        if self.last.is_some_and(|last| done <= last) {
            return;
        }
        self.last = Some(done);
        let mut param = ProgressNotificationParam::new(token.clone(), done);
        param.total = total;
        param.message = (!message.is_empty()).then_some(message);
        if let Err(e) = self.peer.notify_progress(param).await {
            tracing::debug!(error = %e, "a progress notification could not be sent");
        }
    }
}

/// One log message of a tool as `notifications/message`, the tool's name as the logger.
#[allow(deprecated)] // MCP logging: the 2025-11-25 era (SEP-2577 drops it later)
async fn log_message(peer: &Peer<RoleServer>, level: LogLevel, tool: &str, message: String) {
    use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
    let level = match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        _ => LoggingLevel::Emergency,
    };
    let mut param = LoggingMessageNotificationParam::new(level, serde_json::Value::String(message));
    param.logger = Some(tool.to_owned());
    if let Err(e) = peer.notify_logging_message(param).await {
        tracing::debug!(error = %e, "a log notification could not be sent");
    }
}

/// The toolkit's level for the one a client set.
#[allow(deprecated)] // MCP logging: the 2025-11-25 era (SEP-2577 drops it later)
fn log_level_from(level: rmcp::model::LoggingLevel) -> LogLevel {
    use rmcp::model::LoggingLevel;
    match level {
        LoggingLevel::Debug => LogLevel::Debug,
        LoggingLevel::Info => LogLevel::Info,
        LoggingLevel::Notice => LogLevel::Notice,
        LoggingLevel::Warning => LogLevel::Warning,
        LoggingLevel::Error => LogLevel::Error,
        LoggingLevel::Critical => LogLevel::Critical,
        LoggingLevel::Alert => LogLevel::Alert,
        LoggingLevel::Emergency => LogLevel::Emergency,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    use super::*;
    use crate::tool::{AgentTool, Echo};
    use crate::toolkit::DynamicTools;

    /// rmcp acknowledges a `subscriptions/listen` before it runs `listen`: a change made in
    /// between (by the client's next request, as the Python SDK's check does under load) must
    /// still reach the subscription.
    #[tokio::test]
    async fn a_change_between_the_acknowledgment_and_listen_is_notified() {
        let tools = DynamicTools::new();
        let toolkit = Toolkit::builder()
            .group("extra", "more tools")
            .dynamic("extra", &tools)
            .build()
            .unwrap();
        let server = McpServer::new(&toolkit);
        let mut requested = SubscriptionFilter::new();
        requested.tools_list_changed = Some(true);
        assert!(server.accepted_subscription_filter(&requested).is_some());
        // Acknowledged here; the change comes before `listen` subscribes.
        let late: Arc<dyn AgentTool> = Arc::new(Echo("late"));
        tools.replace(vec![late]).unwrap();

        let seen = lock(&server.watch.baselines).pop_front();
        let notified = Arc::new(AtomicUsize::new(0));
        let count = notified.clone();
        let follow = follow_tool_list(toolkit.clone(), seen, move || {
            let count = count.clone();
            async move {
                count.fetch_add(1, Ordering::SeqCst);
                false // stop following
            }
        });
        let ended = tokio::time::timeout(Duration::from_secs(5), follow).await;
        assert!(
            ended.is_ok(),
            "the change made before `listen` ran was never notified"
        );
        assert_eq!(notified.load(Ordering::SeqCst), 1);
    }
}
