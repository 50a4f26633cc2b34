//! Replies whose tool calls are written as text, for both providers: the calls are read out of
//! the text ([`recover`]), and a request the server refused because it could not read the
//! model's own output ([`ModelError::OutputRejected`]) is not sent again unchanged.
//!
//! Such a refusal mostly follows a model writing several calls in a way its template does not
//! allow. So a request that allowed parallel calls is first asked again with them off
//! (`parallel_tool_calls: false`, Anthropic's `disable_parallel_tool_use`), and when the server
//! takes that, the endpoint remembers it: every later request through it (the rest of the run,
//! and later runs through the same provider) asks for one call a turn. When that is refused too,
//! or parallel calls were off already, the request is asked once more without native tools, the
//! tools described in the prompt as [`TextToolCalls`](crate::model::TextToolCalls) does, and
//! the calls read from the text. (Tool choice `none` with the tools still sent is not enough:
//! llama.cpp's `/v1/messages` parses the output for calls all the same.) When the server takes
//! that, the endpoint remembers it too: later requests with tools go with the tools in the
//! prompt from the start, instead of being refused twice first (three requests a turn).
//!
//! A provider hands this module one way to ask: the request in, the parsed response and the
//! name map it was read with out.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;

use crate::dialect::NameMap;
use crate::model::text_calls::{as_text_request, recover};
use crate::model::{ChatEvent, ChatRequest, ChatResponse, ModelError, ToolChoice};

/// What an endpoint learned of its server from refusals, kept for every later request through
/// it (and its clones).
#[derive(Debug, Default)]
pub(crate) struct Learned {
    /// The server took a refused reply again with parallel calls off.
    pub(crate) one_call_a_turn: AtomicBool,
    /// The server refused the model's native calls even with parallel calls off, and took the
    /// request with the tools in the prompt.
    pub(crate) tools_in_prompt: AtomicBool,
}

impl Learned {
    /// Whether `request` goes with the tools in the prompt from the start (text calls `on`).
    pub(crate) fn in_prompt(&self, on: bool, request: &ChatRequest) -> bool {
        applies(on, request) && self.tools_in_prompt.load(Ordering::Relaxed)
    }
}

/// One non-streaming request to a provider: the response as parsed, with its name map. The
/// request is shared, not copied: the original is kept for a second request.
pub(crate) type Ask<'a> = Box<
    dyn Fn(Arc<ChatRequest>) -> BoxFuture<'a, Result<(ChatResponse, NameMap), ModelError>>
        + Send
        + Sync
        + 'a,
>;

/// Whether text calls may be read for `request`: the setting is on and the model may call
/// tools.
fn applies(on: bool, request: &ChatRequest) -> bool {
    on && !request.tools.is_empty() && request.tool_choice != ToolChoice::None
}

/// `response` with its calls written as text read, when `on` and the request allows calls.
pub(crate) fn read_calls(
    on: bool,
    request: &ChatRequest,
    names: &NameMap,
    response: &mut ChatResponse,
) {
    if applies(on, request) {
        recover(response, request, &|name| {
            names.original_name(name).unwrap_or(name).to_owned()
        });
    }
}

/// A non-streaming request with text calls read (when `on`), and asked again after a refusal
/// of the model's output ([`after_refusal`]).
pub(crate) async fn chat(
    on: bool,
    learned: &Learned,
    request: Arc<ChatRequest>,
    ask: Ask<'_>,
) -> Result<ChatResponse, ModelError> {
    if learned.in_prompt(on, &request) {
        return in_prompt(&request, &ask).await;
    }
    match ask(Arc::clone(&request)).await {
        Ok((mut response, names)) => {
            read_calls(on, &request, &names, &mut response);
            Ok(response)
        }
        Err(error @ ModelError::OutputRejected { .. }) => {
            after_refusal(on, learned, &request, &ask, error).await
        }
        Err(error) => Err(error),
    }
}

/// Whether a refusal of `request` is asked again: with parallel calls off, or for text.
fn retried(on: bool, request: &ChatRequest) -> bool {
    parallel(request) || applies(on, request)
}

/// Whether `request` offers tools and allows several calls a turn.
fn parallel(request: &ChatRequest) -> bool {
    request.parallel_tool_calls
        && !request.tools.is_empty()
        && request.tool_choice != ToolChoice::None
}

/// After the server refused the model's output for `request`: asked again with parallel calls
/// off (if they were on; remembered when the server takes it), then for text (when `on`;
/// remembered too). The first refusal is returned when nothing helps.
async fn after_refusal(
    on: bool,
    learned: &Learned,
    request: &Arc<ChatRequest>,
    ask: &Ask<'_>,
    rejected: ModelError,
) -> Result<ChatResponse, ModelError> {
    if parallel(request) {
        tracing::info!(
            error = %rejected,
            "the server could not read the model's output; asking again with parallel tool calls off"
        );
        let serial = Arc::new(request.as_ref().clone().with_parallel_tool_calls(false));
        match ask(Arc::clone(&serial)).await {
            Ok((mut response, names)) => {
                learned.one_call_a_turn.store(true, Ordering::Relaxed);
                read_calls(on, &serial, &names, &mut response);
                return Ok(response);
            }
            Err(ModelError::OutputRejected { .. }) => {}
            Err(error) => {
                tracing::warn!(%error, "asking again with parallel tool calls off failed");
                return Err(rejected);
            }
        }
    }
    if !applies(on, request) {
        return Err(rejected);
    }
    let response = ask_for_text(request, ask, rejected).await?;
    learned.tools_in_prompt.store(true, Ordering::Relaxed);
    Ok(response)
}

