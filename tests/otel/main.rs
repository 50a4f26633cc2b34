//! OpenTelemetry export, end to end: an agent run's spans go through `tracing-opentelemetry`
//! and the OTLP exporter (HTTP, JSON) to a receiver running in this test, which checks the
//! exported tree — `invoke_agent` over its `chat` and `execute_tool` spans, one trace — their
//! names and GenAI attributes, and that no content (the prompt, arguments, a hidden preset)
//! is recorded — and the conventions' client metrics through `MetricsLayer`. A call that
//! crosses an MCP hop (our client, our server, on loopback) is one trace: the client's
//! `execute_tool`, the server's `tools/call`, the server's `execute_tool`; so is a call across
//! an A2A hop (a remote tool of our A2A tool server), on both wires (1.0 and 0.3). With content
//! turned on, the spans carry the messages, arguments and results, and still no hidden value.
//! `links`: background jobs, resumed runs and code-mode programs; `python`: one trace with the
//! official Python MCP SDK, both ways.

#[path = "../support/otlp_http.rs"]
mod otlp_http;

mod links;
#[path = "../peers/mod.rs"]
mod peers;
#[path = "peers.rs"]
mod python;

use std::sync::{Arc, Mutex};

use agent_toolkit::ReActAgent;
use agent_toolkit::prelude::*;
use agent_toolkit::testing::{ScriptedModel, ScriptedTurn};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use serde_json::{Value, json};
use tracing::instrument::WithSubscriber;
use tracing_subscriber::layer::SubscriberExt;

/// A secret the tool gets as a preset: never in a span.
const API_KEY: &str = "sk-never-exported-1234";
/// Words of the prompt: not recorded either (content is off by default).
const PROMPT: &str = "What is 20 plus 22, mango-telescope?";

/// Add two numbers with the pricing service.
#[tool(read_only)]
fn add(a: i64, b: i64, #[preset] api_key: String) -> i64 {
    assert_eq!(api_key, API_KEY);
    a + b
}

/// Multiply two numbers.
#[tool(read_only)]
fn multiply(a: i64, b: i64) -> i64 {
    a * b
}

/// What the receiver got: every span, and every metric.
#[derive(Clone, Default)]
struct Received {
    spans: Arc<Mutex<Vec<Value>>>,
    metrics: Arc<Mutex<Vec<Value>>>,
}

/// The items at `resource → scope → items` of an OTLP JSON export.
fn items<'a>(export: &'a Value, path: [&str; 3]) -> impl Iterator<Item = &'a Value> {
    let [resources, scopes, items] = path;
    export[resources]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(move |r| r[scopes].as_array().into_iter().flatten())
        .flat_map(move |s| s[items].as_array().into_iter().flatten())
}

/// Receives OTLP/HTTP JSON exports of traces and metrics; its base URL.
async fn receiver() -> (String, Received) {
    let received = Received::default();
    let (spans, metrics) = (received.spans.clone(), received.metrics.clone());
    let app = axum::Router::new()
        .route(
            "/v1/traces",
            axum::routing::post(move |body: axum::body::Bytes| {
                let export: Value = serde_json::from_slice(&body).expect("OTLP JSON");
                let path = ["resourceSpans", "scopeSpans", "spans"];
                spans.lock().unwrap().extend(items(&export, path).cloned());
                async { axum::Json(json!({})) }
            }),
        )
        .route(
            "/v1/metrics",
            axum::routing::post(move |body: axum::body::Bytes| {
                let export: Value = serde_json::from_slice(&body).expect("OTLP JSON");
                let path = ["resourceMetrics", "scopeMetrics", "metrics"];
                metrics
                    .lock()
                    .unwrap()
                    .extend(items(&export, path).cloned());
                async { axum::Json(json!({})) }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, received)
}

/// A span's attribute, as the OTLP JSON encodes it (string, int, double or bool value).
fn attribute<'a>(span: &'a Value, key: &str) -> Option<&'a Value> {
    span["attributes"]
        .as_array()?
        .iter()
        .find(|a| a["key"] == key)
        .map(|a| &a["value"])
}

