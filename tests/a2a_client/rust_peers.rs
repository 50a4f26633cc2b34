//! Rust ↔ Rust end to end: this crate's `A2aToolServer` discovered and called through
//! `RemoteToolRegistry` (1.0 and 0.3), and this crate's `A2aAgentServer` (a `ReActAgent` on a
//! `ScriptedModel`) driven by `ClientToolsSession`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_toolkit::a2a::client::{
    A2aClientError, AgentConfig, ClientToolsSession, RemoteAgent, RemoteToolRegistry, WireVersion,
};
use agent_toolkit::a2a::server::{A2aAgentServer, A2aToolServer, ServerOptions};
use agent_toolkit::prelude::*;
use agent_toolkit::tool::Attachment;
use agent_toolkit::{
    ReActAgent,
    testing::{ScriptedModel, ScriptedTurn},
};
use agent_toolkit::{
    context::{LogLevel, ProgressEvent},
    error::ToolErrorKind,
};
use serde_json::json;

use crate::support::json_of;

/// How many `slow` calls were dropped before they finished (cancelled by the server).
#[derive(Default)]
struct Drops(AtomicUsize);

struct CountDrop(Arc<Drops>, bool);

impl Drop for CountDrop {
    fn drop(&mut self) {
        if !self.1 {
            self.0.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// Add two integers.
#[tool(group = "math", read_only)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Only for administrators.
#[tool(group = "admin")]
fn secret() -> &'static str {
    "42"
}

/// Count to `steps`, reporting progress.
#[tool(read_only)]
async fn slow(
    steps: u32,
    delay_ms: u64,
    #[ctx] progress: ToolEmitter,
    #[ctx] drops: Ctx<Drops>,
) -> String {
    let mut guard = CountDrop(drops.0.clone(), false);
    for i in 1..=steps {
        tokio::time::sleep(Duration::from_millis(delay_ms)).await;
        progress.progress(i, Some(f64::from(steps)), format!("{i}/{steps}"));
    }
    guard.1 = true;
    progress.log(LogLevel::Notice, format!("counted to {steps}"));
    format!("counted to {steps}")
}

/// A picture of the screen, with its caption as a document.
#[tool(read_only)]
fn snapshot() -> ToolOutput {
    ToolOutput::text("a snapshot")
        .with_attachment(Attachment::image([137u8, 80, 78, 71], "image/png"))
        .with_attachment(Attachment::text(
            "mem://caption",
            "text/markdown",
            "# Screen",
        ))
        .with_attachment(Attachment::blob("mem://raw", "application/pdf", [1u8, 2]))
}

/// Always fails.
#[tool]
fn fail() -> Result<String, ToolError> {
    Err(ToolError::execution("nope"))
}

struct ToolServer {
    url: String,
    toolkit: Toolkit,
    drops: Arc<Drops>,
}

async fn tool_server(token: Option<&str>) -> ToolServer {
    let drops = Arc::new(Drops::default());
    let toolkit = Toolkit::builder()
        .group("math", "Arithmetic")
        .inactive_group("admin", "Administration")
        .register(Add)
        .register(Secret)
        .register(Slow)
        .register(Fail)
        .register(Snapshot)
        .context_shared(drops.clone())
        .build()
        .unwrap();
    let mut options = ServerOptions::new().name("rust tools");
    if let Some(token) = token {
        options = options.bearer_token(token);
    }
    let server = A2aToolServer::new(&toolkit).options(options);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server.serve(listener));
    ToolServer {
        url,
        toolkit,
        drops,
    }
}

async fn remote_tools(version: WireVersion) {
    let server = tool_server(None).await;
    let registry = RemoteToolRegistry::new();
    let names = registry
        .add_agent("rs", AgentConfig::new(&server.url).prefer_version(version))
        .await
        .unwrap();
    assert_eq!(names, ["rs_add", "rs_slow", "rs_fail", "rs_snapshot"]);
    assert_eq!(registry.agent("rs").unwrap().version(), version);
    let local = Toolkit::builder()
        .register(registry.tools())
        .timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    // The schema and hints the server's toolkit generated, unchanged.
    assert_eq!(
        local.definition("rs_add").unwrap().parameters(),
        server.toolkit.definition("add").unwrap().parameters()
    );
    assert!(local.options("rs_add").unwrap().annotations.read_only);

    let ctx = ToolContext::new();
    let ok = local
        .call(
            ToolCall::json("c1", "rs_add", json!({"a": 2, "b": 3})),
            &ctx,
        )
        .await;
    // A scalar travels as `{"result": 5}` (0.3 data parts must hold an object), flagged
    // `wrapped` on the artifact, so it arrives as the 5 it was on both wires.
    let output = ok.output().unwrap();
    assert_eq!(json_of(output), json!(5));
    // What the result artifact said, for the application: the remote tool's name and time.
    let meta = &output.metadata["a2a_artifact_metadata"];
    assert_eq!(meta["tool_name"], "add", "{meta}");
    assert_eq!(meta["_tool_result"], true, "{meta}");
    assert!(
        output.metadata["execution_time_ms"].is_u64(),
        "{:?}",
        output.metadata
    );
    assert_eq!(
        output.metadata["execution_time_ms"],
        meta["execution_time_ms"]
    );
    let failed = local
        .call(ToolCall::json("c2", "rs_fail", json!({})), &ctx)
        .await;
    let error = failed.error().unwrap();
    assert_eq!(
        (error.kind(), error.message()),
        (ToolErrorKind::Execution, "nope")
    );
    // The server's argument error stays an argument error for the model.
    let bad = local
        .call(
            ToolCall::json("c3", "rs_add", json!({"a": "two", "b": 3})),
            &ctx,
        )
        .await;
    assert_eq!(bad.error().unwrap().kind(), ToolErrorKind::InvalidArguments);

    // Attachments come after the result's parts and arrive whole, in order; the text stays
    // the text.
    let snapshot = local
        .call(ToolCall::json("c6", "rs_snapshot", json!({})), &ctx)
        .await;
    let snapshot = snapshot.output().unwrap();
    assert_eq!(snapshot.as_text(), "a snapshot");
    assert_eq!(
        snapshot.attachments(),
        server
            .toolkit
            .call(ToolCall::json("c7", "snapshot", json!({})), &ctx)
            .await
            .output()
            .unwrap()
            .attachments()
    );
    assert_eq!(snapshot.attachments().len(), 3);

    // Progress crosses both toolkits.
    let (ctx, mut progress) = ToolContext::new().progress_channel(8);
    let counted = local
        .call(
            ToolCall::json("c4", "rs_slow", json!({"steps": 2, "delay_ms": 10})),
            &ctx,
        )
        .await;
    // A text result stays text (the data part `{"result": …}` beside it is not shown).
    let counted_output = counted.output().unwrap();
    assert_eq!(counted_output.as_text(), "counted to 2");
    assert!(counted_output.structured().is_none());
    let first = progress.try_recv().unwrap();
    assert_eq!(
        first.event,
        ProgressEvent::Progress {
            done: 1.0,
            total: Some(2.0),
            message: "1/2".into()
        }
    );
    // The tool's log message too, after its progress.
    let rest: Vec<_> = std::iter::from_fn(|| progress.try_recv().ok()).collect();
    assert_eq!(
        rest.last().map(|p| &p.event),
        Some(&ProgressEvent::Log {
            level: LogLevel::Notice,
            message: "counted to 2".into()
        }),
        "{rest:?}"
    );

    // `invoke`, outside any toolkit, forwards progress to the context's channel too.
    let (ctx, mut progress) = ToolContext::new().progress_channel(8);
    let direct = registry
        .tool("rs_slow")
        .unwrap()
        .invoke(json!({"steps": 2, "delay_ms": 10}), &ctx)
        .await
        .unwrap();
    assert_eq!(direct.as_text(), "counted to 2");
    let first = progress.try_recv().expect("progress from invoke");
    assert_eq!(&*first.tool_name, "rs_slow");

    // A local timeout cancels the remote task, which drops the server's tool future.
    let timed_out = local
        .call(
            ToolCall::json("c5", "rs_slow", json!({"steps": 100, "delay_ms": 50})),
            &ToolContext::new(),
        )
        .await;
    assert_eq!(timed_out.error().unwrap().kind(), ToolErrorKind::Timeout);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while server.drops.0.load(Ordering::SeqCst) == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the server tool was never cancelled"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // A group switched on at the server shows on its card; a refresh brings the tool here.
    server.toolkit.set_group_active("admin", true).unwrap();
    let report = registry.refresh().await;
    assert_eq!(report.changes[0].1.added, ["rs_secret"]);
}

#[tokio::test]
async fn remote_tools_from_our_tool_server() {
    remote_tools(WireVersion::V1).await;
}

#[tokio::test]
async fn remote_tools_from_our_tool_server_over_03() {
    remote_tools(WireVersion::V03).await;
}

#[tokio::test]
async fn bearer_token_to_our_tool_server() {
    let server = tool_server(Some("tok")).await;
    let registry = RemoteToolRegistry::new();
    registry
        .add_agent("anon", AgentConfig::new(&server.url))
        .await
        .unwrap();
    registry
        .add_agent("auth", AgentConfig::new(&server.url).bearer_token("tok"))
        .await
        .unwrap();
    let local = Toolkit::builder()
        .register(registry.tools())
        .build()
        .unwrap();
    let ctx = ToolContext::new();
    let denied = local
        .call(
            ToolCall::json("c1", "anon_add", json!({"a": 1, "b": 1})),
            &ctx,
        )
        .await;
    let error = denied.error().unwrap();
    assert!(
        !error.is_retryable(),
        "a refused token is not retried: {error:?}"
    );
    let allowed = local
        .call(
            ToolCall::json("c2", "auth_add", json!({"a": 1, "b": 1})),
            &ctx,
        )
        .await;
    assert_eq!(json_of(allowed.output().unwrap()), json!(2));
}

/// Current weather for a city (a client-side tool).
#[tool]
fn get_weather(city: String) -> String {
    format!("18C and sunny in {city}")
}

async fn agent_server(model: Arc<ScriptedModel>) -> String {
    let server = A2aAgentServer::new(move |_context| ReActAgent::builder(model.clone()).build());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server.serve(listener));
    url
}

