//! The durable queue with its workers in processes of their own, as the README deploys them
//! (issue 22): our `JobQueue` + `Worker` running a trivial `background, idempotent` tool against
//! raw apalis (its own storage and worker, a trivial job, nothing of ours), with 1 and 2 worker
//! processes, on Postgres with `fsync` on (its default) and off, and on SQLite, in one run.
//!
//! The worker processes are this binary started again (`JOBS_BENCH_ROLE=worker`), each serving
//! the queue at concurrency 16 until its stdin closes. This process submits and collects:
//!
//! - `throughput`: N calls (2,000 by default) submitted at once — ours through
//!   `Toolkit::call_all` (one model turn of N background calls), raw apalis with one `push` per
//!   job, all at once — and timed until every result is back here: ours from the toolkit's
//!   results stream, raw apalis by counting its `Done` jobs (and reading their results at the
//!   end). `submit` is the part until every call was stored.
//! - `one call`: one call submitted and answered pending, one at a time (the cost of persisting
//!   a call, with nothing to share the round trips with).
//! - `a turn of 10`: ten calls submitted at once (ours: one `call_all`), one turn at a time.
//!
//! Every figure is the median of `JOBS_BENCH_REPS` runs (3). Poll interval 5 ms for both.
//! `CPU` is the CPU time (`/proc/<pid>/stat`) of this process, the worker processes and the
//! Postgres server with its backends over the runs, per job; `others` the share of the
//! machine's CPUs other processes took meanwhile (when it is high, jobs/s describe the machine).
//!
//! `cargo bench -p agent-toolkit-examples --features sqlite,postgres --bench jobs_processes`
//! (`JOBS_BENCH_CALLS=N`, `JOBS_BENCH_REPS=N`, `JOBS_BENCH_ONLY=pg-off,pg-on,sqlite` to choose
//! engines, or `pg-url` with `JOBS_BENCH_URL` for a Postgres of your own; `JOBS_BENCH_KINDS=ours`
//! or `apalis`, `JOBS_BENCH_WORKERS=1,2`).
//!
//! A/B mode, ours only, Postgres: `JOBS_BENCH_CONFIGS=default,bench` (see [`Config`]: `default`
//! is the documented default configuration, `bench` the settings above, `W/S` the workers' and
//! the submitter's poll intervals in ms, a `+calls` suffix separate calls instead of a turn)
//! runs each configuration once per repetition, alternating, each run with worker processes
//! and a queue of its own, and prints the medians and their ratios to the first
//! (`JOBS_BENCH_ONLY=pg-off,pg-on`, `JOBS_BENCH_WORKERS`, `JOBS_BENCH_CALLS`, `JOBS_BENCH_REPS`).

#[path = "../db/mod.rs"]
mod db;

use std::process::Stdio;
use std::time::{Duration, Instant};

use agent_toolkit::background::{JobQueue, Worker};
use agent_toolkit::prelude::*;
use apalis::prelude::{BackendExt, BoxDynError, TaskSink, WorkerBuilder, WorkerBuilderExt};
use futures::StreamExt;
use tokio::io::{AsyncBufReadExt, BufReader};

const ROLE: &str = "JOBS_BENCH_ROLE";
const CONCURRENCY: usize = 16;
const POLL: Duration = Duration::from_millis(5);
/// Calls of a model turn, for the `a turn` figure.
const TURN: usize = 10;

/// Return `n` (does nothing else).
#[tool(background, idempotent)]
async fn noop(n: u32) -> u32 {
    n
}

fn kit() -> agent_toolkit::toolkit::ToolkitBuilder {
    Toolkit::builder().register(Noop)
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Ours,
    Apalis,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Ours => "ours",
            Kind::Apalis => "apalis",
        }
    }
}

/// Where the queue is: `sqlite:PATH` or a Postgres URL.
fn is_sqlite(db: &str) -> bool {
    db.starts_with("sqlite:")
}

async fn sqlite_pool(path: &str) -> sqlx::SqlitePool {
    // As `Database::sqlite` opens it.
    use sqlx::sqlite::{
        SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous,
    };
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(Duration::from_secs(30));
    SqlitePoolOptions::new()
        .max_connections(8)
        .connect_with(options)
        .await
        .expect("open the SQLite file")
}

