use super::Timeout;
use super::error::Limit;

/// Wraps a service in a [`Timeout`] for one of the two limits.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TimeoutLayer(Limit);

impl TimeoutLayer {
    /// The limit of one attempt.
    pub(crate) fn attempt() -> Self {
        TimeoutLayer(Limit::Attempt)
    }

    /// The limit of the whole call, and its cancellation.
    pub(crate) fn total() -> Self {
        TimeoutLayer(Limit::Total)
    }
}

impl<S> tower::Layer<S> for TimeoutLayer {
    type Service = Timeout<S>;
    fn layer(&self, inner: S) -> Timeout<S> {
        Timeout::new(inner, self.0)
    }
}
