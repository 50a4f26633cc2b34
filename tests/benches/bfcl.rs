//! BFCL's single-turn categories (simple, multiple, parallel, parallel_multiple, irrelevance)
//! with a real small model behind llama.cpp's server, scored by BFCL's own AST checker
//! (tests/bfcl/bfcl.py, from the `bfcl-eval` wheel).
//!
//! Every question is asked three ways, the model's own chat template on the server each time:
//! - **(a) the server alone**: a plain HTTP request to `/v1/chat/completions` with the tools;
//!   only the structured `tool_calls` of the reply count (what a user gets without this
//!   library; an HTTP error counts as no call);
//! - **(b) the library**: `OpenAiChat` (its text-call reading, its retry when the server
//!   refuses several calls), then the reply's calls run through a `Toolkit` holding the
//!   question's functions (its argument rules: validation, lossless coercion): the calls that
//!   count are the ones the toolkit ran, with the arguments the tools received;
//! - **(c) constrained**: (b) with `OpenAiChat::constrained_tool_calls(true)`;
//! - **(t) the library's own prompt**: `TextToolCalls` around `OpenAiChat`: no native tools,
//!   the tools and the call format (`{"tool_calls": [...]}`, several calls in one list)
//!   described by the library in the system prompt, the calls read from the text, then run by
//!   the toolkit as in (b);
//! - **(s) the server alone, structured template**: (a) against a second server whose chat
//!   template makes llama.cpp parse the model's calls (`tests/model/structured.jinja`): the best
//!   the server does without the library, beside (a)'s "what a user gets by default".
//!
//! Run: `cargo bench --features full --bench bfcl` (`REAL_MODEL=1.5b` for the 1.5B,
//! `BFCL_PER_CATEGORY=N` questions per category, 10 by default, taken at even steps;
//! `BFCL_WAYS=a,b,c,t,s` picks the ways). Needs `tests/search/setup.sh` (the wheel) and
//! `tests/model/setup.sh` (the model; `setup.sh 1.5b` for the 1.5B). Prints a Markdown table
//! and writes the raw runs to `target/bfcl/` (answers, calls, BFCL's verdicts).

#[path = "../model/mod.rs"]
mod model;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use agent_toolkit::model::{ChatRequest, GenerationOptions, Message, TextToolCalls};
use agent_toolkit::prelude::*;
use agent_toolkit::tool::{ToolArgs, ToolFuture, ToolSpec};
use agent_toolkit::{AgentTool, ChatModel};
use model::{ModelServer, Template};
use serde_json::{Value, json};

const CATEGORIES: [&str; 5] = [
    "simple",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
];

/// One BFCL function as a toolkit tool: its schema given whole; a call records the arguments
/// the tool received (after the toolkit's rules).
struct Function {
    name: String,
    description: String,
    parameters: Value,
    ran: Arc<Mutex<Vec<(String, Value)>>>,
}

impl AgentTool for Function {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(self.name.clone(), self.description.clone())
            .with_input_schema(self.parameters.clone())
    }

    fn call(&self, args: ToolArgs) -> ToolFuture {
        let arguments = serde_json::from_str(args.raw()).unwrap_or(Value::Null);
        self.ran
            .lock()
            .unwrap()
            .push((self.name.clone(), arguments));
        Box::pin(async { Ok(ToolOutput::text("done")) })
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn target() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"))
}

fn wheel() -> PathBuf {
    target().join("search/bfcl_eval-2026.3.23-py3-none-any.whl")
}

fn python(args: &[&str]) -> String {
    let output = Command::new("python3")
        .arg(root().join("tests/bfcl/bfcl.py"))
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "bfcl.py {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("UTF-8")
}

/// The question's messages for the library.
fn messages(question: &Value) -> Vec<Message> {
    question["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| {
            let content = m["content"].as_str().unwrap_or_default();
            match m["role"].as_str() {
                Some("system") => Message::system(content),
                _ => Message::user(content),
            }
        })
        .collect()
}

fn options() -> GenerationOptions {
    // Parallel questions ask for up to four calls with several arguments each.
    GenerationOptions::new()
        .with_temperature(0.0)
        .with_max_tokens(400)
}

/// (a): the server alone, structured `tool_calls` only.
async fn server_alone(http: &reqwest::Client, url: &str, question: &Value) -> Vec<Value> {
    let tools: Vec<Value> = question["functions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| json!({"type": "function", "function": f}))
        .collect();
    let body = json!({
        "model": "local",
        "messages": question["messages"],
        "tools": tools,
        "temperature": 0.0,
        "max_tokens": 400,
    });
    let Ok(response) = http
        .post(format!("{url}/v1/chat/completions"))
        .json(&body)
        .send()
        .await
    else {
        return Vec::new();
    };
    if !response.status().is_success() {
        return Vec::new();
    }
    let reply: Value = response.json().await.unwrap_or_default();
    reply["choices"][0]["message"]["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let arguments = c["function"]["arguments"]
                .as_str()
                .and_then(|a| serde_json::from_str(a).ok())
                .unwrap_or(Value::Null);
            json!({"name": c["function"]["name"], "arguments": arguments})
        })
        .collect()
}