async fn pg_pool(url: &str) -> sqlx::PgPool {
    // As `Database::postgres` opens it.
    sqlx::postgres::PgPoolOptions::new()
        .max_connections(16)
        .connect(url)
        .await
        .expect("connect to Postgres")
}

async fn open_queue(db: &str, name: &str) -> JobQueue {
    open_queue_polling(db, name, Some(POLL)).await
}

/// The queue, polling every `poll` (`None`: the library's default interval).
async fn open_queue_polling(db: &str, name: &str, poll: Option<Duration>) -> JobQueue {
    let queue = match db.strip_prefix("sqlite:") {
        Some(path) => JobQueue::sqlite(path).await,
        None => JobQueue::postgres(db).await,
    };
    let queue = queue.expect("open the queue").name(name);
    match poll {
        Some(poll) => queue.poll_interval(poll),
        None => queue,
    }
}

/// The workers' poll interval in an A/B run (`JOBS_BENCH_WORKER_POLL_MS`, `default`: the
/// library's), else the bench's.
fn worker_poll() -> Option<Duration> {
    match std::env::var("JOBS_BENCH_WORKER_POLL_MS").as_deref() {
        Ok("default") => None,
        Ok(ms) => Some(Duration::from_millis(ms.parse().expect("milliseconds"))),
        Err(_) => Some(POLL),
    }
}

/// The trivial job of raw apalis.
async fn raw_noop(n: u32) -> Result<u32, BoxDynError> {
    Ok(n)
}

fn raw_pg_config(queue: &str) -> apalis_postgres::Config {
    apalis_postgres::Config::default()
        .queue(queue)
        .heartbeat_interval(Duration::from_secs(2))
        .missed_heartbeats(3)
        .batch_size(CONCURRENCY)
}

fn raw_sqlite_config(queue: &str) -> apalis_sqlite::Config {
    apalis_sqlite::Config::default()
        .queue(queue)
        .heartbeat_interval(Duration::from_secs(2))
        .missed_heartbeats(3)
        .batch_size(CONCURRENCY)
}

/// A worker process: serve the queue until stdin closes.
fn worker_main() {
    let db = std::env::var("JOBS_BENCH_DB").unwrap();
    let queue = std::env::var("JOBS_BENCH_QUEUE").unwrap();
    let kind = std::env::var("JOBS_BENCH_KIND").unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let stdin_closed = async {
            let mut line = String::new();
            let _ =
                tokio::task::spawn_blocking(move || std::io::stdin().read_line(&mut line)).await;
        };
        let name = format!("raw-{}", std::process::id());
        match kind.as_str() {
            "ours" => {
                let queue = open_queue_polling(&db, &queue, worker_poll()).await;
                let toolkit = kit().build().unwrap();
                println!("ready");
                // An A/B run's `default` workers: `Worker::new` as it comes (concurrency 16).
                let worker = Worker::new(&toolkit, &queue);
                let worker = if std::env::var_os("JOBS_BENCH_WORKER_DEFAULT").is_some() {
                    worker
                } else {
                    worker.concurrency(CONCURRENCY)
                };
                worker.run_until(stdin_closed).await.expect("our worker");
            }
            _ if is_sqlite(&db) => {
                let pool = sqlite_pool(db.strip_prefix("sqlite:").unwrap()).await;
                let storage = apalis_sqlite::SqliteStorage::<u32>::new(&pool)
                    .with_config(raw_sqlite_config(&queue))
                    .poll_with_interval(POLL);
                println!("ready");
                WorkerBuilder::new(name)
                    .backend(storage)
                    .concurrency(CONCURRENCY)
                    .build(raw_noop)
                    .run_until(async move {
                        stdin_closed.await;
                        Ok::<(), apalis::prelude::WorkerError>(())
                    })
                    .await
                    .expect("the apalis worker");
            }
            _ => {
                let pool = pg_pool(&db).await;
                let storage = apalis_postgres::PostgresStorage::<u32>::new(&pool)
                    .with_config(raw_pg_config(&queue))
                    .poll_with_interval(POLL);
                println!("ready");
                WorkerBuilder::new(name)
                    .backend(storage)
                    .concurrency(CONCURRENCY)
                    .build(raw_noop)
                    .run_until(async move {
                        stdin_closed.await;
                        Ok::<(), apalis::prelude::WorkerError>(())
                    })
                    .await
                    .expect("the apalis worker");
            }
        }
    });
}

/// Worker processes of one setup; closing their stdin stops them.
struct Workers(Vec<tokio::process::Child>);

