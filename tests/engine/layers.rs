//! User tower layers: a third-party one and one of our own, with the stack's types intact.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use agent_toolkit::prelude::*;
use agent_toolkit::{error::ToolErrorKind, exec::ToolInvocation};
use futures::future::BoxFuture;

use super::tools::*;
use super::{call, numbered};

/// Counts calls and errors, and can refuse calls of one tool — with a `ToolError`.
#[derive(Clone)]
struct Counting<S> {
    inner: S,
    calls: Arc<AtomicUsize>,
    errors: Arc<AtomicUsize>,
    refuse: &'static str,
}

struct CountingLayer {
    calls: Arc<AtomicUsize>,
    errors: Arc<AtomicUsize>,
    refuse: &'static str,
}

impl<S> tower::Layer<S> for CountingLayer {
    type Service = Counting<S>;
    fn layer(&self, inner: S) -> Counting<S> {
        Counting {
            inner,
            calls: self.calls.clone(),
            errors: self.errors.clone(),
            refuse: self.refuse,
        }
    }
}

impl<S> tower::Service<ToolInvocation> for Counting<S>
where
    S: tower::Service<ToolInvocation, Response = ToolOutput, Error = ToolError> + Send,
    S::Future: Send + 'static,
{
    type Response = ToolOutput;
    type Error = ToolError;
    type Future = BoxFuture<'static, Result<ToolOutput, ToolError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), ToolError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, inv: ToolInvocation) -> Self::Future {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if inv.tool_name() == self.refuse {
            return Box::pin(async {
                Err(ToolError::new(
                    ToolErrorKind::Denied,
                    "refused by policy layer",
                ))
            });
        }
        let errors = self.errors.clone();
        let future = self.inner.call(inv);
        Box::pin(async move {
            let result = future.await;
            if result.is_err() {
                errors.fetch_add(1, Ordering::SeqCst);
            }
            result
        })
    }
}

#[tokio::test]
async fn a_layer_of_our_own_sees_every_call_and_keeps_tool_errors_typed() {
    let probe = Arc::new(Probe::default());
    let (calls, errors) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let kit = kit(&probe)
        .layer(CountingLayer {
            calls: calls.clone(),
            errors: errors.clone(),
            refuse: "delete",
        })
        .build()
        .unwrap();
    assert_eq!(call(&kit, "echo", r#"{"n": 1}"#).await.model_text(), "1");
    let r = call(&kit, "broken", "{}").await;
    assert_eq!(r.error().unwrap().kind(), ToolErrorKind::Execution);
    let r = call(&kit, "delete", r#"{"path": "/"}"#).await;
    assert_eq!(r.error().unwrap().message(), "refused by policy layer");
    assert_eq!(
        (calls.load(Ordering::SeqCst), errors.load(Ordering::SeqCst)),
        (3, 1)
    );
}

#[tokio::test]
async fn towers_own_concurrency_limit_layer_fits_the_stack() {
    let probe = Arc::new(Probe::default());
    let kit = kit(&probe)
        .max_concurrency(50)
        .layer(tower::limit::ConcurrencyLimitLayer::new(3))
        .build()
        .unwrap();
    let calls: Vec<_> = (0..12)
        .map(|i| numbered(i, "nap", r#"{"ms": 20}"#))
        .collect();
    let results = kit.call_all(calls, &ToolContext::new()).await;
    assert!(results.iter().all(|r| r.model_text() == "slept 20"));
    assert_eq!(
        probe.get(&probe.max_running),
        3,
        "tower's limit held, below the batch cap of 50"
    );
}
