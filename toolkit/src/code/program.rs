//! Running one program: the sandbox on one side, the toolkit on the other, the journal between
//! them. Every call the program makes goes through [`Toolkit::call_all`] as a model's call would
//! (hidden parameters stay hidden, groups, deferred tools, approvals, timeouts, retries,
//! progress), under a `code.program` span whose `call_id` is the program's.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::{Value, json};
use tracing::Instrument;

use super::CodeMode;
use super::journal::{Finished as Ended, Journal, JournalEntry, Outcome};
use super::sandbox::{self, Answer, CallKind, Event, Failure, Finished, HostCall, Returned};
use crate::context::ToolContext;
use crate::error::{ToolError, ToolErrorKind};
use crate::exec::ApprovalDecision;
use crate::tool::{ToolCall, ToolOutput, ToolResult};
use crate::toolkit::Toolkit;

/// How a program run ended.
#[derive(Debug)]
pub(crate) enum ProgramEnd {
    /// It ended (well or not): the result the model sees, and the journal.
    Finished(ToolResult, Journal),
    /// It made a call that waits for approval (only when asked to pause): the call, its tool,
    /// its number in the journal, and the journal up to it.
    Paused {
        call: ToolCall,
        tool: String,
        seq: usize,
        journal: Journal,
    },
}

/// One run of a program.
pub(crate) struct Run<'a> {
    pub(crate) mode: &'a CodeMode,
    pub(crate) toolkit: &'a Toolkit,
    pub(crate) ctx: &'a ToolContext,
    /// The program's key in the journal store.
    pub(crate) id: &'a str,
    /// The call id of the program's call: its result's id, the parent of its calls' ids.
    pub(crate) call_id: &'a str,
    /// The name the result carries (the code tool's).
    pub(crate) tool: &'a str,
    /// Hold calls that need approval instead of asking the toolkit's approver.
    pub(crate) pause_at_approvals: bool,
}

