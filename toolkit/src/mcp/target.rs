//! Where an MCP server is ([`McpTarget`]) and how a client introduces itself to it and how long
//! it waits ([`McpClientOptions`]).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::context::Caller;
use crate::endpoint::EndpointSettings;

/// Where an MCP server is.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpTarget {
    /// A program started as a child process, spoken to over its stdin and stdout. Its stderr
    /// is passed through to ours.
    Command {
        /// The program (looked up in `PATH`).
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables (the rest of ours is inherited).
        env: Vec<(String, String)>,
    },
    /// A streamable-HTTP endpoint, e.g. `http://127.0.0.1:8000/mcp`.
    Url(String),
}

impl McpTarget {
    /// A program to start, with its arguments.
    pub fn command<S: Into<String>>(
        program: impl Into<String>,
        args: impl IntoIterator<Item = S>,
    ) -> Self {
        McpTarget::Command {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
        }
    }

    /// A streamable-HTTP endpoint.
    pub fn url(url: impl Into<String>) -> Self {
        McpTarget::Url(url.into())
    }

    /// The same command with one more environment variable (no effect on a URL).
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        if let McpTarget::Command { env, .. } = &mut self {
            env.push((key.into(), value.into()));
        }
        self
    }
}

impl fmt::Display for McpTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            McpTarget::Command { program, args, .. } => {
                write!(f, "`{program}")?;
                for arg in args {
                    write!(f, " {arg}")?;
                }
                f.write_str("`")
            }
            McpTarget::Url(url) => f.write_str(url),
        }
    }
}

/// Which MCP revisions an [`McpClient`](super::McpClient) may speak.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpEra {
    /// Probe `server/discover` and speak the stateless 2026-07-28 revision when the server
    /// offers it; otherwise the 2025-11-25 `initialize` handshake (the default).
    #[default]
    Newest,
    /// The stateless 2026-07-28 revision only: a handshake-only server is an error.
    Stateless,
    /// The 2025-11-25 `initialize` handshake only, without a probe: for servers that mishandle
    /// `server/discover`, or to keep a session (and its per-session state) on a dual-era
    /// server.
    Handshake,
}

/// How an [`McpClient`](super::McpClient) introduces itself, how long it waits, and, for a
/// URL, how it reaches the server (the [`EndpointSettings`] every remote endpoint of the
/// library takes: token, headers, trusted roots, timeouts).
///
/// ```
/// use std::time::Duration;
/// use agent_toolkit::mcp::{McpClientOptions, McpEra};
///
/// let options = McpClientOptions::new()
///     .bearer_token("s3cret")
///     .era(McpEra::Handshake)
///     .call_timeout(Duration::from_secs(300));
/// assert!(!format!("{options:?}").contains("s3cret"));
/// ```
#[derive(Clone, Debug)]
#[must_use = "pass it to McpClient::with_options"]
pub struct McpClientOptions {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) era: McpEra,
    pub(crate) call_timeout: Duration,
    pub(crate) endpoint: EndpointSettings,
    /// Who answers the server's questions for the user.
    pub(crate) elicitation: Option<Answerer>,
    /// Who answers the server's requests for a completion.
    pub(crate) sampling: Option<Answerer>,
    /// Questions during a call go to whoever the call can ask.
    pub(crate) forward_questions: bool,
    /// OAuth for a server that requires it.
    pub(crate) oauth: Option<super::McpOAuth>,
    /// The server's tools called as MCP tasks (and imported as background tools).
    pub(crate) task_tools: Vec<String>,
}

/// A [`Caller`] that answers a server's requests (shown in `Debug` by its presence only).
#[derive(Clone)]
pub(crate) struct Answerer(pub(crate) Arc<dyn Caller>);

impl std::fmt::Debug for Answerer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Caller")
    }
}

/// Default longest wait for a connection and its handshake, and for `tools/list`.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

impl Default for McpClientOptions {
    fn default() -> Self {
        McpClientOptions {
            name: "agent-toolkit".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            era: McpEra::Newest,
            call_timeout: Duration::from_secs(120),
            endpoint: EndpointSettings::new(),
            elicitation: None,
            sampling: None,
            forward_questions: false,
            oauth: None,
            task_tools: Vec::new(),
        }
    }
}

impl McpClientOptions {
    /// The defaults: named `agent-toolkit`, the newest revision the server offers, 30 s to
    /// connect and for `tools/list`, 120 s of silence for a `tools/call`.
    pub fn new() -> Self {
        McpClientOptions::default()
    }

