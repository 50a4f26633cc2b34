//! The clients' protocol sequences, over one pooled HTTP/1.1 client, with every answer checked.
//!
//! MCP (streamable HTTP, revision 2025-11-25): `initialize`, then `notifications/initialized`,
//! once per client session; then `tools/call` of `add` in a loop; `DELETE` ends a session
//! (soak churn). The session id (`Mcp-Session-Id`) is sent back when the server gave one; an
//! answer may come as JSON or as server-sent events (the result is the `data:` event with the
//! request's id). A2A 1.0: `SendMessage` with the `_tool_call` the `A2aToolServer` takes, as
//! `tests/benches/a2a_load.rs` sends it.

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use serde_json::{Value, json};

const PROTOCOL: &str = "2025-11-25";
const SESSION_HEADER: &str = "mcp-session-id";

/// One MCP client session.
pub struct McpSession {
    url: String,
    session: Option<String>,
    next_id: u64,
}

impl McpSession {
    /// `initialize` and `notifications/initialized` at `url`.
    pub async fn open(client: &reqwest::Client, url: &str) -> Result<McpSession, String> {
        let mut session = McpSession {
            url: url.to_string(),
            session: None,
            next_id: 1,
        };
        let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "agent-toolkit-load", "version": "0.1.0"}}});
        let (headers, answer) = session.post(client, &body, Some(0)).await?;
        if answer["result"]["protocolVersion"].as_str().is_none() {
            return Err(format!("initialize: {answer}"));
        }
        session.session = headers
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        session.post(client, &note, None).await?;
        Ok(session)
    }

    /// Whether the server gave this session an id (stateful mode).
    pub fn has_id(&self) -> bool {
        self.session.is_some()
    }

    /// One `tools/call` of `add(a, b)`; the answer must be the sum.
    pub async fn add(&mut self, client: &reqwest::Client, a: i64, b: i64) -> Result<(), String> {
        let id = self.next_id;
        self.next_id += 1;
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": a, "b": b}}});
        let (_, answer) = self.post(client, &body, Some(id)).await?;
        let result = &answer["result"];
        if result["isError"] == true || mcp_sum(result) != Some(a + b) {
            return Err(format!("tools/call: {answer}"));
        }
        Ok(())
    }

    /// End the session (`DELETE`), when it has an id.
    pub async fn close(self, client: &reqwest::Client) -> Result<(), String> {
        let Some(id) = &self.session else {
            return Ok(());
        };
        let response = client
            .delete(&self.url)
            .header(SESSION_HEADER, id)
            .header("mcp-protocol-version", PROTOCOL)
            .send()
            .await
            .map_err(|e| format!("DELETE: {e}"))?;
        let status = response.status();
        let _ = response.bytes().await;
        if status.is_success() {
            Ok(())
        } else {
            Err(format!("DELETE: HTTP {status}"))
        }
    }

    /// POST one message; for a request (`id`), its JSON-RPC answer.
    async fn post(
        &self,
        client: &reqwest::Client,
        body: &Value,
        id: Option<u64>,
    ) -> Result<(HeaderMap, Value), String> {
        let mut request = client
            .post(&self.url)
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
            .body(body.to_string());
        if id != Some(0) {
            request = request.header("mcp-protocol-version", PROTOCOL);
        }
        if let Some(session) = &self.session {
            request = request.header(SESSION_HEADER, session);
        }
        let response = request.send().await.map_err(|e| format!("send: {e}"))?;
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.bytes().await.map_err(|e| format!("read: {e}"))?;
        if !status.is_success() {
            return Err(format!(
                "HTTP {status}: {}",
                String::from_utf8_lossy(&bytes)
            ));
        }
        let Some(id) = id else {
            return Ok((headers, Value::Null));
        };
        let sse = headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let answer = if sse {
            let text = std::str::from_utf8(&bytes).map_err(|e| format!("read: {e}"))?;
            text.lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
                .find(|message| message["id"] == id)
                .ok_or_else(|| format!("no answer to request {id} in the event stream: {text}"))?
        } else {
            serde_json::from_slice(&bytes).map_err(|e| format!("answer is not JSON: {e}"))?
        };
        Ok((headers, answer))
    }
}

/// The sum in a `tools/call` result, in any of the shapes the servers give it: text `"49"`,
/// `structuredContent: {"result": 49}`, or a JSON object in the text.
fn mcp_sum(result: &Value) -> Option<i64> {
    let text = result["content"][0]["text"].as_str();
    if let Some(n) = text.and_then(|t| t.trim().parse().ok()) {
        return Some(n);
    }
    let from_object = |v: &Value| {
        v.get("result")
            .or_else(|| v.get("sum"))
            .and_then(Value::as_i64)
    };
    from_object(&result["structuredContent"]).or_else(|| {
        text.and_then(|t| serde_json::from_str::<Value>(t).ok())
            .as_ref()
            .and_then(from_object)
    })
}

/// One A2A 1.0 `SendMessage` asking for `add(a, b)`; the answer must be a COMPLETED task whose
/// first artifact's data part holds `{"result": a + b}`.
pub async fn a2a_add(
    client: &reqwest::Client,
    url: &str,
    id: u64,
    a: i64,
    b: i64,
) -> Result<(), String> {
    let call = json!({"name": "add", "params": {"a": a, "b": b}});
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "SendMessage", "params": {"message": {
        "messageId": format!("m-{id}"), "role": "ROLE_USER",
        "parts": [{"data": call, "mediaType": "application/json"}],
        "metadata": {"_tool_call": call}}}});
    let response = client
        .post(url)
        .header("a2a-version", "1.0")
        .header(CONTENT_TYPE, "application/json")
        .body(body.to_string())
        .send()
        .await
        .map_err(|e| format!("send: {e}"))?;
    let status = response.status();
    let bytes = response.bytes().await.map_err(|e| format!("read: {e}"))?;
    let answer: Value = serde_json::from_slice(&bytes).map_err(|e| {
        format!(
            "HTTP {status}, answer is not JSON ({e}): {}",
            String::from_utf8_lossy(&bytes)
        )
    })?;
    let task = &answer["result"]["task"];
    let ok = status.is_success()
        && task["status"]["state"] == "TASK_STATE_COMPLETED"
        && task["artifacts"][0]["parts"][0]["data"]["result"].as_f64() == Some((a + b) as f64);
    if ok {
        Ok(())
    } else {
        Err(format!("HTTP {status}: {answer}"))
    }
}
