//! The real-model task suite: every task of `tests/model/tasks.rs` run by a `ReActAgent` against
//! llama.cpp's server with Qwen2.5-Coder-0.5B (`tests/model/`), on both wires (OpenAI Chat
//! Completions, Anthropic Messages) and with both chat templates (one under which the server
//! returns structured calls, and the model's own, under which calls come back as text and are
//! read by the library). Prints a Markdown table: success rate, turns per task, model time and
//! the library's own time per turn, and every failure classified as the model's (wrong tool,
//! wrong arguments, no answer) or the library's (a misread reply, a crash, a hang, a lost or
//! doubled result, an unclear error).
//!
//! Run: `cargo bench --features full --bench tasks` (sets the model up on first use; add
//! `-- TASK_NAME` to run the tasks whose name contains it; `TASKS_TEMPLATE=own|structured` and
//! `TASKS_WIRE=openai|anthropic|textprompt|constrained` pick configurations, `TASKS_TEXT_CALLS=off` turns
//! the reading of text calls off, `TASKS_LOOP_GUARD=off` the toolkit's loop guard, and
//! `TASKS_VERBOSE=1` prints the conversation of every failure).
//! Not a timed test: it measures.

#[path = "../model/mod.rs"]
mod model;
#[path = "../model/tasks.rs"]
mod tasks;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_toolkit::model::{
    ChatEvent, ChatRequest, ChatResponse, ModelError, TextCallFormat, TextToolCalls,
    parse_tool_calls,
};
use agent_toolkit::prelude::*;
use agent_toolkit::{AgentEvent, ChatModel, ReActAgent, agent::AgentError, exec::ApprovalDecision};
use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use model::{ModelServer, Template};
use tasks::{Approve, Log, Task};

/// Times every request of the model it wraps.
struct Timed<M> {
    inner: M,
    spent: Arc<Mutex<(Duration, usize)>>,
}

