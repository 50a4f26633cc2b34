//! The vocabulary of the two wires a [`RemoteAgent`](super::RemoteAgent) speaks: which one
//! ([`WireVersion`]), and what a stream of events is on either ([`EventStream`]).

use a2a::StreamResponse;
use futures::stream::BoxStream;

use super::error::A2aClientError;

/// Which protocol version a [`RemoteAgent`](super::RemoteAgent) speaks on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireVersion {
    /// A2A 1.x: PascalCase methods, `A2A-Version: 1.0`, no `kind`.
    V1,
    /// A2A 0.3: `message/send` and the `kind` shapes.
    V03,
}

/// A stream of A2A events, in the 1.0 shapes whatever the wire.
pub type EventStream = BoxStream<'static, Result<StreamResponse, A2aClientError>>;