impl Run<'_> {
    pub(crate) async fn run(&self, journal: Journal) -> ProgramEnd {
        let span = tracing::info_span!("code.program", call_id = %self.call_id, tool = %self.tool);
        self.drive(journal).instrument(span).await
    }

    fn finished(&self, outcome: Result<ToolOutput, ToolError>, mut journal: Journal) -> ProgramEnd {
        journal.finished = Some(match &outcome {
            Ok(output) => Ended {
                text: output.as_text().to_string(),
                is_error: false,
            },
            Err(error) => Ended {
                text: error.message().to_string(),
                is_error: true,
            },
        });
        ProgramEnd::Finished(
            ToolResult::new(self.call_id, self.tool, outcome, 1),
            journal,
        )
    }

    fn out_of_time(&self) -> ToolError {
        ToolError::new(
            ToolErrorKind::Timeout,
            format!(
                "the program did not finish within its time limit ({:?}); its calls that \
                 finished are journaled",
                self.mode.limits.wall
            ),
        )
    }

    async fn save(&self, journal: &Journal) -> Result<(), ToolError> {
        let Some(store) = &self.mode.store else {
            return Ok(());
        };
        store.save(self.id, journal).await.map_err(|e| {
            ToolError::new(
                ToolErrorKind::Execution,
                format!("the program stopped: its journal could not be saved ({e}); nothing after its last saved call ran"),
            )
        })
    }

    async fn drive(&self, mut journal: Journal) -> ProgramEnd {
        if let Some(done) = &journal.finished {
            let outcome = if done.is_error {
                Err(ToolError::new(ToolErrorKind::Execution, done.text.clone()))
            } else {
                Ok(ToolOutput::text(done.text.clone()))
            };
            return ProgramEnd::Finished(
                ToolResult::new(self.call_id, self.tool, outcome, 1),
                journal,
            );
        }
        let snapshot = self.toolkit.snapshot();
        // Every tool of the view but the meta tools: a program does not start programs, and
        // searches with its own `search_tools(...)`.
        let names: Vec<String> = snapshot
            .iter()
            .chain(snapshot.deferred())
            .map(|d| d.name().to_string())
            .filter(|name| !super::is_meta_tool(name))
            .collect();
        let budget = self.mode.output_budget(self.toolkit);
        let start = sandbox::Start {
            code: journal.code.clone(),
            tools: names,
            seed: journal.seed,
            clock_ms: journal.clock_ms,
            limits: self.mode.limits.clone(),
            print_budget: budget,
        };
        let mut running = sandbox::spawn(start);
        let deadline = tokio::time::sleep(self.mode.limits.wall);
        tokio::pin!(deadline);
        // Calls made in this run so far (the journal may hold more, from an earlier run).
        let mut made = 0usize;
        loop {
            let event = tokio::select! {
                event = running.events.recv() => event,
                () = &mut deadline => {
                    running.stop.store(true, Ordering::Relaxed);
                    return self.finished(Err(self.out_of_time()), journal);
                }
            };
            let calls = match event {
                Some(Event::Calls(calls)) => calls,
                Some(Event::Done(done)) => {
                    if made < journal.entries.len() {
                        let error = mismatch(format!(
                            "the journal holds {} calls but the program ended after {made}",
                            journal.entries.len()
                        ));
                        return self.finished(Err(error), journal);
                    }
                    let outcome = match done {
                        Ok(finished) => Ok(output(finished, budget)),
                        Err(failure) => Err(failed(failure)),
                    };
                    let end = self.finished(outcome, journal);
                    if let ProgramEnd::Finished(_, journal) = &end
                        && let Err(error) = self.save(journal).await
                    {
                        tracing::warn!(error = %error.message(), "program journal not saved at its end");
                    }
                    return end;
                }
                None => {
                    let error = ToolError::new(
                        ToolErrorKind::Panicked,
                        "the program's sandbox ended without an answer",
                    );
                    return self.finished(Err(error), journal);
                }
            };
            made = made.max(calls.last().map(|c| c.seq + 1).unwrap_or(0));
            // The time limit holds while the calls run too: past it they are cancelled, their
            // journal entries left without an answer (as after a crash).
            let step = {
                let answering = self.answer(calls, &mut journal);
                tokio::pin!(answering);
                tokio::select! {
                    step = &mut answering => Some(step),
                    () = &mut deadline => None,
                }
            };
            let Some(step) = step else {
                running.stop.store(true, Ordering::Relaxed);
                return self.finished(Err(self.out_of_time()), journal);
            };
            match step {
                Ok(Step::Answers(answers)) => {
                    if running.answers.send(answers).is_err() {
                        let error = ToolError::new(
                            ToolErrorKind::Panicked,
                            "the program's sandbox went away while its calls ran",
                        );
                        return self.finished(Err(error), journal);
                    }
                }
                Ok(Step::Stop(stop)) => {
                    // The program's turn reported the stop to the turn that runs the program.
                    running.stop.store(true, Ordering::Relaxed);
                    let error = ToolError::new(ToolErrorKind::Denied, stop.to_string());
                    return self.finished(Err(error), journal);
                }
                Ok(Step::Pause { call, tool, seq }) => {
                    running.stop.store(true, Ordering::Relaxed);
                    return ProgramEnd::Paused {
                        call,
                        tool,
                        seq,
                        journal,
                    };
                }
                Err(error) => {
                    running.stop.store(true, Ordering::Relaxed);
                    return self.finished(Err(error), journal);
                }
            }
        }
    }

    /// Answer one batch of calls: from the journal where it has them, else by running them
    /// (saved before and after); or stop at the first that waits for approval.
    async fn answer(&self, calls: Vec<HostCall>, journal: &mut Journal) -> Result<Step, ToolError> {
        let mut answers: Vec<Option<Answer>> = vec![None; calls.len()];
        // Calls to run now: (index in the batch, seq, the call).
        let mut to_run: Vec<(usize, usize, ToolCall, CallKind)> = Vec::new();
        let mut approved: HashSet<Arc<str>> = HashSet::new();
        let mut fresh = false;
        let calls: Vec<HostCall> = calls
            .into_iter()
            .map(|mut host| {
                if host.kind == CallKind::Tool
                    && let Some(named) = self
                        .toolkit
                        .definition(&host.name)
                        .and_then(|d| named_arguments(d.parameters(), &host.arguments))
                {
                    host.arguments = named;
                }
                host
            })
            .collect();
        for (i, host) in calls.iter().enumerate() {
            let arguments: Value = serde_json::from_str(&host.arguments).unwrap_or(Value::Null);
            let call = ToolCall::new(
                format!("{}/{}", self.call_id, host.seq),
                host.name.clone(),
                host.arguments.clone(),
            );
            if let Some(entry) = journal.entries.get(host.seq) {
                if entry.tool != host.name || entry.arguments != arguments {
                    return Err(mismatch(format!(
                        "call #{} was `{}({})` in the journal but is `{}({})` now",
                        host.seq, entry.tool, entry.arguments, host.name, arguments
                    )));
                }
                match (&entry.outcome, &entry.decision) {
                    (Some(outcome), _) => {
                        if host.kind == CallKind::Search {
                            self.reload(outcome);
                        }
                        answers[i] = Some(answer_of(outcome));
                    }
                    (None, Some(ApprovalDecision::Deny(reason))) => {
                        let error = crate::exec::denied(&host.name, reason);
                        answers[i] = Some(settle_with_error(journal, host.seq, &error));
                        fresh = true;
                    }
                    (None, Some(decision)) => {
                        let call = match decision {
                            ApprovalDecision::Edit(arguments) => ToolCall {
                                arguments: arguments.clone(),
                                ..call
                            },
                            _ => call,
                        };
                        approved.insert(call.id.clone());
                        to_run.push((i, host.seq, call, host.kind.clone()));
                    }
                    (None, None) => {
                        // Started before a crash: its effect is unknown.
                        let safe = self
                            .toolkit
                            .options(&host.name)
                            .is_some_and(|o| o.annotations.read_only || o.annotations.idempotent);
                        if safe || host.kind == CallKind::Search {
                            to_run.push((i, host.seq, call, host.kind.clone()));
                        } else {
                            let error = ToolError::new(
                                ToolErrorKind::Execution,
                                format!(
                                    "`{}` was running when the program was interrupted; it is not \
                                     idempotent, so it was not run again and its outcome is unknown",
                                    host.name
                                ),
                            );
                            answers[i] = Some(settle_with_error(journal, host.seq, &error));
                            fresh = true;
                        }
                    }
                }
                continue;
            }
            if host.seq != journal.entries.len() {
                return Err(mismatch(format!(
                    "call #{} came after {} journaled calls",
                    host.seq,
                    journal.entries.len()
                )));
            }
            if self.pause_at_approvals
                && host.kind == CallKind::Tool
                && let Some(tool) = self.toolkit.approval_needed(&call, self.ctx)
            {
                // Run what came before it in the batch, then stop: the program replays to here
                // once the decision is in.
                self.save(journal).await?;
                if let Some(stop) = self
                    .run_calls(
                        std::mem::take(&mut to_run),
                        &approved,
                        journal,
                        &mut answers,
                    )
                    .await?
                {
                    return Ok(Step::Stop(stop));
                }
                journal.entries.push(JournalEntry {
                    tool: host.name.clone(),
                    arguments,
                    decision: None,
                    outcome: None,
                });
                self.save(journal).await?;
                return Ok(Step::Pause {
                    call,
                    tool: tool.to_string(),
                    seq: host.seq,
                });
            }
            journal.entries.push(JournalEntry {
                tool: host.name.clone(),
                arguments,
                decision: None,
                outcome: None,
            });
            fresh = true;
            to_run.push((i, host.seq, call, host.kind.clone()));
        }
        if fresh || !to_run.is_empty() {
            // The calls about to run are journaled first: after a crash they are known.
            self.save(journal).await?;
        }
        if let Some(stop) = self
            .run_calls(to_run, &approved, journal, &mut answers)
            .await?
        {
            return Ok(Step::Stop(stop));
        }
        Ok(Step::Answers(
            answers
                .into_iter()
                .map(|a| {
                    a.unwrap_or_else(|| Answer::Error {
                        message: "no answer".into(),
                        kind: ToolErrorKind::Execution.as_str().into(),
                    })
                })
                .collect(),
        ))
    }

    /// Run `calls` (searches here, tools together as one [`Turn`](crate::toolkit::Turn) of the
    /// toolkit: its repair hook and guardrails apply), record their outcomes in the journal and
    /// save it. Returns the guardrail stop, if one stopped the run.
    async fn run_calls(
        &self,
        calls: Vec<(usize, usize, ToolCall, CallKind)>,
        approved: &HashSet<Arc<str>>,
        journal: &mut Journal,
        answers: &mut [Option<Answer>],
    ) -> Result<Option<crate::toolkit::GuardrailStop>, ToolError> {
        if calls.is_empty() {
            return Ok(None);
        }
        let mut batch = Vec::new();
        let mut slots = Vec::new();
        let mut stop = None;
        for (i, seq, call, kind) in calls {
            if kind == CallKind::Search {
                let outcome = self.search(&call);
                answers[i] = Some(answer_of(&outcome));
                journal.entries[seq].outcome = Some(outcome);
            } else {
                slots.push((i, seq));
                batch.push(call);
            }
        }
        if !batch.is_empty() {
            let toolkit = if approved.is_empty() {
                self.toolkit.clone()
            } else {
                self.toolkit
                    .with_approver(Some(Arc::new(crate::exec::Decided::new(approved.clone()))))
            };
            let turn = toolkit.turn().run(batch, self.ctx).await;
            stop = turn.stop;
            for ((i, seq), answer) in slots.into_iter().zip(turn.answers) {
                // A program's turn holds nothing back and offers no external tools.
                let crate::toolkit::CallAnswer::Result(result) = answer else {
                    continue;
                };
                let outcome = outcome_of(&result);
                answers[i] = Some(answer_of(&outcome));
                journal.entries[seq].outcome = Some(outcome);
            }
        }
        self.save(journal).await?;
        Ok(stop)
    }

    /// `search_tools(query, limit)`: the toolkit's search, and the tools found made callable.
    fn search(&self, call: &ToolCall) -> Outcome {
        // The one parser and the one answer of `search_tools` (the agent's tool): the program
        // gets the tools found, each with its TypeScript signature.
        let (query, limit) = match crate::search::parse_search_arguments(&call.arguments) {
            Ok(args) => args,
            Err(message) => {
                return Outcome::Error {
                    message,
                    kind: ToolErrorKind::InvalidArguments.as_str().to_string(),
                };
            }
        };
        let limit = limit.unwrap_or(crate::search::DEFAULT_SEARCH_LIMIT);
        let answer = crate::toolkit::search_answer(self.toolkit, &query, limit);
        let snapshot = self.toolkit.snapshot();
        let found = answer
            .metadata
            .get(crate::toolkit::FOUND_KEY)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let found: Vec<Value> = found
            .iter()
            .map(|hit| {
                let name = hit.get("name").and_then(Value::as_str).unwrap_or_default();
                let signature = snapshot
                    .get(name)
                    .map(super::signatures::signature)
                    .unwrap_or_default();
                json!({"name": name, "description": hit.get("description"), "signature": signature})
            })
            .collect();
        Outcome::Value(Value::Array(found))
    }

    /// A journaled search answered again: its tools made callable again.
    fn reload(&self, outcome: &Outcome) {
        if let Outcome::Value(Value::Array(hits)) = outcome {
            let names = hits
                .iter()
                .filter_map(|h| h.get("name").and_then(Value::as_str));
            self.toolkit.load_tools(names);
        }
    }
}

