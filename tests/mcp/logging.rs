//! MCP logging: what a tool logs through its `ToolEmitter` reaches the client as
//! `notifications/message` (the tool's name as the logger), filtered by the least severe level
//! each session set with `logging/setLevel` — every level until it sets one, and one session's
//! level is not another's. Over streamable HTTP the messages come on the session's GET stream
//! (rmcp ties only progress to the request's own stream), as the official SDKs' clients read
//! them.

use std::time::Duration;

use agent_toolkit::context::LogLevel;
use agent_toolkit::prelude::*;
use serde_json::{Value, json};

use crate::bad_input::post;

/// Logs one message at each of three levels.
#[tool(read_only)]
fn chatty(#[ctx] log: ToolEmitter) -> &'static str {
    log.log(LogLevel::Debug, "details");
    log.log(LogLevel::Info, "working");
    log.log(LogLevel::Warning, "careful");
    "done"
}

/// A new session (handshake done): its id.
async fn open_session(client: &reqwest::Client, url: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}});
    let init = post(client, url, None, &init.to_string()).await;
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let reply = crate::bad_input::message(init).await;
    assert!(
        reply["result"]["capabilities"]["logging"].is_object(),
        "the server declares logging: {reply}"
    );
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    post(client, url, Some(&session), initialized).await;
    session
}

/// Call `chatty` in `session` and check its answer.
async fn call_chatty(client: &reqwest::Client, url: &str, session: &str, id: u64) {
    let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                      "params": {"name": "chatty", "arguments": {}}});
    let reply = post(client, url, Some(session), &call.to_string()).await;
    let reply = crate::bad_input::message(reply).await;
    assert_eq!(reply["result"]["content"][0]["text"], "done", "{reply}");
}

/// The session's GET stream, read as `level:message` of each log notification.
struct LogStream {
    response: reqwest::Response,
    buffer: String,
}

impl LogStream {
    async fn open(client: &reqwest::Client, url: &str, session: &str) -> Self {
        let response = client
            .get(url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        LogStream {
            response,
            buffer: String::new(),
        }
    }

    /// The next `count` log notifications, within 10 s.
    async fn next(&mut self, count: usize) -> Vec<String> {
        let mut logged = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                // Whole lines only, and no further than the messages asked for: the rest stays
                // for the next read.
                while logged.len() < count
                    && let Some(end) = self.buffer.find('\n')
                {
                    let line: String = self.buffer.drain(..=end).collect();
                    let Some(data) = line.trim().strip_prefix("data:") else {
                        continue;
                    };
                    let Ok(m) = serde_json::from_str::<Value>(data.trim()) else {
                        continue;
                    };
                    if m["method"] == "notifications/message" {
                        assert_eq!(m["params"]["logger"], "chatty", "{m}");
                        let level = m["params"]["level"].as_str().unwrap();
                        let data = m["params"]["data"].as_str().unwrap();
                        logged.push(format!("{level}:{data}"));
                    }
                }
                if logged.len() == count {
                    break;
                }
                let chunk = self.response.chunk().await.unwrap();
                let chunk = chunk.expect("the GET stream stays open");
                self.buffer.push_str(&String::from_utf8_lossy(&chunk));
            }
        })
        .await;
        assert!(
            read.is_ok(),
            "only {logged:?} of {count} arrived within 10 s"
        );
        logged
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_log_to_the_client_at_the_level_each_session_set() {
    let toolkit = Toolkit::builder().register(Chatty).build().unwrap();
    let url = crate::serve_http(&toolkit).await;
    let client = crate::tls::http_client();
    let first = open_session(&client, &url).await;
    let second = open_session(&client, &url).await;
    let mut first_log = LogStream::open(&client, &url, &first).await;
    let mut second_log = LogStream::open(&client, &url, &second).await;

    let everything = ["debug:details", "info:working", "warning:careful"];
    call_chatty(&client, &url, &first, 2).await;
    assert_eq!(first_log.next(3).await, everything);

    let set = json!({"jsonrpc": "2.0", "id": 3, "method": "logging/setLevel",
                     "params": {"level": "warning"}});
    let set =
        crate::bad_input::message(post(&client, &url, Some(&first), &set.to_string()).await).await;
    assert_eq!(set["result"], json!({}), "{set}");
    // Two more calls: had the level been ignored, `debug` would come before their warnings.
    call_chatty(&client, &url, &first, 4).await;
    call_chatty(&client, &url, &first, 5).await;
    assert_eq!(
        first_log.next(2).await,
        ["warning:careful", "warning:careful"]
    );
    // The other session set nothing.
    call_chatty(&client, &url, &second, 6).await;
    assert_eq!(second_log.next(3).await, everything);
}
