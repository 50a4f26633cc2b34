use super::Trace;

/// Wraps a service in a [`Trace`].
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TraceLayer;

impl<S> tower::Layer<S> for TraceLayer {
    type Service = Trace<S>;
    fn layer(&self, inner: S) -> Trace<S> {
        Trace::new(inner)
    }
}
