//! What the HTTP providers share: the connection settings their builders collect, one
//! [`Endpoint`] that POSTs JSON with retries, the mapping of HTTP failures to [`ModelError`],
//! and the driver that turns a server-sent-events body into [`ChatEvent`]s.
//!
//! Retry rule: a request is sent again only while nothing of a successful body has been
//! handed on. A non-streaming request is retried until its whole body is read; a streaming
//! one only until a success status arrives, because events already yielded cannot be taken
//! back.

use std::error::Error as _;
use std::future::Future;
use std::time::Duration;

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, USER_AGENT};
use reqwest::{Response, StatusCode};

use super::{ChatEvent, ModelError};

/// Longest error body kept in [`ModelError::Http`]; provider error pages can be large HTML.
const MAX_ERROR_BODY: usize = 2048;

/// Longest wait between two attempts. A `retry-after` above it is not waited for: the error
/// is returned so that the caller decides, rather than blocking an agent for minutes.
const MAX_WAIT: Duration = Duration::from_secs(60);

/// Default total time one non-streaming request may take, and the longest silence allowed
/// while streaming (reasoning models can think for minutes before the first token).
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// Settings every HTTP provider builder collects.
#[derive(Clone)]
pub(crate) struct HttpSettings {
    pub(crate) base_url: Option<String>,
    pub(crate) api_key: Option<String>,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) timeout: Duration,
    pub(crate) max_retries: u32,
    pub(crate) retry_delay: Duration,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            base_url: None,
            api_key: None,
            headers: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
            max_retries: 2,
            retry_delay: Duration::from_millis(500),
        }
    }
}

impl std::fmt::Debug for HttpSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the key: builders end up in logs.
        f.debug_struct("HttpSettings")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field(
                "headers",
                &self.headers.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .field("retry_delay", &self.retry_delay)
            .finish()
    }
}

/// An error in the settings a builder was given, reported before any request is made.
pub(crate) fn config_error(what: impl std::fmt::Display) -> ModelError {
    ModelError::Config(what.to_string())
}

/// A header from user input, refused with a message naming it rather than panicking.
pub(crate) fn header(name: &str, value: &str) -> Result<(HeaderName, HeaderValue), ModelError> {
    let header_name = HeaderName::from_bytes(name.as_bytes())
        .map_err(|_| config_error(format!("`{name}` is not a valid HTTP header name")))?;
    let header_value = HeaderValue::from_str(value)
        .map_err(|_| config_error(format!("the value of header `{name}` is not valid")))?;
    Ok((header_name, header_value))
}

/// A header carrying a secret: marked sensitive so that it is never printed.
pub(crate) fn secret_header(
    name: HeaderName,
    value: &str,
) -> Result<(HeaderName, HeaderValue), ModelError> {
    let mut value = HeaderValue::from_str(value)
        .map_err(|_| config_error("the API key contains characters not allowed in a header"))?;
    value.set_sensitive(true);
    Ok((name, value))
}

/// One provider URL with its headers and retry policy.
#[derive(Clone, Debug)]
pub(crate) struct Endpoint {
    client: reqwest::Client,
    url: reqwest::Url,
    headers: HeaderMap,
    timeout: Duration,
    max_retries: u32,
    retry_delay: Duration,
}

/// A failed attempt, with how long the server asked us to wait.
struct Failure {
    error: ModelError,
    retry_after: Option<Duration>,
}

impl From<ModelError> for Failure {
    fn from(error: ModelError) -> Self {
        Failure {
            error,
            retry_after: None,
        }
    }
}

