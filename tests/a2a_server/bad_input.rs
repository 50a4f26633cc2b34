//! Bad requests over raw HTTP: each gets the spec's error code (or a model-visible tool
//! error), and the server keeps serving.

use agent_toolkit::a2a::server::ServerOptions;
use reqwest::StatusCode;
use serde_json::json;

use crate::fixtures::{
    Probe, V1, agent_server, call_message, post, send, still_serving, tool_result, tool_server,
    toolkit, uuid,
};

const AUTH: (&str, &str) = ("authorization", "Bearer s3cret");

fn code(body: &serde_json::Value) -> i64 {
    body["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("no error code in {body:#}"))
}

#[tokio::test]
async fn malformed_json_rpc_and_unknown_methods() {
    let kit = toolkit(&Probe::default());
    let base = tool_server(&kit, |s| s).await;

    let (status, body) = post(&base, &[V1], "{not json").await;
    assert_eq!((status, code(&body)), (StatusCode::OK, -32700), "{body}");
    assert_eq!(body["id"], json!(null));

    for not_a_request in [
        r#"{"jsonrpc":"2.0","id":4}"#,
        r#"[1,2]"#,
        r#"{"jsonrpc":"2.0","id":4,"method":7}"#,
    ] {
        let (status, body) = post(&base, &[V1], not_a_request).await;
        assert_eq!(
            (status, code(&body)),
            (StatusCode::OK, -32600),
            "{not_a_request}: {body}"
        );
    }
    let (_, body) = post(
        &base,
        &[V1],
        r#"{"jsonrpc":"1.0","id":4,"method":"SendMessage"}"#,
    )
    .await;
    assert_eq!(code(&body), -32600, "{body}");
    let (_, body) = post(
        &base,
        &[],
        r#"{"jsonrpc":"1.0","id":4,"method":"message/send"}"#,
    )
    .await;
    assert_eq!(code(&body), -32600, "{body}");

    let (status, body) = post(
        &base,
        &[V1],
        r#"{"jsonrpc":"2.0","id":"x","method":"DoMagic","params":{}}"#,
    )
    .await;
    assert_eq!((status, code(&body)), (StatusCode::OK, -32601), "{body}");
    assert_eq!(body["id"], "x");
    still_serving(&base, &[]).await;
}

/// A request without `A2A-Version` is an A2A 0.3 request; one naming a method neither
/// generation has is "method not found" (`-32601`, naming the method), not a version error.
#[tokio::test]
async fn unknown_methods_on_the_0_3_wire_are_method_not_found() {
    let kit = toolkit(&Probe::default());
    for base in [tool_server(&kit, |s| s).await, agent_server().await] {
        for headers in [vec![], vec![("a2a-version", "0.3")]] {
            let (status, body) = post(
                &base,
                &headers,
                r#"{"jsonrpc":"2.0","id":"m1","method":"tasks/doMagic","params":{}}"#,
            )
            .await;
            assert_eq!(
                (status, code(&body)),
                (StatusCode::OK, -32601),
                "{headers:?}: {body}"
            );
            assert_eq!(body["id"], "m1");
            let message = body["error"]["message"].as_str().unwrap();
            assert!(message.contains("tasks/doMagic"), "{message}");
            assert!(
                body["error"].get("data").is_none(),
                "0.3 errors carry no ErrorInfo array: {body}"
            );
        }
        // The envelope is still checked first.
        let (_, body) = post(&base, &[], r#"{"jsonrpc":"1.0","id":4,"method":"x/y"}"#).await;
        assert_eq!(code(&body), -32600, "{body}");
        // A version this server does not speak stays a version error, whatever the method.
        let (_, body) = post(
            &base,
            &[("a2a-version", "9.9")],
            r#"{"jsonrpc":"2.0","id":5,"method":"tasks/doMagic"}"#,
        )
        .await;
        assert_eq!(code(&body), -32009, "{body}");
    }
    still_serving(&tool_server(&kit, |s| s).await, &[]).await;
}

#[tokio::test]
async fn wrong_a2a_version() {
    let kit = toolkit(&Probe::default());
    let base = tool_server(&kit, |s| s).await;
    let request = send(call_message("add", json!({"a": 1, "b": 2})));
    // A 1.0 method without the header is a 0.3 request, which 1.0 methods are not.
    let (_, body) = post(&base, &[], request.clone()).await;
    assert_eq!(code(&body), -32009, "{body}");
    let (_, body) = post(&base, &[("a2a-version", "9.9")], request.clone()).await;
    assert_eq!(code(&body), -32009, "{body}");
    let (_, body) = post(&base, &[("a2a-version", "0.3")], request).await;
    assert_eq!(code(&body), -32009, "{body}");
    // A 0.3 method that says it is 1.0.
    let v03 = json!({"jsonrpc":"2.0","id":2,"method":"message/send","params":{"message":{
        "kind":"message","messageId":uuid(),"role":"user","parts":[{"kind":"text","text":"x"}],
        "metadata":{"_tool_call":{"name":"add","params":{"a":1,"b":2}}}}}});
    let (_, body) = post(&base, &[V1], v03.to_string()).await;
    assert_eq!(code(&body), -32009, "{body}");
    // The same 0.3 request without the header is served.
    let (_, body) = post(&base, &[], v03.to_string()).await;
    assert_eq!(body["result"]["status"]["state"], "completed", "{body}");
    assert_eq!(
        body["result"]["artifacts"][0]["parts"][0]["data"],
        json!({"result": 3})
    );
    still_serving(&base, &[]).await;
}

#[tokio::test]
async fn messages_without_parts_or_without_a_tool_call() {
    let kit = toolkit(&Probe::default());
    let base = tool_server(&kit, |s| s).await;
    let empty = json!({"messageId": uuid(), "role": "ROLE_USER", "parts": [],
                       "metadata": {"_tool_call": {"name": "add", "params": {}}}});
    let (status, body) = post(&base, &[V1], send(empty)).await;
    assert_eq!((status, code(&body)), (StatusCode::OK, -32602), "{body}");
    assert!(
        body["error"]["message"].as_str().unwrap().contains("parts"),
        "{body}"
    );

    let no_call =
        json!({"messageId": uuid(), "role": "ROLE_USER", "parts": [{"text": "add 2 and 3"}]});
    let (_, body) = post(&base, &[V1], send(no_call)).await;
    assert_eq!(code(&body), -32602, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("_tool_call"),
        "{body}"
    );

    let bad_name = json!({"messageId": uuid(), "role": "ROLE_USER", "parts": [{"text": "x"}],
                          "metadata": {"_tool_call": {"name": 7}}});
    let (_, body) = post(&base, &[V1], send(bad_name)).await;
    assert_eq!(code(&body), -32602, "{body}");

    // 0.3: no parts, no role, a part of an unknown kind.
    for message in [
        json!({"kind":"message","messageId":uuid(),"role":"user","parts":[]}),
        json!({"kind":"message","messageId":uuid(),"parts":[{"kind":"text","text":"x"}]}),
        json!({"kind":"message","messageId":uuid(),"role":"user","parts":[{"kind":"video"}]}),
    ] {
        let request =
            json!({"jsonrpc":"2.0","id":3,"method":"message/send","params":{"message": message}});
        let (_, body) = post(&base, &[], request.to_string()).await;
        assert_eq!(code(&body), -32602, "{body}");
    }
    still_serving(&base, &[]).await;
}

#[tokio::test]
async fn unknown_disabled_and_badly_called_tools_are_tool_errors() {
    let kit = toolkit(&Probe::default());
    let base = tool_server(&kit, |s| s).await;
    let cases = [
        (
            call_message("nope", json!({})),
            "unknown_tool",
            "no tool named `nope`",
        ),
        (
            call_message("reset_password", json!({"user": "bob"})),
            "unavailable",
            "not available",
        ),
        (
            call_message("add", json!({"a": "two", "b": 3})),
            "invalid_arguments",
            "`a`",
        ),
        (
            call_message("add", json!({"a": 1})),
            "invalid_arguments",
            "`b`",
        ),
        (
            call_message("add", json!([1, 2])),
            "invalid_arguments",
            "object",
        ),
    ];
    for (message, kind, text) in cases {
        let (status, body) = post(&base, &[V1], send(message)).await;
        assert_eq!(status, StatusCode::OK);
        let (is_error, error_kind, message) = tool_result(&body["result"]["task"]);
        assert!(is_error, "{body:#}");
        assert_eq!(error_kind.as_deref(), Some(kind), "{body:#}");
        assert!(message.as_str().unwrap().contains(text), "{text}: {body:#}");
    }
    still_serving(&base, &[]).await;
}

#[tokio::test]
async fn integral_floats_are_accepted_for_integers() {
    let kit = toolkit(&Probe::default());
    let base = tool_server(&kit, |s| s).await;
    let (_, body) = post(
        &base,
        &[V1],
        send(call_message("add", json!({"a": 3.0, "b": 4.0}))),
    )
    .await;
    let (is_error, _, result) = tool_result(&body["result"]["task"]);
    assert!(!is_error, "{body:#}");
    assert_eq!(result.as_f64(), Some(7.0));
    // A fractional value is still refused.
    let (_, body) = post(
        &base,
        &[V1],
        send(call_message("add", json!({"a": 3.5, "b": 4}))),
    )
    .await;
    let (is_error, kind, _) = tool_result(&body["result"]["task"]);
    assert!(is_error);
    assert_eq!(kind.as_deref(), Some("invalid_arguments"));
}

#[tokio::test]
async fn a_body_over_the_limit_gets_413() {
    let kit = toolkit(&Probe::default());
    let base = tool_server(&kit, |s| {
        s.options(ServerOptions::new().max_body_bytes(4096))
    })
    .await;
    let big = call_message("get_weather", json!({"city": "x".repeat(8192)}));
    let (status, body) = post(&base, &[V1], send(big)).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(code(&body), -32600, "{body}");
    assert!(
        body["error"]["message"].as_str().unwrap().contains("4096"),
        "{body}"
    );
    still_serving(&base, &[]).await;
}

#[tokio::test]
async fn missing_or_wrong_bearer_tokens_get_401() {
    let kit = toolkit(&Probe::default());
    let base = tool_server(&kit, |s| {
        s.options(ServerOptions::new().bearer_token("s3cret"))
    })
    .await;
    let request = send(call_message("add", json!({"a": 1, "b": 2})));
    for headers in [
        vec![V1],
        vec![V1, ("authorization", "Bearer wrong")],
        vec![V1, ("authorization", "Bearer s3cret-but-longer")],
        vec![V1, ("authorization", "Basic s3cret")],
    ] {
        let resp = {
            let mut req = crate::tls::http_client().post(format!("{base}/"));
            for (k, v) in &headers {
                req = req.header(*k, *v);
            }
            req.body(request.clone()).send().await.unwrap()
        };
        assert_eq!(resp.status(), StatusCode::UNAUTHORIZED, "{headers:?}");
        assert_eq!(resp.headers()["www-authenticate"], "Bearer");
        let body: serde_json::Value = resp.json().await.unwrap();
        assert_eq!(code(&body), -32600, "{body}");
    }
    // The card stays public and says how to authenticate.
    let card: serde_json::Value = reqwest::get(format!("{base}/.well-known/agent-card.json"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"],
        "Bearer"
    );
    assert_eq!(card["securitySchemes"]["bearer"]["type"], "http");
    assert_eq!(card["security"], json!([{"bearer": []}]));
    still_serving(&base, &[AUTH]).await;
}

#[tokio::test]
async fn invalid_tool_definitions_are_refused_with_every_problem() {
    let base = agent_server().await;
    let tools_part = json!({"data": {"tools": [
            {"type": "function", "function": {"name": "ok", "description": "fine", "parameters": {"type": "object"}}},
            {"type": "tool", "function": {"name": 7, "parameters": []}}]},
        "mediaType": "application/json", "metadata": {"type": "tool-definitions", "format": "langchain"}});
    let message =
        json!({"messageId": uuid(), "role": "ROLE_USER", "parts": [{"text": "hi"}, tools_part]});
    let (status, body) = post(&base, &[V1], send(message)).await;
    assert_eq!((status, code(&body)), (StatusCode::OK, -32602), "{body}");
    let text = body["error"]["message"].as_str().unwrap();
    for problem in [
        "tools[1].type: must be \"function\", found \"tool\"",
        "tools[1].function.name: must be a string, found a number",
        "tools[1].function.description: missing",
        "tools[1].function.parameters: must be an object, found an array",
    ] {
        assert!(text.contains(problem), "{problem} not in {text}");
    }
    // The same over 0.3.
    let v03 = json!({"jsonrpc": "2.0", "id": 9, "method": "message/send", "params": {"message": {
        "kind": "message", "messageId": uuid(), "role": "user", "parts": [
            {"kind": "text", "text": "hi"},
            {"kind": "data", "data": {"tools": "none"}, "metadata": {"type": "tool-definitions"}}]}}});
    let (_, body) = post(&base, &[], v03.to_string()).await;
    assert_eq!(code(&body), -32602, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`tools` must be an array"),
        "{body}"
    );
    assert!(
        body["error"].get("data").is_none(),
        "0.3 errors carry no ErrorInfo array: {body}"
    );

    // Still serving: a good question gets the tool call back.
    let good = json!({"messageId": uuid(), "role": "ROLE_USER", "parts": [{"text": "weather?"},
        {"data": {"tools": [{"type": "function", "function": {"name": "get_weather", "description": "w",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]},
         "metadata": {"type": "tool-definitions"}}]});
    let (_, body) = post(&base, &[V1], send(good)).await;
    assert_eq!(
        body["result"]["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{body:#}"
    );
}
