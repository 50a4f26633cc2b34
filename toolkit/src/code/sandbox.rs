//! The QuickJS sandbox: one program in a fresh runtime on a thread of tokio's blocking pool,
//! talking to the async side through two channels. The program's tool calls leave as
//! [`HostCall`]s when it has nothing else to do; their answers come back together and are
//! delivered in the order the calls were made, so a program run twice with the same answers
//! makes the same calls (what replay needs).
//!
//! What the program can reach: the ECMAScript built-ins, `tools` (one async function per tool),
//! `search_tools`, `text`/`print`/`console.log`, and nothing of the host — no module loader, no
//! file system, network, environment or timers. `Math.random` is seeded and `Date` is frozen at
//! the program's start time, both from the journal; `WeakRef` and `FinalizationRegistry` (which
//! expose when the garbage collector runs) are removed.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rquickjs::promise::PromiseState;
use rquickjs::{
    CatchResultExt, CaughtError, Context, Ctx, FromJs, Function, Persistent, Promise, Runtime,
    Value,
};
use tokio::sync::mpsc;

use super::CodeLimits;

/// What a program asks of the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum CallKind {
    /// A tool of the toolkit.
    Tool,
    /// A search of the toolkit's deferred tools.
    Search,
}

/// One call a program made, numbered from 0 in the order it was made.
#[derive(Clone, Debug)]
pub(crate) struct HostCall {
    pub(crate) seq: usize,
    pub(crate) kind: CallKind,
    pub(crate) name: String,
    /// The arguments as JSON text (`JSON.stringify` of what the program passed).
    pub(crate) arguments: String,
}

/// The answer to one call: the value handed to the program (JSON), or the error it throws.
#[derive(Clone, Debug)]
pub(crate) enum Answer {
    Value(serde_json::Value),
    Error { message: String, kind: String },
}

/// What the sandbox tells the async side.
#[derive(Debug)]
pub(crate) enum Event {
    /// The program waits for these calls (all of them, then it goes on).
    Calls(Vec<HostCall>),
    /// The program ended.
    Done(Result<Finished, Failure>),
}

/// A program that ran to its end.
#[derive(Debug)]
pub(crate) struct Finished {
    /// Its return value as JSON text (`None` for `undefined`); a string stays a string.
    pub(crate) value: Option<Returned>,
    /// What it printed, one line per call of `print`.
    pub(crate) printed: String,
    /// Bytes of printed text dropped past the budget.
    pub(crate) dropped: usize,
}

/// A program's return value.
#[derive(Debug)]
pub(crate) enum Returned {
    Text(String),
    Json(String),
}

/// Why a program did not end normally.
#[derive(Debug)]
pub(crate) enum Failure {
    /// It does not parse.
    Syntax(String),
    /// It threw (or its promise rejected) and nothing caught it.
    Thrown(String),
    /// It ran longer than its CPU budget.
    Cpu(Duration),
    /// It was stopped from outside (its wall-clock deadline, or the caller went away).
    Stopped,
    /// It used more memory than allowed.
    Memory(usize),
    /// It recursed deeper than its stack allows.
    Stack(usize),
    /// It waits on a promise that nothing will ever settle.
    Stuck,
    /// It made more calls than allowed.
    TooManyCalls(usize),
    /// The runtime could not be set up.
    Engine(String),
}

/// Everything a program starts with.
pub(crate) struct Start {
    pub(crate) code: String,
    /// Names of the tools `tools` carries.
    pub(crate) tools: Vec<String>,
    pub(crate) seed: u32,
    /// Milliseconds since the Unix epoch, what `Date.now()` answers throughout.
    pub(crate) clock_ms: f64,
    pub(crate) limits: CodeLimits,
    /// The most printed text kept, in bytes.
    pub(crate) print_budget: usize,
}

