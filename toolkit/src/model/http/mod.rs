//! What the HTTP providers share: the connection settings their builders collect, one
//! [`Endpoint`] that POSTs JSON with retries, and the mapping of HTTP failures to
//! [`ModelError`]. `sse.rs` turns a streamed body into [`ChatEvent`](crate::model::ChatEvent)s.
//!
//! Retry rule: a request is sent again only while nothing of a successful body has been
//! handed on. A non-streaming request is retried until its whole body is read; a streaming
//! one only until a success status arrives, because events already yielded cannot be taken
//! back. Waits come from the builder's [`RetryPolicy`] — the same type that retries tool
//! calls — and are never shorter than a server's `retry-after`.

pub(crate) mod constrained;
pub(crate) mod provider;
pub(crate) mod recovery;
pub(crate) mod sse;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, USER_AGENT};
use reqwest::{Response, StatusCode};
use serde_json::Value;

use crate::endpoint::{EndpointSettings, Secret};
use crate::error::Cause;
use crate::exec::RetryPolicy;
use crate::model::{ChatRequest, ModelError};
use crate::tls::TrustedRoots;

/// Longest error body kept in [`ModelError::Http`]; provider error pages can be large HTML.
const MAX_ERROR_BODY: usize = 2048;

/// Default total time one non-streaming request may take, and the longest silence allowed
/// while streaming (reasoning models can think for minutes before the first token).
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// Longest wait for a connection: a host that does not answer at all is given up on long
/// before a reasoning model's silence would be.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The providers' retries unless a builder is given others: 2 retries, waiting about 500 ms
/// and then 1 s (±50 % jitter, so that many clients limited together do not come back
/// together), and never more than 60 s — a `retry-after` above that is not waited for: the
/// error is returned so that the caller decides, rather than blocking an agent for minutes.
pub(crate) fn default_retry() -> RetryPolicy {
    RetryPolicy::exponential(2, Duration::from_millis(500), 2.0)
        .with_max_backoff(Duration::from_secs(60))
        .with_jitter(0.5)
}

/// Settings every HTTP provider builder collects: where the API is, its key, how to reach it
/// (the library's one [`EndpointSettings`]) and how to retry.
#[derive(Clone, Debug)]
pub(crate) struct HttpSettings {
    pub(crate) base_url: Option<String>,
    pub(crate) api_key: Option<Secret>,
    pub(crate) endpoint: EndpointSettings,
    pub(crate) retry: RetryPolicy,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            base_url: None,
            api_key: None,
            endpoint: EndpointSettings::new(),
            retry: default_retry(),
        }
    }
}

impl HttpSettings {
    /// The request timeout (for a stream: the longest silence).
    fn timeout(&self) -> Duration {
        self.endpoint.request_timeout.unwrap_or(DEFAULT_TIMEOUT)
    }
}

/// The methods every HTTP provider builder has besides the endpoint's own
/// ([`endpoint_methods`](crate::endpoint::endpoint_methods)), written once: `base_url` (its
/// doc given), `model`, `timeout` and `retry` (and the crate's `env`, for `from_env`), over the
/// builder's `http: HttpSettings` and `model: Option<String>`.
macro_rules! connection_methods {
    ($base_url_doc:literal) => {
        #[doc = $base_url_doc]
        pub fn base_url(mut self, url: impl Into<String>) -> Self {
            self.http.base_url = Some(url.into());
            self
        }

        /// The model to ask for (required).
        pub fn model(mut self, model: impl Into<String>) -> Self {
            self.model = Some(model.into());
            self
        }

        /// Total time a non-streaming request may take, and the longest silence tolerated
        /// while streaming (default 10 minutes); connecting waits at most 30 s, or this if
        /// shorter. A server that stalls ends the request with
        /// [`ModelError::Transport`](crate::model::ModelError::Transport) ("timed out"),
        /// retried under [`retry`](Self::retry) like any transport failure.
        pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
            self.http.endpoint = self.http.endpoint.request_timeout(timeout);
            self
        }

        /// How transient failures (rate limits, 5xx, 408, connection errors) are retried. The
        /// default is `RetryPolicy::exponential(2, Duration::from_millis(500), 2.0)`
        /// `.with_max_backoff(Duration::from_secs(60)).with_jitter(0.5)`: 2 retries, waiting
        /// about 500 ms and then 1 s. A server's `retry-after` is honoured when it is longer
        /// than the backoff; one longer than the policy's `max_backoff` is not waited for, and
        /// the error is returned at once
        /// ([`ModelError::RateLimited`](crate::model::ModelError::RateLimited) carries the
        /// wait). [`RetryPolicy::none`](crate::RetryPolicy::none) turns retries off.
        pub fn retry(mut self, policy: crate::exec::RetryPolicy) -> Self {
            self.http.retry = policy;
            self
        }

        /// The settings a provider's `from_env` read: the model, and the key and base URL when
        /// set.
        pub(crate) fn env(mut self, env: $crate::model::http::EnvSettings) -> Self {
            self.model = Some(env.model);
            if let Some(key) = env.api_key {
                self.http.api_key = Some($crate::endpoint::Secret(key));
            }
            if env.base_url.is_some() {
                self.http.base_url = env.base_url;
            }
            self
        }
    };
}
pub(crate) use connection_methods;

