//! Tools with observable behaviour: how many run at once, how many futures are alive, how
//! many attempts were made.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_toolkit::prelude::*;

/// Counts live instances; a tool holds one while its future exists, so a dropped (cancelled)
/// future shows as a decrement.
#[derive(Default)]
pub struct Probe {
    pub alive: AtomicUsize,
    pub running: AtomicUsize,
    pub max_running: AtomicUsize,
    pub started: AtomicUsize,
    pub finished: AtomicUsize,
    pub failures_left: AtomicUsize,
}

pub struct Alive(Arc<Probe>);

impl Probe {
    pub fn enter(self: &Arc<Self>) -> Alive {
        self.alive.fetch_add(1, Ordering::SeqCst);
        self.started.fetch_add(1, Ordering::SeqCst);
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_running.fetch_max(now, Ordering::SeqCst);
        Alive(self.clone())
    }
    pub fn get(&self, counter: &AtomicUsize) -> usize {
        counter.load(Ordering::SeqCst)
    }
}

impl Drop for Alive {
    fn drop(&mut self) {
        self.0.alive.fetch_sub(1, Ordering::SeqCst);
        self.0.running.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Sleep for `ms` milliseconds, then answer.
#[tool(read_only)]
pub async fn nap(ms: u64, #[ctx] probe: Ctx<Probe>) -> String {
    let _alive = probe.0.enter();
    tokio::time::sleep(Duration::from_millis(ms)).await;
    probe.finished.fetch_add(1, Ordering::SeqCst);
    format!("slept {ms}")
}

/// Never finishes (not idempotent).
#[tool(timeout = "50ms")]
pub async fn hang(#[ctx] probe: Ctx<Probe>) -> String {
    let _alive = probe.0.enter();
    std::future::pending::<()>().await;
    unreachable!()
}

/// Never finishes, but is safe to repeat.
#[tool(timeout = "30ms", idempotent, retries = 2)]
pub async fn hang_idempotent(#[ctx] probe: Ctx<Probe>) -> String {
    let _alive = probe.0.enter();
    std::future::pending::<()>().await;
    unreachable!()
}

/// Fails with a retryable error while `failures_left` > 0.
#[tool(retries = 3)]
pub async fn flaky(#[ctx] probe: Ctx<Probe>) -> Result<String, ToolError> {
    let _alive = probe.0.enter();
    let left = probe.failures_left.load(Ordering::SeqCst);
    if left > 0 {
        probe.failures_left.store(left - 1, Ordering::SeqCst);
        return Err(ToolError::retryable("upstream busy"));
    }
    Ok("ok at last".into())
}

/// Fails for good.
#[tool(retries = 3)]
pub async fn broken(#[ctx] probe: Ctx<Probe>) -> Result<String, ToolError> {
    let _alive = probe.0.enter();
    Err(ToolError::execution("the disk is gone"))
}

/// Runs alone.
#[tool(sequential)]
pub async fn barrier(#[ctx] probe: Ctx<Probe>) -> String {
    let alone = probe.get(&probe.running) == 0;
    let _alive = probe.0.enter();
    tokio::time::sleep(Duration::from_millis(5)).await;
    format!("alone={alone}")
}

/// Blocks its thread (a plain fn) for `ms`.
#[tool]
pub fn block(ms: u64) -> String {
    std::thread::sleep(Duration::from_millis(ms));
    format!("blocked {ms}")
}

/// Panics.
#[tool]
pub async fn boom() -> String {
    panic!("tool exploded")
}

/// Waits for cancellation cooperatively.
#[tool]
pub async fn cooperative(#[ctx] token: CancellationToken, #[ctx] probe: Ctx<Probe>) -> String {
    let _alive = probe.0.enter();
    token.cancelled().await;
    probe.finished.fetch_add(1, Ordering::SeqCst);
    "noticed cancellation".into()
}

/// Reports progress.
#[tool]
pub async fn report(steps: u32, #[ctx] emitter: ToolEmitter) -> u32 {
    for i in 1..=steps {
        emitter.progress(i, Some(f64::from(steps)), format!("{i}/{steps}"));
        tokio::task::yield_now().await;
    }
    steps
}

/// Returns `bytes` bytes of text.
#[tool]
pub async fn big(bytes: usize) -> String {
    "x".repeat(bytes)
}

/// Trivial.
#[tool]
pub async fn echo(n: u64) -> u64 {
    n
}

/// Deletes something; needs approval.
#[tool(requires_approval, destructive)]
pub async fn delete(path: String) -> String {
    format!("deleted {path}")
}

/// A long job for the background queue.
#[tool(background, timeout = "2s")]
pub async fn long_job(ms: u64, fail: bool, #[ctx] probe: Ctx<Probe>) -> Result<String, ToolError> {
    let _alive = probe.0.enter();
    tokio::time::sleep(Duration::from_millis(ms)).await;
    probe.finished.fetch_add(1, Ordering::SeqCst);
    if fail {
        return Err(ToolError::execution("job failed"));
    }
    Ok(format!("job done after {ms}"))
}

/// A toolkit with every tool above, the probe in its context.
pub fn kit(probe: &Arc<Probe>) -> agent_toolkit::toolkit::ToolkitBuilder {
    Toolkit::builder()
        .register(Nap)
        .register(Hang)
        .register(HangIdempotent)
        .register(Flaky)
        .register(Broken)
        .register(Barrier)
        .register(Block)
        .register(Boom)
        .register(Cooperative)
        .register(Report)
        .register(Big)
        .register(Echo)
        .register(Delete)
        .register(LongJob)
        .context_shared(probe.clone())
}
