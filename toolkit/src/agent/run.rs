//! The loop: ask the model, run the calls it asks for, feed the results back, until it
//! answers.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::{Stream, StreamExt};
use tokio::sync::mpsc;

use super::events::{AgentError, AgentEvent, ApprovalResponder, Events, emit};
use super::external::RunOutcome;
use super::paused_run::{PausedRun, PendingApproval, PendingQuestion, Turns, Waiting};
use super::search::{self, SearchMode};
use super::{AgentInfo, ReActAgent};
use crate::background::JobStatus;
use crate::context::{Level, ToolContext};
use crate::error::ToolErrorKind;
use crate::exec::{ApprovalDecision, ApprovalHook, ApprovalRequest};
use crate::model::{ChatEvent, ChatRequest, ChatResponse, Message, ToolChoice};
use crate::tool::{ToolCall, ToolDefinition, ToolResult};
use crate::toolkit::Toolkit;
use crate::toolkit::{AnsweredCall, CallAnswer, LOADED_KEY};
use tracing::Instrument;

impl ReActAgent {
    /// Run the agent on `input` until it answers. The conversation is kept for the next run.
    ///
    /// An agent built with [`pause_at_approvals`](super::ReActAgentBuilder::pause_at_approvals)
    /// returns [`AgentError::Paused`] with the state when the run pauses.
    pub async fn run(&mut self, input: impl Into<String>) -> Result<String, AgentError> {
        self.run_context = ToolContext::new();
        self.run_inner(input.into(), None).await
    }

    /// [`run`](Self::run) with call-level context for this run: every tool call of the run gets
    /// `ctx`'s values, which shadow the agent's ([`ReActAgentBuilder::context`]) and the
    /// toolkit's values of the same type — the precedence rule's *call > agent > toolkit* — and
    /// its cancellation token, if it has one, cancels the run's running tools. Per-run values are
    /// the request's user, tenant or trace; they are not stored: a run that pauses and is
    /// resumed gets none.
    ///
    /// [`ReActAgentBuilder::context`]: super::ReActAgentBuilder::context
    pub async fn run_with_context(
        &mut self,
        input: impl Into<String>,
        ctx: ToolContext,
    ) -> Result<String, AgentError> {
        self.run_context = ctx;
        let outcome = self.run_inner(input.into(), None).await;
        self.run_context = ToolContext::new();
        outcome
    }