impl<M: ChatModel> ChatModel for Timed<M> {
    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            let started = Instant::now();
            let response = self.inner.chat(request).await;
            let mut spent = self.spent.lock().unwrap();
            spent.0 += started.elapsed();
            spent.1 += 1;
            response
        })
    }
    fn chat_stream(&self, request: ChatRequest) -> BoxStream<'_, Result<ChatEvent, ModelError>> {
        let started = Instant::now();
        let spent = self.spent.clone();
        let mut counted = false;
        self.inner
            .chat_stream(request)
            .inspect(move |event| {
                if !counted && matches!(event, Ok(ChatEvent::Done(_)) | Err(_)) {
                    counted = true;
                    let mut spent = spent.lock().unwrap();
                    spent.0 += started.elapsed();
                    spent.1 += 1;
                }
            })
            .boxed()
    }
    fn dialect(&self) -> agent_toolkit::Dialect {
        self.inner.dialect()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Wire {
    OpenAi,
    Anthropic,
    /// `TextToolCalls` around `OpenAiChat`: no native tools, calls taught in the prompt.
    TextPrompt,
    /// `OpenAiChat` with constrained tool calls: the reply held to a schema of the offered
    /// tools' calls or an answer.
    Constrained,
}

/// How one run went.
struct Outcome {
    ok: Result<(), (Blame, String)>,
    /// For a task that needs calls: whether they were made right (whatever the answer).
    calls_right: Option<bool>,
    turns: usize,
    model: Duration,
    total: Duration,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Blame {
    Model,
    Library,
}

/// Whether the providers read calls written as text: `TASKS_TEXT_CALLS=off` measures them as
/// they were before they did.
fn text_calls() -> bool {
    std::env::var("TASKS_TEXT_CALLS").map_or(true, |v| v != "off")
}

/// The whole run must end within this (a hang is a library failure).
///
/// The 1.5B takes about twice the 0.5B's time a turn (six turns of a long prompt can pass
/// 300 s on two busy cores), so its runs get twice the time.
fn run_limit() -> Duration {
    Duration::from_secs(if model::size() == "1.5b" { 600 } else { 300 })
}

/// Every other task is streamed, so both paths of every wire are measured.
async fn run(server: &ModelServer, wire: Wire, task: &Task, stream: bool) -> Outcome {
    let log = Arc::new(Log::default());
    let toolkit = tasks::toolkit(task.tools, log.clone(), task.finance_off);
    let spent = Arc::new(Mutex::new((Duration::ZERO, 0)));
    let chat: Box<dyn ChatModel> = match wire {
        Wire::OpenAi => Box::new(Timed {
            inner: server.openai_with(text_calls()),
            spent: spent.clone(),
        }),
        Wire::Anthropic => Box::new(Timed {
            inner: server.anthropic_with(text_calls()),
            spent: spent.clone(),
        }),
        Wire::TextPrompt => Box::new(Timed {
            inner: TextToolCalls::new(server.openai()),
            spent: spent.clone(),
        }),
        Wire::Constrained => Box::new(Timed {
            inner: server.openai_constrained(),
            spent: spent.clone(),
        }),
    };
    let approve = task.approve;
    let mut builder = ReActAgent::builder(chat)
        .toolkit(&toolkit)
        .max_iterations(6)
        .generation_options(model::options())
        .approver(move |_| async move {
            match approve {
                Approve::Yes => ApprovalDecision::Approve,
                Approve::No => ApprovalDecision::Deny("the user said no".into()),
            }
        });
    if task.finance_off {
        builder = builder.agent_managed_groups(["finance"]);
    }
    let mut agent = builder.build().expect("agent");
    let started = Instant::now();
    let result = if stream {
        tokio::time::timeout(run_limit(), streamed(&mut agent, task)).await
    } else {
        tokio::time::timeout(run_limit(), agent.run(task.prompt)).await
    };
    let total = started.elapsed();
    let (model_time, turns) = *spent.lock().unwrap();
    let ok = judge(task, &agent, result, &log, &toolkit);
    let calls_right =
        (!task.calls.is_empty()).then(|| tasks::check_calls(task, &log.calls()).is_ok());
    if ok.is_err() && std::env::var_os("TASKS_VERBOSE").is_some() {
        for m in agent.memory() {
            eprintln!(
                "    {:?}{}: {:?} {:?}",
                m.role(),
                if m.as_assistant().is_some_and(|turn| turn.calls_in_text) {
                    " (calls in text)"
                } else {
                    ""
                },
                m.content(),
                m.tool_calls()
                    .iter()
                    .map(|c| format!("{}({})", c.name, c.arguments))
                    .collect::<Vec<_>>()
            );
        }
    }
    Outcome {
        ok,
        calls_right,
        turns,
        model: model_time,
        total,
    }
}

/// The run through `run_stream`, approvals answered through its events.
async fn streamed(agent: &mut ReActAgent, task: &Task) -> Result<String, AgentError> {
    let mut events = Box::pin(agent.run_stream(task.prompt));
    let mut outcome = Err(AgentError::External(
        "the stream ended without an outcome".into(),
    ));
    while let Some(event) = events.next().await {
        match event {
            AgentEvent::ApprovalRequested(_, responder) => match task.approve {
                Approve::Yes => responder.approve(),
                Approve::No => responder.deny("the user said no"),
            },
            AgentEvent::Final(answer) => outcome = Ok(answer),
            AgentEvent::Failed(error) => outcome = Err(error),
            _ => {}
        }
    }
    outcome
}

fn judge(
    task: &Task,
    agent: &ReActAgent,
    result: Result<Result<String, AgentError>, tokio::time::error::Elapsed>,
    log: &Log,
    toolkit: &Toolkit,
) -> Result<(), (Blame, String)> {
    let library = |why: String| Err((Blame::Library, why));
    let model = |why: String| Err((Blame::Model, why));
    // Every call of the conversation has exactly one result.
    let mut answers: HashMap<String, usize> = HashMap::new();
    for m in agent.memory() {
        if let Some(result) = m.as_tool() {
            *answers.entry(result.call_id.to_string()).or_default() += 1;
        }
    }
    for m in agent.memory() {
        for call in m.tool_calls() {
            match answers.get(&*call.id) {
                Some(1) => {}
                n => return library(format!("call {} has {n:?} results", call.id)),
            }
        }
    }
    let answer = match result {
        Err(_) => return library(format!("no end within {:?}", run_limit())),
        Ok(Ok(answer)) => answer,
        Ok(Err(AgentError::MaxIterations { .. })) => {
            return model("no answer within 6 turns".into());
        }
        Ok(Err(AgentError::ArgumentBudget { tool, .. })) => {
            return model(format!("kept sending invalid arguments to {tool}"));
        }
        Ok(Err(AgentError::Model(e @ ModelError::OutputRejected { .. }))) => {
            return model(e.to_string());
        }
        Ok(Err(e)) => return library(format!("the run failed: {e}")),
    };
    // An answer that is a call of an offered tool was misread.
    let offered = toolkit.definitions();
    if let Ok(parsed) = parse_tool_calls(&answer, TextCallFormat::Json, &offered)
        && !parsed.calls.is_empty()
    {
        return library(format!("a tool call was taken for the answer: {answer:?}"));
    }
    tasks::check_calls(task, &log.calls()).or_else(model)?;
    tasks::check_answer(task, &answer).or_else(model)
}

fn main() {
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let tasks: Vec<Task> = tasks::tasks()
        .into_iter()
        .filter(|t| filter.is_empty() || filter.iter().any(|f| t.name.contains(f.as_str())))
        .collect();
    let mut table: BTreeMap<(Template, Wire), Vec<(&'static str, Outcome)>> = BTreeMap::new();
    for template in [Template::Structured, Template::Own] {
        if std::env::var("TASKS_TEMPLATE")
            .is_ok_and(|t| !format!("{template:?}").eq_ignore_ascii_case(&t))
        {
            continue;
        }
        let Some(server) = ModelServer::start(template) else {
            return;
        };
        let wires: &[Wire] = match template {
            Template::Structured => &[Wire::OpenAi, Wire::Anthropic, Wire::Constrained],
            Template::Own => &[
                Wire::OpenAi,
                Wire::Anthropic,
                Wire::TextPrompt,
                Wire::Constrained,
            ],
        };
        for &wire in wires {
            if std::env::var("TASKS_WIRE")
                .is_ok_and(|w| !format!("{wire:?}").eq_ignore_ascii_case(&w))
            {
                continue;
            }
            for (n, task) in tasks.iter().enumerate() {
                let outcome = runtime.block_on(run(&server, wire, task, !n.is_multiple_of(2)));
                let verdict = match &outcome.ok {
                    Ok(()) => "ok".to_string(),
                    Err((blame, why)) => format!("{blame:?} failure: {why}"),
                };
                eprintln!(
                    "{template:?} {wire:?} {:<18} {:>2} turns {:>6.1} s  {verdict}",
                    task.name,
                    outcome.turns,
                    outcome.total.as_secs_f64()
                );
                table
                    .entry((template, wire))
                    .or_default()
                    .push((task.name, outcome));
            }
        }
    }
    print_table(&table);
}

fn print_table(table: &BTreeMap<(Template, Wire), Vec<(&'static str, Outcome)>>) {
    println!(
        "| template | wire | success | right calls | model failures | library failures | turns per task | model time per turn | library time per turn |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for ((template, wire), runs) in table {
        let n = runs.len();
        let ok = runs.iter().filter(|(_, o)| o.ok.is_ok()).count();
        let blamed = |b: Blame| {
            runs.iter()
                .filter(|(_, o)| matches!(&o.ok, Err((x, _)) if *x == b))
                .count()
        };
        let turns: usize = runs.iter().map(|(_, o)| o.turns).sum();
        let needing = runs.iter().filter(|(_, o)| o.calls_right.is_some()).count();
        let right = runs
            .iter()
            .filter(|(_, o)| o.calls_right == Some(true))
            .count();
        let model: Duration = runs.iter().map(|(_, o)| o.model).sum();
        let total: Duration = runs.iter().map(|(_, o)| o.total).sum();
        let per_turn = |d: Duration| d.as_secs_f64() * 1000.0 / turns.max(1) as f64;
        println!(
            "| {template:?} | {wire:?} | {ok}/{n} ({:.0} %) | {right}/{needing} | {} | {} | {:.2} | {:.0} ms | {:.2} ms |",
            100.0 * ok as f64 / n as f64,
            blamed(Blame::Model),
            blamed(Blame::Library),
            turns as f64 / n as f64,
            per_turn(model),
            per_turn(total.saturating_sub(model)),
        );
    }
    println!();
    for ((template, wire), runs) in table {
        for (name, outcome) in runs {
            if let Err((blame, why)) = &outcome.ok {
                println!("- {template:?} / {wire:?} / `{name}`: {blame:?} — {why}");
            }
        }
    }
}
