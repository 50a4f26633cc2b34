//! [`HttpProvider`]: what each HTTP provider writes of its own — its request body, the parsing
//! of its response, the reading of its stream — while a chat over HTTP (one request with its
//! retries, a stream, the recovery of calls written as text) is written once, here, for all.

use std::sync::Arc;

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;

use super::Endpoint;
use super::sse::{self, StreamAssembler};
use super::{constrained, recovery};
use crate::dialect::NameMap;
use crate::model::{ChatEvent, ChatRequest, ChatResponse, ModelError};

/// One HTTP provider's wire. [`chat`] and [`chat_stream`] make a
/// [`ChatModel`](crate::model::ChatModel) of it.
pub(crate) trait HttpProvider: Sync {
    /// Reads the events of one streamed response.
    type Assembler: StreamAssembler;

    /// Where requests go, with their headers and retries.
    fn endpoint(&self) -> &Endpoint;

    /// Whether calls written as text are read ([`recovery`]).
    fn text_calls(&self) -> bool;

    /// Whether requests with tools are sent constrained to valid calls ([`constrained`]).
    fn constrained(&self) -> bool {
        false
    }

    /// The request body for `request` (streamed or not), and the name map to read the answer
    /// with.
    fn body(&self, request: &ChatRequest, stream: bool) -> Result<(Vec<u8>, NameMap), ModelError>;

    /// A whole (non-streamed) response body.
    fn parse(&self, body: &[u8], names: &NameMap) -> Result<ChatResponse, ModelError>;

    /// The reader of a streamed response's events.
    fn assembler(&self, names: NameMap) -> Self::Assembler;

    /// What the provider does to a finished response of `request`, streamed or not, before
    /// calls written as text are read (OpenAI: undo strict mode's changes to the arguments).
    fn finish(&self, _request: &ChatRequest, _response: &mut ChatResponse) {}
}

/// [`ChatModel::chat`](crate::model::ChatModel::chat) over `provider`.
pub(crate) fn chat<P: HttpProvider>(
    provider: &P,
    request: ChatRequest,
) -> BoxFuture<'_, Result<ChatResponse, ModelError>> {
    if provider.constrained() && constrained::applies(&request) {
        return Box::pin(constrained::chat(request, ask(provider)));
    }
    let endpoint = provider.endpoint();
    Box::pin(recovery::chat(
        provider.text_calls(),
        endpoint.learned(),
        Arc::new(endpoint.adapt(request)),
        ask(provider),
    ))
}

/// [`ChatModel::chat_stream`](crate::model::ChatModel::chat_stream) over `provider`.
pub(crate) fn chat_stream<P: HttpProvider>(
    provider: &P,
    request: ChatRequest,
) -> BoxStream<'_, Result<ChatEvent, ModelError>> {
    if provider.constrained() && constrained::applies(&request) {
        // One JSON value: asked whole, its events sent after.
        let reply = constrained::chat(request, ask(provider));
        return futures::stream::once(reply)
            .flat_map(|reply| {
                futures::stream::iter(match reply {
                    Ok(response) => recovery::done_events(response),
                    Err(error) => vec![Err(error)],
                })
            })
            .boxed();
    }
    let request = provider.endpoint().adapt(request);
    if provider
        .endpoint()
        .learned()
        .in_prompt(provider.text_calls(), &request)
    {
        return recovery::in_prompt_stream(request, ask(provider));
    }
    let (body, names) = match provider.body(&request, true) {
        Ok(prepared) => prepared,
        Err(e) => return Box::pin(futures::stream::once(std::future::ready(Err(e)))),
    };
    let request = Arc::new(request);
    let finishing = Arc::clone(&request);
    let events = sse::chat_events(
        provider.endpoint().post_stream(body),
        provider.assembler(names.clone()),
    )
    .map(move |event| match event {
        Ok(ChatEvent::Done(mut response)) => {
            provider.finish(&finishing, &mut response);
            Ok(ChatEvent::Done(response))
        }
        other => other,
    })
    .boxed();
    recovery::stream(
        provider.text_calls(),
        provider.endpoint().learned(),
        request,
        names,
        events,
        ask(provider),
    )
}

/// One non-streaming request to `provider`, parsed and finished, for [`recovery`].
fn ask<P: HttpProvider>(provider: &P) -> recovery::Ask<'_> {
    Box::new(move |request| {
        Box::pin(async move {
            let (body, names) = provider.body(&request, false)?;
            let bytes = provider.endpoint().post(body).await?;
            let mut response = provider.parse(&bytes, &names)?;
            provider.finish(&request, &mut response);
            Ok((response, names))
        })
    })
}