    /// The same as a stream of [`AgentEvent`]s, ending with [`AgentEvent::Final`] or
    /// [`AgentEvent::Failed`]. Approvals are asked through the stream
    /// ([`AgentEvent::ApprovalRequested`]), unless the agent pauses at approvals
    /// ([`pause_at_approvals`](super::ReActAgentBuilder::pause_at_approvals)): then a pause
    /// ends the stream with `Failed(AgentError::Paused(state))`.
    pub fn run_stream(
        &mut self,
        input: impl Into<String>,
    ) -> impl Stream<Item = AgentEvent> + Send + '_ {
        let (tx, rx) = mpsc::channel(64);
        let input = input.into();
        self.run_context = ToolContext::new();
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
        match self.turns(turns, &[], events.clone()).await? {
            RunOutcome::Final(answer) => Ok(answer),
            RunOutcome::Paused(run) => self.fail(AgentError::Paused(run), &events).await,
            // With no external tools offered, every call is answered here (run, refused or
            // paused), so the loop never stops to wait for a client.
            RunOutcome::ToolCalls(_) => unreachable!("no external tools were offered"),
        }
    }

    /// The context of every call of the run: the run's call-level values, then the agent's own
    /// (the toolkit's are added by the toolkit).
    pub(super) fn base_context(&self) -> ToolContext {
        self.run_context.clone().with_agent_values_of(&self.context)
    }

    /// `base` with the [`AgentInfo`] of one step, at the agent level, so a value put in the call
    /// context still wins over it.
    pub(super) fn step_context(
        &self,
        base: &ToolContext,
        turns: &Turns,
        iteration: usize,
    ) -> ToolContext {
        let mut ctx = base.clone();
        ctx.insert(
            Level::Agent,
            Arc::new(AgentInfo {
                name: self.name.clone(),
                id: self.id.clone(),
                run_id: turns.run_id.clone(),
                iteration,
            }),
        );
        ctx
    }

    /// The turns of one run, from `turns.next` up to the iteration limit. Calls of `external`
    /// tools are not run: when the model makes any, the loop stops after running the local
    /// calls of that turn and returns the external ones, remembering where it was. An agent that
    /// pauses at approvals stops the same way at calls that wait for a decision.
    pub(super) async fn turns(
        &mut self,
        mut turns: Turns,
        external: &[ToolDefinition],
        events: Events,
    ) -> Result<RunOutcome, AgentError> {
        let span = self.run_span(&mut turns);
        let outcome = self
            .turns_in_span(turns, external, events)
            .instrument(span.clone())
            .await;
        record_run_error(&span, &outcome);
        outcome
    }

    /// The `invoke_agent` span of a run (or of a resumed run, which links to the span of the
    /// run that paused: `turns.traceparent`).
    pub(super) fn run_span(&self, turns: &mut Turns) -> tracing::Span {
        let span = tracing::info_span!(
            "invoke_agent",
            otel.name = format!("invoke_agent {}", self.name),
            gen_ai.operation.name = "invoke_agent",
            gen_ai.agent.name = %self.name,
            gen_ai.agent.id = %self.id,
            gen_ai.conversation.id = %turns.run_id,
            gen_ai.provider.name = self.model.provider(),
            gen_ai.request.model = self.model.name(),
            error.type = tracing::field::Empty,
        );
        if let Some(paused) = turns.traceparent.take() {
            crate::trace_context::link(&span, &paused);
        }
        span
    }

    pub(super) async fn turns_in_span(
        &mut self,
        mut turns: Turns,
        external: &[ToolDefinition],
        events: Events,
    ) -> Result<RunOutcome, AgentError> {
        let base = self.base_context();
        // In `run_stream` the stream's consumer approves; in `run`, the agent's approver; an
        // agent that pauses asks no one.
        let toolkit = match &events {
            Some(tx) if !self.settings.pause_at_approvals => self
                .toolkit
                .with_approver(Some(Arc::new(StreamApprover(tx.clone())))),
            _ => self.toolkit.clone(),
        };

        while turns.next <= self.settings.max_iterations {
            let iteration = turns.next;
            turns.next += 1;
            emit(&events, AgentEvent::Iteration(iteration)).await;
            self.report_background().await;
            let ctx = self.step_context(&base, &turns, iteration);

            // One snapshot per turn: what the model is shown is what it may call (and, with the
            // provider's own search, the deferred tools it may find and call).
            let snapshot = self.toolkit.snapshot();
            // The toolkit's tools, then the view's own (the group tool, the search), each as it
            // offers itself this turn. In local code mode the model sees the view's own alone:
            // the program tool declares the toolkit's tools, which its programs call (and search
            // the deferred ones) themselves.
            let offered = self.toolkit.offered(&snapshot);
            let programs = self.runs_programs();
            let mode = if programs {
                SearchMode::Off
            } else {
                self.search_mode(&snapshot)
            };
            let mut tools: Vec<ToolDefinition> = if programs {
                offered.view
            } else {
                let mut tools = offered.tools;
                tools.extend(offered.view);
                tools
            };
            tools.extend(external.iter().cloned());
            let deferred = match mode {
                SearchMode::Native => self.deferred_tools(&snapshot),
                _ => Vec::new(),
            };
            let tool_changes = self.model.tool_features().tool_changes;
            let (declared, deferred) = if tool_changes {
                let (declared, deferred) = self.track_tool_list(&tools, deferred);
                (Some(declared), deferred)
            } else {
                (None, deferred)
            };
            let choice = self.tool_choice(&turns);
            let mut request = ChatRequest::new(self.prompt())
                .with_tools(tools)
                .with_deferred_tools(deferred)
                .with_tool_choice(choice.clone())
                .with_parallel_tool_calls(self.settings.parallel_tool_calls)
                .with_options(self.settings.options.clone())
                .with_hosted_code(self.hosted_code());
            if let Some(declared) = declared {
                request = request.with_declared_tools(declared);
            }
            // Asked for an answer because it loops, a model may write its call as text all
            // the same: read as the call it is (the loop guard answers it), never the answer.
            let forced = (choice == ToolChoice::None && self.settings.tool_choice != choice)
                .then(|| request.clone().with_tool_choice(ToolChoice::Auto));
            let response = match self.ask(request, &events).await {
                Ok(mut r) => {
                    if let Some(request) = &forced {
                        crate::model::read_text_calls(&mut r, request, &|name| name.to_string());
                    }
                    r
                }
                Err(e) => {
                    // Nothing of the failed turn is in the conversation. The run keeps its
                    // place, so that `paused_run` + `resume` asks the model again from here,
                    // without running the calls that finished.
                    turns.next = iteration;
                    let error = AgentError::Model(e);
                    self.suspended = Some(PausedRun::failed(
                        turns,
                        external.to_vec(),
                        error.to_string(),
                    ));
                    return self.fail(error, &events).await;
                }
            };
            turns.usage.input_tokens += response.usage.input_tokens;
            turns.usage.output_tokens += response.usage.output_tokens;
            let calls = response.message.tool_calls.clone();
            let answer = calls.is_empty().then(|| response.message.content.clone());
            self.memory.push(response.message.into());
            if let Some(answer) = answer {
                emit(&events, AgentEvent::Final(answer.clone())).await;
                return Ok(RunOutcome::Final(answer));
            }

            // As the batch does: a call id used twice in a turn is answered once, by the first
            // call with it; the others get an error. Done for the whole turn here, because calls
            // held back (external, or waiting for approval) are matched to answers by id.
            let (calls, reused) = first_uses(calls);
            let Answered {
                mut results,
                waiting,
                remote,
                found,
                stop,
            } = self
                .execute(
                    calls,
                    Offering {
                        snapshot: &snapshot,
                        callable: offered.callable,
                        mode,
                        external,
                    },
                    &toolkit,
                    &ctx,
                    &events,
                )
                .await;
            if tool_changes && mode == SearchMode::Native {
                // Tools the provider made callable itself are not announced as added.
                let loaded = found.references.values().flatten().cloned();
                self.found
                    .tool_list
                    .provider_loaded(loaded.chain(found.called_deferred));
            }
            self.found.search_references = found.references;
            for call in reused {
                emit(&events, AgentEvent::ToolCallStarted(call.clone())).await;
                results.push(crate::exec::batch::duplicate(call));
            }
            let mut direct = None;
            let failure = self
                .absorb(&results, &mut turns, &mut direct, &events)
                .await;
            if let Some(error) = stop.map(AgentError::Guardrail).or(failure) {
                // The calls still waiting will never run: answer them so that the
                // conversation stays valid.
                let closing = PausedRun::held(turns, waiting, remote, Vec::new(), None);
                self.suspended = Some(closing);
                self.abandon_external_calls();
                return self.fail(error, &events).await;
            }
            if !remote.is_empty() || !waiting.is_empty() {
                let paused = !waiting.is_empty();
                let held = PausedRun::held(turns, waiting, remote, external.to_vec(), direct);
                let calls = held.pending_external_calls().to_vec();
                self.suspended = Some(held);
                return Ok(match self.paused_run() {
                    Some(run) if paused => RunOutcome::Paused(Box::new(run)),
                    _ => RunOutcome::ToolCalls(calls),
                });
            }
            if let Some(answer) = direct {
                return Ok(self.answer_directly(answer, &events).await);
            }
        }
        let transcript = self.memory[turns.run_start..].to_vec();
        self.fail(
            AgentError::MaxIterations {
                iterations: self.settings.max_iterations,
                transcript,
            },
            &events,
        )
        .await
    }

    /// The tool choice of the next request: the agent's, or [`ToolChoice::None`] when the model
    /// is looping — its last three steps made the same calls, so it has had the same results
    /// (or errors) at least twice. It is asked for its answer, with its tools still shown; a
    /// call it writes as text all the same is read as the call it is (and answered by the
    /// loop guard), never taken for the answer. Only with the loop guard on
    /// ([`ToolkitBuilder::loop_guard`](crate::toolkit::ToolkitBuilder::loop_guard)); traced
    /// (`agent_toolkit::loop_guard`).
    fn tool_choice(&self, turns: &Turns) -> ToolChoice {
        if self.toolkit.guards_loops() && self.looping(turns.run_start) {
            tracing::warn!(
                target: "agent_toolkit::loop_guard",
                "the model made the same calls three steps running; asked for its answer \
                 without calls"
            );
            return ToolChoice::None;
        }
        self.settings.tool_choice.clone()
    }

    /// Whether the run's last three model steps, with nothing but their results between them,
    /// made the same calls: every call of the last two repeats one of the first.
    fn looping(&self, run_start: usize) -> bool {
        let run = self.memory.get(run_start..).unwrap_or_default();
        let mut steps = steps_back(run).map(|(calls, _)| calls);
        let (Some(last), Some(middle), Some(first)) = (steps.next(), steps.next(), steps.next())
        else {
            return false;
        };
        last.iter().chain(middle).all(|call| {
            first
                .iter()
                .any(|earlier| crate::toolkit::repeats(call, earlier))
        })
    }

    /// The earlier calls that `calls` (the last message's) repeat, with their results, for the
    /// turn's loop guard. Each call is looked for in the step before, then — while each step
    /// made it again and got an error for it (the guard's refusal) — in the one before that,
    /// until a step answered it without error, or denied it (an approver's or a policy's
    /// refusal, which a repeat gets again without asking anew); only while nothing but results
    /// and the agent's notes came between (a user's message starts afresh). A call whose only
    /// answers were other errors is not there: a retry after a failure is no loop.
    fn previous_step(&self, calls: &[ToolCall]) -> Vec<AnsweredCall> {
        let Some((_, before)) = self.memory.split_last() else {
            return Vec::new();
        };
        let mut answered: Vec<AnsweredCall> = Vec::new();
        for call in calls {
            for (step, results) in steps_back(before) {
                let Some(earlier) = step
                    .iter()
                    .find(|earlier| crate::toolkit::repeats(call, earlier))
                else {
                    break;
                };
                let result = results
                    .iter()
                    .find_map(|m| m.as_tool().filter(|r| r.call_id == earlier.id));
                let answer = match result {
                    Some(result) if !result.is_error => {
                        // A background call's answer is "running"; once reported finished,
                        // its result — and a job that failed is like a call that failed: its
                        // repeat is a retry.
                        let finished = self
                            .finished_background
                            .get(&earlier.id)
                            .filter(|(call, _)| crate::toolkit::repeats(earlier, call));
                        match finished {
                            Some((_, None)) => continue,
                            Some((_, Some(text))) => {
                                AnsweredCall::new(earlier.clone(), text.clone())
                            }
                            None => AnsweredCall::new(earlier.clone(), result.content.clone()),
                        }
                    }
                    Some(result) if result.error_kind == Some(ToolErrorKind::Denied) => {
                        AnsweredCall::denied(earlier.clone(), result.content.clone())
                    }
                    _ => continue,
                };
                if !answered.iter().any(|a| a.call.id == earlier.id) {
                    answered.push(answer);
                }
                break;
            }
        }
        answered
    }

    /// Take a turn's results into the run: into the conversation (and the stream), the
    /// background jobs to report, the per-tool argument-error counts, and the first output of a
    /// `return_directly` tool into `direct`. Every result is taken in; the error that ends the
    /// run (a tool's argument budget used up) is returned after.
    pub(super) async fn absorb(
        &mut self,
        results: &[ToolResult],
        turns: &mut Turns,
        direct: &mut Option<String>,
        events: &Events,
    ) -> Option<AgentError> {
        let mut failure = None;
        for result in results {
            emit(events, AgentEvent::ToolResult(result.clone())).await;
            let mut message = Message::tool_result(result);
            if let Some(references) = self.found.search_references.remove(&result.call_id)
                && let Message::Tool(answer) = &mut message
            {
                answer.tool_references = references;
            }
            self.memory.push(message);
            if result.is_pending()
                && let Some(job) = result.job_id()
            {
                self.pending_background.push(job);
            }
            if !result.is_error()
                && self.settings.return_directly.contains(&result.name)
                && direct.is_none()
            {
                *direct = Some(result.model_text().into_owned());
            }
            match result.error() {
                Some(e) if e.kind() == ToolErrorKind::InvalidArguments => {
                    let count = turns.failures.entry(result.name.clone()).or_default();
                    *count += 1;
                    if *count >= self.settings.argument_budget && failure.is_none() {
                        failure = Some(AgentError::ArgumentBudget {
                            tool: result.name.clone(),
                            count: *count,
                            last_error: e.message().to_string(),
                        });
                    }
                }
                _ => {
                    turns.failures.remove(&result.name);
                }
            }
        }
        failure
    }

    /// End the run with the output of a `return_directly` tool as its answer.
    pub(super) async fn answer_directly(&mut self, answer: String, events: &Events) -> RunOutcome {
        self.memory
            .push(Message::assistant(answer.clone(), Vec::new()));
        emit(events, AgentEvent::Final(answer.clone())).await;
        RunOutcome::Final(answer)
    }

    pub(super) async fn fail<T>(
        &self,
        error: AgentError,
        events: &Events,
    ) -> Result<T, AgentError> {
        emit(events, AgentEvent::Failed(error.clone())).await;
        Err(error)
    }

    /// The system prompt, then the conversation.
    fn prompt(&self) -> Vec<Message> {
        let mut messages = Vec::with_capacity(self.memory.len() + 1);
        match (&self.settings.system_prompt, self.program_instructions()) {
            (Some(prompt), Some(extra)) => {
                messages.push(Message::system(format!("{prompt}\n\n{extra}")))
            }
            (Some(prompt), None) => messages.push(Message::system(prompt.clone())),
            (None, Some(extra)) => messages.push(Message::system(extra)),
            (None, None) => {}
        }
        messages.extend(self.memory.iter().cloned());
        messages
    }

    /// Tell the model about background calls that finished, and those still running. Each
    /// line names the job as well as the call: a model that reuses call ids gets one line per
    /// job, never one result in place of another.
    async fn report_background(&mut self) {
        if self.pending_background.is_empty() {
            return;
        }
        let jobs = self.toolkit.background();
        let mut finished = Vec::new();
        let mut running = Vec::new();
        for job in std::mem::take(&mut self.pending_background) {
            let record = match jobs.get(job).await {
                Ok(Some(record)) => record,
                Ok(None) => continue,
                Err(e) => {
                    // Asked again next step: a ledger that cannot be read loses nothing.
                    tracing::warn!(job = %job, error = %e, "cannot read a background job's record");
                    running.push(format!("- job {job} (its record cannot be read right now)"));
                    self.pending_background.push(job);
                    continue;
                }
            };
            let (id, name) = (&record.call.id, &record.call.name);
            match &record.result {
                Some(result) if record.status != JobStatus::Pending => {
                    let text = result.model_text();
                    finished.push(format!("- call {id} ({name}, job {job}) finished: {text}"));
                    let answer = (!result.is_error()).then(|| text.to_string());
                    self.finished_background
                        .insert(id.clone(), (record.call.clone(), answer));
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
        let mut note = String::from(BACKGROUND_NOTE);
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

    /// One model request, in its `chat` span; streamed when someone listens.
    async fn ask(
        &self,
        request: ChatRequest,
        events: &Events,
    ) -> Result<ChatResponse, crate::model::ModelError> {
        let toolkit = &self.toolkit;
        let arguments =
            |call: &crate::tool::ToolCall| toolkit.recorded_arguments(call).into_owned();
        let content: crate::model::trace::Content<'_> =
            toolkit.traces_content().then_some(&arguments);
        let span = crate::model::trace::chat_span(self.model.as_ref(), &request, content);
        let started = std::time::Instant::now();
        let answer = self
            .ask_in_span(request, events)
            .instrument(span.clone())
            .await;
        crate::model::trace::record_answer(&span, &answer, content);
        crate::model::trace::measure(self.model.as_ref(), &answer, started.elapsed());
        answer
    }

    async fn ask_in_span(
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

    /// Run one turn's calls through the toolkit's [`Turn`](crate::toolkit::Turn): calls of tools
    /// not offered refused, external calls handed back, calls waiting for approval held back
    /// (an agent that pauses at approvals; a program suspends at its own), the rest run
    /// together, repaired and guarded as the toolkit says; progress forwarded as it comes.
    /// Results come in call order.
    async fn execute(
        &self,
        calls: Vec<ToolCall>,
        offering: Offering<'_>,
        toolkit: &Toolkit,
        ctx: &ToolContext,
        events: &Events,
    ) -> Answered {
        let Offering {
            snapshot,
            callable,
            mode,
            external,
        } = offering;
        let mut answered = Answered::default();
        let dialect = self.model.dialect();
        for call in &calls {
            // With the provider's own search, the model calls what that search found: a
            // deferred tool of this turn, loaded here as it is called.
            let name = self
                .toolkit
                .original_name(dialect, &call.name)
                .unwrap_or(&call.name);
            if mode == SearchMode::Native
                && snapshot.get(name).is_none()
                && snapshot.get_deferred(name).is_some()
            {
                toolkit.load_tools([name]);
                answered.found.called_deferred.push(name.to_string());
            }
        }
        // What may be called this turn: what the view offers, shown or not (a tool declared to a
        // program may be called directly too), and what the provider's search found.
        let callable = callable.into_iter().chain(
            answered
                .found
                .called_deferred
                .iter()
                .map(|name| Arc::<str>::from(name.as_str())),
        );
        let turn = toolkit
            .turn()
            .offering(callable)
            .external(external.iter().map(ToolDefinition::shared_name))
            .holding_approvals(self.settings.pause_at_approvals)
            .holding_questions(self.settings.pause_at_approvals)
            .searchable(mode != SearchMode::Off)
            .after(self.previous_step(&calls));
        if events.is_some() {
            for call in turn.answered_here(&calls, ctx) {
                emit(events, AgentEvent::ToolCallStarted(call.clone())).await;
            }
        }
        let outcome = self
            .with_progress(
                ctx,
                events,
                |ctx| async move { turn.run(calls, &ctx).await },
            )
            .await;
        answered.stop = outcome.stop;
        for answer in outcome.answers {
            let result = match answer {
                CallAnswer::Result(result) => result,
                CallAnswer::AwaitingApproval { call, tool } => {
                    let pending = PendingApproval::new(call, &tool);
                    answered.waiting.approvals.push(pending);
                    continue;
                }
                CallAnswer::Suspended { call, suspension } => {
                    let pending = super::code::suspended(call, suspension);
                    answered.waiting.approvals.push(pending);
                    continue;
                }
                CallAnswer::Asking {
                    call,
                    tool,
                    question,
                    answered: given,
                } => {
                    let pending = PendingQuestion::new(call, &tool, question, given);
                    answered.waiting.questions.push(pending);
                    continue;
                }
                CallAnswer::External(call) => {
                    answered.remote.push(call);
                    continue;
                }
            };
            // What a call made callable (a search): the references a provider with client-side
            // search sends back with its result.
            if let Ok(output) = &result.outcome
                && let Some(loaded) = output.metadata.get(LOADED_KEY)
            {
                let loaded = serde_json::from_value(loaded.clone()).unwrap_or_default();
                answered
                    .found
                    .references
                    .insert(result.call_id.clone(), loaded);
            }
            answered.results.push(result);
        }
        answered
    }

    /// Forward `events` the progress of what `work` runs with the context it is given.
    pub(super) async fn with_progress<F, Fut, T>(
        &self,
        ctx: &ToolContext,
        events: &Events,
        work: F,
    ) -> T
    where
        F: FnOnce(ToolContext) -> Fut,
        Fut: std::future::Future<Output = T>,
    {
        if events.is_none() {
            return work(ctx.clone()).await;
        }
        let (ctx, mut progress) = ctx.clone().progress_channel(256);
        let done = {
            let run = work(ctx);
            tokio::pin!(run);
            loop {
                tokio::select! {
                    done = &mut run => break done,
                    Some(p) = progress.recv() => emit(events, AgentEvent::ToolProgress(p)).await,
                }
            }
        };
        while let Ok(p) = progress.try_recv() {
            emit(events, AgentEvent::ToolProgress(p)).await;
        }
        done
    }
}

/// What a turn offers: its snapshot, the names that may be called, where deferred tools are
/// found, the external tools.
struct Offering<'a> {
    snapshot: &'a crate::toolkit::ToolSnapshot,
    callable: Vec<Arc<str>>,
    mode: SearchMode,
    external: &'a [ToolDefinition],
}

/// A turn's calls, answered: the results in call order, the calls held for approval, the
/// external calls handed back, what searches found, and the guardrail stop if one stopped the
/// run.
#[derive(Default)]
struct Answered {
    results: Vec<ToolResult>,
    waiting: Waiting,
    remote: Vec<ToolCall>,
    found: Found,
    stop: Option<crate::toolkit::GuardrailStop>,
}

/// What a turn's calls found: the tools each search made callable (by call id), and the
/// deferred tools called after the provider's own search found them.
#[derive(Default)]
struct Found {
    references: search::References,
    called_deferred: Vec<String>,
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

/// A turn's calls split into those whose id is the first of its kind in the turn and those
/// reusing an earlier call's id (in order). A turn has few calls: a scan costs less than a set.
fn first_uses(calls: Vec<ToolCall>) -> (Vec<ToolCall>, Vec<ToolCall>) {
    let reuses = |i: usize| calls[..i].iter().any(|earlier| earlier.id == calls[i].id);
    if !(1..calls.len()).any(reuses) {
        return (calls, Vec::new());
    }
    let (mut firsts, mut reused) = (Vec::<ToolCall>::new(), Vec::new());
    for call in calls {
        if firsts.iter().any(|first| first.id == call.id) {
            reused.push(call);
        } else {
            firsts.push(call);
        }
    }
    (firsts, reused)
}

/// Record on a run's `invoke_agent` span how it failed, if it did.
pub(super) fn record_run_error(span: &tracing::Span, outcome: &Result<RunOutcome, AgentError>) {
    if let Err(error) = outcome {
        span.record("error.type", error_type(error));
    }
}

/// The `error.type` of a run that failed, for its `invoke_agent` span.
fn error_type(error: &AgentError) -> &'static str {
    match error {
        AgentError::Model(_) => "model",
        AgentError::MaxIterations { .. } => "max_iterations",
        AgentError::ArgumentBudget { .. } => "argument_budget",
        AgentError::External(_) => "external_tools",
        AgentError::Paused(_) => "paused",
        AgentError::Guardrail(_) => "guardrail",
        AgentError::Resume(_) => "resume",
    }
}

/// How the agent's note on background jobs begins ([`ReActAgent::report_background`]).
const BACKGROUND_NOTE: &str = "[background tools]";

/// Whether `message` is the agent's note on background jobs: between a step and the next, it
/// is no new question of the user's (the loop guard looks past it).
fn is_background_note(message: &Message) -> bool {
    matches!(message, Message::User { content } if content.starts_with(BACKGROUND_NOTE))
}

/// The model's steps that made calls at the end of `messages`, latest first, each with the
/// messages after it up to the next step: while nothing but tool results, tool changes and the
/// agent's notes on background jobs came between them. Lazy: a caller reads only the steps it
/// needs.
fn steps_back(messages: &[Message]) -> impl Iterator<Item = (&[ToolCall], &[Message])> {
    let mut end = messages.len();
    let mut at = messages.len();
    std::iter::from_fn(move || {
        while at > 0 {
            at -= 1;
            match &messages[at] {
                Message::Tool(_) | Message::ToolChange(_) => continue,
                message if is_background_note(message) => continue,
                Message::Assistant(step) if !step.tool_calls.is_empty() => {
                    let after = &messages[at + 1..end];
                    end = at;
                    return Some((step.tool_calls.as_slice(), after));
                }
                _ => {
                    at = 0;
                    return None;
                }
            }
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::first_uses;
    use crate::ToolCall;

    #[test]
    fn a_reused_id_is_split_off_in_order_and_the_first_use_kept() {
        let call = |id: &str, name: &str| ToolCall::new(id, name, "{}");
        let names = |calls: &[ToolCall]| calls.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
        let (firsts, reused) = first_uses(vec![
            call("c1", "a"),
            call("c2", "b"),
            call("c1", "c"),
            call("c2", "d"),
            call("c1", "e"),
        ]);
        assert_eq!(names(&firsts), ["a", "b"]);
        assert_eq!(names(&reused), ["c", "d", "e"]);
        let (firsts, reused) = first_uses(vec![call("c1", "a"), call("c2", "b")]);
        assert_eq!(
            (names(&firsts), reused.len()),
            (vec!["a".to_string(), "b".into()], 0)
        );
    }
}
