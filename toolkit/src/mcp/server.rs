//! [`McpServer`]: rmcp's `ServerHandler`, written by hand over a [`Toolkit`] (the rmcp macros
//! describe a fixed set of methods; a toolkit's tools change at run time).

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, DiscoverRequestMethod, DiscoverResult, ErrorData,
    Implementation, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ProgressToken, ProtocolVersion, ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, Peer, RequestContext};
use rmcp::{RoleServer, ServerHandler};
use tokio::sync::Semaphore;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::convert;
use crate::context::{ProgressEvent, ToolContext, ToolProgress};
use crate::dialect::Dialect;
use crate::error::ToolErrorKind;
use crate::tool::ToolCall;
use crate::toolkit::Toolkit;

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
}

impl Watch {
    fn new() -> Arc<Self> {
        let stop = CancellationToken::new();
        Arc::new(Watch {
            started: AtomicBool::new(false),
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
        Self::with_identity(toolkit.clone(), identity, limit)
    }

    fn with_identity(toolkit: Toolkit, identity: Arc<Identity>, limit: Arc<Semaphore>) -> Self {
        let session = McpSession {
            toolkit: toolkit.clone(),
        };
        McpServer {
            call_context: ToolContext::new().with(session),
            toolkit,
            identity,
            limit,
            watch: Watch::new(),
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

    /// The handler of a new session with group state of its own (a view of the toolkit).
    pub(super) fn new_session(&self) -> McpServer {
        Self::with_identity(
            self.toolkit.view(),
            self.identity.clone(),
            self.limit.clone(),
        )
    }

    /// The toolkit this handler serves.
    pub fn toolkit(&self) -> &Toolkit {
        &self.toolkit
    }

    /// Send `notifications/tools/list_changed` to `peer` whenever the tools this session sees
    /// change, until the session ends.
    fn watch_tool_list(&self, peer: Peer<RoleServer>) {
        if self.watch.started.swap(true, Ordering::AcqRel) {
            return;
        }
        let toolkit = self.toolkit.clone();
        let stop = self.watch.stop.clone();
        // Subscribe before taking the first snapshot, so no change falls in between.
        let mut changes = toolkit.watch_changes();
        let mut listed = toolkit.definitions();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = stop.cancelled() => break,
                    alive = changes.changed() => {
                        if !alive {
                            break;
                        }
                        let now = toolkit.definitions();
                        if now == listed {
                            continue;
                        }
                        listed = now;
                        if peer.notify_tool_list_changed().await.is_err() {
                            break;
                        }
                    }
                }
            }
        });
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
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
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

    /// The handshake era: revision 2025-11-25 and the older ones. The stateless 2026-07-28
    /// revision has no sessions, so no per-session groups and no pushed `list_changed`.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    /// `server/discover` belongs to 2026-07-28, which this server does not speak: "method not
    /// found" makes a dual-era client fall back to `initialize` at once (silence would cost it
    /// a 10 s timeout).
    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        Err(ErrorData::method_not_found::<DiscoverRequestMethod>())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.watch_tool_list(context.peer);
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
        let ctx = self
            .call_context
            .clone()
            .with_cancellation(context.ct.clone());
        let result = match context.meta.get_progress_token() {
            None => self.toolkit.call(call, &ctx).await,
            Some(token) => {
                let (ctx, progress) = ctx.progress_channel(PROGRESS_BUFFER);
                let reporter = Reporter {
                    peer: &context.peer,
                    token,
                    cancelled: &context.ct,
                    last: None,
                };
                reporter.run(self.toolkit.call(call, &ctx), progress).await
            }
        };
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

/// Forwards one call's [`ToolEmitter`](crate::ToolEmitter) progress as
/// `notifications/progress` while the call runs.
struct Reporter<'a> {
    peer: &'a Peer<RoleServer>,
    token: ProgressToken,
    cancelled: &'a CancellationToken,
    /// The last `progress` value sent: MCP requires it to increase.
    last: Option<f64>,
}

impl Reporter<'_> {
    async fn run<F: Future<Output = crate::ToolResult>>(
        mut self,
        call: F,
        mut progress: tokio::sync::mpsc::Receiver<ToolProgress>,
    ) -> crate::ToolResult {
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
    /// a progress value that does not increase, nor anything after a cancellation.
    async fn send(&mut self, event: ToolProgress) {
        let ProgressEvent::Progress {
            done,
            total,
            message,
        } = event.event
        else {
            return;
        };
        if self.cancelled.is_cancelled() || self.last.is_some_and(|last| done <= last) {
            return;
        }
        self.last = Some(done);
        let mut param = ProgressNotificationParam::new(self.token.clone(), done);
        param.total = total;
        param.message = (!message.is_empty()).then_some(message);
        if let Err(e) = self.peer.notify_progress(param).await {
            tracing::debug!(error = %e, "a progress notification could not be sent");
        }
    }
}
