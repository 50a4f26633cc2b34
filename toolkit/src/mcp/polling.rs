//! SSE polling (SEP-1699, revision 2025-11-25): the stream a call's answer goes out on is
//! closed while the call runs — by the tool ([`CallStream::close`]) or after a while
//! ([`McpHttpService::close_streams_after`](super::McpHttpService::close_streams_after)) — and
//! the client comes back with `Last-Event-ID` for the rest (progress, questions, the result).
//! A long call then holds no connection open through proxies that cut idle ones.
//!
//! rmcp gives every event of a call's stream an id (`<index>/<stream>`) and sends a priming
//! event first, but keeps a stream's events only until the answer is sent, so a client that
//! comes back after the result went out would find nothing. The HTTP service therefore
//! follows the streams of `tools/call` itself: it reads rmcp's stream to its end whatever the
//! client does, keeps the events, and answers a `GET` whose `Last-Event-ID` names one of them
//! with the events after it, then the live ones until the answer.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use tokio::sync::{Notify, mpsc};

use crate::context::{ContextRejection, FromToolContext, ToolContext};
use crate::util::lock;

/// The HTTP stream a call's answer goes out on, for a tool to close while it runs so the
/// client polls for the rest (SEP-1699): `#[ctx] stream: CallStream`.
///
/// ```
/// use std::time::Duration;
/// use agent_toolkit::mcp::CallStream;
/// use agent_toolkit::prelude::*;
///
/// /// Build the index (takes minutes).
/// #[tool]
/// async fn reindex(#[ctx] stream: CallStream) -> String {
///     // Let the client's connection go; it comes back in 5 s, and again until the answer.
///     stream.close(Duration::from_secs(5));
///     // ... the long work ...
///     "reindexed".to_string()
/// }
/// ```
#[derive(Clone, Debug, Default)]
pub struct CallStream {
    cut: Option<Arc<Cut>>,
}

/// The signal that closes one call's stream, and the wait it tells the client.
#[derive(Debug, Default)]
pub(super) struct Cut {
    signal: Notify,
    retry: Mutex<Option<Duration>>,
    closed: AtomicBool,
}

impl CallStream {
    /// Close the stream: the client is told to come back after `retry` (the SSE `retry`
    /// field) and then gets, with `Last-Event-ID`, what the call sends from now on — its
    /// result included. Returns whether there is such a stream: a call over streamable HTTP
    /// in the handshake era (2025-11-25) whose answer is an event stream; not over stdio, not
    /// in the stateless era, and not in-process. Closing twice does nothing more.
    pub fn close(&self, retry: Duration) -> bool {
        let Some(cut) = &self.cut else {
            return false;
        };
        if !cut.closed.swap(true, Ordering::SeqCst) {
            *lock(&cut.retry) = Some(retry);
            cut.signal.notify_one();
        }
        true
    }

    /// Whether the call has a stream to close (see [`close`](Self::close)).
    pub fn is_closable(&self) -> bool {
        self.cut.is_some()
    }

    /// A stream `cut` closes.
    pub(super) fn new(cut: Arc<Cut>) -> Self {
        CallStream { cut: Some(cut) }
    }
}

impl FromToolContext for CallStream {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ContextRejection> {
        Ok(ctx
            .get::<CallStream>()
            .map(|s| (*s).clone())
            .unwrap_or_default())
    }
}

/// The followed call streams of one HTTP service, by session and rmcp's stream number.
#[derive(Default)]
pub(super) struct Polling {
    streams: Mutex<HashMap<(String, String), Arc<Followed>>>,
}

/// One call's stream as rmcp wrote it: its events (index, bytes), whether it ended.
#[derive(Default)]
struct Followed {
    state: Mutex<FollowedState>,
    appended: Notify,
}

#[derive(Default)]
struct FollowedState {
    events: Vec<(u64, Bytes)>,
    ended: Option<Instant>,
}

/// Events kept per followed stream (the oldest go first): progress of a long call adds up.
const KEPT_EVENTS: usize = 4096;
/// How long a stream that was closed (or whose client went away) is kept after its answer
/// went out, for a client that comes back late; a stream delivered whole goes at once.
const KEPT_AFTER_END: Duration = Duration::from_secs(300);

