use super::Approval;

/// Wraps a service in an [`Approval`] check.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ApprovalLayer;

impl<S> tower::Layer<S> for ApprovalLayer {
    type Service = Approval<S>;
    fn layer(&self, inner: S) -> Approval<S> {
        Approval::new(inner)
    }
}