impl Workers {
    async fn start(count: usize, kind: Kind, db: &str, queue: &str) -> Workers {
        Self::start_with(count, kind, db, queue, &[]).await
    }

    async fn start_with(
        count: usize,
        kind: Kind,
        db: &str,
        queue: &str,
        env: &[(&str, String)],
    ) -> Workers {
        let exe = std::env::current_exe().expect("the bench executable");
        let mut children = Vec::new();
        for _ in 0..count {
            let mut child = tokio::process::Command::new(&exe)
                .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
                .env(ROLE, "worker")
                .env("JOBS_BENCH_DB", db)
                .env("JOBS_BENCH_QUEUE", queue)
                .env("JOBS_BENCH_KIND", kind.name())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .kill_on_drop(true)
                .spawn()
                .expect("start a worker process");
            let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
            let first = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
                .await
                .expect("the worker starts")
                .unwrap();
            assert_eq!(first.as_deref(), Some("ready"), "the worker process failed");
            children.push(child);
        }
        Workers(children)
    }

    fn pids(&self) -> Vec<u32> {
        self.0.iter().filter_map(|c| c.id()).collect()
    }

    async fn stop(self) {
        for mut child in self.0 {
            drop(child.stdin.take());
            if tokio::time::timeout(Duration::from_secs(20), child.wait())
                .await
                .is_err()
            {
                let _ = child.kill().await;
            }
        }
    }
}

/// One run: how long until every call was stored, and until every result was back.
#[derive(Clone, Copy)]
struct Run {
    submit: Duration,
    total: Duration,
}