impl Polling {
    /// Follow rmcp's event-stream `response` to a `tools/call` of `session`: the client gets
    /// it as it comes until `cut` closes it (once an event with an id went out), or the call
    /// has run for `close_after`'s first duration (the client told to come back after the
    /// second); the events are kept for a `GET` with `Last-Event-ID`.
    pub(super) fn follow(
        self: &Arc<Self>,
        session: String,
        response: Response,
        cut: Arc<Cut>,
        close_after: Option<(Duration, Duration)>,
    ) -> Response {
        let (mut parts, body) = response.into_parts();
        let (tx, rx) = mpsc::channel::<Result<Bytes, axum::Error>>(64);
        let polling = Arc::clone(self);
        tokio::spawn(async move {
            let mut inner = body.into_data_stream();
            let mut client = Some(tx);
            let mut pending: Vec<u8> = Vec::new();
            let mut followed: Option<(Arc<Followed>, String)> = None;
            // With `close_after`: when the call's stream is closed anyway, and the wait to tell.
            let mut timer =
                close_after.map(|(after, retry)| (Box::pin(tokio::time::sleep(after)), retry));
            loop {
                let can_cut = client.is_some() && followed.is_some();
                tokio::select! {
                    chunk = inner.next() => {
                        let Some(chunk) = chunk else { break };
                        let Ok(chunk) = chunk else { break };
                        pending.extend_from_slice(&chunk);
                        while let Some(end) = event_end(&pending) {
                            let event = Bytes::from(pending.drain(..end).collect::<Vec<u8>>());
                            if let Some((index, stream)) = event_id(&event) {
                                let (followed, _) = followed.get_or_insert_with(|| {
                                    (polling.register(session.clone(), stream.clone()), stream)
                                });
                                followed.push(index, event.clone());
                            }
                            if let Some(sender) = &client
                                && sender.send(Ok(event)).await.is_err()
                            {
                                // The client went away: keep reading, it may come back.
                                client = None;
                            }
                        }
                    }
                    () = async {
                        match timer.as_mut() {
                            Some((sleep, _)) => sleep.await,
                            None => std::future::pending().await,
                        }
                    } => {
                        // Closed by the branch below, once an event with an id went out.
                        if let Some((_, retry)) = timer.take() {
                            CallStream::new(Arc::clone(&cut)).close(retry);
                        }
                    }
                    () = cut.signal.notified(), if can_cut => {
                        let retry = *lock(&cut.retry);
                        if let (Some(sender), Some(retry)) = (&client, retry) {
                            let hint = format!("retry: {}\n\n", retry.as_millis());
                            let _ = sender.send(Ok(Bytes::from(hint))).await;
                        }
                        client = None;
                    }
                }
            }
            if let Some((followed, stream)) = followed {
                followed.end();
                // Delivered whole to a client still there: nobody comes back for it.
                if client.is_some() {
                    polling.forget(session, stream, &followed);
                }
            }
        });
        parts.headers.remove(header::CONTENT_LENGTH);
        let body = futures::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|chunk| (chunk, rx))
        });
        Response::from_parts(parts, Body::from_stream(body))
    }

    /// The followed stream `Last-Event-ID` names in `headers` for their session, answered from
    /// what was kept: `None` when it is none of them (rmcp answers).
    pub(super) fn resume(&self, headers: &HeaderMap) -> Option<Response> {
        let session = headers.get("mcp-session-id")?.to_str().ok()?;
        let last = headers.get("last-event-id")?.to_str().ok()?;
        let (index, stream) = parse_id(last)?;
        let followed = lock(&self.streams)
            .get(&(session.to_owned(), stream.to_owned()))
            .cloned()?;
        // Everything after the client's last event, then what comes, until the answer.
        let events = futures::stream::unfold((followed, index), |(followed, sent)| async move {
            loop {
                let appended = followed.appended.notified();
                let (chunk, last, ended) = followed.after(sent);
                if !chunk.is_empty() {
                    drop(appended);
                    return Some((Ok::<_, axum::Error>(chunk), (followed, last)));
                }
                if ended {
                    return None;
                }
                appended.await;
            }
        });
        let mut response = Body::from_stream(events).into_response();
        *response.status_mut() = StatusCode::OK;
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream"),
        );
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        Some(response)
    }

    /// Stop keeping `followed`, a stream of `session`.
    fn forget(&self, session: String, stream: String, followed: &Arc<Followed>) {
        let mut streams = lock(&self.streams);
        let key = (session, stream);
        if streams.get(&key).is_some_and(|f| Arc::ptr_eq(f, followed)) {
            streams.remove(&key);
        }
    }

    /// A new followed stream (and the ones kept long enough after their end go).
    fn register(&self, session: String, stream: String) -> Arc<Followed> {
        let followed = Arc::new(Followed::default());
        let mut streams = lock(&self.streams);
        streams.retain(|_, f| {
            lock(&f.state)
                .ended
                .is_none_or(|at| at.elapsed() < KEPT_AFTER_END)
        });
        streams.insert((session, stream), Arc::clone(&followed));
        followed
    }
}