#[tokio::test]
async fn client_tools_with_our_agent_server() {
    let model = Arc::new(
        ScriptedModel::new([ScriptedTurn::call("get_weather", json!({"city": "Paris"}))])
            .then_expect(
                |request| {
                    let last = request.messages.last().ok_or("no messages")?;
                    if last.content().contains("18C and sunny in Paris") {
                        Ok(())
                    } else {
                        Err(format!("the tool result did not reach the model: {last:?}"))
                    }
                },
                ScriptedTurn::text("It is 18C and sunny in Paris."),
            )
            .then_expect(
                |request| {
                    // The follow-up sees the first turn: same context, same conversation.
                    if request
                        .messages
                        .iter()
                        .any(|m| m.content().contains("Paris"))
                    {
                        Ok(())
                    } else {
                        Err("the follow-up lost the conversation".into())
                    }
                },
                ScriptedTurn::text("You're welcome."),
            ),
    );
    let url = agent_server(model.clone()).await;
    let toolkit = Toolkit::builder().register(GetWeather).build().unwrap();
    let agent = RemoteAgent::connect(&url).await.unwrap();
    let mut session = ClientToolsSession::new(agent, toolkit);
    let reply = session.send("Weather in Paris?").await.unwrap();
    assert_eq!(reply.answer, "It is 18C and sunny in Paris.");
    assert_eq!(reply.rounds, 1);
    let context = reply.context_id.clone();
    let reply = session.send("Thanks!").await.unwrap();
    assert_eq!(reply.answer, "You're welcome.");
    assert_eq!(reply.context_id, context);
    assert_eq!(model.remaining(), 0);
}