fn calls(count: usize, round: usize) -> Vec<ToolCall> {
    (0..count)
        .map(|n| ToolCall::new(format!("r{round}c{n}"), "noop", format!(r#"{{"n": {n}}}"#)))
        .collect()
}

/// Ours: `count` calls in one `call_all` (a turn), then every result from the results stream.
async fn run_ours(
    toolkit: &Toolkit,
    results: &mut futures::stream::BoxStream<'static, ToolResult>,
    count: usize,
    round: usize,
) -> Run {
    let ctx = ToolContext::new();
    let batch = calls(count, round);
    let start = Instant::now();
    let pending = toolkit.call_all(batch, &ctx).await;
    let submit = start.elapsed();
    for result in &pending {
        assert!(result.is_pending(), "{}", result.model_text());
    }
    for received in 0..count {
        let result = tokio::time::timeout(Duration::from_secs(120), results.next())
            .await
            .unwrap_or_else(|_| panic!("only {received} of {count} results arrived in 120 s"))
            .expect("a result");
        assert!(!result.is_error(), "{}", result.model_text());
    }
    Run {
        submit,
        total: start.elapsed(),
    }
}

/// Ours, one call at a time: the mean time to persist one call.
async fn one_call_ours(
    toolkit: &Toolkit,
    results: &mut futures::stream::BoxStream<'static, ToolResult>,
    count: usize,
) -> Duration {
    let ctx = ToolContext::new();
    let start = Instant::now();
    for n in 0..count {
        let call = ToolCall::new(format!("one{n}"), "noop", r#"{"n": 1}"#);
        assert!(toolkit.call(call, &ctx).await.is_pending());
    }
    let mean = start.elapsed() / count as u32;
    for _ in 0..count {
        tokio::time::timeout(Duration::from_secs(60), results.next())
            .await
            .expect("the one-call results")
            .expect("a result");
    }
    mean
}

/// Ours, turns of `size` calls one after another (`call_all`, as an agent runs a turn): the
/// mean time to persist a turn.
async fn turns_ours(
    toolkit: &Toolkit,
    results: &mut futures::stream::BoxStream<'static, ToolResult>,
    turns: usize,
    size: usize,
) -> Duration {
    let ctx = ToolContext::new();
    let start = Instant::now();
    for turn in 0..turns {
        let batch = (0..size)
            .map(|n| ToolCall::new(format!("turn{turn}c{n}"), "noop", r#"{"n": 1}"#))
            .collect();
        let pending = toolkit.call_all(batch, &ctx).await;
        assert!(pending.iter().all(ToolResult::is_pending));
    }
    let mean = start.elapsed() / turns as u32;
    for _ in 0..turns * size {
        tokio::time::timeout(Duration::from_secs(60), results.next())
            .await
            .expect("the turns' results")
            .expect("a result");
    }
    mean
}

/// The raw apalis submitter of one engine.
enum Raw {
    Pg(sqlx::PgPool, apalis_postgres::PostgresStorage<u32>),
    Sqlite(sqlx::SqlitePool, apalis_sqlite::SqliteStorage<u32>),
}

impl Raw {
    async fn new(db: &str, queue: &str) -> Raw {
        match db.strip_prefix("sqlite:") {
            Some(path) => {
                let pool = sqlite_pool(path).await;
                apalis_sqlite::SqliteStorage::setup(&pool).await.unwrap();
                let storage = apalis_sqlite::SqliteStorage::<u32>::new(&pool)
                    .with_config(raw_sqlite_config(queue));
                Raw::Sqlite(pool, storage)
            }
            None => {
                let pool = pg_pool(db).await;
                apalis_postgres::PostgresStorage::setup(&pool)
                    .await
                    .unwrap();
                let storage = apalis_postgres::PostgresStorage::<u32>::new(&pool)
                    .with_config(raw_pg_config(queue));
                Raw::Pg(pool, storage)
            }
        }
    }

    async fn push(&self, n: u32) {
        match self {
            Raw::Pg(_, storage) => storage.clone().push(n).await.expect("push"),
            Raw::Sqlite(_, storage) => storage.clone().push(n).await.expect("push"),
        }
    }

    /// How many jobs of `queue` are done.
    async fn done(&self, queue: &str) -> i64 {
        match self {
            Raw::Pg(pool, _) => sqlx::query_scalar(
                "SELECT count(*) FROM apalis.jobs WHERE job_type = $1 AND status = 'Done'",
            )
            .bind(queue)
            .fetch_one(pool)
            .await
            .unwrap(),
            Raw::Sqlite(pool, _) => sqlx::query_scalar(
                "SELECT count(*) FROM Jobs WHERE job_type = ?1 AND status = 'Done'",
            )
            .bind(queue)
            .fetch_one(pool)
            .await
            .unwrap(),
        }
    }

    /// The results of the last `count` done jobs of `queue` (read once, at the end of a run).
    async fn results(&self, queue: &str, count: usize) -> usize {
        match self {
            Raw::Pg(pool, _) => sqlx::query_scalar::<_, Option<serde_json::Value>>(
                "SELECT last_result FROM apalis.jobs WHERE job_type = $1 AND status = 'Done' \
                 ORDER BY done_at DESC LIMIT $2",
            )
            .bind(queue)
            .bind(count as i64)
            .fetch_all(pool)
            .await
            .unwrap()
            .len(),
            Raw::Sqlite(pool, _) => sqlx::query_scalar::<_, Option<String>>(
                "SELECT last_result FROM Jobs WHERE job_type = ?1 AND status = 'Done' \
                 ORDER BY done_at DESC LIMIT ?2",
            )
            .bind(queue)
            .bind(count as i64)
            .fetch_all(pool)
            .await
            .unwrap()
            .len(),
        }
    }

    /// `count` pushes at once, then wait until all are done. apalis keeps its done jobs, as it
    /// does by default: they are counted from what was done before.
    async fn run(&self, queue: &str, count: usize) -> Run {
        let before = self.done(queue).await;
        let start = Instant::now();
        futures::future::join_all((0..count as u32).map(|n| self.push(n))).await;
        let submit = start.elapsed();
        let deadline = Instant::now() + Duration::from_secs(120);
        while self.done(queue).await < before + count as i64 {
            assert!(
                Instant::now() < deadline,
                "raw apalis did not finish in 120 s"
            );
            tokio::time::sleep(POLL).await;
        }
        assert!(self.results(queue, count).await == count);
        Run {
            submit,
            total: start.elapsed(),
        }
    }

    async fn one_call(&self, count: usize) -> Duration {
        let start = Instant::now();
        for n in 0..count {
            self.push(n as u32).await;
        }
        start.elapsed() / count as u32
    }

    /// Groups of `size` pushes at once, one group after another.
    async fn turns(&self, turns: usize, size: usize) -> Duration {
        let start = Instant::now();
        for _ in 0..turns {
            futures::future::join_all((0..size as u32).map(|n| self.push(n))).await;
        }
        start.elapsed() / turns as u32
    }
}

/// CPU time (user + system) of a process and its threads, from `/proc/<pid>/stat`.
fn process_cpu(pid: u32) -> Duration {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return Duration::ZERO;
    };
    // After the command's `)`: state is field 3, utime 14 and stime 15 (clock ticks of 10 ms).
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i - 3)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    Duration::from_millis((ticks(14) + ticks(15)) * 10)
}

/// The children of process `parent` (a Postgres server's backends).
fn children(parent: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    let rest = stat.rsplit_once(')')?.1.to_owned();
                    rest.split_whitespace().nth(1)?.parse::<u32>().ok()
                })
                == Some(parent)
        })
        .collect()
}

