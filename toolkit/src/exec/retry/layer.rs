use super::Retry;

/// Wraps a service in a [`Retry`].
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RetryLayer;

impl<S> tower::Layer<S> for RetryLayer {
    type Service = Retry<S>;
    fn layer(&self, inner: S) -> Retry<S> {
        Retry::new(inner)
    }
}