/// What a batch of calls came to.
enum Step {
    Answers(Vec<Answer>),
    /// A guardrail stopped the run.
    Stop(crate::toolkit::GuardrailStop),
    Pause {
        call: ToolCall,
        tool: String,
        seq: usize,
    },
}

/// A tool called with one value instead of an object of named arguments, as programs call
/// functions (`tools.get_budget("sales")`): the value as the tool's one parameter, when that is
/// unambiguous — the schema names exactly one parameter, or exactly one required one. `None`
/// when the arguments are an object (or `null`, no arguments), or the value could go to more than
/// one parameter: the call then goes as written, and a wrong one gets the usual error with a
/// valid call. Only what the model sees is in `parameters`, never a hidden parameter.
fn named_arguments(parameters: &Value, arguments: &str) -> Option<String> {
    let value: Value = serde_json::from_str(arguments).ok()?;
    if value.is_object() || value.is_null() {
        return None;
    }
    let properties = parameters.get("properties")?.as_object()?;
    let name = if properties.len() == 1 {
        properties.keys().next()?.clone()
    } else {
        let required: Vec<&str> = parameters
            .get("required")?
            .as_array()?
            .iter()
            .filter_map(Value::as_str)
            .filter(|name| properties.contains_key(*name))
            .collect();
        match required.as_slice() {
            [one] => (*one).to_string(),
            _ => return None,
        }
    };
    Some(json!({ name: value }).to_string())
}