/// Busy time of the whole machine, every CPU (`/proc/stat`: all but idle and iowait).
fn machine_busy() -> Duration {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let ticks: Vec<u64> = stat
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .skip(1)
        .filter_map(|v| v.parse().ok())
        .collect();
    let busy: u64 = ticks
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 3 && *i != 4 && *i < 8)
        .map(|(_, v)| v)
        .sum();
    Duration::from_millis(busy * 10)
}

/// What the processes of one measurement used: this process, the worker processes and the
/// Postgres server with its backends; and the whole machine.
#[derive(Clone, Copy)]
struct Cpu {
    ours: Duration,
    machine: Duration,
    at: Instant,
}

impl Cpu {
    fn now(workers: &[u32], server: Option<u32>) -> Cpu {
        let mut ours = process_cpu(std::process::id());
        for &pid in workers {
            ours += process_cpu(pid);
        }
        if let Some(server) = server {
            ours += process_cpu(server);
            for pid in children(server) {
                ours += process_cpu(pid);
            }
        }
        Cpu {
            ours,
            machine: machine_busy(),
            at: Instant::now(),
        }
    }
}

/// CPU per job (of this measurement's processes) and the share of the machine's two CPUs
/// that other processes took meanwhile.
#[derive(Clone, Copy, Default)]
struct CpuUse {
    per_job: Duration,
    others: f64,
}

fn cpu_use(before: Cpu, after: Cpu, jobs: usize) -> CpuUse {
    let ours = after.ours.saturating_sub(before.ours);
    let machine = after.machine.saturating_sub(before.machine);
    let wall = after.at - before.at;
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get()) as f64;
    CpuUse {
        per_job: ours / jobs as u32,
        others: machine.saturating_sub(ours).as_secs_f64() / (wall.as_secs_f64() * cpus),
    }
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

struct Figures {
    engine: &'static str,
    kind: Kind,
    workers: usize,
    runs: Vec<Run>,
    one_call: Duration,
    turn: Duration,
    cpu: CpuUse,
    count: usize,
}

impl Figures {
    fn jobs_per_s(&self) -> f64 {
        self.count as f64 / median(self.runs.iter().map(|r| r.total).collect()).as_secs_f64()
    }

    fn print(&self) {
        let total = median(self.runs.iter().map(|r| r.total).collect());
        let submit = median(self.runs.iter().map(|r| r.submit).collect());
        let all: Vec<String> = self
            .runs
            .iter()
            .map(|r| format!("{:.0}", self.count as f64 / r.total.as_secs_f64()))
            .collect();
        println!(
            "{:<7} {:<6} {} worker(s): {:>6.0} jobs/s (runs {}), {} calls in {:>6.1} ms, submit {:>6.1} ms ({:.1} us/call); one call {:.2} ms; a turn of {TURN} {:.2} ms; CPU {:.0} us/job, others {:.0} %",
            self.engine,
            self.kind.name(),
            self.workers,
            self.jobs_per_s(),
            all.join(" / "),
            self.count,
            total.as_secs_f64() * 1e3,
            submit.as_secs_f64() * 1e3,
            submit.as_secs_f64() * 1e6 / self.count as f64,
            self.one_call.as_secs_f64() * 1e3,
            self.turn.as_secs_f64() * 1e3,
            self.cpu.per_job.as_secs_f64() * 1e6,
            self.cpu.others * 100.0,
        );
    }
}

