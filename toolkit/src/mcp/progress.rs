//! Progress of tool calls: [`McpProgress`], and the router that hands each
//! `notifications/progress` to the call that asked for it.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use tokio::sync::mpsc;

use crate::util::lock;

/// One progress notification of a tool call.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct McpProgress {
    /// Progress so far (increases with every notification).
    pub progress: f64,
    /// The total, when known.
    pub total: Option<f64>,
    /// What is happening.
    pub message: Option<String>,
}

/// Hands progress notifications to the call that asked for them. A notification can overtake
/// the subscription (the request is on the wire before its caller subscribes), so a few early
/// ones are kept for a moment.
#[derive(Default)]
pub(super) struct ProgressRouter {
    state: Mutex<RouterState>,
}

#[derive(Default)]
struct RouterState {
    subscribers: HashMap<ProgressToken, mpsc::UnboundedSender<McpProgress>>,
    early: VecDeque<(ProgressToken, McpProgress)>,
}

/// Early notifications kept for calls that have not subscribed yet.
const EARLY_PROGRESS: usize = 64;

/// One call's progress, until the call is over (dropping it unsubscribes).
pub(super) struct ProgressSubscription {
    pub(super) rx: mpsc::UnboundedReceiver<McpProgress>,
    token: ProgressToken,
    router: Arc<ProgressRouter>,
}

impl Drop for ProgressSubscription {
    fn drop(&mut self) {
        lock(&self.router.state).subscribers.remove(&self.token);
    }
}

impl ProgressRouter {
    /// The progress notifications carrying `token`, those that came early included.
    pub(super) fn subscribe(self: &Arc<Self>, token: ProgressToken) -> ProgressSubscription {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut state = lock(&self.state);
        let early = std::mem::take(&mut state.early);
        for (t, event) in early {
            if t == token {
                let _ = tx.send(event);
            } else {
                state.early.push_back((t, event));
            }
        }
        state.subscribers.insert(token.clone(), tx);
        drop(state);
        ProgressSubscription {
            rx,
            token,
            router: self.clone(),
        }
    }

    /// Hands one notification to its call, or keeps it for a call yet to subscribe.
    pub(super) fn dispatch(&self, params: ProgressNotificationParam) {
        let event = McpProgress {
            progress: params.progress,
            total: params.total,
            message: params.message,
        };
        let mut state = lock(&self.state);
        match state.subscribers.get(&params.progress_token) {
            Some(tx) => {
                let _ = tx.send(event);
            }
            None => {
                if state.early.len() == EARLY_PROGRESS {
                    state.early.pop_front();
                }
                state.early.push_back((params.progress_token, event));
            }
        }
    }
}