/// The async side's handle on a running program.
pub(crate) struct Running {
    pub(crate) events: mpsc::UnboundedReceiver<Event>,
    pub(crate) answers: mpsc::UnboundedSender<Vec<Answer>>,
    /// Set to stop the program at its next interrupt check.
    pub(crate) stop: Arc<AtomicBool>,
}

/// Start `start` on the blocking pool.
pub(crate) fn spawn(start: Start) -> Running {
    let (event_tx, events) = mpsc::unbounded_channel();
    let (answers, answer_rx) = mpsc::unbounded_channel();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    tokio::task::spawn_blocking(move || {
        let done = run(start, flag, &event_tx, answer_rx);
        let _ = event_tx.send(Event::Done(done));
    });
    Running {
        events,
        answers,
        stop,
    }
}

/// Set up by the prelude, before the program's first line: it gets the host's two functions and
/// the journal's seed and clock, and keeps them out of the program's reach.
const PRELUDE: &str = r#"(function (hostCall, hostPrint, names, seed, clock) {
  "use strict";
  const freeze = Object.freeze, define = Object.defineProperty;
  const stringify = JSON.stringify, RealDate = Date, imul = Math.imul;
  class ToolError extends Error {
    constructor(tool, message, kind) {
      super(message);
      this.name = "ToolError";
      this.tool = tool;
      this.kind = kind;
    }
  }
  const settle = (tool) => (answer) => {
    if (answer[0]) return answer[1];
    throw new ToolError(tool, answer[1], answer[2]);
  };
  const tools = Object.create(null);
  for (const name of names) {
    const call = function (args) {
      return hostCall(0, name, args === undefined ? {} : args).then(settle(name));
    };
    define(call, "name", { value: name });
    define(tools, name, { value: freeze(call), enumerable: true });
  }
  freeze(tools);
  const show = (v) => typeof v === "string" ? v : v === undefined ? "undefined" : stringify(v);
  const print = freeze(function (...args) { hostPrint(args.map(show).join(" ")); });
  const search = freeze(function (query, limit) {
    return hostCall(1, "search_tools", { query: String(query), limit: limit === undefined ? null : limit })
      .then(settle("search_tools"));
  });
  const fixed = { writable: false, configurable: false, enumerable: false };
  define(globalThis, "tools", { value: tools, ...fixed });
  define(globalThis, "search_tools", { value: search, ...fixed });
  define(globalThis, "text", { value: print, ...fixed });
  define(globalThis, "print", { value: print, ...fixed });
  define(globalThis, "console", { value: freeze({ log: print, info: print, warn: print, error: print, debug: print }), ...fixed });
  define(globalThis, "ToolError", { value: ToolError, ...fixed });
  let state = seed >>> 0;
  Math.random = function random() {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = imul(t ^ (t >>> 15), t | 1);
    t ^= t + imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const FrozenDate = function Date(...args) {
    if (new.target === undefined) return new RealDate(clock).toString();
    return args.length === 0 ? new RealDate(clock) : new RealDate(...args);
  };
  FrozenDate.prototype = RealDate.prototype;
  FrozenDate.now = () => clock;
  FrozenDate.parse = RealDate.parse;
  FrozenDate.UTC = RealDate.UTC;
  define(globalThis, "Date", { value: FrozenDate, writable: false, configurable: false, enumerable: false });
  delete globalThis.WeakRef;
  delete globalThis.FinalizationRegistry;
  if (typeof globalThis.performance === "object") {
    define(globalThis, "performance", { value: freeze({ now: () => 0, timeOrigin: clock }), ...fixed });
  }
})"#;

/// The program as the body of an async function, on the same lines as written: `await`
/// anywhere, `return` its answer.
fn wrap(code: &str) -> String {
    format!("(async () => {{ \"use strict\"; {code}\n}})()")
}

/// Time the program spent running, against its CPU budget; checked by the interrupt handler.
#[derive(Default)]
struct Clock {
    used: Cell<Duration>,
    slice: Cell<Option<Instant>>,
    tripped: Cell<bool>,
}