fn text(span: &Value, key: &str) -> String {
    attribute(span, key)
        .and_then(|v| v["stringValue"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// An integer attribute (OTLP JSON writes 64-bit integers as strings).
fn int(span: &Value, key: &str) -> Option<i64> {
    let int = &attribute(span, key)?["intValue"];
    int.as_i64().or_else(|| int.as_str()?.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_run_is_exported_as_one_genai_trace_with_its_metrics() {
    let (url, received) = receiver().await;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpJson)
        .with_http_client(otlp_http::BlockingReqwest::default())
        .with_endpoint(format!("{url}/v1/traces"))
        .build()
        .unwrap();
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .build();
    let metric_exporter = opentelemetry_otlp::MetricExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpJson)
        .with_http_client(otlp_http::BlockingReqwest::default())
        .with_endpoint(format!("{url}/v1/metrics"))
        .build()
        .unwrap();
    let meters = opentelemetry_sdk::metrics::SdkMeterProvider::builder()
        .with_periodic_exporter(metric_exporter)
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("agent-toolkit-test")))
        .with(tracing_opentelemetry::MetricsLayer::new(meters.clone()));

    let toolkit = Toolkit::builder()
        .register(Add)
        .preset("api_key", API_KEY)
        .build()
        .unwrap();
    let model = ScriptedModel::new([
        ScriptedTurn::call("add", json!({"a": 20, "b": 22})),
        ScriptedTurn::text("20 plus 22 is 42, as the tool says."),
    ]);
    let mut agent = ReActAgent::builder(model)
        .toolkit(&toolkit)
        .name("calculator")
        .build()
        .unwrap();
    let answer = agent.run(PROMPT).with_subscriber(subscriber).await.unwrap();
    assert_eq!(answer, "20 plus 22 is 42, as the tool says.");
    // The batch exporter posts from a thread of its own; shutting down flushes it.
    tokio::task::spawn_blocking(move || (provider.shutdown(), meters.shutdown()))
        .await
        .map(|(traces, metrics)| traces.and(metrics))
        .unwrap()
        .unwrap();

    let spans = received.spans.lock().unwrap().clone();
    let named =
        |name: &str| -> Vec<&Value> { spans.iter().filter(|s| s["name"] == name).collect() };
    let agent_spans = named("invoke_agent calculator");
    assert_eq!(agent_spans.len(), 1, "{spans:#?}");
    let run = agent_spans[0];
    let chats = named("chat scripted");
    assert_eq!(chats.len(), 2, "two model requests: {spans:#?}");
    let tools = named("execute_tool add");
    assert_eq!(tools.len(), 1, "{spans:#?}");

    // One trace: the run is the root, the requests and the call its children.
    let trace = run["traceId"].as_str().unwrap();
    for child in chats.iter().chain(&tools) {
        assert_eq!(child["traceId"], trace, "{child:#}");
        assert_eq!(child["parentSpanId"], run["spanId"], "{child:#}");
    }

    assert_eq!(text(run, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(text(run, "gen_ai.agent.name"), "calculator");
    assert_eq!(text(run, "gen_ai.provider.name"), "scripted");
    assert!(!text(run, "gen_ai.conversation.id").is_empty(), "{run:#}");

    let first = chats[0];
    assert_eq!(text(first, "gen_ai.operation.name"), "chat");
    assert_eq!(text(first, "gen_ai.request.model"), "scripted");
    assert_eq!(first["kind"], json!(3), "a client span: {first:#}");
    assert!(
        int(first, "gen_ai.usage.input_tokens").unwrap() > 0,
        "{first:#}"
    );
    assert!(
        int(chats[1], "gen_ai.usage.output_tokens").unwrap() > 0,
        "{:#}",
        chats[1]
    );
    assert_eq!(text(first, "gen_ai.response.finish_reasons"), "tool_calls");
    assert_eq!(text(chats[1], "gen_ai.response.finish_reasons"), "stop");

    let tool = tools[0];
    assert_eq!(text(tool, "gen_ai.operation.name"), "execute_tool");
    assert_eq!(text(tool, "gen_ai.tool.name"), "add");
    assert_eq!(text(tool, "gen_ai.tool.type"), "function");
    assert!(!text(tool, "gen_ai.tool.call.id").is_empty());
    assert_eq!(int(tool, "gen_ai.tool.attempts"), Some(1), "{tool:#}");

    // No content, and never a hidden parameter.
    let exported = serde_json::to_string(&spans).unwrap();
    assert!(!exported.contains(API_KEY), "the preset leaked: {exported}");
    assert!(
        !exported.contains("mango-telescope"),
        "the prompt was recorded: {exported}"
    );

    // The conventions' client metrics: one duration per request, tokens by type.
    let metrics = received.metrics.lock().unwrap().clone();
    let metric = |name: &str| {
        metrics
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("no metric {name}: {metrics:#?}"))
            .clone()
    };
    let duration = metric("gen_ai.client.operation.duration");
    let points = duration["histogram"]["dataPoints"].as_array().unwrap();
    let count: i64 = points
        .iter()
        .map(|p| {
            p["count"]
                .as_str()
                .and_then(|c| c.parse().ok())
                .or(p["count"].as_i64())
                .unwrap()
        })
        .sum();
    assert_eq!(count, 2, "{duration:#}");
    let tokens = metric("gen_ai.client.token.usage");
    let types: Vec<String> = tokens["histogram"]["dataPoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| text(p, "gen_ai.token.type"))
        .collect();
    assert!(
        types.contains(&"input".to_string()) && types.contains(&"output".to_string()),
        "{tokens:#}"
    );
}

/// With content turned on (`ToolkitBuilder::trace_content`), the spans carry what was said: the
/// messages sent and the answer on each `chat` span, the arguments and the result on
/// `execute_tool` — but never a hidden parameter: the preset is not recorded, and a value the
/// model wrote for the hidden parameter is left out wherever its call is recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_when_turned_on_and_never_a_hidden_value() {
    let (url, received) = receiver().await;
    let provider = tracer_provider(&url);
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("agent-toolkit-test")));
    let toolkit = Toolkit::builder()
        .register(Add)
        .preset("api_key", API_KEY)
        .hidden_args(agent_toolkit::toolkit::HiddenArgs::Ignore)
        .trace_content(true)
        .build()
        .unwrap();
    let model = ScriptedModel::new([
        ScriptedTurn::call("add", json!({"a": 20, "b": 22, "api_key": "model-guess"})),
        ScriptedTurn::text("It is 42."),
    ]);
    let mut agent = ReActAgent::builder(model)
        .toolkit(&toolkit)
        .name("calculator")
        .build()
        .unwrap();
    let answer = agent.run(PROMPT).with_subscriber(subscriber).await.unwrap();
    assert_eq!(answer, "It is 42.");
    tokio::task::spawn_blocking(move || provider.shutdown())
        .await
        .unwrap()
        .unwrap();

    let spans = received.spans.lock().unwrap().clone();
    let tool = one(&spans, &Value::Null, "execute_tool add");
    let arguments: Value =
        serde_json::from_str(&text(&tool, "gen_ai.tool.call.arguments")).unwrap();
    assert_eq!(
        arguments,
        json!({"a": 20, "b": 22}),
        "no hidden value: {tool:#}"
    );
    assert_eq!(text(&tool, "gen_ai.tool.call.result"), "42");

    let chats: Vec<&Value> = spans
        .iter()
        .filter(|s| s["name"] == "chat scripted")
        .collect();
    assert_eq!(chats.len(), 2, "{spans:#?}");
    let first_in: Value = serde_json::from_str(&text(chats[0], "gen_ai.input.messages")).unwrap();
    assert_eq!(
        first_in.as_array().and_then(|m| m.last()),
        Some(&json!({"role": "user", "parts": [{"type": "text", "content": PROMPT}]})),
        "{first_in:#}"
    );
    let first_out: Value = serde_json::from_str(&text(chats[0], "gen_ai.output.messages")).unwrap();
    assert_eq!(first_out[0]["role"], "assistant", "{first_out:#}");
    assert_eq!(first_out[0]["finish_reason"], "tool_calls");
    assert_eq!(first_out[0]["parts"][0]["type"], "tool_call");
    assert_eq!(first_out[0]["parts"][0]["name"], "add");
    assert_eq!(
        first_out[0]["parts"][0]["arguments"],
        json!({"a": 20, "b": 22}),
        "the call as the model wrote it, but no hidden value"
    );
    let second_in: Value = serde_json::from_str(&text(chats[1], "gen_ai.input.messages")).unwrap();
    let response = second_in
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap_or_else(|| panic!("the tool's answer is sent: {second_in:#}"));
    assert_eq!(response["parts"][0]["type"], "tool_call_response");
    assert_eq!(response["parts"][0]["response"], "42");
    let second_out: Value =
        serde_json::from_str(&text(chats[1], "gen_ai.output.messages")).unwrap();
    assert_eq!(
        second_out[0]["parts"],
        json!([{"type": "text", "content": "It is 42."}])
    );

    let exported = serde_json::to_string(&spans).unwrap();
    assert!(!exported.contains(API_KEY), "the preset leaked: {exported}");
    assert!(
        !exported.contains("model-guess"),
        "a hidden parameter's value was recorded: {exported}"
    );
}

