//! A local HTTP server that plays a model provider: it answers each request with the next
//! scripted [`Reply`] and records what it was sent.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_toolkit::{
    ToolCall, ToolChoice, ToolDefinition, ToolError, ToolOutput, ToolResult,
    model::{ChatEvent, ChatRequest, GenerationOptions, Message, ModelError},
};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use futures::StreamExt;
use serde_json::{Value, json};

/// What the server answers to one request.
pub enum Reply {
    /// A complete body with a status and extra headers.
    Body {
        status: u16,
        headers: Vec<(&'static str, String)>,
        body: String,
    },
    /// A `text/event-stream` body sent in these pieces, with a short pause between them so
    /// that the client reads them separately.
    Stream(Vec<Vec<u8>>),
}

impl Reply {
    /// `200` with a JSON body.
    pub fn json(body: Value) -> Self {
        Reply::Body {
            status: 200,
            headers: Vec::new(),
            body: body.to_string(),
        }
    }

    /// A status with a text body.
    pub fn status(status: u16, body: &str) -> Self {
        Reply::Body {
            status,
            headers: Vec::new(),
            body: body.to_owned(),
        }
    }

    /// The server-sent events `text`, cut into pieces of `piece` bytes: lines, JSON
    /// documents and multi-byte characters end up split across reads.
    pub fn sse(text: &str, piece: usize) -> Self {
        Reply::Stream(text.as_bytes().chunks(piece).map(<[u8]>::to_vec).collect())
    }
}

/// One request the server received.
#[derive(Clone, Debug)]
pub struct Captured {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Value,
    /// The body as sent, byte for byte.
    pub raw: Vec<u8>,
    pub at: Instant,
}

#[derive(Default)]
struct Script {
    replies: VecDeque<Reply>,
    requests: Vec<Captured>,
}

/// A provider stand-in listening on `127.0.0.1`.
pub struct Server {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    script: Arc<Mutex<Script>>,
}

impl Server {
    /// Starts a server answering with `replies` in order (then `500 no scripted reply`).
    pub async fn start(replies: impl IntoIterator<Item = Reply>) -> Server {
        let script = Arc::new(Mutex::new(Script {
            replies: replies.into_iter().collect(),
            requests: Vec::new(),
        }));
        let app = Router::new()
            .fallback(handle)
            .with_state(Arc::clone(&script));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a local port");
        let address = listener.local_addr().expect("local address");
        tokio::spawn(async move {
            axum::serve(listener, app).await.expect("serve");
        });
        Server {
            url: format!("http://{address}"),
            script,
        }
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Captured> {
        self.script.lock().expect("lock").requests.clone()
    }

    /// The body of the only request received.
    pub fn only_body(&self) -> Value {
        let requests = self.requests();
        assert_eq!(requests.len(), 1, "expected exactly one request");
        requests[0].body.clone()
    }
}

async fn handle(
    State(script): State<Arc<Mutex<Script>>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let reply = {
        let mut script = script.lock().expect("lock");
        script.requests.push(Captured {
            path: uri.path().to_owned(),
            headers,
            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
            raw: body.to_vec(),
            at: Instant::now(),
        });
        script.replies.pop_front()
    };
    match reply {
        None => Response::builder()
            .status(500)
            .body(Body::from("no scripted reply"))
            .expect("response"),
        Some(Reply::Body {
            status,
            headers,
            body,
        }) => {
            let mut response = Response::builder()
                .status(StatusCode::from_u16(status).expect("status"))
                .header("content-type", "application/json");
            for (name, value) in headers {
                response = response.header(name, value);
            }
            response.body(Body::from(body)).expect("response")
        }
        Some(Reply::Stream(pieces)) => {
            let pieces = futures::stream::iter(pieces).then(|piece| async move {
                tokio::time::sleep(Duration::from_millis(2)).await;
                Ok::<_, std::convert::Infallible>(piece)
            });
            Response::builder()
                .status(200)
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(pieces))
                .expect("response")
        }
    }
}

/// `data: {json}` events for OpenAI-style streams, ending with `data: [DONE]`.
pub fn openai_sse(chunks: &[Value]) -> String {
    let mut text: String = chunks
        .iter()
        .map(|chunk| format!("data: {chunk}\n\n"))
        .collect();
    text.push_str("data: [DONE]\n\n");
    text
}

/// `event: TYPE` + `data: {json}` events for Anthropic-style streams.
pub fn anthropic_sse(events: &[Value]) -> String {
    events
        .iter()
        .map(|event| {
            let kind = event["type"].as_str().unwrap_or("message");
            format!("event: {kind}\ndata: {event}\n\n")
        })
        .collect()
}

/// Collects a stream, splitting the events from a final error.
pub async fn collect(
    stream: futures::stream::BoxStream<'_, Result<ChatEvent, ModelError>>,
) -> (Vec<ChatEvent>, Option<ModelError>) {
    let mut events = Vec::new();
    let mut stream = stream;
    while let Some(item) = stream.next().await {
        match item {
            Ok(event) => events.push(event),
            Err(error) => return (events, Some(error)),
        }
    }
    (events, None)
}

/// Two tools: one with a name every provider accepts, one (`fs.read`) that must be
/// sanitised to `fs_read` on the wire.
pub fn tools() -> Vec<ToolDefinition> {
    vec![
        ToolDefinition::new(
            "get_weather",
            "Current weather in a city.",
            json!({
                "type": "object",
                "properties": {"location": {"type": "string"}},
                "required": ["location"],
            }),
        ),
        ToolDefinition::new(
            "fs.read",
            "Read a file.",
            json!({
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            }),
        ),
    ]
}

/// A port nothing listens on: bound, then released.
pub fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("address").port()
}

/// A conversation with every kind of message: system, user, an assistant turn with two calls,
/// their two results (one failed), and a user follow-up.
pub fn conversation() -> ChatRequest {
    let calls = vec![
        ToolCall::new("call_1", "get_weather", r#"{"location":"Paris"}"#),
        ToolCall::new("call_2", "fs.read", r#"{"path":"/nope"}"#),
    ];
    let ok = ToolResult::new(
        calls[0].id.clone(),
        "get_weather",
        Ok(ToolOutput::text("18°C")),
        1,
    );
    let failed = ToolResult::new(
        calls[1].id.clone(),
        "fs.read",
        Err(ToolError::execution("no such file")),
        1,
    );
    ChatRequest::new(vec![
        Message::system("Be brief."),
        Message::user("Weather in Paris? And read /nope."),
        Message::assistant("", calls),
        Message::tool_result(&ok),
        Message::tool_result(&failed),
        Message::user("Thanks. Anything else?"),
    ])
    .with_tools(tools())
    .with_tool_choice(ToolChoice::Specific("fs.read".into()))
    .with_parallel_tool_calls(false)
    .with_options(
        GenerationOptions::new()
            .with_temperature(0.2)
            .with_max_tokens(200)
            .with_stop(["END"]),
    )
}