impl Endpoint {
    /// `{base_url}{path}` with `headers` (provider headers first, then the user's, which win).
    pub(crate) fn new(
        settings: &HttpSettings,
        default_base_url: &str,
        path: &str,
        provider_headers: Vec<(HeaderName, HeaderValue)>,
    ) -> Result<Self, ModelError> {
        let base = settings.base_url.as_deref().unwrap_or(default_base_url);
        let joined = format!("{}{path}", base.trim_end_matches('/'));
        let url = reqwest::Url::parse(&joined)
            .map_err(|e| config_error(format!("`{joined}` is not a valid URL: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(config_error(format!("`{joined}` is not an http(s) URL")));
        }
        let mut headers = HeaderMap::new();
        headers.insert(
            USER_AGENT,
            HeaderValue::from_static(concat!("agent-toolkit/", env!("CARGO_PKG_VERSION"))),
        );
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        for (name, value) in provider_headers {
            headers.insert(name, value);
        }
        for (name, value) in &settings.headers {
            let (name, value) = header(name, value)?;
            headers.insert(name, value);
        }
        // `read_timeout` bounds each silence rather than the whole exchange, so that a long
        // stream is not cut; non-streaming requests also get a total timeout per request.
        let client = reqwest::Client::builder()
            .connect_timeout(settings.timeout)
            .read_timeout(settings.timeout)
            .build()
            .map_err(|e| config_error(format!("the HTTP client cannot be set up: {e}")))?;
        Ok(Endpoint {
            client,
            url,
            headers,
            timeout: settings.timeout,
            max_retries: settings.max_retries,
            retry_delay: settings.retry_delay,
        })
    }

    /// POST `body` and return the whole response body of the first successful attempt.
    pub(crate) async fn post(&self, body: Vec<u8>) -> Result<Vec<u8>, ModelError> {
        self.with_retries(|| async {
            let response = self.send(&body, false).await?;
            let bytes = response.bytes().await.map_err(transport)?;
            Ok(Vec::from(bytes))
        })
        .await
    }

    /// POST `body` asking for an event stream; return the response once its status is a
    /// success, without reading the body.
    pub(crate) async fn post_stream(&self, body: Vec<u8>) -> Result<Response, ModelError> {
        self.with_retries(|| self.send(&body, true)).await
    }

    async fn send(&self, body: &[u8], stream: bool) -> Result<Response, Failure> {
        let mut request = self
            .client
            .post(self.url.clone())
            .headers(self.headers.clone())
            .body(body.to_vec());
        request = if stream {
            request.header(ACCEPT, "text/event-stream")
        } else {
            request
                .header(ACCEPT, "application/json")
                .timeout(self.timeout)
        };
        let response = request.send().await.map_err(transport)?;
        if response.status().is_success() {
            return Ok(response);
        }
        Err(failure(response).await)
    }

    async fn with_retries<T, F, Fut>(&self, mut attempt: F) -> Result<T, ModelError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, Failure>>,
    {
        let mut retries = 0;
        loop {
            let failure = match attempt().await {
                Ok(value) => return Ok(value),
                Err(failure) => failure,
            };
            if retries >= self.max_retries || !failure.error.is_transient() {
                return Err(failure.error);
            }
            let Some(wait) = backoff(self.retry_delay, retries, failure.retry_after) else {
                return Err(failure.error);
            };
            tracing::debug!(
                url = %self.url,
                error = %failure.error,
                ?wait,
                retry = retries + 1,
                "model request failed; retrying"
            );
            tokio::time::sleep(wait).await;
            retries += 1;
        }
    }
}

/// How long to wait before retry number `retry + 1`: exponential from `base`, with jitter
/// so that many clients limited together do not come back together, and never less than
/// the server's `retry-after`. `None` when the server asks for more than [`MAX_WAIT`].
fn backoff(base: Duration, retry: u32, retry_after: Option<Duration>) -> Option<Duration> {
    if retry_after.is_some_and(|after| after > MAX_WAIT) {
        return None;
    }
    let exponential = base.saturating_mul(1u32 << retry.min(16)).min(MAX_WAIT);
    let jittered = exponential.mul_f64(0.5 + fastrand::f64() * 0.5);
    Some(jittered.max(retry_after.unwrap_or_default()))
}

/// The error for a non-success response.
async fn failure(response: Response) -> Failure {
    let status = response.status();
    let retry_after = retry_after(response.headers());
    if status == StatusCode::TOO_MANY_REQUESTS {
        return Failure {
            error: ModelError::RateLimited { retry_after },
            retry_after,
        };
    }
    // A body that cannot be read is not worth failing over: the status says enough.
    let body = response.text().await.unwrap_or_default();
    Failure {
        error: ModelError::Http {
            status: status.as_u16(),
            body: truncate(body),
        },
        retry_after,
    }
}

/// The wait a server asks for: `retry-after-ms` (OpenAI) or `retry-after` in seconds. The
/// HTTP-date form of `retry-after` is not used by model providers and is ignored.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| {
        headers
            .get(name)?
            .to_str()
            .ok()?
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|n| n.is_finite() && *n >= 0.0)
    };
    if let Some(ms) = number("retry-after-ms") {
        return Duration::try_from_secs_f64(ms / 1000.0).ok();
    }
    number("retry-after").and_then(|s| Duration::try_from_secs_f64(s).ok())
}