impl Clock {
    fn resume(&self) {
        self.slice.set(Some(Instant::now()));
    }

    fn pause(&self) {
        if let Some(start) = self.slice.take() {
            self.used.set(self.used.get() + start.elapsed());
        }
    }

    fn over(&self, budget: Duration) -> bool {
        let running = self.slice.get().map(|s| s.elapsed()).unwrap_or_default();
        self.used.get() + running > budget
    }
}

/// Calls the program made and not yet handed to the host, with the resolve function of each.
type Pending = Rc<RefCell<Vec<(HostCall, Persistent<Function<'static>>)>>>;

/// Text the program printed, up to its budget.
#[derive(Default)]
struct Printed {
    text: String,
    dropped: usize,
}

fn run(
    start: Start,
    stop: Arc<AtomicBool>,
    events: &mpsc::UnboundedSender<Event>,
    answers: mpsc::UnboundedReceiver<Vec<Answer>>,
) -> Result<Finished, Failure> {
    let engine = |e: rquickjs::Error| Failure::Engine(e.to_string());
    let runtime = Runtime::new().map_err(engine)?;
    runtime.set_memory_limit(start.limits.memory);
    runtime.set_max_stack_size(start.limits.stack);
    let clock = Rc::new(Clock::default());
    {
        let clock = clock.clone();
        let stop = stop.clone();
        let budget = start.limits.cpu;
        runtime.set_interrupt_handler(Some(Box::new(move || {
            let trip = stop.load(Ordering::Relaxed) || clock.over(budget);
            if trip {
                clock.tripped.set(true);
            }
            trip
        })));
    }
    let context = Context::full(&runtime).map_err(engine)?;
    let pending: Pending = Rc::default();
    let printed = Rc::new(RefCell::new(Printed::default()));

    let result = drive(
        &runtime, &context, &start, &clock, &pending, &printed, &stop, events, answers,
    );
    // Handles into the runtime go before it does: calls the program made and never awaited
    // are still listed, and the host function (freed with the runtime) holds that list too.
    pending.borrow_mut().clear();
    result
}

/// Start the program and serve its calls until it ends.
#[allow(clippy::too_many_arguments)]
fn drive(
    runtime: &Runtime,
    context: &Context,
    start: &Start,
    clock: &Clock,
    pending: &Pending,
    printed: &Rc<RefCell<Printed>>,
    stop: &AtomicBool,
    events: &mpsc::UnboundedSender<Event>,
    mut answers: mpsc::UnboundedReceiver<Vec<Answer>>,
) -> Result<Finished, Failure> {
    let engine = |e: rquickjs::Error| Failure::Engine(e.to_string());
    // Set up, and start the program: it runs until its first `await` of something unsettled.
    clock.resume();
    let program: Result<Persistent<Promise<'static>>, Failure> = context.with(|ctx| {
        let host_call = host_call(&ctx, pending.clone(), start.limits.max_calls).map_err(engine)?;
        let host_print = host_print(&ctx, printed.clone(), start.print_budget).map_err(engine)?;
        let prelude: Function = ctx.eval(PRELUDE).map_err(engine)?;
        prelude
            .call::<_, ()>((
                host_call,
                host_print,
                start.tools.clone(),
                start.seed,
                start.clock_ms,
            ))
            .catch(&ctx)
            .map_err(|e| Failure::Engine(e.to_string()))?;
        let promise: Promise = ctx
            .eval(wrap(&start.code))
            .catch(&ctx)
            .map_err(|e| classify(&ctx, e, true, clock, &start.limits))?;
        Ok(Persistent::save(&ctx, promise))
    });
    let program = program?;

    loop {
        // Run everything the program can do without the host.
        loop {
            match runtime.execute_pending_job() {
                Ok(true) => {}
                Ok(false) => break,
                Err(job) => {
                    // A job threw past every handler: an interrupt or a limit, as the
                    // program's own rejections settle its promise instead.
                    clock.pause();
                    let caught = job.0.with(|ctx| {
                        let value = ctx.catch();
                        describe(&ctx, value)
                    });
                    return Err(classify_message(caught, clock, &start.limits));
                }
            }
        }
        clock.pause();
        let state = context.with(
            |ctx| -> Result<Option<Result<Finished, Failure>>, Failure> {
                let promise = program.clone().restore(&ctx).map_err(engine)?;
                match promise.state() {
                    PromiseState::Pending => Ok(None),
                    PromiseState::Resolved => {
                        let value: Value = promise
                            .result::<Value>()
                            .and_then(|r| r.ok())
                            .unwrap_or_else(|| Value::new_undefined(ctx.clone()));
                        let value = returned(&ctx, value).map_err(engine)?;
                        let mut printed = printed.borrow_mut();
                        Ok(Some(Ok(Finished {
                            value,
                            printed: std::mem::take(&mut printed.text),
                            dropped: printed.dropped,
                        })))
                    }
                    PromiseState::Rejected => {
                        let reason = match promise.result::<Value>() {
                            Some(Err(rquickjs::Error::Exception)) => ctx.catch(),
                            Some(Ok(v)) => v,
                            _ => Value::new_undefined(ctx.clone()),
                        };
                        let message = describe(&ctx, reason);
                        Ok(Some(Err(classify_message(message, clock, &start.limits))))
                    }
                }
            },
        )?;
        if let Some(done) = state {
            return done;
        }
        let waiting: Vec<(HostCall, Persistent<Function<'static>>)> =
            std::mem::take(&mut *pending.borrow_mut());
        if waiting.is_empty() {
            return Err(Failure::Stuck);
        }
        let (calls_out, resolvers): (Vec<HostCall>, Vec<_>) = waiting.into_iter().unzip();
        if events.send(Event::Calls(calls_out)).is_err() {
            return Err(Failure::Stopped);
        }
        let Some(batch) = answers.blocking_recv() else {
            return Err(Failure::Stopped);
        };
        if stop.load(Ordering::Relaxed) {
            return Err(Failure::Stopped);
        }
        clock.resume();
        context.with(|ctx| -> Result<(), Failure> {
            for (resolve, answer) in resolvers.into_iter().zip(batch) {
                let resolve = resolve.restore(&ctx).map_err(engine)?;
                let settled = rquickjs::Array::new(ctx.clone()).map_err(engine)?;
                match answer {
                    Answer::Value(value) => {
                        let value = ctx.json_parse(value.to_string()).map_err(engine)?;
                        settled.set(0, true).map_err(engine)?;
                        settled.set(1, value).map_err(engine)?;
                    }
                    Answer::Error { message, kind } => {
                        settled.set(0, false).map_err(engine)?;
                        settled.set(1, message).map_err(engine)?;
                        settled.set(2, kind).map_err(engine)?;
                    }
                }
                resolve
                    .call::<_, ()>((settled,))
                    .catch(&ctx)
                    .map_err(|e| classify(&ctx, e, false, clock, &start.limits))?;
            }
            Ok(())
        })?;
    }
}

