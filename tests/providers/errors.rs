//! Failures: status codes, rate limits, retries with backoff, unreadable bodies, servers
//! that are not there.

use std::time::{Duration, Instant};

use agent_toolkit::{
    ChatModel, RetryPolicy,
    model::{AnthropicMessages, ChatEvent, ChatRequest, Message, ModelError, OpenAiChat},
};
use serde_json::json;

use crate::support::{Reply, Server, closed_port, collect, openai_sse};

fn openai(url: &str) -> OpenAiChat {
    OpenAiChat::builder()
        .base_url(url)
        .model("gpt-test")
        .retry(fast_retries())
        .build()
        .expect("build")
}

/// The providers' default of 2 retries, with short waits.
fn fast_retries() -> RetryPolicy {
    RetryPolicy::exponential(2, Duration::from_millis(10), 2.0)
}

fn hi() -> ChatRequest {
    ChatRequest::new(vec![Message::user("hi")])
}

fn ok() -> Reply {
    Reply::json(json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "fine"},
                     "finish_reason": "stop"}],
    }))
}

#[tokio::test]
async fn rate_limit_waits_for_retry_after_then_retries() {
    let server = Server::start([
        Reply::Body {
            status: 429,
            headers: vec![("retry-after", "1".into())],
            body: json!({"error": {"message": "Rate limit reached"}}).to_string(),
        },
        ok(),
    ])
    .await;
    let started = Instant::now();
    let response = openai(&server.url).chat(hi()).await.expect("retried");
    assert_eq!(response.message.content, "fine");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "one retry");
    let waited = requests[1].at - requests[0].at;
    assert!(
        waited >= Duration::from_secs(1),
        "retried after {waited:?}, before the server's retry-after"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn rate_limit_without_retries_left_is_reported_with_its_wait() {
    let server = Server::start([Reply::Body {
        status: 429,
        headers: vec![("retry-after-ms", "1500".into())],
        body: String::new(),
    }])
    .await;
    let model = OpenAiChat::builder()
        .base_url(&server.url)
        .model("gpt-test")
        .retry(RetryPolicy::none())
        .build()
        .expect("build");
    let error = model.chat(hi()).await.expect_err("rate limited");
    assert_eq!(
        error,
        ModelError::RateLimited {
            retry_after: Some(Duration::from_millis(1500))
        }
    );
}

#[tokio::test]
async fn server_error_then_success() {
    let server = Server::start([Reply::status(500, "upstream hiccup"), ok()]).await;
    let response = openai(&server.url).chat(hi()).await.expect("retried");
    assert_eq!(response.message.content, "fine");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn server_errors_until_retries_are_exhausted() {
    let server = Server::start([
        Reply::status(500, "down 1"),
        Reply::status(502, "down 2"),
        Reply::status(500, "down 3"),
        ok(),
    ])
    .await;
    let error = openai(&server.url).chat(hi()).await.expect_err("gave up");
    assert_eq!(
        error,
        ModelError::Http {
            status: 500,
            body: "down 3".into()
        }
    );
    assert_eq!(
        server.requests().len(),
        3,
        "first attempt + max_retries (2)"
    );
}

#[tokio::test]
async fn client_errors_are_not_retried_and_long_bodies_are_cut() {
    let long = "x".repeat(10_000);
    let server = Server::start([Reply::status(400, &long), ok()]).await;
    let error = openai(&server.url)
        .chat(hi())
        .await
        .expect_err("bad request");
    let ModelError::Http { status: 400, body } = &error else {
        panic!("not a 400: {error:?}");
    };
    assert!(body.len() < 2100, "body of {} bytes kept", body.len());
    assert!(!error.is_retryable());
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn malformed_json_is_reported_and_not_retried() {
    let server = Server::start([
        Reply::Body {
            status: 200,
            headers: Vec::new(),
            body: "{\"choices\": [{\"message\": ".into(),
        },
        ok(),
    ])
    .await;
    let error = openai(&server.url).chat(hi()).await.expect_err("malformed");
    assert!(matches!(error, ModelError::Malformed(_)), "{error:?}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn an_unexpected_shape_says_where() {
    let server = Server::start([Reply::json(json!({
        "choices": [{"message": {"tool_calls": [{"id": "c", "function": {"arguments": "{}"}}]}}],
    }))])
    .await;
    let error = openai(&server.url).chat(hi()).await.expect_err("malformed");
    let ModelError::Malformed(message) = &error else {
        panic!("not malformed: {error:?}");
    };
    assert!(
        message.contains("choices[0].message.tool_calls[0].function") && message.contains("name"),
        "{message}"
    );

    let server = Server::start([Reply::json(json!({"choices": []}))]).await;
    let error = openai(&server.url)
        .chat(hi())
        .await
        .expect_err("no choices");
    assert!(
        matches!(error, ModelError::Malformed(ref m) if m.contains("no choices")),
        "{error:?}"
    );
}

#[tokio::test]
async fn connection_refused_is_a_transport_error() {
    let url = format!("http://127.0.0.1:{}", closed_port());
    let error = openai(&url).chat(hi()).await.expect_err("nobody listens");
    assert!(matches!(error, ModelError::Transport(_)), "{error:?}");
    assert!(error.is_retryable());
    // The HTTP client's error is kept whole as the source: a caller can walk to it.
    let cause = std::error::Error::source(&error).expect("a source");
    let cause = cause
        .downcast_ref::<agent_toolkit::Cause>()
        .expect("a Cause");
    let http = cause
        .downcast_ref::<reqwest::Error>()
        .expect("the reqwest error");
    assert!(http.is_connect(), "{http:?}");

    let claude = AnthropicMessages::builder()
        .base_url(&url)
        .model("claude-test")
        .retry(RetryPolicy::none())
        .build()
        .expect("build");
    let (events, error) = collect(claude.chat_stream(hi())).await;
    assert!(events.is_empty());
    assert!(matches!(error, Some(ModelError::Transport(_))), "{error:?}");
}

#[tokio::test]
async fn a_stream_is_retried_before_its_first_byte() {
    let chunk = json!({"choices": [{"index": 0, "delta": {"content": "streamed"},
                                    "finish_reason": "stop"}]});
    let server = Server::start([
        Reply::status(503, "warming up"),
        Reply::sse(&openai_sse(&[chunk]), 11),
    ])
    .await;
    let (events, error) = collect(openai(&server.url).chat_stream(hi())).await;
    assert_eq!(error, None);
    assert_eq!(events[0], ChatEvent::TextDelta("streamed".into()));
    assert!(matches!(events.last(), Some(ChatEvent::Done(r)) if r.message.content == "streamed"));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn anthropic_rate_limit_is_retried() {
    let server = Server::start([
        Reply::Body {
            status: 429,
            headers: vec![("retry-after", "0".into())],
            body: json!({"type": "error", "error": {"type": "rate_limit_error"}}).to_string(),
        },
        Reply::status(
            529,
            r#"{"type":"error","error":{"type":"overloaded_error"}}"#,
        ),
        Reply::json(json!({"content": [{"type": "text", "text": "fine"}],
                           "stop_reason": "end_turn"})),
    ])
    .await;
    let claude = AnthropicMessages::builder()
        .base_url(&server.url)
        .model("claude-test")
        .retry(fast_retries())
        .build()
        .expect("build");
    let response = claude.chat(hi()).await.expect("retried twice");
    assert_eq!(response.message.content, "fine");
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn invalid_settings_are_refused_at_build() {
    let no_model = OpenAiChat::builder().build();
    assert!(matches!(no_model, Err(ModelError::Config(ref m)) if m.contains("model")));
    assert!(
        !no_model.unwrap_err().is_retryable(),
        "a configuration mistake is not retried"
    );
    let bad_url = OpenAiChat::builder()
        .base_url("not a url")
        .model("m")
        .build();
    assert!(bad_url.is_err());
    let bad_header = AnthropicMessages::builder()
        .model("m")
        .header("bad header", "x")
        .build();
    assert!(matches!(bad_header, Err(ModelError::Config(ref m)) if m.contains("bad header")));
    let bad_key = OpenAiChat::builder()
        .model("m")
        .api_key("line\nbreak")
        .build();
    assert!(bad_key.is_err());
}

/// A server that accepts the connection and never answers: each attempt ends at the timeout,
/// retries follow the policy, and the caller gets a transport error saying it timed out.
#[tokio::test]
async fn a_stalled_server_times_out() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            held.push(socket);
        }
    });
    let model = OpenAiChat::builder()
        .base_url(&url)
        .model("gpt-test")
        .timeout(Duration::from_millis(300))
        .retry(RetryPolicy::exponential(1, Duration::from_millis(10), 2.0))
        .build()
        .unwrap();
    let started = Instant::now();
    match model.chat(hi()).await {
        Err(ModelError::Transport(why)) => assert!(why.contains("timed out"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        accepted.load(std::sync::atomic::Ordering::SeqCst),
        2,
        "one retry"
    );

    // A stream that stops sending: the silence ends it.
    let anthropic = AnthropicMessages::builder()
        .base_url(&url)
        .model("claude-test")
        .timeout(Duration::from_millis(300))
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let (_, error) = collect(anthropic.chat_stream(hi())).await;
    assert!(matches!(error, Some(ModelError::Transport(_))), "{error:?}");
}