/// `body` cut to [`MAX_ERROR_BODY`] bytes on a character boundary.
pub(crate) fn truncate(mut body: String) -> String {
    if body.len() > MAX_ERROR_BODY {
        let mut end = MAX_ERROR_BODY;
        while !body.is_char_boundary(end) {
            end -= 1;
        }
        body.truncate(end);
        body.push('…');
    }
    body
}

/// A transport failure, with the causes reqwest keeps in its source chain ("connection
/// refused" is two levels down and is what a user needs to read).
fn transport(error: reqwest::Error) -> Failure {
    let mut message = if error.is_timeout() {
        format!("timed out: {error}")
    } else {
        error.to_string()
    };
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    ModelError::Transport(message).into()
}

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
                EventStreamError::Transport(e) => transport(e).error,
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

/// Parses a JSON document into `T`, saying where it did not fit.
pub(crate) fn parse_json<T: serde::de::DeserializeOwned>(
    what: &str,
    text: &[u8],
) -> Result<T, ModelError> {
    let mut deserializer = serde_json::Deserializer::from_slice(text);
    serde_path_to_error::deserialize(&mut deserializer).map_err(|e| {
        let path = e.path().to_string();
        let at = if path == "." {
            String::new()
        } else {
            format!(" at `{path}`")
        };
        ModelError::Malformed(format!("{what}{at}: {}", e.into_inner()))
    })
}

/// A temperature as JSON. `f32` widened to `f64` prints as `0.20000000298023224`; going
/// through the shortest decimal form keeps the `0.2` the user wrote.
pub(crate) fn temperature(t: f32) -> serde_json::Value {
    t.to_string()
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map_or(serde_json::Value::Null, serde_json::Value::Number)
}

/// `Some(value)` of a non-empty environment variable.
pub(crate) fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_respects_retry_after() {
        let base = Duration::from_millis(100);
        for retry in 0..4 {
            let wait = backoff(base, retry, None).unwrap_or_default();
            let full = base * (1 << retry);
            assert!(
                wait >= full / 2 && wait <= full,
                "{wait:?} for retry {retry}"
            );
        }
        let asked = Duration::from_secs(3);
        assert!(backoff(base, 0, Some(asked)).is_some_and(|w| w >= asked));
        assert_eq!(backoff(base, 0, Some(Duration::from_secs(600))), None);
        assert!(backoff(Duration::from_secs(50), 10, None).is_some_and(|w| w <= MAX_WAIT));
    }

    #[test]
    fn retry_after_headers() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(250)));
        headers.clear();
        headers.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&headers), None);
    }

    #[test]
    fn truncation_keeps_characters_whole() {
        let body = "é".repeat(MAX_ERROR_BODY);
        let cut = truncate(body);
        assert!(cut.len() <= MAX_ERROR_BODY + "…".len());
        assert!(cut.ends_with('…'));
        assert_eq!(truncate("short".into()), "short");
    }

    #[test]
    fn temperatures_keep_their_decimal_form() {
        assert_eq!(temperature(0.2).to_string(), "0.2");
        assert_eq!(temperature(1.0).to_string(), "1.0");
    }
}