impl Followed {
    fn push(&self, index: u64, event: Bytes) {
        let mut state = lock(&self.state);
        if state.events.len() >= KEPT_EVENTS {
            state.events.remove(0);
        }
        state.events.push((index, event));
        drop(state);
        self.appended.notify_waiters();
    }

    fn end(&self) {
        lock(&self.state).ended = Some(Instant::now());
        self.appended.notify_waiters();
    }

    /// The events after index `sent`, as one chunk; the index of the last of them (`sent`
    /// when none); whether the stream ended.
    fn after(&self, sent: u64) -> (Bytes, u64, bool) {
        let state = lock(&self.state);
        let mut chunk = Vec::new();
        let mut last = sent;
        for (index, event) in state.events.iter().filter(|(index, _)| *index > sent) {
            chunk.extend_from_slice(event);
            last = *index;
        }
        (Bytes::from(chunk), last, state.ended.is_some())
    }
}

/// Where the first event in `buffer` ends (after its blank line), if it is whole.
fn event_end(buffer: &[u8]) -> Option<usize> {
    let lf = buffer.windows(2).position(|w| w == b"\n\n").map(|i| i + 2);
    let crlf = buffer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| i + 4);
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The `id:` of an event, split as rmcp writes it: `<index>/<stream>`.
fn event_id(event: &[u8]) -> Option<(u64, String)> {
    let text = std::str::from_utf8(event).ok()?;
    let id = text
        .lines()
        .find_map(|line| line.strip_prefix("id:"))?
        .trim();
    parse_id(id).map(|(index, stream)| (index, stream.to_owned()))
}

fn parse_id(id: &str) -> Option<(u64, &str)> {
    let (index, stream) = id.split_once('/')?;
    Some((index.parse().ok()?, stream))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_split_and_their_ids_read() {
        let buffer = b"id: 0/7\nretry: 3000\ndata:\n\nid: 1/7\ndata: {}\n\npartial";
        let first = event_end(buffer).unwrap();
        assert_eq!(event_id(&buffer[..first]), Some((0, "7".into())));
        let rest = &buffer[first..];
        let second = event_end(rest).unwrap();
        assert_eq!(event_id(&rest[..second]), Some((1, "7".into())));
        assert_eq!(event_end(&rest[second..]), None);
        // The standalone stream's ids have no stream part: not followed here.
        assert_eq!(event_id(b"id: 4\ndata: {}\n\n"), None);
        assert_eq!(event_end(b"data: x\r\n\r\n"), Some(11));
    }

    #[tokio::test]
    async fn a_resumed_stream_gets_the_events_after_the_last_id_then_the_live_ones() {
        let polling = Polling::default();
        let followed = polling.register("s".into(), "3".into());
        followed.push(0, Bytes::from_static(b"id: 0/3\ndata:\n\n"));
        followed.push(1, Bytes::from_static(b"id: 1/3\ndata: a\n\n"));
        let mut headers = HeaderMap::new();
        headers.insert("mcp-session-id", HeaderValue::from_static("s"));
        headers.insert("last-event-id", HeaderValue::from_static("0/3"));
        let response = polling.resume(&headers).expect("a followed stream");
        let later = Arc::clone(&followed);
        tokio::spawn(async move {
            tokio::task::yield_now().await;
            later.push(2, Bytes::from_static(b"id: 2/3\ndata: b\n\n"));
            later.end();
        });
        let body = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        assert_eq!(&body[..], b"id: 1/3\ndata: a\n\nid: 2/3\ndata: b\n\n");
        // Another session's id, or an unknown stream: rmcp's to answer.
        headers.insert("mcp-session-id", HeaderValue::from_static("other"));
        assert!(polling.resume(&headers).is_none());
    }
}
