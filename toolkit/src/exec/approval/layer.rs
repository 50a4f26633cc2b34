use std::sync::Arc;

use super::{Approval, ApprovalHook};

/// Wraps a service in an [`Approval`] check.
#[derive(Clone, Default)]
pub struct ApprovalLayer {
    hook: Option<Arc<dyn ApprovalHook>>,
}

impl ApprovalLayer {
    /// A layer using `hook` when the call's context has none.
    pub fn new(hook: Option<Arc<dyn ApprovalHook>>) -> Self {
        ApprovalLayer { hook }
    }
}

impl std::fmt::Debug for ApprovalLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalLayer")
            .field("hook", &self.hook.is_some())
            .finish()
    }
}

impl<S> tower::Layer<S> for ApprovalLayer {
    type Service = Approval<S>;
    fn layer(&self, inner: S) -> Approval<S> {
        Approval::new(inner, self.hook.clone())
    }
}
