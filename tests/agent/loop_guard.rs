//! The loop guard: a call that repeats one of the model's previous step (same tool, same
//! arguments), whose result the model has, is not run again — a read-only tool's result is given
//! again with a line saying so, another tool's call is refused with that result — and each time
//! is traced. A call denied in the last step is refused again with the reason, the approver not
//! asked twice; a background call's repeat, once its job was reported finished, gets the job's
//! result. A user's message between, an error before, other arguments, or the guard
//! switched off: the call runs. A model that makes the same calls three steps running is asked for its
//! answer once without calls (`tool_choice: none`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_toolkit::ReActAgent;
use agent_toolkit::error::ToolErrorKind;
use agent_toolkit::exec::{ApprovalDecision, ApprovalRequest};
use agent_toolkit::model::{Message, ToolChoice};
use agent_toolkit::prelude::*;
use agent_toolkit::testing::{ScriptedModel, ScriptedTurn};
use serde_json::json;
use tracing_subscriber::layer::{Context, SubscriberExt};

/// How many times the tools below ran.
#[derive(Default)]
struct Runs(AtomicUsize);

/// The weather in a city.
#[tool(read_only)]
async fn weather(city: String, #[ctx] runs: Ctx<Runs>) -> String {
    runs.0.0.fetch_add(1, Ordering::SeqCst);
    format!("{city}: 21 C")
}

/// Send a message.
#[tool]
async fn send(to: String, #[ctx] runs: Ctx<Runs>) -> Result<String, ToolError> {
    let n = runs.0.0.fetch_add(1, Ordering::SeqCst);
    if to == "flaky" && n == 0 {
        return Err(ToolError::execution("the mail server is busy"));
    }
    Ok(format!("sent to {to}"))
}

fn kit(guard: bool) -> (Toolkit, Arc<Runs>) {
    let runs = Arc::new(Runs::default());
    let kit = Toolkit::builder()
        .register(Weather)
        .register(Send)
        .context_shared(runs.clone())
        .loop_guard(guard)
        .build()
        .unwrap();
    (kit, runs)
}

/// `(text, is_error)` of each tool result in the agent's memory.
fn results(agent: &ReActAgent) -> Vec<(String, bool)> {
    agent
        .memory()
        .iter()
        .filter_map(Message::as_tool)
        .map(|m| (m.content.clone(), m.is_error))
        .collect()
}

/// Counts the loop guard's trace events.
#[derive(Clone, Default)]
struct Events(Arc<AtomicUsize>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Events {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        if event.metadata().target() == "agent_toolkit::loop_guard" {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_read_only_call_repeated_step_after_step_runs_once_and_the_model_is_told() {
    let events = Events::default();
    let _trace =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(events.clone()));
    tracing::callsite::rebuild_interest_cache();
    let (kit, runs) = kit(true);
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::call("weather", json!({"city": "Oslo"})),
        ScriptedTurn::call("weather", json!({"city": "Oslo"})),
        ScriptedTurn::calls([
            ("weather", json!({ "city" : "Oslo" })),
            ("weather", json!({"city": "Rome"})),
        ]),
        ScriptedTurn::text("Oslo is 21 C."),
    ]));
    let mut agent = ReActAgent::builder(model).toolkit(&kit).build().unwrap();
    assert_eq!(agent.run("weather?").await.unwrap(), "Oslo is 21 C.");
    // Oslo ran once, Rome once.
    assert_eq!(runs.0.load(Ordering::SeqCst), 2);
    let results = results(&agent);
    assert_eq!(results.len(), 4);
    assert_eq!(results[0], ("Oslo: 21 C".to_string(), false));
    for (text, is_error) in &results[1..3] {
        assert!(!is_error);
        assert!(
            text.starts_with("Oslo: 21 C\n\n[You made this same call"),
            "{text}"
        );
        // Given again twice, said once.
        assert_eq!(text.matches("same call").count(), 1, "{text}");
    }
    assert_eq!(results[3], ("Rome: 21 C".to_string(), false));
    assert_eq!(events.0.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_repeat_of_a_tool_that_acts_is_refused_with_its_earlier_result() {
    let (kit, runs) = kit(true);
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::call("send", json!({"to": "ann"})),
        ScriptedTurn::call("send", json!({"to": "ann"})),
        ScriptedTurn::text("Sent."),
    ]));
    let mut agent = ReActAgent::builder(model).toolkit(&kit).build().unwrap();
    agent.run("mail ann").await.unwrap();
    assert_eq!(runs.0.load(Ordering::SeqCst), 1);
    let results = results(&agent);
    let (text, is_error) = &results[1];
    assert!(is_error);
    assert!(
        text.contains("not run again") && text.contains("sent to ann"),
        "{text}"
    );
}

