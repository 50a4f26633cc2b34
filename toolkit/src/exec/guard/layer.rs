use super::PanicGuard;

/// Wraps a service in a [`PanicGuard`].
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PanicGuardLayer;

impl<S> tower::Layer<S> for PanicGuardLayer {
    type Service = PanicGuard<S>;
    fn layer(&self, inner: S) -> PanicGuard<S> {
        PanicGuard::new(inner)
    }
}