async fn measure(
    engine: &'static str,
    db: &str,
    server: Option<u32>,
    kind: Kind,
    workers: usize,
    count: usize,
    reps: usize,
) -> Figures {
    let queue = format!("{}-{workers}", kind.name());
    let mut runs = Vec::new();
    let (one_call, turn, cpu);
    match kind {
        Kind::Ours => {
            // A turn's calls all at once (by default a toolkit runs 16 calls of a turn at a
            // time).
            let toolkit = kit()
                .max_concurrency(count)
                .job_queue(open_queue(db, &queue).await)
                .build()
                .unwrap();
            let mut results = toolkit.background().results();
            let processes = Workers::start(workers, kind, db, &queue).await;
            run_ours(&toolkit, &mut results, 50, 0).await; // warm up
            let before = Cpu::now(&processes.pids(), server);
            for round in 1..=reps {
                runs.push(run_ours(&toolkit, &mut results, count, round).await);
            }
            cpu = cpu_use(before, Cpu::now(&processes.pids(), server), count * reps);
            one_call = one_call_ours(&toolkit, &mut results, 100).await;
            turn = turns_ours(&toolkit, &mut results, 50, TURN).await;
            processes.stop().await;
        }
        Kind::Apalis => {
            let raw = Raw::new(db, &queue).await;
            let processes = Workers::start(workers, kind, db, &queue).await;
            raw.run(&queue, 50).await; // warm up
            let before = Cpu::now(&processes.pids(), server);
            for _ in 0..reps {
                runs.push(raw.run(&queue, count).await);
            }
            cpu = cpu_use(before, Cpu::now(&processes.pids(), server), count * reps);
            one_call = raw.one_call(100).await;
            turn = raw.turns(50, TURN).await;
            processes.stop().await;
        }
    }
    let figures = Figures {
        engine,
        kind,
        workers,
        runs,
        one_call,
        turn,
        cpu,
        count,
    };
    figures.print();
    figures
}

/// One configuration of an A/B run (`JOBS_BENCH_CONFIGS`): `default` is what a user gets with
/// the documented defaults (`JobQueue` as it comes, `Toolkit::builder()` and `Worker::new`
/// without settings); `bench` the settings of the figures above (poll interval 5 ms on both
/// sides, the toolkit's `max_concurrency` at the number of calls); `W/S` the defaults with the
/// workers polling every W ms and the submitter every S ms (`d`: the default). A `+calls`
/// suffix submits the calls as separate `Toolkit::call`s, all at once, instead of one turn;
/// `+serial` as separate calls each awaited before the next; `+cold` leaves out the warm-up.
#[derive(Clone, Debug)]
struct Config {
    name: String,
    worker_poll: Option<Duration>,
    submit_poll: Option<Duration>,
    bench: bool,
    separate: bool,
    /// `+serial`: each call awaited before the next is made.
    serial: bool,
    /// `+cold`: no warm-up run first.
    cold: bool,
}

impl Config {
    fn parse(text: &str) -> Config {
        let mut parts = text.split('+');
        let base = parts.next().unwrap();
        let (mut separate, mut serial, mut cold) = (false, false, false);
        for flag in parts {
            match flag {
                "calls" => separate = true,
                "serial" => serial = true,
                "cold" => cold = true,
                other => panic!("unknown flag `+{other}` (calls, serial, cold)"),
            }
        }
        let ms = |v: &str| match v {
            "d" => None,
            v => Some(Duration::from_millis(
                v.parse().expect("milliseconds or `d`"),
            )),
        };
        let (worker_poll, submit_poll, bench) = match base {
            "default" => (None, None, false),
            "bench" => (Some(POLL), Some(POLL), true),
            other => {
                let (w, s) = other
                    .split_once('/')
                    .expect("a configuration: default, bench or W/S");
                (ms(w), ms(s), false)
            }
        };
        Config {
            name: text.to_owned(),
            worker_poll,
            submit_poll,
            bench,
            separate,
            serial,
            cold,
        }
    }
}

/// Ours, `count` calls as separate `Toolkit::call`s (all at once, or each awaited before the
/// next: `serial`), every result read from the results stream meanwhile (a reader that waited
/// for the submissions would fall more than the stream's 1,024 results behind).
async fn run_ours_separate(
    toolkit: &Toolkit,
    results: &mut futures::stream::BoxStream<'static, ToolResult>,
    count: usize,
    round: usize,
    serial: bool,
) -> Run {
    let ctx = ToolContext::new();
    let batch = calls(count, round);
    let start = Instant::now();
    let submitting = async {
        let pending = if serial {
            let mut pending = Vec::with_capacity(count);
            for call in batch {
                pending.push(toolkit.call(call, &ctx).await);
            }
            pending
        } else {
            futures::future::join_all(batch.into_iter().map(|c| toolkit.call(c, &ctx))).await
        };
        let submit = start.elapsed();
        for result in &pending {
            assert!(result.is_pending(), "{}", result.model_text());
        }
        submit
    };
    let collecting = async {
        for received in 0..count {
            let result = tokio::time::timeout(Duration::from_secs(120), results.next())
                .await
                .unwrap_or_else(|_| panic!("only {received} of {count} results arrived in 120 s"))
                .expect("a result");
            assert!(!result.is_error(), "{}", result.model_text());
        }
    };
    let (submit, ()) = futures::join!(submitting, collecting);
    Run {
        submit,
        total: start.elapsed(),
    }
}

