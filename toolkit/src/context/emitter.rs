//! [`ToolEmitter`]: the progress sink of one call, and the events it sends.

use std::fmt;
use std::sync::Arc;

use tokio::sync::mpsc;

use super::{CallInfo, ContextRejection, FromToolContext, ToolContext};

/// One progress event from a running tool.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ToolProgress {
    /// The call that reported it.
    pub call_id: Arc<str>,
    /// The tool that reported it.
    pub tool_name: Arc<str>,
    /// What was reported.
    pub event: ProgressEvent,
}

/// What a tool reported through its [`ToolEmitter`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ProgressEvent {
    /// `done` of `total` units (total unknown when `None`), with a message.
    Progress {
        /// Units done.
        done: f64,
        /// Units in all, if known.
        total: Option<f64>,
        /// What is happening.
        message: String,
    },
    /// A free-form chunk of partial output.
    Chunk(String),
    /// A log message for the caller (over MCP a `notifications/message`, filtered by the level
    /// the client set).
    Log {
        /// How severe.
        level: LogLevel,
        /// What happened.
        message: String,
    },
}

/// The severity of a [`ProgressEvent::Log`], the syslog levels MCP uses (RFC 5424), least
/// severe first: a level compares greater than the ones before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum LogLevel {
    /// Detailed information for debugging.
    Debug,
    /// Normal operation.
    Info,
    /// Normal but significant.
    Notice,
    /// Something to look at.
    Warning,
    /// An operation failed.
    Error,
    /// A component failed.
    Critical,
    /// Action needed now.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// The level's name as MCP and syslog spell it: `"debug"`, `"info"`, `"notice"`,
    /// `"warning"`, `"error"`, `"critical"`, `"alert"`, `"emergency"`.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }
}

impl std::str::FromStr for LogLevel {
    type Err = String;

    /// A level by the name [`as_str`](Self::as_str) gives (ASCII case ignored).
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        let all = [
            LogLevel::Debug,
            LogLevel::Info,
            LogLevel::Notice,
            LogLevel::Warning,
            LogLevel::Error,
            LogLevel::Critical,
            LogLevel::Alert,
            LogLevel::Emergency,
        ];
        all.into_iter()
            .find(|level| level.as_str().eq_ignore_ascii_case(name))
            .ok_or_else(|| format!("`{name}` is not a log level (debug, info, notice, warning, error, critical, alert, emergency)"))
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The progress sink of one call. Sending never blocks and never fails the tool: with no
/// subscriber the event is discarded; with a full channel it is dropped and counted.
#[derive(Clone)]
pub struct ToolEmitter {
    call: Option<CallInfo>,
    sink: Option<mpsc::Sender<ToolProgress>>,
    dropped: Arc<std::sync::atomic::AtomicU64>,
}

impl ToolEmitter {
    /// Report `done` of `total` units.
    pub fn progress(
        &self,
        done: impl Into<f64>,
        total: impl Into<Option<f64>>,
        message: impl Into<String>,
    ) {
        self.send(ProgressEvent::Progress {
            done: done.into(),
            total: total.into(),
            message: message.into(),
        });
    }

    /// Report a chunk of partial output.
    pub fn chunk(&self, text: impl Into<String>) {
        self.send(ProgressEvent::Chunk(text.into()));
    }

    /// Log a message for the caller: an MCP client receives it as `notifications/message`
    /// (when at or above the level it set), an A2A caller as a progress part. For the
    /// application's own logs use `tracing`, which every call's span already carries.
    pub fn log(&self, level: LogLevel, message: impl Into<String>) {
        self.send(ProgressEvent::Log {
            level,
            message: message.into(),
        });
    }

    /// Whether anybody listens; lets a tool skip building expensive messages.
    pub fn is_connected(&self) -> bool {
        self.sink.as_ref().is_some_and(|s| !s.is_closed())
    }

    /// How many events were dropped because the subscriber's channel was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn send(&self, event: ProgressEvent) {
        let (Some(sink), Some(call)) = (&self.sink, &self.call) else {
            return;
        };
        let progress = ToolProgress {
            call_id: call.call_id.clone(),
            tool_name: call.tool_name.clone(),
            event,
        };
        if let Err(mpsc::error::TrySendError::Full(_)) = sink.try_send(progress) {
            self.dropped
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

impl fmt::Debug for ToolEmitter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolEmitter")
            .field("call", &self.call)
            .field("connected", &self.is_connected())
            .finish()
    }
}

impl FromToolContext for ToolEmitter {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ContextRejection> {
        Ok(ToolEmitter {
            call: ctx.call_info().cloned(),
            sink: ctx.progress().cloned(),
            dropped: Default::default(),
        })
    }
}