#[tokio::test]
async fn a_retry_after_an_error_other_arguments_or_a_new_question_run_again() {
    let (kit, runs) = kit(true);
    let model = Arc::new(ScriptedModel::new([
        // Fails, then the same call is a retry: it runs.
        ScriptedTurn::call("send", json!({"to": "flaky"})),
        ScriptedTurn::call("send", json!({"to": "flaky"})),
        // Other arguments run.
        ScriptedTurn::call("send", json!({"to": "bob"})),
        ScriptedTurn::text("Done."),
        // A new question: the same call as the last step of the run before runs again.
        ScriptedTurn::call("send", json!({"to": "bob"})),
        ScriptedTurn::text("Done again."),
    ]));
    let mut agent = ReActAgent::builder(model).toolkit(&kit).build().unwrap();
    agent.run("mail").await.unwrap();
    agent.run("mail bob again").await.unwrap();
    assert_eq!(runs.0.load(Ordering::SeqCst), 4);
    let errors: Vec<bool> = results(&agent).into_iter().map(|(_, e)| e).collect();
    assert_eq!(errors, [true, false, false, false]);
}

#[tokio::test]
async fn switched_off_every_call_runs() {
    let (kit, runs) = kit(false);
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::call("weather", json!({"city": "Oslo"})),
        ScriptedTurn::call("weather", json!({"city": "Oslo"})),
        ScriptedTurn::text("Done."),
    ]));
    let mut agent = ReActAgent::builder(model).toolkit(&kit).build().unwrap();
    agent.run("weather?").await.unwrap();
    assert_eq!(runs.0.load(Ordering::SeqCst), 2);
    assert_eq!(results(&agent)[1], ("Oslo: 21 C".to_string(), false));
}

#[tokio::test(flavor = "current_thread")]
async fn the_same_calls_three_steps_running_get_one_request_without_calls() {
    let events = Events::default();
    let _trace =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(events.clone()));
    tracing::callsite::rebuild_interest_cache();
    let (kit, runs) = kit(true);
    // The same failing call three times (a retry after an error runs, so it ran three times):
    // looping too.
    let repeated = |n| (0..n).map(|_| ScriptedTurn::call("weather", json!({"city": "Oslo"})));
    let model = Arc::new(ScriptedModel::new(
        repeated(3)
            .chain([ScriptedTurn::text("Oslo is 21 C.")])
            // A new question starts afresh: two repeats are no loop yet, a third step with
            // another call breaks the run of repeats.
            .chain(repeated(2))
            .chain([ScriptedTurn::call("weather", json!({"city": "Rome"}))])
            .chain(repeated(1))
            .chain([ScriptedTurn::text("Done.")]),
    ));
    let mut agent = ReActAgent::builder(model.clone())
        .toolkit(&kit)
        .build()
        .unwrap();
    assert_eq!(agent.run("weather?").await.unwrap(), "Oslo is 21 C.");
    let choices: Vec<ToolChoice> = model
        .requests()
        .iter()
        .map(|r| r.tool_choice.clone())
        .collect();
    assert_eq!(
        choices,
        [
            ToolChoice::Auto,
            ToolChoice::Auto,
            ToolChoice::Auto,
            ToolChoice::None
        ]
    );
    // Ran once; the guard answered the two repeats, and the loop was traced once more.
    assert_eq!(runs.0.load(Ordering::SeqCst), 1);
    assert_eq!(events.0.load(Ordering::SeqCst), 3);

    assert_eq!(agent.run("and again?").await.unwrap(), "Done.");
    let choices: Vec<ToolChoice> = model.requests()[4..]
        .iter()
        .map(|r| r.tool_choice.clone())
        .collect();
    assert!(
        choices.iter().all(|c| *c == ToolChoice::Auto),
        "{choices:?}"
    );
    assert_eq!(choices.len(), 5);
}

#[tokio::test]
async fn a_failing_call_made_three_times_is_a_loop_too_and_off_with_the_guard() {
    for guard in [true, false] {
        let (kit, _) = kit(guard);
        // Invalid arguments (no `city`): an error every time, so each repeat runs.
        let failing = || ScriptedTurn::call("weather", json!({"town": "Oslo"}));
        let model = Arc::new(ScriptedModel::new([
            failing(),
            failing(),
            failing(),
            ScriptedTurn::text("I could not get it."),
        ]));
        let mut agent = ReActAgent::builder(model.clone())
            .toolkit(&kit)
            .argument_budget(10)
            .build()
            .unwrap();
        agent.run("weather?").await.unwrap();
        let last = model.requests().last().unwrap().tool_choice.clone();
        let expected = if guard {
            ToolChoice::None
        } else {
            ToolChoice::Auto
        };
        assert_eq!(last, expected, "guard {guard}");
    }
}