#[tokio::test]
async fn max_rounds_with_our_agent_server() {
    let model =
        Arc::new(ScriptedModel::new((0..10).map(|_| {
            ScriptedTurn::call("get_weather", json!({"city": "Paris"}))
        })));
    let url = agent_server(model).await;
    let toolkit = Toolkit::builder().register(GetWeather).build().unwrap();
    let agent = RemoteAgent::connect(AgentConfig::new(&url).prefer_version(WireVersion::V03))
        .await
        .unwrap();
    let mut session = ClientToolsSession::new(agent, toolkit).max_rounds(2);
    let err = session.send("Weather?").await.unwrap_err();
    assert!(
        matches!(err, A2aClientError::MaxRounds { max_rounds: 2, .. }),
        "{err}"
    );
}

/// Our agent server answering with Messages (design document 000's form): the session answers
/// in that form (a new message with the results text, the tools part and the structured
/// results), the server matches the results by call id, and the model gets each as a tool
/// result. Over 1.0 and 0.3.
#[tokio::test]
async fn client_tools_with_our_agent_server_answering_in_messages() {
    use agent_toolkit::a2a::server::Replies;

    for version in [WireVersion::V1, WireVersion::V03] {
        let model = Arc::new(
            ScriptedModel::new([ScriptedTurn::calls([
                ("get_weather", json!({"city": "Paris"})),
                ("get_weather", json!({"city": "Rome"})),
            ])])
            .then_expect(
                |request| {
                    let tools: Vec<_> = request
                        .messages
                        .iter()
                        .filter_map(|m| m.as_tool())
                        .map(|m| (&*m.call_id, m.content.as_str()))
                        .collect();
                    let calls = &request.messages[1].tool_calls();
                    (tools
                        == [
                            (&*calls[0].id, "18C and sunny in Paris"),
                            (&*calls[1].id, "18C and sunny in Rome"),
                        ])
                    .then_some(())
                    .ok_or(format!("the results did not reach the model: {tools:?}"))
                },
                ScriptedTurn::text("Both 18C."),
            ),
        );
        let answering = model.clone();
        let server =
            A2aAgentServer::new(move |_context| ReActAgent::builder(answering.clone()).build())
                .replies(Replies::Message);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(server.serve(listener));
        let toolkit = Toolkit::builder().register(GetWeather).build().unwrap();
        let agent = RemoteAgent::connect(AgentConfig::new(&url).prefer_version(version))
            .await
            .unwrap();
        let mut session = ClientToolsSession::new(agent, toolkit);
        let reply = session.send("Weather in Paris and Rome?").await.unwrap();
        assert_eq!(reply.answer, "Both 18C.", "{version:?}");
        assert_eq!(reply.rounds, 1);
        assert!(reply.task_id.is_empty(), "answered in a message");
        assert_eq!(model.remaining(), 0);
    }
}