/// The setters provider builders share beyond [`connection_methods`] and the endpoint's own,
/// each written once here and named by the builder with its own documentation:
///
/// ```text
/// http::provider_setters! {
///     /// The API key, sent as ...
///     api_key;
///     /// Who runs the tool search ...
///     tool_search(ResponsesToolSearch);
/// }
/// ```
///
/// Over the builder's fields of the same names: `api_key` sets `http.api_key`, `strict` sets
/// `strict`, `text_tool_calls` sets `text_calls`, `tool_search(Type)` sets `tool_search` and
/// `tool_features` sets `features`.
macro_rules! provider_setters {
    ($($(#[$doc:meta])* $name:ident $(($ty:ty))?;)*) => {
        $($crate::model::http::provider_setters!(@one $(#[$doc])* $name $(($ty))?);)*
    };
    (@one $(#[$doc:meta])* api_key) => {
        $(#[$doc])*
        pub fn api_key(mut self, key: impl Into<String>) -> Self {
            self.http.api_key = Some($crate::endpoint::Secret(key.into()));
            self
        }
    };
    (@one $(#[$doc:meta])* strict) => {
        $(#[$doc])*
        pub fn strict(mut self, strict: bool) -> Self {
            self.strict = strict;
            self
        }
    };
    (@one $(#[$doc:meta])* text_tool_calls) => {
        $(#[$doc])*
        pub fn text_tool_calls(mut self, on: bool) -> Self {
            self.text_calls = Some(on);
            self
        }
    };
    (@one $(#[$doc:meta])* tool_search($ty:ty)) => {
        $(#[$doc])*
        pub fn tool_search(mut self, search: $ty) -> Self {
            self.tool_search = search;
            self
        }
    };
    (@one $(#[$doc:meta])* tool_features) => {
        $(#[$doc])*
        pub fn tool_features(mut self, features: $crate::model::ToolFeatures) -> Self {
            self.features = Some(features);
            self
        }
    };
}
pub(crate) use provider_setters;

/// The error an error object sent inside a stream (after a success status) stands for, when
/// its `code` is an HTTP error status: that status's error, judged like the same error sent
/// up front ([`ModelError::is_retryable`]).
pub(crate) fn status_error(error: &Value) -> Option<ModelError> {
    let status = error
        .get("code")
        .and_then(Value::as_u64)
        .and_then(|code| u16::try_from(code).ok())
        .filter(|code| (400..=599).contains(code))?;
    Some(ModelError::from_status(status, clip(&error.to_string())))
}

/// An error in the settings a builder was given, reported before any request is made.
pub(crate) fn config_error(what: impl std::fmt::Display) -> ModelError {
    ModelError::Config(what.to_string())
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
    retry: RetryPolicy,
    /// What refusals taught about the server: every later request through this endpoint (and
    /// its clones) asks for one call a turn, or puts the tools in the prompt.
    learned: Arc<recovery::Learned>,
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
        // The user's headers (and bearer token) replace the provider's of the same name.
        let user = settings.endpoint.header_map(true).map_err(config_error)?;
        for name in user.keys() {
            headers.remove(name);
        }
        headers.extend(user);
        // `read_timeout` bounds each silence rather than the whole exchange, so that a long
        // stream is not cut; non-streaming requests also get a total timeout per request.
        let timeout = settings.timeout();
        let client = settings
            .endpoint
            .client_builder(&TrustedRoots::system(), timeout.min(CONNECT_TIMEOUT))
            .map_err(config_error)?
            .read_timeout(timeout)
            .build()
            .map_err(|e| config_error(format!("the HTTP client cannot be set up: {e}")))?;
        Ok(Endpoint {
            client,
            url,
            headers,
            timeout,
            retry: settings.retry.clone(),
            learned: Arc::default(),
        })
    }

    /// What refusals taught about this server (see [`recovery`]).
    pub(crate) fn learned(&self) -> &recovery::Learned {
        &self.learned
    }

    /// `request` as this server takes it: parallel calls off once it refused them.
    pub(crate) fn adapt(&self, request: ChatRequest) -> ChatRequest {
        if request.parallel_tool_calls && self.learned.one_call_a_turn.load(Ordering::Relaxed) {
            request.with_parallel_tool_calls(false)
        } else {
            request
        }
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
            if retries >= self.retry.max_retries || !failure.error.is_retryable() {
                return Err(failure.error);
            }
            retries += 1;
            let Some(wait) = wait(&self.retry, retries, failure.retry_after) else {
                return Err(failure.error);
            };
            tracing::debug!(
                url = %self.url,
                error = %failure.error,
                ?wait,
                retry = retries,
                "model request failed; retrying"
            );
            tokio::time::sleep(wait).await;
        }
    }
}

/// How long to wait before retry number `retry` (1-based): the policy's backoff, never less
/// than the server's `retry-after` and never more than the policy's cap (`max_backoff`, which
/// the backoff's jitter could otherwise pass). `None` when the server asks for more than the
/// cap: the error, which carries the wait, goes back to the caller instead.
fn wait(policy: &RetryPolicy, retry: u32, retry_after: Option<Duration>) -> Option<Duration> {
    if retry_after.is_some_and(|after| after > policy.max_backoff) {
        return None;
    }
    let backoff = policy.backoff(retry).min(policy.max_backoff);
    Some(backoff.max(retry_after.unwrap_or_default()))
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
        error: ModelError::from_status(status.as_u16(), clip(&body)),
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

/// `text` cut to [`MAX_ERROR_BODY`] bytes on a character boundary, with `…` where it was
/// cut: for provider bodies quoted in errors.
pub(crate) fn clip(text: &str) -> String {
    let kept = crate::util::prefix(text, MAX_ERROR_BODY);
    if kept.len() < text.len() {
        format!("{kept}…")
    } else {
        kept.to_owned()
    }
}

/// A transport failure, with the causes reqwest keeps in its source chain ("connection
/// refused" is two levels down and is what a user needs to read).
fn transport(error: reqwest::Error) -> ModelError {
    let chain = crate::util::error_chain(&error);
    let message = if error.is_timeout() {
        format!("timed out: {chain}")
    } else {
        chain
    };
    ModelError::Transport(Cause::explained(message, error))
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
fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// What a provider's `from_env` reads: `{PREFIX}_MODEL` (else `default_model`),
/// `{PREFIX}_API_KEY` and `{PREFIX}_BASE_URL`. The key is required unless a base URL is set
/// (a local server or a proxy needs none); without either, the error is `missing_key`.
pub(crate) struct EnvSettings {
    pub(crate) model: String,
    pub(crate) api_key: Option<String>,
    pub(crate) base_url: Option<String>,
}

impl EnvSettings {
    pub(crate) fn read(
        prefix: &str,
        default_model: &str,
        missing_key: &str,
    ) -> Result<Self, ModelError> {
        let settings = EnvSettings {
            model: env(&format!("{prefix}_MODEL")).unwrap_or_else(|| default_model.into()),
            api_key: env(&format!("{prefix}_API_KEY")),
            base_url: env(&format!("{prefix}_BASE_URL")),
        };
        if settings.api_key.is_none() && settings.base_url.is_none() {
            return Err(config_error(missing_key));
        }
        Ok(settings)
    }
}

/// The model name a builder was given, or the error saying to give one.
pub(crate) fn model_name(model: Option<String>) -> Result<String, ModelError> {
    model
        .filter(|m| !m.trim().is_empty())
        .ok_or_else(|| config_error("no model name: call `.model(..)`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_follow_the_policy_within_its_cap() {
        let policy = RetryPolicy::exponential(4, Duration::from_millis(100), 2.0).with_jitter(0.0);
        let waits: Vec<_> = (1..=4).map(|r| wait(&policy, r, None)).collect();
        let expected = [100, 200, 400, 800].map(|ms| Some(Duration::from_millis(ms)));
        assert_eq!(waits, expected);

        // Jitter spreads a wait but never past the cap.
        let capped = RetryPolicy::exponential(10, Duration::from_secs(50), 2.0)
            .with_max_backoff(Duration::from_secs(60))
            .with_jitter(0.5);
        for retry in 1..=10 {
            let w = wait(&capped, retry, None).unwrap_or_default();
            assert!(w <= Duration::from_secs(60), "{w:?} for retry {retry}");
        }

        // The default: about 500 ms, then 1 s, both spread by ±50 %.
        let default = default_retry();
        assert_eq!(default.max_retries, 2);
        for (retry, ms) in [(1, 500.0), (2, 1000.0)] {
            let w = wait(&default, retry, None)
                .unwrap_or_default()
                .as_secs_f64()
                * 1000.0;
            assert!(
                (ms * 0.5..=ms * 1.5).contains(&w),
                "{w} ms for retry {retry}"
            );
        }
    }

    #[test]
    fn waits_respect_retry_after_up_to_the_cap() {
        let policy = default_retry();
        let asked = Duration::from_secs(3);
        assert!(wait(&policy, 1, Some(asked)).is_some_and(|w| w >= asked));
        assert_eq!(wait(&policy, 1, Some(Duration::from_secs(600))), None);
        let short_cap = policy.with_max_backoff(Duration::from_secs(2));
        assert_eq!(wait(&short_cap, 1, Some(asked)), None);
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
    fn clipping_keeps_characters_whole() {
        let body = "é".repeat(MAX_ERROR_BODY);
        let cut = clip(&body);
        assert!(cut.len() <= MAX_ERROR_BODY + "…".len());
        assert!(cut.ends_with('…'));
        assert_eq!(clip("short"), "short");
    }

    #[test]
    fn temperatures_keep_their_decimal_form() {
        assert_eq!(temperature(0.2).to_string(), "0.2");
        assert_eq!(temperature(1.0).to_string(), "1.0");
    }
}
