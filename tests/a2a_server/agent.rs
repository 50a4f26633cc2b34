//! The agent server (client-side tools) over raw HTTP: the INPUT_REQUIRED round trip, bad
//! results, and the conversation kept per context.

use agent_toolkit::a2a::server::A2aAgentServer;
use agent_toolkit::prelude::*;
use agent_toolkit::{
    ReActAgent,
    testing::{ScriptedModel, ScriptedTurn},
};
use serde_json::{Value, json};

use crate::fixtures::{V1, agent_server, post, send, serve, uuid, weather_agent};

fn question(context: &str) -> Value {
    json!({"messageId": uuid(), "role": "ROLE_USER", "contextId": context, "parts": [
        {"text": "What's the weather in Paris?"},
        {"data": {"tools": [{"type": "function", "function": {"name": "get_weather",
            "description": "Current weather", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]},
         "mediaType": "application/json", "metadata": {"type": "tool-definitions", "format": "openai"}}]})
}

fn results(task: &Value, entries: Value) -> Value {
    json!({"messageId": uuid(), "role": "ROLE_USER", "taskId": task["id"], "contextId": task["contextId"],
           "parts": [{"data": {"tool_results": entries}, "mediaType": "application/json",
                      "metadata": {"type": "tool-results"}}]})
}

#[tokio::test]
async fn tool_calls_come_back_input_required_and_results_finish_the_task() {
    let base = agent_server().await;
    let (_, body) = post(&base, &[V1], send(question(&uuid()))).await;
    let task = &body["result"]["task"];
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{body:#}"
    );
    let part = &task["status"]["message"]["parts"][0];
    assert_eq!(
        part["metadata"],
        json!({"type": "tool-calls", "format": "openai"})
    );
    let call = &part["data"]["tool_calls"][0];
    assert_eq!(
        call["function"],
        json!({"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"})
    );

    // Results for a call that was never made: refused, the task keeps waiting.
    let wrong = results(
        task,
        json!([{"tool_call_id": "nope", "name": "get_weather", "content": "18"}]),
    );
    let (_, body) = post(&base, &[V1], send(wrong)).await;
    let waiting = &body["result"]["task"];
    assert_eq!(
        waiting["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{body:#}"
    );
    let parts = &waiting["status"]["message"]["parts"];
    assert!(
        parts[0]["text"]
            .as_str()
            .unwrap()
            .contains("answers no pending call"),
        "{body:#}"
    );
    assert_eq!(parts[1]["data"]["tool_calls"][0]["id"], call["id"]);

    // Malformed results: -32602, nothing changes.
    let malformed = results(task, json!([{"content": "18"}]));
    let (_, body) = post(&base, &[V1], send(malformed)).await;
    assert_eq!(body["error"]["code"], -32602, "{body:#}");

    let good = results(
        task,
        json!([{"tool_call_id": call["id"], "name": "get_weather",
                                     "content": "{\"temp_c\": 18}", "is_error": false}]),
    );
    let (_, body) = post(&base, &[V1], send(good)).await;
    let done = &body["result"]["task"];
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED", "{body:#}");
    assert_eq!(done["artifacts"][0]["name"], "answer");
    assert_eq!(
        done["artifacts"][0]["parts"][0]["text"],
        "It is 18°C in Paris."
    );
    assert_eq!(done["id"], task["id"]);
}

#[tokio::test]
async fn results_need_a_task_and_a_message_needs_text() {
    let base = agent_server().await;
    let orphan = json!({"messageId": uuid(), "role": "ROLE_USER", "parts": [{"data": {"tool_results": []},
        "metadata": {"type": "tool-results"}}]});
    let (_, body) = post(&base, &[V1], send(orphan)).await;
    assert_eq!(body["error"]["code"], -32602, "{body:#}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("empty list of tool results and no text")
    );
    let silent = json!({"messageId": uuid(), "role": "ROLE_USER", "parts": [{"data": {"x": 1}}]});
    let (_, body) = post(&base, &[V1], send(silent)).await;
    assert_eq!(body["error"]["code"], -32602, "{body:#}");
    let unknown_task = json!({"messageId": uuid(), "role": "ROLE_USER", "taskId": "no-such-task",
        "parts": [{"data": {"tool_results": []}, "metadata": {"type": "tool-results"}}]});
    let (_, body) = post(&base, &[V1], send(unknown_task)).await;
    assert_eq!(body["error"]["code"], -32001, "{body:#}");
}

/// Each context has its own agent and conversation; a second message in a context sees the
/// first one's exchange.
#[tokio::test]
async fn conversations_are_kept_per_context() {
    let server = A2aAgentServer::new(|_context: &str| {
        let model = ScriptedModel::new([ScriptedTurn::text("Noted: your name is Ada.")])
            .then_expect(
                |req| {
                    let texts: Vec<&str> = req.messages.iter().map(|m| m.content()).collect();
                    (texts
                        == [
                            "My name is Ada.",
                            "Noted: your name is Ada.",
                            "What is my name?",
                        ])
                    .then_some(())
                    .ok_or(format!("conversation not kept: {texts:?}"))
                },
                ScriptedTurn::text("Ada."),
            );
        ReActAgent::builder(model).build()
    });
    let base = serve(server.router()).await;
    let say = |context: &str, text: &str| json!({"messageId": uuid(), "role": "ROLE_USER", "contextId": context, "parts": [{"text": text}]});
    let (a, b) = (uuid(), uuid());
    for context in [&a, &b] {
        let (_, body) = post(&base, &[V1], send(say(context, "My name is Ada."))).await;
        assert_eq!(
            body["result"]["task"]["artifacts"][0]["parts"][0]["text"],
            "Noted: your name is Ada."
        );
    }
    let (_, body) = post(&base, &[V1], send(say(&a, "What is my name?"))).await;
    let task = &body["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{body:#}");
    assert_eq!(task["artifacts"][0]["parts"][0]["text"], "Ada.");
    assert_eq!(task["contextId"], a.as_str());
}

/// The `result` of every event of an SSE response (the stream must end).
async fn sse(base: &str, body: Value) -> Vec<Value> {
    let text = crate::tls::http_client()
        .post(format!("{base}/"))
        .header("a2a-version", "1.0")
        .body(body.to_string())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| {
            let v: Value = serde_json::from_str(d.trim()).unwrap();
            v["result"].clone()
        })
        .collect()
}

fn kind(event: &Value) -> &str {
    event.as_object().unwrap().keys().next().unwrap()
}

/// Streaming, then `CancelTask` on a task waiting for tool results: the calls it asked for
/// are closed, and the conversation goes on validly.
#[tokio::test]
async fn a_waiting_task_streams_and_cancels_cleanly() {
    let server = A2aAgentServer::new(|_context: &str| {
        let model =
            ScriptedModel::new([ScriptedTurn::call("get_weather", json!({"city": "Paris"}))])
                .then_expect(
                    |req| {
                        let abandoned = req.messages.iter().any(|m| {
                            m.as_tool()
                                .is_some_and(|m| m.is_error && m.content.contains("no result"))
                        });
                        abandoned.then_some(()).ok_or(format!("{:?}", req.messages))
                    },
                    ScriptedTurn::text("Never mind the weather."),
                );
        ReActAgent::builder(model).build()
    });
    let base = serve(server.router()).await;
    let context = uuid();
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
                         "params": {"message": question(&context)}});
    let events = sse(&base, request).await;
    let kinds: Vec<&str> = events.iter().map(kind).collect();
    assert_eq!(
        kinds,
        ["task", "statusUpdate", "statusUpdate"],
        "{events:#?}"
    );
    assert_eq!(
        events[1]["statusUpdate"]["status"]["state"],
        "TASK_STATE_WORKING"
    );
    let last = &events[2]["statusUpdate"]["status"];
    assert_eq!(last["state"], "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(
        last["message"]["parts"][0]["metadata"]["type"],
        "tool-calls"
    );

    let task_id = events[0]["task"]["id"].clone();
    let cancel =
        json!({"jsonrpc": "2.0", "id": 2, "method": "CancelTask", "params": {"id": task_id}});
    let (_, body) = post(&base, &[V1], cancel.to_string()).await;
    assert_eq!(
        body["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{body:#}"
    );

    let next = json!({"messageId": uuid(), "role": "ROLE_USER", "contextId": context,
                      "parts": [{"text": "Forget it."}]});
    let (_, body) = post(&base, &[V1], send(next)).await;
    let task = &body["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{body:#}");
    assert_eq!(
        task["artifacts"][0]["parts"][0]["text"],
        "Never mind the weather."
    );
}

#[derive(Clone, Default)]
struct Started(std::sync::Arc<std::sync::atomic::AtomicBool>);

/// Wait a long time.
#[tool]
async fn wait(#[ctx] started: Ctx<Started>) -> String {
    started.0.0.store(true, std::sync::atomic::Ordering::SeqCst);
    tokio::time::sleep(std::time::Duration::from_secs(30)).await;
    "waited".into()
}

/// `CancelTask` during a turn (a local tool is running) stops it and rolls the conversation
/// back to before that message.
#[tokio::test]
async fn cancelling_a_running_turn_rolls_it_back() {
    use std::sync::atomic::Ordering;

    let started = Started::default();
    let probe = started.clone();
    let server = A2aAgentServer::new(move |_context: &str| {
        let toolkit = Toolkit::builder()
            .register(Wait)
            .context(probe.clone())
            .build()
            .expect("valid toolkit");
        let model = ScriptedModel::new([ScriptedTurn::call("wait", json!({}))]).then_expect(
            |req| {
                let texts: Vec<&str> = req.messages.iter().map(|m| m.content()).collect();
                (texts == ["And now?"])
                    .then_some(())
                    .ok_or(format!("not rolled back: {texts:?}"))
            },
            ScriptedTurn::text("Fresh start."),
        );
        ReActAgent::builder(model).toolkit(&toolkit).build()
    });
    let base = serve(server.router()).await;
    let context = uuid();
    let first = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": uuid(), "role": "ROLE_USER", "contextId": context, "parts": [{"text": "Wait."}]},
        "configuration": {"returnImmediately": true}}});
    let (_, body) = post(&base, &[V1], first.to_string()).await;
    let task_id = body["result"]["task"]["id"].clone();
    assert!(task_id.is_string(), "{body:#}");
    for _ in 0..500 {
        if started.0.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(
        started.0.load(Ordering::SeqCst),
        "the local tool never started"
    );
    let cancel =
        json!({"jsonrpc": "2.0", "id": 2, "method": "CancelTask", "params": {"id": task_id}});
    let (_, body) = post(&base, &[V1], cancel.to_string()).await;
    assert_eq!(
        body["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{body:#}"
    );

    let next = json!({"messageId": uuid(), "role": "ROLE_USER", "contextId": context,
                      "parts": [{"text": "And now?"}]});
    let (_, body) = post(&base, &[V1], send(next)).await;
    assert_eq!(
        body["result"]["task"]["artifacts"][0]["parts"][0]["text"], "Fresh start.",
        "{body:#}"
    );
}

/// A newer message in the conversation supersedes a task waiting for results: that task is
/// closed (CANCELED, saying which task took over), its late results are refused, the newer
/// task's are used.
#[tokio::test]
async fn a_superseded_task_is_closed_and_its_late_results_refused() {
    let server = A2aAgentServer::new(|_context: &str| {
        let model = ScriptedModel::new([
            ScriptedTurn::call("get_weather", json!({"city": "Paris"})),
            ScriptedTurn::call("get_weather", json!({"city": "Rome"})),
            ScriptedTurn::text("Rome: 25°C."),
        ]);
        ReActAgent::builder(model).build()
    });
    let base = serve(server.router()).await;
    let context = uuid();
    let (_, first) = post(&base, &[V1], send(question(&context))).await;
    let first = &first["result"]["task"];
    let (_, second) = post(&base, &[V1], send(question(&context))).await;
    let second = &second["result"]["task"];
    assert_eq!(second["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    let call_id =
        |task: &Value| task["status"]["message"]["parts"][0]["data"]["tool_calls"][0]["id"].clone();

    let get =
        json!({"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": first["id"]}});
    let (_, body) = post(&base, &[V1], get.to_string()).await;
    let closed = &body["result"]["status"];
    assert_eq!(closed["state"], "TASK_STATE_CANCELED", "{body:#}");
    let why = closed["message"]["parts"][0]["text"].as_str().unwrap();
    assert!(why.contains("moved on"), "{why}");
    assert!(why.contains(second["id"].as_str().unwrap()), "{why}");

    let late = results(
        first,
        json!([{"tool_call_id": call_id(first), "name": "get_weather", "content": "18"}]),
    );
    let (_, body) = post(&base, &[V1], send(late)).await;
    assert_eq!(body["error"]["code"], -32004, "{body:#}");

    let current = results(
        second,
        json!([{"tool_call_id": call_id(second), "name": "get_weather", "content": "25"}]),
    );
    let (_, body) = post(&base, &[V1], send(current)).await;
    assert_eq!(
        body["result"]["task"]["artifacts"][0]["parts"][0]["text"], "Rome: 25°C.",
        "{body:#}"
    );
}

/// A factory that fails (or panics) fails that task; other conversations are served.
#[tokio::test]
async fn a_failing_agent_factory_fails_the_task_only() {
    let server = A2aAgentServer::new(|context: &str| match context {
        "broken" => Err(agent_toolkit::error::ConfigError::NothingRegistered(
            "toolkit",
        )),
        "panics" => panic!("factory bug"),
        _ => ReActAgent::builder(ScriptedModel::new([ScriptedTurn::text("fine")])).build(),
    });
    let base = serve(server.router()).await;
    for context in ["broken", "panics"] {
        let message = json!({"messageId": uuid(), "role": "ROLE_USER", "contextId": context,
                             "parts": [{"text": "hi"}]});
        let (_, body) = post(&base, &[V1], send(message)).await;
        let task = &body["result"]["task"];
        assert_eq!(task["status"]["state"], "TASK_STATE_FAILED", "{body:#}");
        let text = task["status"]["message"]["parts"][0]["text"]
            .as_str()
            .unwrap();
        assert!(text.contains("could not be created"), "{text}");
    }
    let message = json!({"messageId": uuid(), "role": "ROLE_USER", "contextId": uuid(),
                         "parts": [{"text": "hi"}]});
    let (_, body) = post(&base, &[V1], send(message)).await;
    assert_eq!(
        body["result"]["task"]["artifacts"][0]["parts"][0]["text"], "fine",
        "{body:#}"
    );
}

/// A new message in the conversation (no `taskId`) carrying the results: the text of design
/// document 000, optionally with other parts.
fn results_message(context: &Value, text: &str) -> Value {
    json!({"messageId": uuid(), "role": "ROLE_USER", "contextId": context, "parts": [{"text": text}]})
}

fn get_task(id: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": id}}).to_string()
}

/// A client of the project's convention that sends its results the document's way (a new
/// message with `Tool results: [...]`): they answer the waiting call, the model gets them as a
/// tool result, and the task that asked is closed, naming the task that took over.
#[tokio::test]
async fn results_as_a_new_message_answer_the_waiting_task_and_close_it() {
    let base = agent_server().await;
    let context = uuid();
    let (_, body) = post(&base, &[V1], send(question(&context))).await;
    let asked = &body["result"]["task"];
    assert_eq!(
        asked["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{body:#}"
    );

    let text = r#"Tool results: [{"name":"get_weather","result":{"temp_c":18}}]"#;
    let (_, body) = post(
        &base,
        &[V1],
        send(results_message(&asked["contextId"], text)),
    )
    .await;
    let done = &body["result"]["task"];
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED", "{body:#}");
    assert_eq!(
        done["artifacts"][0]["parts"][0]["text"],
        "It is 18°C in Paris."
    );
    assert_ne!(done["id"], asked["id"]);

    let (_, body) = post(&base, &[V1], get_task(&asked["id"])).await;
    let status = &body["result"]["status"];
    assert_eq!(status["state"], "TASK_STATE_CANCELED", "{body:#}");
    let why = status["message"]["parts"][0]["text"].as_str().unwrap();
    assert!(why.contains("answered in task"), "{why}");
    assert!(why.contains(done["id"].as_str().unwrap()), "{why}");
}

/// Results that answer no open call are refused whole (-32602, the open calls listed) and the
/// conversation keeps waiting; results where nothing waits, or a results text that cannot be
/// read, are refused too.
#[tokio::test]
async fn unusable_results_are_refused_and_say_why() {
    let base = agent_server().await;
    let context = json!(uuid());
    let (_, body) = post(
        &base,
        &[V1],
        send(results_message(
            &context,
            r#"Tool results: [{"name":"get_weather","result":1}]"#,
        )),
    )
    .await;
    assert_eq!(body["error"]["code"], -32602, "{body:#}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("waits for none"), "{message}");

    let (_, body) = post(&base, &[V1], send(question(context.as_str().unwrap()))).await;
    let call_id = body["result"]["task"]["status"]["message"]["parts"][0]["data"]["tool_calls"][0]
        ["id"]
        .clone();
    let wrong =
        r#"Tool results: [{"name":"get_weather","result":1},{"name":"read_file","result":2}]"#;
    let (_, body) = post(&base, &[V1], send(results_message(&context, wrong))).await;
    assert_eq!(body["error"]["code"], -32602, "{body:#}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("the result for `read_file` answers no open call of that name"),
        "{message}"
    );
    assert!(
        message.contains(&format!(
            "open calls: get_weather ({})",
            call_id.as_str().unwrap()
        )),
        "{message}"
    );

    let (_, body) = post(
        &base,
        &[V1],
        send(results_message(&context, "Tool results: not json")),
    )
    .await;
    assert_eq!(body["error"]["code"], -32602, "{body:#}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("must be followed by a JSON array")
    );

    // Nothing was applied: the right result still finishes the run.
    let right = r#"Tool "get_weather" returned: {"temp_c": 18}"#;
    let (_, body) = post(&base, &[V1], send(results_message(&context, right))).await;
    assert_eq!(
        body["result"]["task"]["artifacts"][0]["parts"][0]["text"], "It is 18°C in Paris.",
        "{body:#}"
    );
}

/// `Replies` overrides what the client would get: Messages for a client of the project's
/// convention (calls still in the OpenAI shape it asked for), Tasks for a document client
/// (calls still LangChain-shaped).
#[tokio::test]
async fn the_reply_kind_can_be_chosen_and_the_call_shape_follows_the_client() {
    use agent_toolkit::a2a::server::Replies;

    let messages = serve(
        A2aAgentServer::new(weather_agent)
            .replies(Replies::Message)
            .router(),
    )
    .await;
    let (_, body) = post(&messages, &[V1], send(question(&uuid()))).await;
    let reply = &body["result"]["message"];
    assert_eq!(
        reply["parts"][0]["metadata"]["format"], "openai",
        "{body:#}"
    );
    assert_eq!(
        reply["parts"][0]["data"]["tool_calls"][0]["function"]["name"],
        "get_weather"
    );
    assert!(reply.get("taskId").is_none(), "{body:#}");

    let tasks = serve(
        A2aAgentServer::new(weather_agent)
            .replies(Replies::Task)
            .router(),
    )
    .await;
    let mut langchain = question(&uuid());
    langchain["parts"][1]["metadata"]["format"] = json!("langchain");
    let (_, body) = post(&tasks, &[V1], send(langchain)).await;
    let task = &body["result"]["task"];
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{body:#}"
    );
    let call = &task["status"]["message"]["parts"][0]["data"]["tool_calls"][0];
    assert_eq!(call["args"], json!({"city": "Paris"}), "{body:#}");
    assert_eq!(call["type"], "tool_call");

    // The document's results text on that task finishes it.
    let text = r#"Tool results: [{"name":"get_weather","result":"18"}]"#;
    let mut on_task = results_message(&task["contextId"], text);
    on_task["taskId"] = task["id"].clone();
    let (_, body) = post(&tasks, &[V1], send(on_task)).await;
    let done = &body["result"]["task"];
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED", "{body:#}");
    assert_eq!(done["id"], task["id"]);
}

/// Streaming to a client of design document 000: the stream is exactly one Message (the calls)
/// and then ends, as A2A requires of a message reply; over 0.3 it is a `kind: "message"` event.
#[tokio::test]
async fn a_message_reply_streams_as_one_message() {
    let base = agent_server().await;
    let mut langchain = question(&uuid());
    langchain["parts"][1]["metadata"]["format"] = json!("langchain");
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
                         "params": {"message": langchain}});
    let events = sse(&base, request).await;
    assert_eq!(events.len(), 1, "{events:#?}");
    let calls = &events[0]["message"]["parts"][0];
    assert_eq!(calls["metadata"]["format"], "langchain", "{events:#?}");
    assert_eq!(
        calls["data"]["tool_calls"][0]["args"],
        json!({"city": "Paris"})
    );

    let v03 = json!({"jsonrpc": "2.0", "id": 2, "method": "message/stream", "params": {"message": {
        "kind": "message", "messageId": uuid(), "role": "user", "contextId": uuid(),
        "parts": [{"kind": "text", "text": "What's the weather in Paris?"},
                  {"kind": "data", "data": langchain["parts"][1]["data"].clone(),
                   "metadata": {"type": "tool-definitions", "format": "langchain"}}]}}});
    let text = crate::tls::http_client()
        .post(format!("{base}/"))
        .body(v03.to_string())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let events: Vec<Value> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| serde_json::from_str::<Value>(d.trim()).unwrap()["result"].clone())
        .collect();
    assert_eq!(events.len(), 1, "{text}");
    assert_eq!(events[0]["kind"], "message", "{text}");
    assert_eq!(
        events[0]["parts"][0]["data"]["tool_calls"][0]["type"],
        "tool_call"
    );
}
