//! `ClientToolsSession` against design document 000's server, written with the official JS SDK
//! (`tests/peers/js/doc_server.cjs`: `@a2a-js/sdk` 1.x on A2A 1.0, 0.3.14 on A2A 0.3). Its
//! replies are Messages with LangChain-shaped calls beside text: the calls run here, the results
//! go back the document's way, and the answer is the final text, never the tool-call JSON.
//! Replies that are neither calls nor an answer are typed errors.

use agent_toolkit::ToolError;
use agent_toolkit::a2a::client::{
    A2aClientError, ClientToolsSession, RemoteAgent, TranscriptEntry, WireVersion,
};
use agent_toolkit::prelude::*;

use crate::peers::{Peer, free_port, spawn_node_ready};

/// Current weather (runs on this client).
#[tool]
fn get_weather(location: String) -> String {
    format!("18 degrees in {location}")
}

/// The contents of a file (runs on this client).
#[tool]
fn read_file(file_path: String) -> Result<String, ToolError> {
    std::fs::read_to_string(&file_path)
        .map_err(|e| ToolError::execution(format!("{file_path}: {e}")))
}

fn toolkit() -> Toolkit {
    Toolkit::builder()
        .register(GetWeather)
        .register(ReadFile)
        .build()
        .unwrap()
}

/// The document's server on a free port, speaking the SDK generation `sdk`.
async fn doc_server(sdk: &str) -> (Peer, String) {
    let port = free_port().to_string();
    let peer = spawn_node_ready("doc_server.cjs", &[&port, sdk]).await;
    (peer, format!("http://127.0.0.1:{port}"))
}

async fn session(sdk: &str, version: WireVersion) -> (Peer, ClientToolsSession) {
    let (peer, url) = doc_server(sdk).await;
    let agent = RemoteAgent::connect(&url).await.unwrap();
    assert_eq!(agent.version(), version);
    (peer, ClientToolsSession::new(agent, toolkit()))
}

async fn flow(sdk: &str, version: WireVersion) {
    let path = std::env::temp_dir().join(format!("doc000-client-{sdk}.txt"));
    std::fs::write(&path, "hello config").unwrap();
    let (_peer, mut session) = session(sdk, version).await;
    let question = format!(
        r#"call get_weather with {{"location": "Paris"}} ; call read_file with {{"file_path": "{}"}}"#,
        path.display()
    );
    let reply = session.send(question).await.unwrap();
    // The server's LLM quotes every result it was sent.
    assert_eq!(
        reply.answer,
        r#"Final answer: get_weather -> "18 degrees in Paris" | read_file -> "hello config""#
    );
    assert_eq!(reply.rounds, 1);
    assert!(reply.task_id.is_empty(), "the answer came in a message");
    match &reply.transcript[1] {
        TranscriptEntry::ToolCalls(calls) => {
            assert_eq!(calls.len(), 2);
            assert_eq!(calls[0].name, "get_weather");
            assert_eq!(calls[0].arguments, r#"{"location":"Paris"}"#);
        }
        other => panic!("{other:?}"),
    }

    // A failing tool: its error goes back as the document's `error` entry.
    let reply = session
        .send(r#"call read_file with {"file_path": "/no/such/doc000/file"}"#)
        .await
        .unwrap();
    assert!(
        reply
            .answer
            .starts_with("Final answer: read_file failed: Error: /no/such/doc000/file:"),
        "{}",
        reply.answer
    );

    // A turn with no calls: the text is the answer, in the same conversation.
    let context = session.context_id().unwrap().to_string();
    let reply = session.send("Thanks!").await.unwrap();
    assert_eq!(reply.answer, "You said: Thanks!");
    assert_eq!(reply.context_id, context);
}

#[tokio::test]
async fn the_documents_js_server_over_a2a_1_0() {
    flow("v1", WireVersion::V1).await;
}

#[tokio::test]
async fn the_documents_js_server_over_a2a_0_3() {
    flow("v03", WireVersion::V03).await;
}

/// Calls in a shape neither dialect has: an error listing what was found, not an answer.
#[tokio::test]
async fn tool_calls_in_an_unknown_shape_are_a_typed_error() {
    let (_peer, mut session) = session("v1", WireVersion::V1).await;
    let err = session.send("reply in an unknown shape").await.unwrap_err();
    match &err {
        A2aClientError::InvalidParts(invalid) => {
            let [problem] = invalid.problems.as_slice() else {
                panic!("{invalid}")
            };
            assert!(
                problem.starts_with("tool_calls[0]: neither an OpenAI tool call"),
                "{problem}"
            );
            // Key order is the wire's (protobuf sorts them).
            assert!(
                problem.ends_with("found the keys [tool, input]")
                    || problem.ends_with("found the keys [input, tool]"),
                "{problem}"
            );
        }
        other => panic!("{other}"),
    }
    assert!(!err.is_retryable());
}

/// A message with an empty list of calls and no text is neither calls nor an answer.
#[tokio::test]
async fn a_reply_with_neither_calls_nor_an_answer_is_a_typed_error() {
    let (_peer, mut session) = session("v03", WireVersion::V03).await;
    let err = session.send("say nothing").await.unwrap_err();
    match &err {
        A2aClientError::UnexpectedReply { what, .. } => {
            assert!(what.contains("tool calls (empty)"), "{what}")
        }
        other => panic!("{other}"),
    }
    assert!(!err.is_retryable());
}