/// The host function behind `tools.*` and `search_tools`: records the call, hands back a
/// promise the host settles later.
fn host_call<'js>(
    ctx: &Ctx<'js>,
    pending: Pending,
    max_calls: usize,
) -> rquickjs::Result<Function<'js>> {
    let count = Cell::new(0usize);
    Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>,
              kind: u32,
              name: String,
              args: Value<'js>|
              -> rquickjs::Result<Promise<'js>> {
            let seq = count.get();
            if seq >= max_calls {
                return Err(rquickjs::Exception::throw_range(
                    &ctx,
                    &format!(
                        "this program made {max_calls} tool calls, the most one program may make"
                    ),
                ));
            }
            count.set(seq + 1);
            let arguments = ctx
                .json_stringify(args)?
                .map(|s| s.to_string())
                .transpose()?
                .unwrap_or_else(|| "{}".to_string());
            let (promise, resolve, _reject) = ctx.promise()?;
            let kind = if kind == 1 {
                CallKind::Search
            } else {
                CallKind::Tool
            };
            pending.borrow_mut().push((
                HostCall {
                    seq,
                    kind,
                    name,
                    arguments,
                },
                Persistent::save(&ctx, resolve),
            ));
            Ok(promise)
        },
    )
}

/// The host function behind `print`: keeps lines up to the budget, counts the rest.
fn host_print<'js>(
    ctx: &Ctx<'js>,
    printed: Rc<RefCell<Printed>>,
    budget: usize,
) -> rquickjs::Result<Function<'js>> {
    Function::new(ctx.clone(), move |line: String| {
        let mut printed = printed.borrow_mut();
        let room = budget.saturating_sub(printed.text.len());
        if line.len() < room {
            printed.text.push_str(&line);
            printed.text.push('\n');
        } else {
            printed.dropped += line.len() + 1;
        }
    })
}

