//! A streamed response: its body read as server-sent events and turned into [`ChatEvent`]s by
//! a provider's [`StreamAssembler`].

use std::future::Future;

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use reqwest::Response;

use super::transport;
use crate::model::{ChatEvent, ModelError};

/// Turns server-sent events into [`ChatEvent`]s, one provider's event grammar.
pub(crate) trait StreamAssembler: Send + 'static {
    /// Feeds one event, pushing what it yields to `out`. Returns `true` once the response is
    /// complete, with [`ChatEvent::Done`] pushed last; no event is read after that.
    fn event(&mut self, event: &Event, out: &mut Vec<ChatEvent>) -> Result<bool, ModelError>;

    /// The body ended without a completion: push [`ChatEvent::Done`] if the response can still
    /// be trusted to be whole, or say why not.
    fn end(&mut self, out: &mut Vec<ChatEvent>) -> Result<(), ModelError>;
}

enum Driver<'a, A> {
    Connecting(BoxFuture<'a, Result<Response, ModelError>>, A),
    Reading(BoxStream<'static, Result<Event, ModelError>>, A),
    Finished,
}

/// The events of a streaming request: `response` is awaited (with its retries), then its
/// body is parsed as server-sent events and fed to `assembler`. The stream ends after
/// [`ChatEvent::Done`] or after the first error.
pub(crate) fn chat_events<'a, A: StreamAssembler>(
    response: impl Future<Output = Result<Response, ModelError>> + Send + 'a,
    assembler: A,
) -> BoxStream<'a, Result<ChatEvent, ModelError>> {
    let start = Driver::Connecting(Box::pin(response), assembler);
    futures::stream::unfold(start, |driver| async move {
        let (mut events, mut assembler) = match driver {
            Driver::Finished => return None,
            Driver::Connecting(response, assembler) => match response.await {
                Ok(response) => (sse(response), assembler),
                Err(e) => return Some((vec![Err(e)], Driver::Finished)),
            },
            Driver::Reading(events, assembler) => (events, assembler),
        };
        let mut out = Vec::new();
        loop {
            let step = match events.next().await {
                Some(Ok(event)) => assembler.event(&event, &mut out),
                Some(Err(e)) => Err(e),
                None => assembler.end(&mut out).map(|()| true),
            };
            let mut batch: Vec<_> = out.drain(..).map(Ok).collect();
            match step {
                Ok(false) if batch.is_empty() => continue,
                Ok(false) => return Some((batch, Driver::Reading(events, assembler))),
                Ok(true) => return Some((batch, Driver::Finished)),
                Err(e) => {
                    batch.push(Err(e));
                    return Some((batch, Driver::Finished));
                }
            }
        }
    })
    .flat_map(futures::stream::iter)
    .boxed()
}

/// The body of `response` as server-sent events.
fn sse(response: Response) -> BoxStream<'static, Result<Event, ModelError>> {
    response
        .bytes_stream()
        .eventsource()
        .map(|event| {
            event.map_err(|e| match e {
                EventStreamError::Transport(e) => transport(e),
                EventStreamError::Utf8(e) => {
                    ModelError::Malformed(format!("the event stream is not UTF-8: {e}"))
                }
                EventStreamError::Parser(e) => {
                    ModelError::Malformed(format!("the event stream cannot be parsed: {e}"))
                }
            })
        })
        .boxed()
}
