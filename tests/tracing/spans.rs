//! Tracing: one `execute_tool` span per call with the OpenTelemetry GenAI fields, attempt
//! events, and the error kind — checked with a capturing subscriber.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_toolkit::RetryPolicy;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

use super::call;
use super::tools::*;

#[derive(Clone, Debug, Default)]
struct SpanRecord {
    name: String,
    /// Index of the parent span's record.
    parent: Option<usize>,
    fields: Vec<(String, String)>,
    events: Vec<Vec<(String, String)>>,
}

impl SpanRecord {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<SpanRecord>>>);

struct Fields<'a>(&'a mut Vec<(String, String)>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push((
            field.name().to_string(),
            format!("{value:?}").trim_matches('"').to_string(),
        ));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name().to_string(), value.to_string()));
    }
}

/// Index of the span's record, kept in the span's extensions.
struct Slot(usize);

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> tracing_subscriber::Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut record = SpanRecord {
            name: attrs.metadata().name().to_string(),
            ..Default::default()
        };
        attrs.record(&mut Fields(&mut record.fields));
        record.parent = ctx
            .span(id)
            .and_then(|span| span.parent())
            .and_then(|parent| parent.extensions().get::<Slot>().map(|slot| slot.0));
        let mut spans = self.0.lock().unwrap();
        spans.push(record);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(Slot(spans.len() - 1));
        }
    }
    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(Slot(i)) = span.extensions().get::<Slot>()
        {
            values.record(&mut Fields(&mut self.0.lock().unwrap()[*i].fields));
        }
    }
    fn on_event(&self, event: &tracing::Event<'_>, ctx: Context<'_, S>) {
        let mut fields = Vec::new();
        event.record(&mut Fields(&mut fields));
        if let Some(span) = ctx.event_span(event)
            && let Some(Slot(i)) = span.extensions().get::<Slot>()
        {
            self.0.lock().unwrap()[*i].events.push(fields);
        }
    }
}

#[tokio::test(flavor = "current_thread")]
async fn every_call_gets_an_execute_tool_span_with_genai_fields() {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    let _guard = tracing::subscriber::set_default(subscriber);
    tracing::callsite::rebuild_interest_cache();

    let probe = Arc::new(Probe::default());
    probe.failures_left.store(1, Ordering::SeqCst);
    let kit = kit(&probe)
        .retry(RetryPolicy::exponential(0, Duration::from_millis(1), 1.0))
        .build()
        .unwrap();
    call(&kit, "echo", r#"{"n": 1}"#).await;
    call(&kit, "flaky", "{}").await;
    call(&kit, "broken", "{}").await;
    call(&kit, "no_such_tool", "{}").await;

    let spans = capture.0.lock().unwrap().clone();
    let tool_spans: Vec<_> = spans.iter().filter(|s| s.name == "execute_tool").collect();
    assert_eq!(tool_spans.len(), 4, "{spans:#?}");
    for s in &tool_spans {
        assert_eq!(s.field("gen_ai.operation.name"), Some("execute_tool"));
        assert_eq!(s.field("gen_ai.tool.call.id"), Some("c1"));
    }
    let [echo, flaky, broken, unknown] = tool_spans[..] else {
        unreachable!()
    };
    assert_eq!(echo.field("gen_ai.tool.name"), Some("echo"));
    assert_eq!(echo.field("gen_ai.tool.attempts"), Some("1"));
    assert_eq!(echo.field("error.type"), None);

    assert_eq!(flaky.field("gen_ai.tool.attempts"), Some("2"));
    let starts: Vec<_> = flaky
        .events
        .iter()
        .filter(|e| {
            e.iter()
                .any(|(k, v)| k == "message" && v == "tool attempt started")
        })
        .map(|e| {
            e.iter()
                .find(|(k, _)| k == "attempt")
                .map(|(_, v)| v.clone())
        })
        .collect();
    assert_eq!(
        starts,
        [Some("1".to_string()), Some("2".to_string())],
        "one event per attempt"
    );
    let retry = flaky
        .events
        .iter()
        .find(|e| {
            e.iter()
                .any(|(k, v)| k == "message" && v == "retrying tool call")
        })
        .expect("a retry event inside the span");
    assert!(retry.contains(&("attempt".into(), "1".into())), "{retry:?}");
    assert!(
        retry.contains(&("error.type".into(), "execution".into())),
        "{retry:?}"
    );

    assert_eq!(broken.field("error.type"), Some("execution"));
    assert_eq!(unknown.field("gen_ai.tool.name"), Some("no_such_tool"));
    assert_eq!(unknown.field("error.type"), Some("unknown_tool"));

    // A program's calls (code mode) are traced as children of the program's span, which
    // carries the program's call id.
    #[cfg(feature = "code")]
    {
        let before = capture.0.lock().unwrap().len();
        let result = agent_toolkit::code::CodeMode::new()
            .run(
                &kit,
                "prog-7",
                "await tools.echo({ n: 1 }); return (await tools.echo({ n: 2 }));",
                &agent_toolkit::ToolContext::new(),
            )
            .await;
        assert!(!result.is_error(), "{}", result.model_text());
        let spans = capture.0.lock().unwrap().clone();
        let program = spans
            .iter()
            .position(|s| s.name == "code.program")
            .expect("a program span");
        assert!(program >= before);
        assert_eq!(spans[program].field("call_id"), Some("prog-7"));
        let calls: Vec<(&str, Option<usize>)> = spans[before..]
            .iter()
            .filter(|s| s.name == "execute_tool")
            .map(|s| (s.field("gen_ai.tool.call.id").unwrap_or(""), s.parent))
            .collect();
        assert_eq!(
            calls,
            [("prog-7/0", Some(program)), ("prog-7/1", Some(program))]
        );
    }
}
