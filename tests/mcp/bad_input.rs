//! Bad input on the wire, below any SDK: broken JSON, JSON that is not JSON-RPC, unknown
//! methods (`server/discover` included), arguments failing the schema, calls of switched-off
//! tools. Every one gets a clear answer, and the server keeps serving.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::RawStdio;

#[tokio::test]
async fn stdio_answers_bad_input_and_keeps_serving() {
    let mut server = RawStdio::start();

    // Before the handshake: broken JSON, a stray notification, `server/discover`.
    server.send_line("this is not json").await;
    let parse = server.recv().await;
    assert_eq!(parse["id"], Value::Null);
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    server
        .send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    let started = Instant::now();
    let discover = server
        .request(
            7,
            "server/discover",
            json!({"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
                "io.modelcontextprotocol/clientCapabilities": {}
            }}),
        )
        .await;
    // Both eras from one server: the probe of a dual-era client lists every revision.
    let supported = &discover["result"]["supportedVersions"];
    for version in ["2026-07-28", "2025-11-25"] {
        assert!(
            supported.as_array().unwrap().contains(&json!(version)),
            "{discover}"
        );
    }
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "answered promptly"
    );
    // A revision the server does not speak: the spec's -32022, listing what it does speak.
    let discover = server
        .request(
            8,
            "server/discover",
            json!({"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2099-01-01",
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
                "io.modelcontextprotocol/clientCapabilities": {}
            }}),
        )
        .await;
    assert_eq!(discover["error"]["code"], -32022, "{discover}");
    assert_eq!(discover["error"]["data"]["requested"], "2099-01-01");
    assert!(
        discover["error"]["data"]["supported"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28")),
        "{discover}"
    );

    let init = server.initialize().await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    assert_eq!(init["result"]["capabilities"]["tools"]["listChanged"], true);

    // After it: broken JSON, JSON that is no JSON-RPC message, an unknown method.
    server
        .send_line(r#"{"jsonrpc": "2.0", "id": 3, "method": "#)
        .await;
    assert_eq!(server.recv().await["error"]["code"], -32700);
    server.send_line(r#"[1, 2, 3]"#).await;
    assert_eq!(server.recv().await["error"]["code"], -32600);
    let unknown = server.request(4, "tools/frobnicate", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");

    // Arguments failing the schema: a tool error the model can read, not a protocol error.
    let bad = server
        .request(
            5,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 1}}),
        )
        .await;
    assert_eq!(bad["result"]["isError"], true, "{bad}");
    let text = bad["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("missing required argument `b`"), "{text}");

    // A switched-off tool and an unknown one: protocol errors naming what is available.
    let off = server
        .request(6, "tools/call", json!({"name": "secret", "arguments": {}}))
        .await;
    assert_eq!(off["error"]["code"], -32602, "{off}");
    let message = off["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("tool `secret` is not available; available tools: add"),
        "{message}"
    );

    // Still serving.
    let ok = server
        .request(
            8,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 1, "b": 2}}),
        )
        .await;
    assert_eq!(ok["result"]["structuredContent"], json!({"sum": 3}), "{ok}");
    assert!(server.is_running());
}

/// POST one body to the endpoint the way an MCP client does.
pub(crate) async fn post(
    client: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: &str,
) -> reqwest::Response {
    post_with(client, url, session, body, &[]).await
}

pub(crate) async fn post_with(
    client: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: &str,
    headers: &[(&str, &str)],
) -> reqwest::Response {
    let mut request = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(id) = session {
        request = request
            .header("mcp-session-id", id)
            .header("mcp-protocol-version", "2025-11-25");
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap()
}

/// The JSON-RPC message of a response: a JSON body, or the last `data:` of an SSE stream.
pub(crate) async fn message(response: reqwest::Response) -> Value {
    let text = response.text().await.unwrap();
    let json = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .rfind(|d| !d.is_empty())
        .unwrap_or(&text);
    serde_json::from_str(json).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_answers_bad_input_and_keeps_serving() {
    let toolkit = crate::fixture::toolkit();
    let url = crate::serve_http(&toolkit).await;
    let client = crate::tls::http_client();

    let broken = post(&client, &url, None, "{not json").await;
    assert_eq!(broken.status(), 400);
    let broken = message(broken).await;
    assert_eq!(broken["error"]["code"], -32700, "{broken}");
    assert_eq!(broken["id"], Value::Null);

    let not_rpc = post(&client, &url, None, r#"{"id": 9, "hello": "world"}"#).await;
    assert_eq!(not_rpc.status(), 400);
    let not_rpc = message(not_rpc).await;
    assert_eq!(not_rpc["error"]["code"], -32600, "{not_rpc}");
    assert_eq!(not_rpc["id"], 9);

    // A 2026-07-28 probe, with the headers that revision requires, is answered statelessly
    // (no session id); one naming a revision the server does not speak gets -32022.
    let discover = post_with(
        &client,
        &url,
        None,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {}
        }}})
        .to_string(),
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "server/discover"),
        ],
    )
    .await;
    assert!(discover.headers().get("mcp-session-id").is_none());
    let discover = message(discover).await;
    assert_eq!(
        discover["result"]["supportedVersions"]
            .as_array()
            .unwrap()
            .last(),
        Some(&json!("2026-07-28")),
        "{discover}"
    );
    let unsupported = post_with(
        &client,
        &url,
        None,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2099-01-01",
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {}
        }}})
        .to_string(),
        &[
            ("mcp-protocol-version", "2099-01-01"),
            ("mcp-method", "tools/list"),
        ],
    )
    .await;
    let unsupported = message(unsupported).await;
    assert_eq!(unsupported["error"]["code"], -32022, "{unsupported}");

    // A session, then the same checks as on stdio.
    let init = post(
        &client,
        &url,
        None,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}})
        .to_string(),
    )
    .await;
    let session = init
        .headers()
        .get("mcp-session-id")
        .expect("a session id")
        .to_str()
        .unwrap()
        .to_string();
    assert_eq!(
        message(init).await["result"]["protocolVersion"],
        "2025-11-25"
    );
    let initialized = post(
        &client,
        &url,
        Some(&session),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
    assert_eq!(initialized.status(), 202);

    let call = |id: u64, name: &str, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": name, "arguments": arguments}})
        .to_string()
    };
    let bad = message(
        post(
            &client,
            &url,
            Some(&session),
            &call(3, "add", json!({"a": "x", "b": 1})),
        )
        .await,
    )
    .await;
    assert_eq!(bad["result"]["isError"], true, "{bad}");
    let off =
        message(post(&client, &url, Some(&session), &call(4, "secret", json!({}))).await).await;
    assert_eq!(off["error"]["code"], -32602, "{off}");
    let unknown = message(
        post(
            &client,
            &url,
            Some(&session),
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/frobnicate"}"#,
        )
        .await,
    )
    .await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let broken = post(&client, &url, Some(&session), "][").await;
    assert_eq!(broken.status(), 400);
    let ok = message(
        post(
            &client,
            &url,
            Some(&session),
            &call(6, "add", json!({"a": 2, "b": 2})),
        )
        .await,
    )
    .await;
    assert_eq!(ok["result"]["structuredContent"], json!({"sum": 4}), "{ok}");
}
