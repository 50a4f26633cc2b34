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
