//! The loop: ask the model, run the calls it asks for, feed the results back, until it
//! answers.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::{Stream, StreamExt};
use tokio::sync::mpsc;

use super::events::{AgentError, AgentEvent, ApprovalResponder};
use super::external::{RunOutcome, Suspended, Turns};
use super::groups::META_TOOL;
use super::{AgentInfo, ReActAgent};
use crate::background::JobStatus;
use crate::context::{Level, ToolContext};
use crate::error::{ToolError, ToolErrorKind};
use crate::exec::{ApprovalDecision, ApprovalHook, ApprovalRequest};
use crate::model::{ChatEvent, ChatRequest, ChatResponse, Message};
use crate::tool::{ToolCall, ToolDefinition, ToolResult};
use crate::toolkit::Toolkit;

pub(super) type Events = Option<mpsc::Sender<AgentEvent>>;

async fn emit(events: &Events, event: AgentEvent) {
    if let Some(tx) = events {
        // A consumer that stopped listening does not stop the run.
        let _ = tx.send(event).await;
    }
}

impl ReActAgent {
    /// Run the agent on `input` until it answers. The conversation is kept for the next run.
    pub async fn run(&mut self, input: impl Into<String>) -> Result<String, AgentError> {
        self.run_inner(input.into(), None).await
    }