/// One run of `config`: its toolkit, its worker processes (started for the run), a warm-up of
/// 50 calls, then `count` calls timed until every result is back. Each run has a queue of its
/// own. Returns the run and the share of the machine other processes took meanwhile.
async fn ab_run(
    db: &str,
    server: Option<u32>,
    config: &Config,
    workers: usize,
    count: usize,
    round: usize,
) -> (Run, f64) {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros();
    let queue = format!("ab-{}-{workers}-{round}-{stamp}", config.name);
    let mut builder = kit().job_queue(open_queue_polling(db, &queue, config.submit_poll).await);
    if config.bench {
        builder = builder.max_concurrency(count);
    }
    let toolkit = builder.build().unwrap();
    let mut results = toolkit.background().results();
    let mut env = vec![(
        "JOBS_BENCH_WORKER_POLL_MS",
        config
            .worker_poll
            .map_or("default".to_owned(), |p| p.as_millis().to_string()),
    )];
    if !config.bench {
        env.push(("JOBS_BENCH_WORKER_DEFAULT", "1".to_owned()));
    }
    let processes = Workers::start_with(workers, Kind::Ours, db, &queue, &env).await;
    async fn one(
        toolkit: &Toolkit,
        results: &mut futures::stream::BoxStream<'static, ToolResult>,
        config: &Config,
        n: usize,
        r: usize,
    ) -> Run {
        if config.separate || config.serial {
            run_ours_separate(toolkit, results, n, r, config.serial).await
        } else {
            run_ours(toolkit, results, n, r).await
        }
    }
    if !config.cold {
        one(&toolkit, &mut results, config, 50, 0).await; // warm up
    }
    let before = Cpu::now(&processes.pids(), server);
    let timed = one(&toolkit, &mut results, config, count, 1).await;
    let cpu = cpu_use(before, Cpu::now(&processes.pids(), server), count);
    processes.stop().await;
    toolkit.background().shutdown().await;
    (timed, cpu.others)
}

/// The A/B mode: for each repetition, one run of each configuration, in an order rotated each
/// repetition; medians per configuration and their ratio to the first.
fn ab_main(
    rt: &tokio::runtime::Runtime,
    configs: &[Config],
    engines: &str,
    workers: &[usize],
    count: usize,
    reps: usize,
) {
    println!(
        "A/B: {} ; {count} calls per run, {reps} runs of each, alternating",
        configs
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(" | ")
    );
    for engine in engines.split(',') {
        let fsync = match engine {
            "pg-on" => true,
            "pg-off" => false,
            other => panic!("A/B runs take pg-on or pg-off, not `{other}`"),
        };
        let pg = db::Postgres::start_with_fsync(fsync).expect("Postgres is needed for this bench");
        let url = pg.database("bench");
        let server = pg.server_pid();
        for &w in workers {
            let mut runs: Vec<Vec<(Run, f64)>> = vec![Vec::new(); configs.len()];
            for rep in 0..reps {
                for k in 0..configs.len() {
                    let i = (rep + k) % configs.len();
                    let got = rt.block_on(ab_run(&url, server, &configs[i], w, count, rep));
                    println!(
                        "  {engine} {w} worker(s) rep {rep} {:<14} {:>6.0} jobs/s (submit {:.1} ms, others {:.0} %)",
                        configs[i].name,
                        count as f64 / got.0.total.as_secs_f64(),
                        got.0.submit.as_secs_f64() * 1e3,
                        got.1 * 100.0
                    );
                    runs[i].push(got);
                }
            }
            let medians: Vec<f64> = runs
                .iter()
                .map(|r| {
                    count as f64
                        / median(r.iter().map(|(run, _)| run.total).collect()).as_secs_f64()
                })
                .collect();
            for (i, config) in configs.iter().enumerate() {
                let all: Vec<String> = runs[i]
                    .iter()
                    .map(|(r, _)| format!("{:.0}", count as f64 / r.total.as_secs_f64()))
                    .collect();
                let others: Vec<String> = runs[i]
                    .iter()
                    .map(|(_, o)| format!("{:.0}", o * 100.0))
                    .collect();
                println!(
                    "{engine:<7} {w} worker(s) {:<14} median {:>6.0} jobs/s ({:.2}x {}), runs {}, others {} %",
                    config.name,
                    medians[i],
                    medians[i] / medians[0],
                    configs[0].name,
                    all.join(" / "),
                    others.join(" / "),
                );
            }
        }
    }
}