fn mismatch(detail: String) -> ToolError {
    ToolError::new(
        ToolErrorKind::Execution,
        format!(
            "the program did not replay as journaled: {detail}. A program replays only when it is \
             the same code and decides only on what its calls returned (Math.random and Date are \
             fixed for it); it was stopped before running anything new"
        ),
    )
}

/// Record `error` as the answer of journal entry `seq`; what the program gets for it.
fn settle_with_error(journal: &mut Journal, seq: usize, error: &ToolError) -> Answer {
    let outcome = error_outcome(error);
    let answer = answer_of(&outcome);
    journal.entries[seq].outcome = Some(outcome);
    answer
}

fn error_outcome(error: &ToolError) -> Outcome {
    Outcome::Error {
        message: error.message().to_string(),
        kind: error.kind().as_str().to_string(),
    }
}

/// What the program gets for a tool's result: its structured output, or its text.
fn outcome_of(result: &ToolResult) -> Outcome {
    match (result.output(), result.error()) {
        (_, Some(error)) => error_outcome(error),
        (Some(output), None) => match output.structured() {
            Some(raw) => serde_json::from_str(raw.get())
                .map(Outcome::Value)
                .unwrap_or_else(|_| Outcome::Value(Value::String(output.as_text().to_string()))),
            None => Outcome::Value(Value::String(output.as_text().to_string())),
        },
        (None, None) => Outcome::Value(Value::String(result.model_text().into_owned())),
    }
}

