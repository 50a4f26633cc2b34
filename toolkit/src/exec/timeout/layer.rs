use super::Timeout;

/// Wraps a service in a per-attempt [`Timeout`].
#[derive(Clone, Copy, Debug, Default)]
pub struct TimeoutLayer;

impl<S> tower::Layer<S> for TimeoutLayer {
    type Service = Timeout<S>;
    fn layer(&self, inner: S) -> Timeout<S> {
        Timeout::new(inner)
    }
}