/// The program's return value as the host keeps it.
fn returned<'js>(ctx: &Ctx<'js>, value: Value<'js>) -> rquickjs::Result<Option<Returned>> {
    if value.is_undefined() {
        return Ok(None);
    }
    if let Some(s) = value.as_string() {
        return Ok(Some(Returned::Text(s.to_string()?)));
    }
    Ok(ctx
        .json_stringify(value)?
        .map(|s| s.to_string())
        .transpose()?
        .map(Returned::Json))
}

/// A thrown value as text: `Name: message` and the stack for errors, JSON or its string form
/// for anything else.
fn describe<'js>(ctx: &Ctx<'js>, value: Value<'js>) -> String {
    if let Some(object) = value.as_object() {
        let get = |key: &str| -> Option<String> {
            object
                .get::<_, Option<rquickjs::Coerced<String>>>(key)
                .ok()
                .flatten()
                .map(|c| c.0)
        };
        if let Some(message) = get("message") {
            let name = get("name").unwrap_or_else(|| "Error".into());
            let mut text = format!("{name}: {message}");
            if let Some(stack) = get("stack").filter(|s| !s.trim().is_empty()) {
                text.push('\n');
                text.push_str(stack.trim_end());
            }
            return text;
        }
    }
    if let Ok(Some(json)) = ctx.json_stringify(value.clone())
        && let Ok(json) = json.to_string()
    {
        return format!("the program threw {json}");
    }
    rquickjs::Coerced::<String>::from_js(ctx, value)
        .map(|c| format!("the program threw {}", c.0))
        .unwrap_or_else(|_| "the program threw a value that cannot be shown".into())
}

fn classify<'js>(
    ctx: &Ctx<'js>,
    error: CaughtError<'js>,
    parsing: bool,
    clock: &Clock,
    limits: &CodeLimits,
) -> Failure {
    let text = match error {
        CaughtError::Exception(e) => describe(ctx, e.into_value()),
        CaughtError::Value(v) => describe(ctx, v),
        CaughtError::Error(e) => e.to_string(),
    };
    if parsing && text.starts_with("SyntaxError") {
        return Failure::Syntax(text);
    }
    classify_message(text, clock, limits)
}

/// Tell a limit apart from an ordinary exception by what QuickJS says and whether the
/// interrupt handler fired.
fn classify_message(text: String, clock: &Clock, limits: &CodeLimits) -> Failure {
    if clock.tripped.get() {
        return if clock.over(limits.cpu) {
            Failure::Cpu(limits.cpu)
        } else {
            Failure::Stopped
        };
    }
    let lower = text.to_ascii_lowercase();
    if lower.contains("out of memory") {
        return Failure::Memory(limits.memory);
    }
    if lower.contains("stack overflow") || lower.contains("call stack size") {
        return Failure::Stack(limits.stack);
    }
    if lower.contains(" tool calls, the most one program may make") {
        return Failure::TooManyCalls(limits.max_calls);
    }
    Failure::Thrown(text)
}
