//! Questions an agent run pauses at: [`Question`] (what a tool asked) and [`Answer`] (what the
//! application answers), and the book a turn keeps of its calls' questions.
//!
//! A turn that holds questions ([`Turn::holding_questions`]) puts a [`QuestionBook`] into its
//! calls' context and lists its calls there. A tool of one of those calls that asks (through
//! [`Elicitor`](super::Elicitor) or [`Sampler`](super::Sampler), with no [`Caller`] in its
//! context) asks the book: a question answered already (the call runs again after a resume) gets
//! its answer, in the order asked; the first new one is kept and the tool is told the run pauses
//! ([`AskError::Paused`]). The turn then answers the call with [`CallAnswer::Asking`] instead of
//! what the tool returned.
//!
//! [`Turn::holding_questions`]: crate::toolkit::Turn::holding_questions
//! [`CallAnswer::Asking`]: crate::toolkit::CallAnswer::Asking

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ToolContext;
use super::ask::{AskError, Caller, CallerSource, Elicitation, Elicited, Sampled, Sampling};

/// What a tool asked during a call that paused its run: a form for the user, or a completion
/// from the caller's model. Stored with the run as `{"kind": "elicit", …}` or
/// `{"kind": "sample", …}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "request", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Question {
    /// A question for the user ([`Elicitor`](super::Elicitor)).
    Elicit(Elicitation),
    /// A completion from the caller's model ([`Sampler`](super::Sampler)).
    Sample(Sampling),
}

impl Question {
    /// `"elicitation"` or `"sampling"`.
    pub fn capability(&self) -> &'static str {
        match self {
            Question::Elicit(_) => "elicitation",
            Question::Sample(_) => "sampling",
        }
    }

    /// Whether `answer` is of the kind this question takes.
    pub fn fits(&self, answer: &Answer) -> bool {
        matches!(
            (self, answer),
            (Question::Elicit(_), Answer::Elicited(_)) | (Question::Sample(_), Answer::Sampled(_))
        )
    }
}

/// The answer to a [`Question`]: the user's (for [`Question::Elicit`]) or a model's (for
/// [`Question::Sample`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "answer", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Answer {
    /// The user's answer to a form.
    Elicited(Elicited<Value>),
    /// A model's completion.
    Sampled(Sampled),
}

impl Answer {
    /// The user filled in the form with `content` (a JSON object).
    pub fn accept(content: Value) -> Self {
        Answer::Elicited(Elicited::Accepted(content))
    }

    /// The user said no.
    pub fn decline() -> Self {
        Answer::Elicited(Elicited::Declined)
    }

    /// The user dismissed the question.
    pub fn cancel() -> Self {
        Answer::Elicited(Elicited::Cancelled)
    }

    /// A completion `text` written by `model`.
    pub fn sampled(text: impl Into<String>, model: impl Into<String>) -> Self {
        Answer::Sampled(Sampled::new(text, model))
    }
}

/// The questions of the calls one turn holds questions for, by call id.
#[derive(Debug, Default)]
pub(crate) struct QuestionBook {
    calls: Mutex<HashMap<Arc<str>, Asked>>,
    /// Set when the turn has answered its calls: a call still running after that (a background
    /// job) has nobody to pause for, and asks no one.
    closed: std::sync::atomic::AtomicBool,
}

/// One call's questions: the answers given (in the order the call asks), how many it asked in
/// this run of it, and the first it asked that has no answer.
#[derive(Debug, Default)]
struct Asked {
    given: Vec<Answer>,
    next: usize,
    open: Option<Question>,
}

impl QuestionBook {
    /// A book for calls `calls`, each with the answers given to it before (in the order it
    /// asked).
    pub(crate) fn new(calls: impl IntoIterator<Item = (Arc<str>, Vec<Answer>)>) -> Self {
        let calls = calls
            .into_iter()
            .map(|(id, given)| {
                let asked = Asked {
                    given,
                    ..Asked::default()
                };
                (id, asked)
            })
            .collect();
        QuestionBook {
            calls: Mutex::new(calls),
            closed: Default::default(),
        }
    }

