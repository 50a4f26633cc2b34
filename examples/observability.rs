//! Observability: an agent's run as an OpenTelemetry trace, exported over OTLP to whatever
//! you run — Jaeger, Grafana Tempo, Honeycomb, an OpenTelemetry Collector.
//!
//! The library emits `tracing` spans named and tagged after the OpenTelemetry GenAI semantic
//! conventions (`invoke_agent`, `chat`, `execute_tool`); this example installs
//! `tracing-opentelemetry` with the OTLP exporter (HTTP) so they leave the process. It runs
//! offline with a scripted model and sends to `OTEL_EXPORTER_OTLP_ENDPOINT`
//! (default `http://localhost:4318`). To see it in Jaeger:
//!
//! ```sh
//! docker run --rm -p 16686:16686 -p 4318:4318 jaegertracing/all-in-one
//! cargo run --example observability --features otel
//! # then open http://localhost:16686 and pick the service `observability-example`
//! ```
//!
//! Run it with `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` to record the
//! messages, arguments and results on the spans too.
//!
//! With nothing listening the run still completes; the exporter reports that it could not
//! send. The exporter's HTTP client here is reqwest's blocking one (`tests/support/otlp_http.rs`,
//! the workspace's reqwest); your application can enable `opentelemetry-otlp`'s
//! `reqwest-blocking-client` feature instead and drop the `with_http_client` line. `tests/otel` checks the exported tree against a receiver of its own.

#[path = "../tests/support/otlp_http.rs"]
mod otlp_http;

use agent_toolkit::ReActAgent;
use agent_toolkit::prelude::*;
use agent_toolkit::testing::{ScriptedModel, ScriptedTurn};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt;

/// Current weather of a city.
#[tool(read_only)]
async fn get_weather(city: String) -> String {
    format!("{city}: 21°C, sunny")
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let endpoint = std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT")
        .unwrap_or_else(|_| "http://localhost:4318".into());
    // OTLP over HTTP (JSON), batched on a thread of the exporter's own.
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpJson)
        .with_http_client(otlp_http::BlockingReqwest::default())
        .with_endpoint(format!("{}/v1/traces", endpoint.trim_end_matches('/')))
        .build()?;
    let resource = opentelemetry_sdk::Resource::builder()
        .with_service_name("observability-example")
        .build();
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource)
        .build();
    let otel = tracing_opentelemetry::layer().with_tracer(provider.tracer("agent-toolkit"));
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(otel))?;

    // Content (the prompt, the answers, the calls' arguments and results) is off by default;
    // `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` in the environment, or
    // `.trace_content(true)` here, turns it on. Hidden parameters are never recorded.
    let toolkit = Toolkit::builder().register(GetWeather).build()?;
    let model = ScriptedModel::new([
        ScriptedTurn::calls([
            ("get_weather", json!({"city": "Paris"})),
            ("get_weather", json!({"city": "Lyon"})),
        ]),
        ScriptedTurn::text("It is 21°C and sunny in both Paris and Lyon."),
    ]);
    let mut agent = ReActAgent::builder(model)
        .toolkit(&toolkit)
        .name("weather-assistant")
        .build()?;
    let answer = agent.run("Is it warm in Paris and Lyon?").await?;
    println!("agent: {answer}");

    // Send what is still batched before exiting (the exporter blocks: not on a runtime thread).
    tokio::task::spawn_blocking(move || provider.shutdown()).await??;
    println!(
        "the trace went to {endpoint}/v1/traces (dropped if nothing listens there): \
         `invoke_agent weather-assistant` with two `chat scripted` and two \
         `execute_tool get_weather` inside"
    );
    Ok(())
}
