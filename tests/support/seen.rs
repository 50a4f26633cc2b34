//! A tower layer that records the name of every call reaching the execution stack: shows that
//! a call went through the user's layers like any other.

use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use agent_toolkit::exec::ToolInvocation;
use agent_toolkit::{ToolError, ToolOutput};
use futures::future::BoxFuture;

/// Records the name of every call that reaches the stack.
#[derive(Clone)]
pub struct Seen<S> {
    inner: S,
    names: Arc<Mutex<Vec<String>>>,
}

/// Makes [`Seen`] services that record into the shared list.
pub struct SeenLayer(pub Arc<Mutex<Vec<String>>>);

impl<S> tower::Layer<S> for SeenLayer {
    type Service = Seen<S>;
    fn layer(&self, inner: S) -> Seen<S> {
        Seen {
            inner,
            names: self.0.clone(),
        }
    }
}

impl<S> tower::Service<ToolInvocation> for Seen<S>
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
        self.names.lock().unwrap().push(inv.tool_name().to_string());
        Box::pin(self.inner.call(inv))
    }
}