    /// This book as the context's source of callers (put it into the calls' context).
    pub(crate) fn source(self: &Arc<Self>) -> Arc<dyn CallerSource> {
        Arc::new(Arc::clone(self))
    }

    /// A source that holds no question: what a call that outlives its turn (a background job)
    /// sees in place of its turn's book.
    pub(crate) fn closed_source() -> Arc<dyn CallerSource> {
        let book = Arc::new(QuestionBook::default());
        book.close();
        book.source()
    }

    /// The turn has answered its calls: later questions are not held.
    pub(crate) fn close(&self) {
        self.closed
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// List `call_id` (with no answers) unless it is listed.
    pub(crate) fn serve(&self, call_id: &Arc<str>) {
        crate::util::lock(&self.calls)
            .entry(call_id.clone())
            .or_default();
    }

    /// The question `call_id` asked and has no answer for, with the answers it was given
    /// before it.
    pub(crate) fn take_open(&self, call_id: &str) -> Option<(Question, Vec<Answer>)> {
        let mut calls = crate::util::lock(&self.calls);
        let asked = calls.get_mut(call_id)?;
        let open = asked.open.take()?;
        Some((open, std::mem::take(&mut asked.given)))
    }

    /// `question`, asked by `call_id`: its answer when one was given, else kept (the first
    /// only) and the run pauses.
    fn ask(&self, call_id: &str, question: Question) -> Result<Answer, AskError> {
        let mut calls = crate::util::lock(&self.calls);
        let Some(asked) = calls.get_mut(call_id) else {
            return Err(AskError::Paused);
        };
        if asked.open.is_some() {
            return Err(AskError::Paused);
        }
        let at = asked.next;
        asked.next += 1;
        match asked.given.get(at) {
            Some(answer) if question.fits(answer) => Ok(answer.clone()),
            Some(_) => Err(AskError::InvalidAnswer(format!(
                "the answer given to question {} of this call is not an answer to a {} question",
                at + 1,
                question.capability()
            ))),
            None => {
                asked.open = Some(question);
                Err(AskError::Paused)
            }
        }
    }
}

impl CallerSource for Arc<QuestionBook> {
    /// The caller a tool of the call of `ctx` asks, when the call is one this book serves: it
    /// starts counting the call's questions afresh (a tool's extractors are made as it
    /// starts, so a retried attempt asks from its first question again).
    fn caller_for(&self, ctx: &ToolContext) -> Option<Arc<dyn Caller>> {
        if self.closed.load(std::sync::atomic::Ordering::Acquire) {
            return None;
        }
        let call_id = ctx.call_info()?.call_id.clone();
        {
            let mut calls = crate::util::lock(&self.calls);
            let asked = calls.get_mut(&call_id)?;
            asked.next = 0;
        }
        let book = Arc::clone(self);
        Some(Arc::new(BookCaller { book, call_id }))
    }
}

/// A call's questions, asked of its turn's book.
struct BookCaller {
    book: Arc<QuestionBook>,
    call_id: Arc<str>,
}

impl Caller for BookCaller {
    fn elicit(&self, request: Elicitation) -> BoxFuture<'_, Result<Elicited<Value>, AskError>> {
        let answer = self.book.ask(&self.call_id, Question::Elicit(request));
        Box::pin(async move {
            match answer? {
                Answer::Elicited(elicited) => Ok(elicited),
                // `ask` hands back only answers that fit.
                Answer::Sampled(_) => Err(AskError::Paused),
            }
        })
    }

    fn sample(&self, request: Sampling) -> BoxFuture<'_, Result<Sampled, AskError>> {
        let answer = self.book.ask(&self.call_id, Question::Sample(request));
        Box::pin(async move {
            match answer? {
                Answer::Sampled(sampled) => Ok(sampled),
                Answer::Elicited(_) => Err(AskError::Paused),
            }
        })
    }
}