    /// The same as a stream of [`AgentEvent`]s, ending with [`AgentEvent::Final`] or
    /// [`AgentEvent::Failed`]. Approvals are asked through the stream
    /// ([`AgentEvent::ApprovalRequested`]).
    pub fn run_stream(
        &mut self,
        input: impl Into<String>,
    ) -> impl Stream<Item = AgentEvent> + Send + '_ {
        let (tx, rx) = mpsc::channel(64);
        let input = input.into();
        let run: RunFuture<'_> = Box::pin(self.run_inner(input, Some(tx)));
        EventStream {
            run: Some(run),
            rx,
            done: false,
        }
    }

    async fn run_inner(&mut self, input: String, events: Events) -> Result<String, AgentError> {
        self.abandon_external_calls();
        let turns = Turns::start(self, input);
        match self.turns(turns, &[], events).await? {
            RunOutcome::Final(answer) => Ok(answer),
            // With no external tools offered, every call is answered here (run or refused), so
            // the loop never stops to wait for a client.
            RunOutcome::ToolCalls(_) => unreachable!("no external tools were offered"),
        }
    }

    /// The turns of one run, from `turns.next` up to the iteration limit. Calls of `external`
    /// tools are not run: when the model makes any, the loop stops after running the local
    /// calls of that turn and returns the external ones, remembering where it was.
    pub(super) async fn turns(
        &mut self,
        mut turns: Turns,
        external: &[ToolDefinition],
        events: Events,
    ) -> Result<RunOutcome, AgentError> {
        let ctx = ToolContext::new().with_agent_values_of(&self.context);
        // In `run_stream` the stream's consumer approves; in `run`, the agent's approver.
        let toolkit = match &events {
            Some(tx) => self
                .toolkit
                .with_approver(Some(Arc::new(StreamApprover(tx.clone())))),
            None => self.toolkit.clone(),
        };

        while turns.next <= self.max_iterations {
            let iteration = turns.next;
            turns.next += 1;
            emit(&events, AgentEvent::Iteration(iteration)).await;
            self.report_background();
            // At the agent level, so a value put in the call context still wins over it.
            let mut ctx = ctx.clone();
            ctx.insert(
                Level::Agent,
                Arc::new(AgentInfo {
                    name: self.name.clone(),
                    id: self.id.clone(),
                    run_id: turns.run_id.clone(),
                    iteration,
                }),
            );

            // One snapshot per turn: what the model is shown is what it may call.
            let snapshot = self.toolkit.snapshot();
            let mut tools: Vec<_> = snapshot.iter().cloned().collect();
            tools.extend(self.meta_tool());
            tools.extend(external.iter().cloned());
            let request = ChatRequest::new(self.prompt())
                .with_tools(tools)
                .with_tool_choice(self.tool_choice.clone())
                .with_parallel_tool_calls(self.parallel_tool_calls)
                .with_options(self.options.clone());
            let response = match self.ask(request, &events).await {
                Ok(r) => r,
                Err(e) => return self.fail(AgentError::Model(e), &events).await,
            };
            let calls = response.message.tool_calls.clone();
            self.memory.push(response.message);
            if calls.is_empty() {
                let answer = self
                    .memory
                    .last()
                    .map(|m| m.content.clone())
                    .unwrap_or_default();
                emit(&events, AgentEvent::Final(answer.clone())).await;
                return Ok(RunOutcome::Final(answer));
            }

            let (remote, calls): (Vec<ToolCall>, Vec<ToolCall>) = calls
                .into_iter()
                .partition(|c| external.iter().any(|d| d.name() == c.name));
            for call in &calls {
                emit(&events, AgentEvent::ToolCallStarted(call.clone())).await;
            }
            let results = self
                .execute(calls, &snapshot, &toolkit, &ctx, &events)
                .await;
            let mut direct = None;
            for result in &results {
                emit(&events, AgentEvent::ToolResult(result.clone())).await;
                self.memory.push(Message::tool_result(result));
                if result.is_pending()
                    && let Some(job) = result.job_id()
                {
                    self.pending_background.push(job);
                }
                if !result.is_error()
                    && self.return_directly.contains(&result.name)
                    && direct.is_none()
                {
                    direct = Some(result.model_text().into_owned());
                }
                match result.error() {
                    Some(e) if e.kind() == ToolErrorKind::InvalidArguments => {
                        let count = turns.failures.entry(result.name.clone()).or_default();
                        *count += 1;
                        if *count >= self.argument_budget {
                            let error = AgentError::ArgumentBudget {
                                tool: result.name.clone(),
                                count: *count,
                                last_error: e.message().to_string(),
                            };
                            return self.fail(error, &events).await;
                        }
                    }
                    _ => {
                        turns.failures.remove(&result.name);
                    }
                }
            }
            if !remote.is_empty() {
                self.suspended = Some(Suspended {
                    turns,
                    pending: remote.clone(),
                    external: external.to_vec(),
                });
                return Ok(RunOutcome::ToolCalls(remote));
            }
            if let Some(answer) = direct {
                self.memory
                    .push(Message::assistant(answer.clone(), Vec::new()));
                emit(&events, AgentEvent::Final(answer.clone())).await;
                return Ok(RunOutcome::Final(answer));
            }
        }
        let transcript = self.memory[turns.run_start..].to_vec();
        self.fail(
            AgentError::MaxIterations {
                iterations: self.max_iterations,
                transcript,
            },
            &events,
        )
        .await
    }

    async fn fail<T>(&self, error: AgentError, events: &Events) -> Result<T, AgentError> {
        emit(events, AgentEvent::Failed(error.clone())).await;
        Err(error)
    }

    /// The system prompt, then the conversation.
    fn prompt(&self) -> Vec<Message> {
        let mut messages = Vec::with_capacity(self.memory.len() + 1);
        messages.extend(self.system_prompt.iter().map(Message::system));
        messages.extend(self.memory.iter().cloned());
        messages
    }

    /// Tell the model about background calls that finished, and those still running. Each
    /// line names the job as well as the call: a model that reuses call ids gets one line per
    /// job, never one result in place of another.
    fn report_background(&mut self) {
        if self.pending_background.is_empty() {
            return;
        }
        let jobs = self.toolkit.background();
        let mut finished = Vec::new();
        let mut running = Vec::new();
        for job in std::mem::take(&mut self.pending_background) {
            let Some(record) = jobs.get(job) else {
                continue;
            };
            let (id, name) = (&record.call.id, &record.call.name);
            match &record.result {
                Some(result) if record.status != JobStatus::Pending => {
                    let text = result.model_text();
                    finished.push(format!("- call {id} ({name}, job {job}) finished: {text}"));
                }
                _ => {
                    running.push(format!("- call {id} ({name}, job {job})"));
                    self.pending_background.push(job);
                }
            }
        }
        if finished.is_empty() && running.is_empty() {
            return;
        }
        let mut note = String::from("[background tools]");
        if !finished.is_empty() {
            note.push_str("\nFinished since your last step:\n");
            note.push_str(&finished.join("\n"));
        }
        if !running.is_empty() {
            note.push_str("\nStill running:\n");
            note.push_str(&running.join("\n"));
        }
        self.memory.push(Message::user(note));
    }

    /// One model request; streamed when someone listens.
    async fn ask(
        &self,
        request: ChatRequest,
        events: &Events,
    ) -> Result<ChatResponse, crate::model::ModelError> {
        if events.is_none() {
            return self.model.chat(request).await;
        }
        let mut stream = self.model.chat_stream(request);
        while let Some(event) = stream.next().await {
            match event? {
                ChatEvent::TextDelta(text) => emit(events, AgentEvent::TextDelta(text)).await,
                ChatEvent::ToolCallStarted { .. } => {}
                ChatEvent::Done(response) => return Ok(response),
            }
        }
        Err(crate::model::ModelError::Malformed(
            "the response stream ended without a final message".into(),
        ))
    }

    /// Run one turn's calls: the meta tool here, calls of tools not offered this turn refused,
    /// the rest as one batch through the toolkit; progress forwarded as it comes.
    async fn execute(
        &self,
        calls: Vec<ToolCall>,
        snapshot: &crate::toolkit::ToolSnapshot,
        toolkit: &Toolkit,
        ctx: &ToolContext,
        events: &Events,
    ) -> Vec<ToolResult> {
        let mut results: Vec<Option<ToolResult>> = (0..calls.len()).map(|_| None).collect();
        let mut batch = Vec::new();
        let mut positions = Vec::new();
        let dialect = self.model.dialect();
        for (i, call) in calls.into_iter().enumerate() {
            if call.name == META_TOOL && !self.managed_groups.is_empty() {
                results[i] = Some(self.reset_equipped_tools(&call));
                continue;
            }
            let name = self
                .toolkit
                .original_name(dialect, &call.name)
                .unwrap_or(&call.name);
            if snapshot.get(name).is_none() {
                let offered: Vec<&str> = snapshot.iter().map(|d| d.name()).collect();
                let error = ToolError::new(
                    ToolErrorKind::Unavailable,
                    format!(
                        "tool `{}` is not available in this step; available tools: {}",
                        call.name,
                        offered.join(", ")
                    ),
                );
                results[i] = Some(ToolResult::new(call.id, call.name, Err(error), 0));
                continue;
            }
            positions.push(i);
            batch.push(call);
        }
        if !batch.is_empty() {
            let (ctx, mut progress) = ctx.clone().progress_channel(256);
            let done = {
                let run = toolkit.call_all(batch, &ctx);
                tokio::pin!(run);
                loop {
                    tokio::select! {
                        done = &mut run => break done,
                        Some(p) = progress.recv() => emit(events, AgentEvent::ToolProgress(p)).await,
                    }
                }
            };
            drop(ctx);
            while let Ok(p) = progress.try_recv() {
                emit(events, AgentEvent::ToolProgress(p)).await;
            }
            for (i, result) in positions.into_iter().zip(done) {
                results[i] = Some(result);
            }
        }
        results.into_iter().flatten().collect()
    }
}