/// A session that asks for LangChain-shaped calls, as a peer written from design document 000
/// expects: the tools part says `format: "langchain"`, our server answers in that shape (calls
/// in a Message), and the session runs them and gets the answer.
#[tokio::test]
async fn client_tools_in_the_langchain_format() {
    use agent_toolkit::a2a::parts::{CallFormat, to_data_part_as};
    let part = to_data_part_as(&[], CallFormat::LangChain);
    let model = Arc::new(
        ScriptedModel::new([ScriptedTurn::call("get_weather", json!({"city": "Paris"}))])
            .then(ScriptedTurn::text("It is 18C and sunny in Paris.")),
    );
    let url = agent_server(model.clone()).await;
    let toolkit = Toolkit::builder().register(GetWeather).build().unwrap();
    let agent = RemoteAgent::connect(&url).await.unwrap();
    let mut session = ClientToolsSession::new(agent, toolkit).call_format(CallFormat::LangChain);
    let reply = session.send("Weather in Paris?").await.unwrap();
    assert_eq!(reply.answer, "It is 18C and sunny in Paris.");
    assert_eq!(reply.rounds, 1);
    assert_eq!(
        part.metadata
            .as_ref()
            .and_then(|m| m.get("format"))
            .and_then(|f| f.as_str()),
        Some("langchain")
    );
}
