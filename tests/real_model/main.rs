//! A real model drives the agent: llama.cpp's own server with Qwen2.5-Coder-0.5B-Instruct
//! (`tests/model/`), on the OpenAI and the Anthropic wire, streamed and not, at temperature 0.
//! The tests assert structure — which tool ran, with which arguments, one result per call, the
//! key fact in the answer — never exact prose.
//!
//! - `scenarios`: the agent's features with a chat template under which the server returns
//!   structured calls;
//! - `text_calls`: the model's own template, under which it writes its calls as text, and the
//!   server's refusal of its own output;
//! - `faults`: a server killed mid-stream, and a failed run resumed elsewhere;
//! - `code`: code mode beside direct calling on the code-mode figures' tasks.
//!
//! Outside CI, when the model cannot be set up, every test skips with one loud line.

#[path = "../model/mod.rs"]
mod model;
#[path = "../model/tasks.rs"]
mod tasks;

#[path = "../code/tasks.rs"]
mod code_tasks;

mod code;
mod faults;
mod scenarios;
mod search;
mod text_calls;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agent_toolkit::model::{
    ChatEvent, ChatRequest, ChatResponse, Message, ModelError, Role, ToolMessage,
};
use agent_toolkit::prelude::*;
use agent_toolkit::{
    AgentEvent, ChatModel, Dialect, ReActAgent, agent::AgentError, exec::ApprovalDecision,
};
use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use model::{ModelServer, Template};
use tasks::Log;

/// Which wire the agent speaks to the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire {
    OpenAi,
    Anthropic,
}

pub const WIRES: [Wire; 2] = [Wire::OpenAi, Wire::Anthropic];

/// A model that records every request it is sent.
#[derive(Clone)]
pub struct Recorded {
    inner: Arc<dyn ChatModel>,
    pub requests: Arc<Mutex<Vec<ChatRequest>>>,
}

impl Recorded {
    pub fn new(server: &ModelServer, wire: Wire) -> Self {
        let inner: Arc<dyn ChatModel> = match wire {
            Wire::OpenAi => Arc::new(server.openai()),
            Wire::Anthropic => Arc::new(server.anthropic()),
        };
        Recorded {
            inner,
            requests: Arc::default(),
        }
    }

    /// Any model, recorded.
    pub fn of(inner: Arc<dyn ChatModel>) -> Self {
        Recorded {
            inner,
            requests: Arc::default(),
        }
    }

    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().unwrap().clone()
    }
}

impl ChatModel for Recorded {
    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, ModelError>> {
        self.requests.lock().unwrap().push(request.clone());
        self.inner.chat(request)
    }
    fn chat_stream(&self, request: ChatRequest) -> BoxStream<'_, Result<ChatEvent, ModelError>> {
        self.requests.lock().unwrap().push(request.clone());
        self.inner.chat_stream(request)
    }
    fn dialect(&self) -> Dialect {
        self.inner.dialect()
    }
}

/// The shared server of `template`, or `None` (skipped loudly) outside CI without the model.
pub fn server(template: Template) -> Option<&'static ModelServer> {
    ModelServer::shared(template)
}

/// What a run did.
pub struct Run {
    pub outcome: Result<String, AgentError>,
    /// Calls that reached a tool body.
    pub log: Vec<(String, serde_json::Value)>,
    /// Every request the model was sent.
    pub requests: Vec<ChatRequest>,
    /// Approvals asked (tool names).
    pub asked: Vec<String>,
}

impl Run {
    pub fn answer(&self) -> &str {
        match &self.outcome {
            Ok(answer) => answer,
            Err(e) => panic!("the run failed: {e}"),
        }
    }

    /// The tools that ran, in order.
    pub fn ran(&self) -> Vec<&str> {
        self.log.iter().map(|(t, _)| t.as_str()).collect()
    }
}

/// Run `agent` on `prompt`, streamed (approvals answered through the events) or not (the
/// agent's approver answers), and check what every run must hold.
pub async fn drive(
    agent: &mut ReActAgent,
    model: &Recorded,
    log: &Log,
    prompt: &str,
    stream: bool,
    approve: fn(&str) -> ApprovalDecision,
) -> Run {
    let mut asked = Vec::new();
    let outcome = if stream {
        let mut events = Box::pin(agent.run_stream(prompt));
        let mut outcome = None;
        let mut started = Vec::new();
        let mut results = Vec::new();
        while let Some(event) = events.next().await {
            match event {
                AgentEvent::ApprovalRequested(request, responder) => {
                    asked.push(request.tool.to_string());
                    responder.decide(approve(&request.tool));
                }
                AgentEvent::ToolCallStarted(call) => started.push(call.id.clone()),
                AgentEvent::ToolResult(result) => results.push(result.call_id.clone()),
                AgentEvent::Final(answer) => outcome = Some(Ok(answer)),
                AgentEvent::Failed(error) => outcome = Some(Err(error)),
                _ => {}
            }
        }
        started.sort();
        results.sort();
        assert_eq!(started, results, "every started call has one result event");
        outcome.expect("the stream ends with Final or Failed")
    } else {
        agent.run(prompt).await
    };
    let run = Run {
        outcome,
        log: log.calls(),
        requests: model.requests(),
        asked,
    };
    one_result_per_call(agent.memory());
    run
}

/// Every call in the conversation has exactly one result message.
pub fn one_result_per_call(memory: &[Message]) {
    let mut answers: HashMap<&str, usize> = HashMap::new();
    for m in memory {
        if let Some(result) = m.as_tool() {
            *answers.entry(&result.call_id).or_default() += 1;
        }
    }
    for m in memory.iter().filter(|m| m.role() == Role::Assistant) {
        for call in m.tool_calls() {
            assert_eq!(
                answers.get(&*call.id),
                Some(&1),
                "call {} ({}) must have exactly one result; conversation: {memory:#?}",
                call.id,
                call.name
            );
        }
    }
}

/// Whether the log has a call of `tool` whose arguments include `args` (strings without case).
pub fn called(run: &Run, tool: &str, args: serde_json::Value) -> bool {
    run.log
        .iter()
        .any(|(t, a)| t == tool && tasks::includes(a, &args))
}

/// An agent around `model` with the task toolkit of `tools`, deterministic options and an
/// approver that follows `approve` (in `run`; the stream's consumer follows it in `run_stream`).
pub fn agent(
    model: &Recorded,
    toolkit: &Toolkit,
    approve: fn(&str) -> ApprovalDecision,
) -> agent_toolkit::agent::ReActAgentBuilder {
    ReActAgent::builder(model.clone())
        .toolkit(toolkit)
        .max_iterations(4)
        .generation_options(model::options())
        .approver(move |request: agent_toolkit::exec::ApprovalRequest| {
            let decision = approve(&request.tool);
            async move { decision }
        })
}

pub fn yes(_: &str) -> ApprovalDecision {
    ApprovalDecision::Approve
}

pub fn no(_: &str) -> ApprovalDecision {
    ApprovalDecision::Deny("the user said no".into())
}

/// The task toolkit of `tools`, with its log.
pub fn kit(tools: &[&str]) -> (Toolkit, Arc<Log>) {
    let log = Arc::new(Log::default());
    (tasks::toolkit(tools, log.clone(), false), log)
}