fn main() {
    if std::env::var_os(ROLE).is_some() {
        worker_main();
        return;
    }
    let count: usize = std::env::var("JOBS_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let reps: usize = std::env::var("JOBS_BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let only = std::env::var("JOBS_BENCH_ONLY").unwrap_or_else(|_| "pg-off,pg-on,sqlite".into());
    let kinds: Vec<Kind> = match std::env::var("JOBS_BENCH_KINDS").as_deref() {
        Ok("ours") => vec![Kind::Ours],
        Ok("apalis") => vec![Kind::Apalis],
        _ => vec![Kind::Apalis, Kind::Ours],
    };
    let workers: Vec<usize> = std::env::var("JOBS_BENCH_WORKERS")
        .ok()
        .map(|v| v.split(',').map(|w| w.parse().unwrap()).collect())
        .unwrap_or_else(|| vec![1, 2]);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    if let Ok(configs) = std::env::var("JOBS_BENCH_CONFIGS") {
        let configs: Vec<Config> = configs.split(',').map(Config::parse).collect();
        let engines = std::env::var("JOBS_BENCH_ONLY").unwrap_or_else(|_| "pg-off,pg-on".into());
        ab_main(&rt, &configs, &engines, &workers, count, reps);
        return;
    }
    println!(
        "durable queue, worker processes of concurrency {CONCURRENCY}, {count} calls per run, median of {reps} runs"
    );
    let mut all: Vec<Figures> = Vec::new();
    for engine in only.split(',') {
        let (label, _pg, _file, db): (&'static str, _, _, String) = match engine {
            "pg-off" | "pg-on" => {
                let fsync = engine == "pg-on";
                let pg = db::Postgres::start_with_fsync(fsync)
                    .expect("Postgres is needed for this bench");
                let url = pg.database("bench");
                let label = if fsync { "pg-on" } else { "pg-off" };
                (label, Some(pg), None, url)
            }
            // A Postgres of your own (`JOBS_BENCH_URL`; the bench creates its tables there).
            "pg-url" => {
                let url = std::env::var("JOBS_BENCH_URL").expect("JOBS_BENCH_URL for pg-url");
                ("pg-url", None, None, url)
            }
            "sqlite" => {
                let file = db::SqliteFile::new("bench-processes");
                let db = format!("sqlite:{}", file.path().display());
                ("sqlite", None, Some(file), db)
            }
            other => panic!("unknown engine `{other}` (pg-off, pg-on, pg-url, sqlite)"),
        };
        let server = _pg.as_ref().and_then(db::Postgres::server_pid);
        for &w in &workers {
            for &kind in &kinds {
                all.push(rt.block_on(measure(label, &db, server, kind, w, count, reps)));
            }
        }
    }
    println!("\nours / raw apalis:");
    for ours in all.iter().filter(|f| f.kind == Kind::Ours) {
        let raw = all.iter().find(|f| {
            f.kind == Kind::Apalis && f.engine == ours.engine && f.workers == ours.workers
        });
        if let Some(raw) = raw {
            println!(
                "{:<7} {} worker(s): {:.2}x ({:.0} / {:.0} jobs/s); CPU per job {:.2}x ({:.0} / {:.0} us)",
                ours.engine,
                ours.workers,
                ours.jobs_per_s() / raw.jobs_per_s(),
                ours.jobs_per_s(),
                raw.jobs_per_s(),
                ours.cpu.per_job.as_secs_f64() / raw.cpu.per_job.as_secs_f64(),
                ours.cpu.per_job.as_secs_f64() * 1e6,
                raw.cpu.per_job.as_secs_f64() * 1e6,
            );
        }
    }
}