/// Asks the consumer of `run_stream` to approve a call.
struct StreamApprover(mpsc::Sender<AgentEvent>);

impl ApprovalHook for StreamApprover {
    fn review(
        &self,
        request: ApprovalRequest,
    ) -> futures::future::BoxFuture<'static, ApprovalDecision> {
        let tx = self.0.clone();
        Box::pin(async move {
            let (responder, answer) = ApprovalResponder::new();
            if tx
                .send(AgentEvent::ApprovalRequested(request, responder))
                .await
                .is_err()
            {
                return ApprovalDecision::Deny("nobody was there to approve the call".into());
            }
            answer.await.unwrap_or_else(|_| {
                ApprovalDecision::Deny("the approval request was dismissed".into())
            })
        })
    }
}

/// A run in progress, as `run_stream` drives it.
type RunFuture<'a> = Pin<Box<dyn Future<Output = Result<String, AgentError>> + Send + 'a>>;

/// Interleaves the events a run emits with the run itself.
struct EventStream<'a> {
    run: Option<RunFuture<'a>>,
    rx: mpsc::Receiver<AgentEvent>,
    done: bool,
}

impl Stream for EventStream<'_> {
    type Item = AgentEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<AgentEvent>> {
        let this = &mut *self;
        loop {
            if let Poll::Ready(Some(event)) = this.rx.poll_recv(cx) {
                return Poll::Ready(Some(event));
            }
            if let Some(run) = this.run.as_mut() {
                match run.as_mut().poll(cx) {
                    // The run sent its final event itself; drain what is left.
                    Poll::Ready(_) => this.run = None,
                    Poll::Pending => return Poll::Pending,
                }
            } else if this.done {
                return Poll::Ready(None);
            } else {
                this.done = true;
                this.rx.close();
            }
        }
    }
}