/// `request` with the tools in the prompt from the start: the server refused the model's native
/// calls before.
async fn in_prompt(request: &ChatRequest, ask: &Ask<'_>) -> Result<ChatResponse, ModelError> {
    tracing::debug!(
        "asking with the tools in the prompt: this server refused the model's native calls before"
    );
    let (mut response, names) = ask(Arc::new(as_text_request(request))).await?;
    read_calls(true, request, &names, &mut response);
    Ok(response)
}

/// [`in_prompt`] as a stream's events (asked whole).
pub(crate) fn in_prompt_stream<'a>(
    request: ChatRequest,
    ask: Ask<'a>,
) -> BoxStream<'a, Result<ChatEvent, ModelError>> {
    futures::stream::once(async move { in_prompt(&request, &ask).await })
        .flat_map(|reply| {
            futures::stream::iter(match reply {
                Ok(response) => done_events(response),
                Err(error) => vec![Err(error)],
            })
        })
        .boxed()
}

/// The request again without native tools, as [`TextToolCalls`](crate::model::TextToolCalls)
/// sends it: a model that cannot write its calls the way the server parses them writes them as
/// text, and they are read from there. The first error is returned if this fails too.
async fn ask_for_text(
    request: &ChatRequest,
    ask: &Ask<'_>,
    rejected: ModelError,
) -> Result<ChatResponse, ModelError> {
    tracing::info!(
        error = %rejected,
        "the server could not read the model's output; asking again with the tools in the prompt, to read its calls as text"
    );
    match ask(Arc::new(as_text_request(request))).await {
        Ok((mut response, names)) => {
            read_calls(true, request, &names, &mut response);
            Ok(response)
        }
        Err(error) => {
            tracing::warn!(%error, "asking again for text failed too");
            Err(rejected)
        }
    }
}

/// A streamed response with text calls read at its end (when `on`): a
/// [`ChatEvent::ToolCallStarted`] for each call read, then [`ChatEvent::Done`]. When the server
/// rejects the model's output mid-stream, the request is asked again without streaming, as
/// [`chat`] does after a refusal, and its response follows the events already sent (its text
/// as one delta).
pub(crate) fn stream<'a>(
    on: bool,
    learned: &'a Learned,
    request: Arc<ChatRequest>,
    names: NameMap,
    events: BoxStream<'a, Result<ChatEvent, ModelError>>,
    ask: Ask<'a>,
) -> BoxStream<'a, Result<ChatEvent, ModelError>> {
    let names = Arc::new(names);
    let mut ask = Some(ask);
    events
        .then(move |event| {
            // Only the last event (`Done`, or the error that ends the stream) needs these.
            let request = Arc::clone(&request);
            let names = Arc::clone(&names);
            let ask = match &event {
                Err(ModelError::OutputRejected { .. }) => ask.take(),
                _ => None,
            };
            async move {
                match event {
                    Ok(ChatEvent::Done(mut response)) => {
                        let before = response.message.tool_calls.len();
                        read_calls(on, &request, &names, &mut response);
                        let mut out: Vec<_> = response.message.tool_calls[before..]
                            .iter()
                            .map(|c| {
                                Ok(ChatEvent::ToolCallStarted {
                                    id: c.id.clone(),
                                    name: c.name.clone(),
                                })
                            })
                            .collect();
                        out.push(Ok(ChatEvent::Done(response)));
                        out
                    }
                    Err(error @ ModelError::OutputRejected { .. }) if retried(on, &request) => {
                        match ask {
                            Some(ask) => {
                                match after_refusal(on, learned, &request, &ask, error).await {
                                    Ok(response) => done_events(response),
                                    Err(error) => vec![Err(error)],
                                }
                            }
                            None => vec![Err(error)],
                        }
                    }
                    other => vec![other],
                }
            }
        })
        .flat_map(futures::stream::iter)
        .boxed()
}

/// The events of a whole response: its text, its calls, then `Done`.
pub(crate) fn done_events(response: ChatResponse) -> Vec<Result<ChatEvent, ModelError>> {
    let mut out = Vec::new();
    if !response.message.content.is_empty() {
        out.push(Ok(ChatEvent::TextDelta(response.message.content.clone())));
    }
    for call in &response.message.tool_calls {
        out.push(Ok(ChatEvent::ToolCallStarted {
            id: call.id.clone(),
            name: call.name.clone(),
        }));
    }
    out.push(Ok(ChatEvent::Done(response)));
    out
}