/// The process's subscriber and its provider, exporting to a receiver of its own (on a thread
/// with its own runtime, so that it outlives each test's).
static GLOBAL: std::sync::OnceLock<(Received, opentelemetry_sdk::trace::SdkTracerProvider)> =
    std::sync::OnceLock::new();

/// Install the process's subscriber (once): for tests whose spans are made on tasks they do
/// not own (servers, workers). Each test finds its spans by their names or trace.
fn global() -> &'static Received {
    let (received, _) = GLOBAL.get_or_init(|| {
        let (sender, started) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Runtime::new().unwrap();
            runtime.block_on(async {
                sender.send(receiver().await).unwrap();
                std::future::pending::<()>().await
            })
        });
        let (url, received) = started.recv().unwrap();
        let provider = tracer_provider(&url);
        let subscriber = tracing_subscriber::registry().with(
            tracing_opentelemetry::layer().with_tracer(provider.tracer("agent-toolkit-test")),
        );
        tracing::subscriber::set_global_default(subscriber).unwrap();
        (received, provider)
    });
    received
}

/// Every span the process's subscriber ended so far, once exported.
async fn flushed(received: &Received) -> Vec<Value> {
    tokio::task::spawn_blocking(|| GLOBAL.get().map(|(_, provider)| provider.force_flush()))
        .await
        .unwrap()
        .expect("the global subscriber is installed")
        .unwrap();
    received.spans.lock().unwrap().clone()
}

