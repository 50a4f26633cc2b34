//! The questions an imported server asks during a call, forwarded to whoever that call can ask
//! ([`McpClientOptions::forward_questions`]): the calls in flight that may be asked, and which
//! of them a question belongs to.
//!
//! Over streamable HTTP a server sends its question on the response stream of the request it
//! serves, and rmcp marks the question with that request ([`InboundStreamOrigin`]), so each
//! question finds its call even when many run at once. Over stdio nothing tells the calls
//! apart: a question goes to the call only when it is the one in flight.
//!
//! [`McpClientOptions::forward_questions`]: super::McpClientOptions::forward_questions

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::RequestId;
use rmcp::service::InboundStreamOrigin;
use tokio::sync::Notify;

use crate::context::Caller;
use crate::util::lock;

/// One call's way to its asker: the caller its context names (none: the client's own handlers
/// answer), and the signal that its run paused at a question (the call then ends at once).
#[derive(Clone)]
pub(super) struct Asking {
    pub(super) caller: Option<Arc<dyn Caller>>,
    pub(super) paused: Arc<Notify>,
}

/// The calls in flight on one client, by the id of their `tools/call` request.
#[derive(Default)]
pub(super) struct CallAskers {
    calls: Mutex<HashMap<RequestId, Asking>>,
    /// Woken by every registration, for a question that overtook its call's.
    registered: Notify,
}

/// Where a question goes.
pub(super) enum Route {
    /// To the asker of the call it belongs to.
    Call(Asking),
    /// To the client's own handler (no call of it is in flight, or the call names no asker).
    Handler,
    /// Several calls are in flight and nothing says which one asks.
    Ambiguous(usize),
}

/// How long a question that names its call waits for the call to be registered: the request
/// is on the wire before its caller learns its id, so the question can come first.
const OVERTAKEN: Duration = Duration::from_secs(2);

impl CallAskers {
    /// Register the call `id` until the returned guard is dropped.
    pub(super) fn register(self: &Arc<Self>, id: RequestId, asking: Asking) -> Registered {
        lock(&self.calls).insert(id.clone(), asking);
        self.registered.notify_waiters();
        Registered {
            askers: self.clone(),
            id,
        }
    }

    /// Where a question that came from `origin` (rmcp's mark; none over stdio) goes.
    pub(super) async fn route(&self, origin: Option<&InboundStreamOrigin>) -> Route {
        if let Some(InboundStreamOrigin::OutboundRequest(id)) = origin {
            let deadline = tokio::time::Instant::now() + OVERTAKEN;
            loop {
                let registered = self.registered.notified();
                if let Some(asking) = lock(&self.calls).get(id) {
                    return Route::Call(asking.clone());
                }
                // Not (or no longer) a call of ours that forwards: the handler answers.
                if tokio::time::timeout_at(deadline, registered).await.is_err() {
                    return Route::Handler;
                }
            }
        }
        let calls = lock(&self.calls);
        let mut askers = calls.values();
        match (askers.next(), askers.next()) {
            (None, _) => Route::Handler,
            (Some(one), None) => Route::Call(one.clone()),
            (Some(_), Some(_)) => Route::Ambiguous(calls.len()),
        }
    }
}

/// A call registered with [`CallAskers`], until dropped.
pub(super) struct Registered {
    askers: Arc<CallAskers>,
    id: RequestId,
}

impl Drop for Registered {
    fn drop(&mut self) {
        lock(&self.askers.calls).remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Nobody;
    impl Caller for Nobody {}

    fn asking() -> Asking {
        Asking {
            caller: Some(Arc::new(Nobody)),
            paused: Arc::default(),
        }
    }

    #[tokio::test]
    async fn a_question_goes_to_its_call_or_to_the_only_call_in_flight() {
        let askers = Arc::new(CallAskers::default());
        assert!(matches!(askers.route(None).await, Route::Handler));
        let first = askers.register(RequestId::Number(1), asking());
        assert!(matches!(askers.route(None).await, Route::Call(_)));
        let _second = askers.register(RequestId::Number(2), asking());
        assert!(matches!(askers.route(None).await, Route::Ambiguous(2)));
        let origin = InboundStreamOrigin::OutboundRequest(RequestId::Number(2));
        assert!(matches!(askers.route(Some(&origin)).await, Route::Call(_)));
        drop(first);
        assert!(matches!(askers.route(None).await, Route::Call(_)));
    }

    #[tokio::test]
    async fn a_question_that_overtakes_its_call_waits_for_it() {
        let askers = Arc::new(CallAskers::default());
        let origin = InboundStreamOrigin::OutboundRequest(RequestId::Number(7));
        let late = {
            let askers = askers.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(10)).await;
                askers.register(RequestId::Number(7), asking())
            })
        };
        assert!(matches!(askers.route(Some(&origin)).await, Route::Call(_)));
        let _registered = late.await.unwrap();
        // A call that is not (or no longer) registered: the handler, once the wait is over.
        let gone = InboundStreamOrigin::OutboundRequest(RequestId::Number(8));
        assert!(matches!(askers.route(Some(&gone)).await, Route::Handler));
    }
}