/// (b) and (c): the provider's reply, its calls run by a toolkit of the question's functions.
async fn through_library(chat: &dyn ChatModel, question: &Value) -> (Vec<Value>, String) {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let mut builder = Toolkit::builder();
    for f in question["functions"].as_array().into_iter().flatten() {
        builder = builder.register(Function {
            name: f["name"].as_str().unwrap_or_default().to_string(),
            description: f["description"].as_str().unwrap_or_default().to_string(),
            parameters: f["parameters"].clone(),
            ran: ran.clone(),
        });
    }
    let toolkit = match builder.build() {
        Ok(toolkit) => toolkit,
        Err(e) => return (Vec::new(), format!("toolkit: {e}")),
    };
    let request = ChatRequest::new(messages(question))
        .with_tools(toolkit.definitions())
        .with_options(options());
    let reply = match chat.chat(request).await {
        Ok(reply) => reply,
        Err(e) => return (Vec::new(), format!("model error: {e}")),
    };
    let note = format!(
        "{}{}",
        if reply.message.calls_in_text {
            "calls in text; "
        } else {
            ""
        },
        reply.message.content.chars().take(300).collect::<String>()
    );
    let results = toolkit
        .call_all(reply.message.tool_calls.clone(), &ToolContext::new())
        .await;
    let refused: Vec<String> = results
        .iter()
        .filter(|r| r.is_error())
        .map(|r| format!("{:?}", r.outcome))
        .collect();
    let calls = ran
        .lock()
        .unwrap()
        .iter()
        .map(|(name, arguments)| json!({"name": name, "arguments": arguments}))
        .collect();
    let note = if refused.is_empty() {
        note
    } else {
        format!("{note} | refused: {}", refused.join("; "))
    };
    (calls, note)
}

#[tokio::main]
async fn main() {
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let per_category: usize = std::env::var("BFCL_PER_CATEGORY")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10);
    let ways: Vec<String> = std::env::var("BFCL_WAYS")
        .unwrap_or_else(|_| "a,b,c,t,s".into())
        .split(',')
        .map(str::to_string)
        .collect();
    let status = Command::new("bash")
        .arg(root().join("tests/search/setup.sh"))
        .status()
        .expect("tests/search/setup.sh runs");
    assert!(status.success(), "tests/search/setup.sh failed");
    let dir = target().join("bfcl");
    std::fs::create_dir_all(&dir).expect("target/bfcl");
    let questions_file = dir.join("questions.json");
    let wheel = wheel();
    python(&[
        "extract",
        &wheel.to_string_lossy(),
        &questions_file.to_string_lossy(),
        &per_category.to_string(),
    ]);
    let questions: Value =
        serde_json::from_str(&std::fs::read_to_string(&questions_file).expect("questions"))
            .expect("questions JSON");

    let Some(server) = ModelServer::shared(Template::Own) else {
        return;
    };
    let structured = if ways.iter().any(|w| w == "s") {
        ModelServer::shared(Template::Structured)
    } else {
        None
    };
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    let library = server.openai();
    let constrained = server.openai_constrained();
    let prompted = TextToolCalls::new(server.openai());
    let mut runs: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let started = Instant::now();
    for category in CATEGORIES {
        if !filter.is_empty() && !filter.iter().any(|f| category.contains(f.as_str())) {
            continue;
        }
        for question in questions[category].as_array().into_iter().flatten() {
            let id = question["id"].as_str().unwrap_or_default();
            for way in &ways {
                let (calls, note) = match way.as_str() {
                    "a" => (
                        server_alone(&http, &server.url, question).await,
                        String::new(),
                    ),
                    "b" => through_library(&library, question).await,
                    "c" => through_library(&constrained, question).await,
                    "t" => through_library(&prompted, question).await,
                    "s" => match structured {
                        Some(structured) => (
                            server_alone(&http, &structured.url, question).await,
                            String::new(),
                        ),
                        None => continue,
                    },
                    other => panic!("BFCL_WAYS: unknown way {other:?} (a, b, c, t or s)"),
                };
                eprintln!(
                    "[{:>5.0}s] {way} {id}: {}",
                    started.elapsed().as_secs_f64(),
                    serde_json::to_string(&calls).unwrap_or_default()
                );
                runs.entry(way.clone())
                    .or_default()
                    .push(json!({"id": id, "calls": calls, "note": note}));
            }
        }
    }
    let results_file = dir.join(format!("runs-{}.json", model::size()));
    std::fs::write(
        &results_file,
        serde_json::to_string_pretty(&json!({"questions": questions, "runs": runs})).expect("JSON"),
    )
    .expect("write the runs");
    let report: Value = serde_json::from_str(&python(&[
        "check",
        &wheel.to_string_lossy(),
        &results_file.to_string_lossy(),
    ]))
    .expect("the checker's JSON");
    std::fs::write(
        dir.join(format!("verdicts-{}.json", model::size())),
        serde_json::to_string_pretty(&report).expect("JSON"),
    )
    .expect("write the verdicts");

    println!(
        "\nBFCL single-turn, Qwen2.5-Coder-{} (own chat template), {per_category} questions \
         per category, {:.0} s\n",
        model::size().to_uppercase(),
        started.elapsed().as_secs_f64()
    );
    println!("| way | {} |", CATEGORIES.join(" | "));
    println!("|---|{}", "---:|".repeat(CATEGORIES.len()));
    for way in &ways {
        let cells: Vec<String> = CATEGORIES
            .iter()
            .map(|c| {
                let s = &report[way.as_str()][*c];
                match (s["right"].as_u64(), s["asked"].as_u64()) {
                    (Some(r), Some(a)) => format!("{r}/{a}"),
                    _ => "–".into(),
                }
            })
            .collect();
        println!("| {way} | {} |", cells.join(" | "));
    }
}