    /// The client name and version sent in `initialize`.
    pub fn client_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.name = name.into();
        self.version = version.into();
        self
    }

    /// Which revisions to speak (default: the newest the server offers).
    pub fn era(mut self, era: McpEra) -> Self {
        self.era = era;
        self
    }

    /// Longest wait for a connection and its `initialize` handshake (default 30 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.endpoint = self.endpoint.connect_timeout(timeout);
        self
    }

    /// Longest wait for the answer to `tools/list` (default 30 s).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.endpoint = self.endpoint.request_timeout(timeout);
        self
    }

    /// Longest a `tools/call` may go without an answer or a progress notification (default
    /// 120 s): each `notifications/progress` of the call starts the wait again, so a tool that
    /// reports progress may run as long as it keeps reporting, and a response that is lost (a
    /// server that hangs, a proxy that drops it) ends the call with [`McpError::Timeout`]
    /// instead of hanging the run; the server is sent `notifications/cancelled`. The toolkit's
    /// own timeouts apply on top of it.
    ///
    /// [`McpError::Timeout`]: super::McpError::Timeout
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// Answer the server's questions for the user (`elicitation/create`, forms) with
    /// `caller`'s [`elicit`](Caller::elicit); the client then declares the `elicitation`
    /// capability. Fields the answer leaves out are filled with the form's defaults
    /// ([`Elicitation::with_defaults`](crate::context::Elicitation::with_defaults)). Without
    /// it the client declares no elicitation, and a server that asks anyway gets an error,
    /// not a silent decline.
    pub fn elicitation(mut self, caller: impl Caller) -> Self {
        self.elicitation = Some(Answerer(Arc::new(caller)));
        self
    }

    /// Answer the server's requests for a completion (`sampling/createMessage`) with
    /// `caller`'s [`sample`](Caller::sample), e.g. your own model; the client then declares
    /// the `sampling` capability. Off by default: a server's prompts reach a model only when
    /// you say so.
    pub fn sampling(mut self, caller: impl Caller) -> Self {
        self.sampling = Some(Answerer(Arc::new(caller)));
        self
    }

    /// Forward the questions the server asks during a tool call (`elicitation/create`,
    /// `sampling/createMessage`) to whoever that call can ask, as a tool of this library asks
    /// through [`Elicitor`](crate::context::Elicitor) and
    /// [`Sampler`](crate::context::Sampler): in an agent run built with
    /// [`pause_at_approvals`](crate::agent::ReActAgentBuilder::pause_at_approvals) the run
    /// pauses at the question ([`PausedRun::pending_questions`]) and, resumed with the answer,
    /// makes the call again, whose repeated question is answered from it (the server is told
    /// the first time that the call was cancelled; whatever its tool did before asking, it
    /// does again); served by [`McpServer`](super::McpServer), the question goes on to that
    /// session's client (a proxy); with an `Arc<dyn Caller>` in the call's context, to it.
    /// A question of a call that can ask nobody goes to the handlers set with
    /// [`elicitation`](Self::elicitation) and [`sampling`](Self::sampling), else the server
    /// gets an error saying so. The client declares both capabilities.
    ///
    /// Over streamable HTTP each question is matched to its call (a server sends it on the
    /// call's response stream); over stdio only while one call is in flight (with several, a
    /// question goes to the handlers, or is refused).
    ///
    /// [`PausedRun::pending_questions`]: crate::agent::PausedRun::pending_questions
    pub fn forward_questions(mut self) -> Self {
        self.forward_questions = true;
        self
    }

    /// Authorize with OAuth 2.1 when the server asks for it (an HTTP server answering 401 with
    /// a challenge); see [`McpOAuth`](super::McpOAuth).
    pub fn oauth(mut self, oauth: super::McpOAuth) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// Call these tools of the server as MCP tasks (revision 2025-11-25): a task-augmented
    /// `tools/call` answered at once with a task, `tasks/get` every `pollInterval` until it
    /// ends, then `tasks/result` — so a call lasts as long as the tool does, with no request
    /// held open (and [`call_timeout`](Self::call_timeout) bounds each poll, not the call).
    /// [`McpImport`](super::McpImport) imports them as background tools: the model's call
    /// answers pending at once and the result is reported when the task ends. Name the tools
    /// yourself: rmcp does not keep the `execution.taskSupport` of a listing. A server that
    /// runs such a call directly (it does not do tasks) is answered as usual.
    pub fn run_as_tasks<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.task_tools = tools.into_iter().map(Into::into).collect();
        self
    }

    /// Whether the server's tool `name` is called as a task.
    pub(crate) fn runs_as_task(&self, name: &str) -> bool {
        self.task_tools.iter().any(|t| t == name)
    }

    crate::endpoint::endpoint_methods!(endpoint);

    /// The connect (and handshake) timeout.
    pub(crate) fn connect_wait(&self) -> Duration {
        self.endpoint.connect_timeout.unwrap_or(DEFAULT_TIMEOUT)
    }

    /// The `tools/list` timeout.
    pub(crate) fn request_wait(&self) -> Duration {
        self.endpoint.request_timeout.unwrap_or(DEFAULT_TIMEOUT)
    }
}
