//! Code mode against direct tool calling on the fixed multi-step tasks (tests/code/tasks.rs):
//! model round trips and bytes sent to the model, the real OpenAI provider talking to a
//! scripted stand-in on loopback, so the bytes are the request bodies as sent.
//!
//! Three ways per task: direct calling with parallel calls (a model that batches every
//! independent call), direct calling one call per turn (what many models, small local ones
//! among them, do), and code mode (one program). The program's answer is checked against the
//! known answer; the figures go into BENCHMARKS.md.
//!
//! `cargo bench --features full --bench code_mode`

#[path = "../providers/support.rs"]
#[allow(dead_code)]
mod support;
#[path = "../code/tasks.rs"]
mod tasks;

use agent_toolkit::ReActAgent;
use agent_toolkit::code::{CODE_TOOL, CodeExecution, CodeMode};
use agent_toolkit::model::OpenAiChat;
use serde_json::{Value, json};
use support::{Reply, Server};

fn completion(message: Value, finish: &str) -> Reply {
    Reply::json(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-test",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    }))
}

fn calls(turn: usize, calls: &[(&str, Value)]) -> Reply {
    let tool_calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| {
            json!({"id": format!("call_{turn}_{i}"), "type": "function",
                   "function": {"name": name, "arguments": args.to_string()}})
        })
        .collect();
    completion(
        json!({"role": "assistant", "content": null, "tool_calls": tool_calls}),
        "tool_calls",
    )
}

fn answer(text: &str) -> Reply {
    completion(json!({"role": "assistant", "content": text}), "stop")
}

struct Figures {
    round_trips: usize,
    bytes: usize,
}

async fn measure(task: &tasks::Task, way: &str) -> Figures {
    let turns: Vec<Vec<(&str, Value)>> = match way {
        "parallel" => task.direct_turns.clone(),
        "sequential" => task
            .direct_turns
            .iter()
            .flatten()
            .map(|c| vec![c.clone()])
            .collect(),
        _ => vec![vec![(CODE_TOOL, json!({ "code": task.program }))]],
    };
    let final_text = task.expected.join(", ");
    let mut replies: Vec<Reply> = turns
        .iter()
        .enumerate()
        .map(|(i, t)| calls(i + 1, t))
        .collect();
    replies.push(answer(&final_text));
    let server = Server::start(replies).await;
    let model = OpenAiChat::builder()
        .base_url(format!("{}/v1", server.url))
        .api_key("sk-test")
        .model("gpt-test")
        .build()
        .expect("model");
    let mut builder = ReActAgent::builder(model)
        .toolkit(&tasks::toolkit())
        .max_iterations(40);
    if way == "code" {
        builder = builder.code_mode(CodeMode::new().execution(CodeExecution::Local));
    }
    let mut agent = builder.build().expect("agent");
    let got = agent.run(task.question.clone()).await.expect("run");
    assert_eq!(got, final_text);
    let requests = server.requests();
    if way == "code" {
        // The program's result, the only tool result the model saw, has the answer.
        let last = &requests.last().expect("requests").body;
        let result = last["messages"]
            .as_array()
            .and_then(|m| m.iter().rev().find(|m| m["role"] == "tool"))
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_string();
        for name in &task.expected {
            assert!(
                result.contains(name.as_str()),
                "the program's answer {result} lacks {name}"
            );
        }
    }
    Figures {
        round_trips: requests.len(),
        bytes: requests.iter().map(|r| r.raw.len()).sum(),
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        println!("| task | way | round trips | bytes sent | code mode: fewer round trips | code mode: fewer input bytes |");
        println!("|---|---|---:|---:|---:|---:|");
        for task in tasks::tasks() {
            let code = measure(&task, "code").await;
            for way in ["parallel", "sequential"] {
                let direct = measure(&task, way).await;
                println!(
                    "| {} | direct, {} calls | {} | {} | {:.1}× | {:.0} % |",
                    task.name,
                    way,
                    direct.round_trips,
                    direct.bytes,
                    direct.round_trips as f64 / code.round_trips as f64,
                    100.0 * (1.0 - code.bytes as f64 / direct.bytes as f64)
                );
            }
            println!("| {} | code mode | {} | {} | | |", task.name, code.round_trips, code.bytes);
        }
    });
}