#[tokio::test]
async fn a_call_written_as_text_when_asked_for_the_answer_is_read_as_the_call() {
    let (kit, runs) = kit(true);
    let repeated = (0..3).map(|_| ScriptedTurn::call("weather", json!({"city": "Oslo"})));
    let model = Arc::new(ScriptedModel::new(repeated.chain([
        // Asked for its answer, the model writes its call again, as text.
        ScriptedTurn::text(r#"{"name": "weather", "arguments": {"city": "Oslo"}}"#),
        ScriptedTurn::text("Oslo is 21 C."),
    ])));
    let mut agent = ReActAgent::builder(model.clone())
        .toolkit(&kit)
        .build()
        .unwrap();
    assert_eq!(agent.run("weather?").await.unwrap(), "Oslo is 21 C.");
    assert_eq!(runs.0.load(Ordering::SeqCst), 1);
    let steps: Vec<_> = agent
        .memory()
        .iter()
        .filter_map(Message::as_assistant)
        .collect();
    assert_eq!(steps.len(), 5);
    assert!(steps[3].calls_in_text, "{:?}", steps[3]);
    assert_eq!(steps[3].tool_calls[0].name, "weather");
    let choices: Vec<ToolChoice> = model
        .requests()
        .iter()
        .map(|r| r.tool_choice.clone())
        .collect();
    assert_eq!(choices[3..], [ToolChoice::None, ToolChoice::None]);
}

/// Start a report, in the background.
#[tool(background)]
async fn report(topic: String, #[ctx] runs: Ctx<Runs>) -> String {
    runs.0.0.fetch_add(1, Ordering::SeqCst);
    format!("report on {topic}")
}

#[tokio::test]
async fn the_notes_on_background_jobs_between_steps_are_no_new_question() {
    let runs = Arc::new(Runs::default());
    let kit = Toolkit::builder()
        .register(Report)
        .context_shared(runs.clone())
        .build()
        .unwrap();
    let again = || ScriptedTurn::call("report", json!({"topic": "sales"}));
    let model = Arc::new(ScriptedModel::new([
        again(),
        again(),
        again(),
        ScriptedTurn::text("The report is on its way."),
    ]));
    let mut agent = ReActAgent::builder(model.clone())
        .toolkit(&kit)
        .build()
        .unwrap();
    agent.run("a report on sales").await.unwrap();
    let requests = model.requests();
    // The agent's notes on the job came between the steps...
    assert!(
        requests[1]
            .messages
            .iter()
            .any(|m| m.content().starts_with("[background tools]"))
    );
    // ...and still one job was started: the repeats were refused with its first answer, and
    // the third step's request asked for the answer.
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    assert_eq!(runs.0.load(Ordering::SeqCst), 1);
    let refused = results(&agent)
        .into_iter()
        .filter(|(text, error)| *error && text.contains("not run again"))
        .count();
    assert_eq!(refused, 2);
    assert_eq!(requests[3].tool_choice, ToolChoice::None);
}

/// Delete a file.
#[tool(requires_approval)]
async fn remove(path: String, #[ctx] runs: Ctx<Runs>) -> String {
    runs.0.0.fetch_add(1, Ordering::SeqCst);
    format!("removed {path}")
}

/// A run where the model calls `remove` the same way `repeats` times and the approver denies
/// every call it is asked about: the agent, how often the approver was asked, how often the
/// tool ran.
async fn denied_repeatedly(guard: bool, repeats: usize) -> (ReActAgent, usize, usize) {
    let runs = Arc::new(Runs::default());
    let kit = Toolkit::builder()
        .register(Remove)
        .context_shared(runs.clone())
        .loop_guard(guard)
        .build()
        .unwrap();
    let again = || ScriptedTurn::call("remove", json!({"path": "/etc/passwd"}));
    let turns = std::iter::repeat_with(again)
        .take(repeats)
        .chain([ScriptedTurn::text("I may not remove it.")]);
    let asked = Arc::new(AtomicUsize::new(0));
    let count = asked.clone();
    let mut agent = ReActAgent::builder(Arc::new(ScriptedModel::new(turns)))
        .toolkit(&kit)
        .approver(move |_: ApprovalRequest| {
            count.fetch_add(1, Ordering::SeqCst);
            async { ApprovalDecision::Deny("never touch /etc".into()) }
        })
        .build()
        .unwrap();
    agent.run("remove /etc/passwd").await.unwrap();
    (
        agent,
        asked.load(Ordering::SeqCst),
        runs.0.load(Ordering::SeqCst),
    )
}

#[tokio::test]
async fn a_denied_call_made_again_is_refused_with_the_reason_and_the_approver_is_asked_once() {
    let (agent, asked, runs) = denied_repeatedly(true, 3).await;
    assert_eq!(asked, 1, "the approver is asked once");
    assert_eq!(runs, 0);
    let kinds: Vec<Option<ToolErrorKind>> = agent
        .memory()
        .iter()
        .filter_map(Message::as_tool)
        .map(|m| m.error_kind)
        .collect();
    assert_eq!(
        kinds,
        [
            Some(ToolErrorKind::Denied),
            Some(ToolErrorKind::Repeated),
            Some(ToolErrorKind::Repeated)
        ]
    );
    for (text, is_error) in &results(&agent)[1..] {
        assert!(is_error);
        assert!(
            text.contains("it was refused") && text.contains("never touch /etc"),
            "{text}"
        );
        assert_eq!(text.matches("refused").count(), 1, "not nested: {text}");
    }

    // Without the guard, each repeat asks again.
    let (_, asked, _) = denied_repeatedly(false, 2).await;
    assert_eq!(asked, 2);
}

/// A model that takes a moment to answer (so that background jobs run meanwhile).
struct Slow(Arc<ScriptedModel>);

impl agent_toolkit::model::ChatModel for Slow {
    fn chat(
        &self,
        request: agent_toolkit::model::ChatRequest,
    ) -> futures::future::BoxFuture<
        '_,
        Result<agent_toolkit::model::ChatResponse, agent_toolkit::model::ModelError>,
    > {
        Box::pin(async move {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            self.0.chat(request).await
        })
    }
}

/// A run on a [`Slow`] model that calls `tool` about sales four times, then answers.
async fn four_repeats_on_a_slow_model(kit: &Toolkit, tool: &str) -> ReActAgent {
    let again = || ScriptedTurn::call(tool, json!({"topic": "sales"}));
    let turns = std::iter::repeat_with(again)
        .take(4)
        .chain([ScriptedTurn::text("Sales are up.")]);
    let model = Arc::new(ScriptedModel::new(turns));
    let mut agent = ReActAgent::builder(Arc::new(Slow(model)))
        .toolkit(kit)
        .build()
        .unwrap();
    agent.run("a report on sales").await.unwrap();
    agent
}

#[tokio::test]
async fn a_repeat_of_a_background_call_reported_finished_gets_its_result() {
    let runs = Arc::new(Runs::default());
    let kit = Toolkit::builder()
        .register(Report)
        .context_shared(runs.clone())
        .build()
        .unwrap();
    // The job finishes while the model thinks; the agent reports it before a later step.
    let agent = four_repeats_on_a_slow_model(&kit, "report").await;
    assert_eq!(runs.0.load(Ordering::SeqCst), 1);
    let memory = agent.memory();
    let reported = memory
        .iter()
        .position(|m| m.content().contains("finished: report on sales"))
        .expect("the job was reported finished");
    // Every repeat after the report quotes the job's result, not "running in the background".
    let after: Vec<&str> = memory[reported..]
        .iter()
        .filter_map(Message::as_tool)
        .map(|m| m.content.as_str())
        .collect();
    assert!(!after.is_empty());
    for text in after {
        assert!(
            text.contains("returned: report on sales") && !text.contains("background"),
            "{text}"
        );
    }
}

/// A report that fails the first time.
#[tool(background)]
async fn shaky_report(topic: String, #[ctx] runs: Ctx<Runs>) -> Result<String, ToolError> {
    if runs.0.0.fetch_add(1, Ordering::SeqCst) == 0 {
        return Err(ToolError::execution("the printer jammed"));
    }
    Ok(format!("report on {topic}"))
}

#[tokio::test]
async fn a_repeat_of_a_background_call_whose_job_failed_runs_again() {
    let runs = Arc::new(Runs::default());
    let kit = Toolkit::builder()
        .register(ShakyReport)
        .context_shared(runs.clone())
        .build()
        .unwrap();
    let agent = four_repeats_on_a_slow_model(&kit, "shaky_report").await;
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    // The first job failed; once that was reported, the repeat ran as a retry.
    let memory = agent.memory();
    assert!(
        memory
            .iter()
            .any(|m| m.content().contains("finished: Error: the printer jammed")),
        "{memory:?}"
    );
    assert!(runs.0.load(Ordering::SeqCst) >= 2, "the retry ran");
    // No repeat was answered with the stale "running in the background" after the failure.
    let failed_at = memory
        .iter()
        .position(|m| m.content().contains("printer jammed"))
        .unwrap();
    let next_call = memory[failed_at..]
        .iter()
        .filter_map(Message::as_tool)
        .next()
        .expect("a call after the report");
    assert!(
        next_call.content.contains("is running in the background") && !next_call.is_error,
        "the retry was submitted: {}",
        next_call.content
    );
}