/// The tracer provider exporting spans to the receiver at `url`.
fn tracer_provider(url: &str) -> opentelemetry_sdk::trace::SdkTracerProvider {
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpJson)
        .with_http_client(otlp_http::BlockingReqwest::default())
        .with_endpoint(format!("{url}/v1/traces"))
        .build()
        .unwrap();
    opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .build()
}

/// The spans of one trace: the one named `name`, exactly once.
fn one(spans: &[Value], trace: &Value, name: &str) -> Value {
    let found: Vec<&Value> = spans
        .iter()
        .filter(|s| s["name"] == name && (trace.is_null() || &s["traceId"] == trace))
        .collect();
    assert_eq!(found.len(), 1, "{name} in trace {trace}: {spans:#?}");
    found[0].clone()
}

/// `client` (a tool calling over a hop), `server` (the span serving it) and `tool` (the
/// served tool's `execute_tool`) hang from `root` in one trace, the server span a server's.
fn one_trace_across(root: &Value, client: &Value, server: &Value, tool: &Value) {
    for span in [client, server, tool] {
        assert_eq!(span["traceId"], root["traceId"], "one trace: {span:#}");
    }
    assert_eq!(client["parentSpanId"], root["spanId"]);
    assert_eq!(
        server["parentSpanId"], client["spanId"],
        "the hop: {server:#}"
    );
    assert_eq!(server["kind"], json!(2), "a server span: {server:#}");
    assert_eq!(tool["parentSpanId"], server["spanId"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_across_mcp_and_a2a_hops_are_one_trace_each() {
    use agent_toolkit::a2a::client::{AgentConfig, RemoteToolRegistry, WireVersion};
    use agent_toolkit::a2a::server::A2aToolServer;
    use agent_toolkit::mcp::{McpImport, McpTarget};
    use tracing::Instrument;

    // The servers handle requests on tasks of their own: the subscriber is the process's.
    let received = global();

    let served = Toolkit::builder().register(Multiply).build().unwrap();
    let app = axum::Router::new().nest_service("/mcp", served.mcp_http_service());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mcp = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let a2a = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(A2aToolServer::new(&served).serve(listener));

    let import = McpImport::connect(McpTarget::url(mcp), "remote")
        .await
        .unwrap();
    let registry = RemoteToolRegistry::new();
    for (name, version) in [("v1", WireVersion::V1), ("v03", WireVersion::V03)] {
        let config = AgentConfig::new(&a2a).prefer_version(version);
        registry.add_agent(name, config).await.unwrap();
    }
    let toolkit = Toolkit::builder()
        .group("remote", "the served tools")
        .dynamic("remote", import.tools())
        .register(registry.tools())
        .build()
        .unwrap();
    let hops = ["remote__multiply", "v1_multiply", "v03_multiply"];
    for (n, tool) in hops.iter().enumerate() {
        let call = ToolCall::new(format!("c{n}"), *tool, r#"{"a": 6, "b": 7}"#);
        let result = toolkit
            .call(call, &ToolContext::new())
            .instrument(tracing::info_span!("handle request", hop = *tool))
            .await;
        assert_eq!(result.model_text(), "42", "{tool}");
    }
    let spans = flushed(received).await;
    let roots: Vec<&Value> = spans
        .iter()
        .filter(|s| s["name"] == "handle request")
        .collect();
    assert_eq!(roots.len(), hops.len(), "{spans:#?}");
    let traces: std::collections::HashSet<String> =
        roots.iter().map(|r| r["traceId"].to_string()).collect();
    assert_eq!(traces.len(), hops.len(), "a trace per request");
    for root in roots {
        let trace = &root["traceId"];
        let hop = attribute(root, "hop").and_then(|v| v["stringValue"].as_str());
        let (tool, server) = match hop {
            Some("remote__multiply") => ("remote__multiply", "tools/call multiply"),
            Some(name) => (name, "a2a tool call"),
            None => panic!("a root without its hop: {root:#}"),
        };
        let client = one(&spans, trace, &format!("execute_tool {tool}"));
        let server = one(&spans, trace, server);
        let served = one(&spans, trace, "execute_tool multiply");
        one_trace_across(root, &client, &server, &served);
    }
}