fn answer_of(outcome: &Outcome) -> Answer {
    match outcome {
        Outcome::Value(value) => Answer::Value(value.clone()),
        Outcome::Error { message, kind } => Answer::Error {
            message: message.clone(),
            kind: kind.clone(),
        },
    }
}

/// The tool result of a program that ended: what it printed, then what it returned.
fn output(finished: Finished, budget: usize) -> ToolOutput {
    let mut text = finished.printed;
    if finished.dropped > 0 {
        text.push_str(&format!(
            "[… {} more bytes printed, past the result budget]\n",
            finished.dropped
        ));
    }
    match finished.value {
        Some(Returned::Text(value)) | Some(Returned::Json(value)) => text.push_str(&value),
        None if text.is_empty() => {
            text.push_str("(the program returned nothing and printed nothing)")
        }
        None => {
            text.pop();
        }
    }
    crate::exec::truncate_output(ToolOutput::text(text), budget)
}

/// The error result of a program that did not end well.
fn failed(failure: Failure) -> ToolError {
    let (kind, message) = match failure {
        Failure::Syntax(m) => (
            ToolErrorKind::InvalidArguments,
            format!("the program does not parse: {m}"),
        ),
        Failure::Thrown(m) => (ToolErrorKind::Execution, format!("the program failed: {m}")),
        Failure::Cpu(limit) => (
            ToolErrorKind::Timeout,
            format!(
                "the program used up its CPU time ({limit:?}) and was stopped; an endless loop?"
            ),
        ),
        Failure::Stopped => (
            ToolErrorKind::Cancelled,
            "the program was stopped".to_string(),
        ),
        Failure::Memory(limit) => (
            ToolErrorKind::Execution,
            format!(
                "the program ran out of memory (its limit is {} MiB) and was stopped",
                limit >> 20
            ),
        ),
        Failure::Stack(limit) => (
            ToolErrorKind::Execution,
            format!(
                "the program recursed too deeply (its stack is {} KiB) and was stopped",
                limit >> 10
            ),
        ),
        Failure::Stuck => (
            ToolErrorKind::Execution,
            "the program waits on a promise that nothing settles, and was stopped".to_string(),
        ),
        Failure::TooManyCalls(limit) => (
            ToolErrorKind::Execution,
            format!("the program made more than {limit} tool calls and was stopped"),
        ),
        Failure::Engine(m) => (
            ToolErrorKind::Panicked,
            format!("the JavaScript engine failed: {m}"),
        ),
    };
    ToolError::new(kind, message)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::named_arguments;

    #[test]
    fn one_value_goes_to_the_one_parameter_only_when_unambiguous() {
        let one = json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]});
        assert_eq!(
            named_arguments(&one, r#""Oslo""#).as_deref(),
            Some(r#"{"city":"Oslo"}"#)
        );
        // An object is named arguments already; null is no arguments.
        assert_eq!(named_arguments(&one, r#"{"city":"Oslo"}"#), None);
        assert_eq!(named_arguments(&one, "null"), None);
        // One required among optional ones: it takes the value.
        let required = json!({
            "type": "object",
            "properties": {"id": {"type": "integer"}, "verbose": {"type": "boolean"}},
            "required": ["id"],
        });
        assert_eq!(
            named_arguments(&required, "7").as_deref(),
            Some(r#"{"id":7}"#)
        );
        assert_eq!(
            named_arguments(&required, "[1,2]").as_deref(),
            Some(r#"{"id":[1,2]}"#)
        );
        // Two required, or two optional: which one is not known, so the call goes as written.
        let two = json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        });
        assert_eq!(named_arguments(&two, "1"), None);
        let optional = json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        });
        assert_eq!(named_arguments(&optional, "1"), None);
        // No parameters at all: nothing to give it to.
        assert_eq!(
            named_arguments(&json!({"type": "object", "properties": {}}), "1"),
            None
        );
        assert_eq!(named_arguments(&json!({"type": "object"}), "1"), None);
    }
}
