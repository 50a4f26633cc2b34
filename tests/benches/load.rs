//! Servers under load, side by side (issue 22): each server a child process pinned to one CPU,
//! N concurrent clients (default 50) pinned to the other, each doing its protocol's real
//! sequence, over loopback.
//!
//! ```sh
//! cargo bench --features full --bench load                          # every server, ~2.5 min
//! cargo bench --features full --bench load -- mcp-ours mcp-rmcp     # some of them
//! cargo bench --features full --bench load -- a2a --clients 20 --duration 5
//! cargo bench --features full --bench load -- --soak 5 a2a-ours    # RSS under constant load
//! ```
//!
//! Servers (all serve `add(a: i64, b: i64) -> a + b`; groups: `mcp`, `a2a`, `rust`, `all`):
//!
//! | name | what |
//! |---|---|
//! | `mcp-ours` | `Toolkit::mcp_http_service()` in axum (sessions, SSE answers) |
//! | `mcp-ours-stateless` | `McpHttpService::with_config`, rmcp's stateless JSON mode |
//! | `mcp-rmcp` | an rmcp `#[tool_router]` server, rmcp's `StreamableHttpService` + `LocalSessionManager` |
//! | `mcp-rmcp-stateless` | the same, stateless JSON mode |
//! | `mcp-python` / `mcp-python-stateless` | the official Python SDK (`mcp` 2.x `MCPServer`, uvicorn); stateless is `stateless_http=True, json_response=True` |
//! | `mcp-ts` / `mcp-ts-stateless` | the TypeScript SDK (`StreamableHTTPServerTransport` in express); stateless is a server per request with `enableJsonResponse` |
//! | `a2a-ours` | `A2aToolServer` (A2A 1.0 `SendMessage` with `_tool_call`) |
//! | `a2a-bare` | a2a-server-lf's `DefaultRequestHandler` + `InMemoryTaskStore` with a minimal executor |
//!
//! The Rust servers are this binary started again with `LOAD_SERVER=<name>`
//! (`load/servers.rs`); the Python and TypeScript ones are `load/mcp_server.py` and
//! `load/mcp_server.cjs`, run with the SDK installs of `tests/peers/setup.sh` (`target/py/mcp`,
//! `target/js`; installed on first use, skipped with a message when Python or Node is missing).
//!
//! Per server: start it, read its RSS idle; every client opens its MCP session (`initialize` +
//! `notifications/initialized`), then calls `add` in a loop; after `--warmup` seconds the
//! measured window starts (server CPU time read), and ends after `--duration` seconds or
//! `--requests` calls, when every client has finished its call in flight (server CPU time read
//! again). Reported: calls/s, latency p50/p99/max over the window, errors (any answer that is not
//! the right sum; must be 0, else the bench fails), RSS before and after, server CPU time per
//! call (`utime + stime` of `/proc/<pid>/stat` over the window ÷ calls: the steadiest figure),
//! and for servers with sessions the memory of one open session: `--sessions` more sessions are
//! opened (each making one call) and the RSS growth divided by their number.
//!
//! `--soak <minutes> [server]` (default `a2a-ours`): constant load on one server, RSS sampled
//! every `--sample` seconds; the series is printed with whether it grew. For MCP servers with
//! sessions half the clients open a session, make 10 calls and `DELETE` it, over and over, the
//! other half keep one session; every A2A call creates a task.
//!
//! `--perf <dir>`: `perf record --call-graph dwarf` on the server process over each measured
//! window, into `<dir>/<server>.perf.data` (read with `perf report -i ...`; `--no-children` for
//! where the time is spent, `--children` for who spends it).
//!
//! `--rounds <n>`: measure the servers in turn n times and report each figure's median (on a
//! shared machine the load drifts; taking turns spreads it over every server). The busy
//! figures say how much of the server's CPU went to the server, to the clients' CPU, and to other
//! processes on the server's CPU: when the last is more than a few %, the calls/s and latencies
//! describe the machine; the CPU time per call stays meaningful.
//!
//! Options may also be given as environment variables: `LOAD_SERVERS` (comma-separated),
//! `LOAD_CLIENTS`, `LOAD_DURATION`, `LOAD_WARMUP`, `LOAD_REQUESTS`, `LOAD_SESSIONS`,
//! `LOAD_ROUNDS`, `LOAD_SOAK`, `LOAD_SAMPLE`, `LOAD_PERF`. `--no-pin` runs unpinned.

#[path = "load/clients.rs"]
mod clients;
#[path = "load/procfs.rs"]
mod procfs;
#[path = "load/servers.rs"]
mod servers;

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use clients::McpSession;

const SERVER_VAR: &str = "LOAD_SERVER";

const ALL: [&str; 10] = [
    "mcp-ours",
    "mcp-rmcp",
    "mcp-ours-stateless",
    "mcp-rmcp-stateless",
    "mcp-python",
    "mcp-python-stateless",
    "mcp-ts",
    "mcp-ts-stateless",
    "a2a-ours",
    "a2a-bare",
];

/// Ours ÷ bare, for the summary.
const PAIRS: [(&str, &str); 3] = [
    ("mcp-ours", "mcp-rmcp"),
    ("mcp-ours-stateless", "mcp-rmcp-stateless"),
    ("a2a-ours", "a2a-bare"),
];

#[derive(Clone, Copy, PartialEq)]
enum Protocol {
    Mcp,
    A2a,
}

fn protocol(name: &str) -> Protocol {
    if name.starts_with("a2a") {
        Protocol::A2a
    } else {
        Protocol::Mcp
    }
}

#[derive(Clone)]
struct Options {
    servers: Vec<String>,
    clients: usize,
    warmup: f64,
    duration: f64,
    requests: u64,
    sessions: usize,
    rounds: usize,
    soak: Option<f64>,
    sample: f64,
    perf: Option<PathBuf>,
    pin: Option<(usize, usize)>,
}

fn usage() -> ! {
    eprintln!(
        "usage: load [servers|mcp|a2a|rust|all]... [--clients N] [--duration S] [--warmup S] \
         [--requests N] [--sessions N] [--rounds N] [--soak MIN] [--sample S] [--perf DIR] [--no-pin]\n\
         servers: {}",
        ALL.join(" ")
    );
    std::process::exit(2)
}

fn options() -> Options {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let mut servers: Vec<String> = env("LOAD_SERVERS")
        .map(|s| s.split(',').map(|s| s.trim().to_string()).collect())
        .unwrap_or_default();
    let mut o = Options {
        servers: Vec::new(),
        clients: env("LOAD_CLIENTS").map_or(50, |v| v.parse().unwrap_or_else(|_| usage())),
        warmup: env("LOAD_WARMUP").map_or(2.0, |v| v.parse().unwrap_or_else(|_| usage())),
        duration: env("LOAD_DURATION").map_or(8.0, |v| v.parse().unwrap_or_else(|_| usage())),
        requests: env("LOAD_REQUESTS").map_or(1_000_000, |v| v.parse().unwrap_or_else(|_| usage())),
        sessions: env("LOAD_SESSIONS").map_or(1000, |v| v.parse().unwrap_or_else(|_| usage())),
        rounds: env("LOAD_ROUNDS").map_or(1, |v| v.parse().unwrap_or_else(|_| usage())),
        soak: env("LOAD_SOAK").map(|v| v.parse().unwrap_or_else(|_| usage())),
        sample: env("LOAD_SAMPLE").map_or(5.0, |v| v.parse().unwrap_or_else(|_| usage())),
        perf: env("LOAD_PERF").map(PathBuf::from),
        pin: procfs::pinning(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage());
        match arg.as_str() {
            // What `cargo bench` passes to every bench binary.
            "--bench" => {}
            "--clients" => o.clients = value().parse().unwrap_or_else(|_| usage()),
            "--duration" => o.duration = value().parse().unwrap_or_else(|_| usage()),
            "--warmup" => o.warmup = value().parse().unwrap_or_else(|_| usage()),
            "--requests" => o.requests = value().parse().unwrap_or_else(|_| usage()),
            "--sessions" => o.sessions = value().parse().unwrap_or_else(|_| usage()),
            "--rounds" => o.rounds = value().parse().unwrap_or_else(|_| usage()),
            "--soak" => o.soak = Some(value().parse().unwrap_or_else(|_| usage())),
            "--sample" => o.sample = value().parse().unwrap_or_else(|_| usage()),
            "--perf" => o.perf = Some(PathBuf::from(value())),
            "--no-pin" => o.pin = None,
            "-h" | "--help" => usage(),
            s if s.starts_with('-') => usage(),
            s => servers.push(s.to_string()),
        }
    }
    for s in servers {
        let names: Vec<&str> = match s.as_str() {
            "all" => ALL.to_vec(),
            "mcp" => ALL
                .iter()
                .copied()
                .filter(|n| n.starts_with("mcp"))
                .collect(),
            "a2a" => ALL
                .iter()
                .copied()
                .filter(|n| n.starts_with("a2a"))
                .collect(),
            "rust" => ALL
                .iter()
                .copied()
                .filter(|n| !n.contains("python") && !n.contains("-ts"))
                .collect(),
            n if ALL.contains(&n) => vec![n],
            _ => usage(),
        };
        for n in names {
            if !o.servers.iter().any(|s| s == n) {
                o.servers.push(n.to_string());
            }
        }
    }
    if o.servers.is_empty() {
        o.servers = if o.soak.is_some() {
            vec!["a2a-ours".into()]
        } else {
            ALL.iter().map(|s| s.to_string()).collect()
        };
    }
    o.clients = o.clients.max(1);
    o.rounds = o.rounds.max(1);
    o
}

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|p| {
            if p.is_relative() {
                workspace_root().join(p)
            } else {
                p
            }
        })
        .unwrap_or_else(|| workspace_root().join("target"))
}

/// `tests/peers/setup.sh <what>`, unless its environment is ready; false when it cannot be set
/// up.
fn peer_setup(what: &str, ready: &std::path::Path) -> bool {
    if ready.exists() {
        return true;
    }
    eprintln!("load: installing the {what} peers (tests/peers/setup.sh {what}) ...");
    std::process::Command::new("bash")
        .arg(workspace_root().join("tests/peers/setup.sh"))
        .arg(what)
        .env("CARGO_TARGET_DIR", target_dir())
        .status()
        .is_ok_and(|s| s.success())
        && ready.exists()
}

fn has(program: &str, arg: &str) -> bool {
    std::process::Command::new(program)
        .arg(arg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The command that runs server `name` (not yet pinned), or why it cannot run here.
fn server_command(name: &str, port: u16) -> Result<Command, String> {
    let stateless = name.ends_with("-stateless");
    let script = |file: &str| workspace_root().join("tests/benches/load").join(file);
    if name.starts_with("mcp-python") {
        let py = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
        if !has(&py, "--version") {
            return Err(format!("`{py}` is not installed"));
        }
        let dir = target_dir().join("py/mcp");
        if !peer_setup("py", &dir.join(".ready")) {
            return Err(format!(
                "the Python MCP SDK is not installed in {} (tests/peers/setup.sh py failed)",
                dir.display()
            ));
        }
        let mut command = Command::new(dir.join("bin/python"));
        command.arg(script("mcp_server.py")).arg(port.to_string());
        if stateless {
            command.arg("--stateless");
        }
        command.env("PYTHONUNBUFFERED", "1");
        Ok(command)
    } else if name.starts_with("mcp-ts") {
        if !has("node", "--version") || !has("npm", "--version") {
            return Err("`node` and `npm` are not installed".into());
        }
        let dir = target_dir().join("js");
        if !peer_setup("js", &dir.join(".ready")) {
            return Err(format!(
                "the TypeScript MCP SDK is not installed in {} (tests/peers/setup.sh js failed)",
                dir.display()
            ));
        }
        let mut command = Command::new("node");
        command
            .arg(script("mcp_server.cjs"))
            .arg(port.to_string())
            .env("NODE_PATH", dir.join("node_modules"));
        if stateless {
            command.arg("--stateless");
        }
        Ok(command)
    } else {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let mut command = Command::new(exe);
        command.env(SERVER_VAR, name);
        Ok(command)
    }
}

/// A running server: the child, its pid, and its endpoint.
struct Server {
    child: Child,
    pid: u32,
    url: String,
}

async fn start(name: &str, o: &Options) -> Result<Server, String> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| e.to_string())?
        .port();
    let inner = server_command(name, port)?;
    // Pinned: `taskset -c <cpu> <program> <args>` (taskset execs it: same pid).
    let mut command = match o.pin {
        Some((cpu, _)) => {
            let std = inner.as_std();
            let mut command = Command::new("taskset");
            command
                .arg("-c")
                .arg(cpu.to_string())
                .arg(std.get_program())
                .args(std.get_args());
            for (key, value) in std.get_envs() {
                match value {
                    Some(value) => command.env(key, value),
                    None => command.env_remove(key),
                };
            }
            command
        }
        None => inner,
    };
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("start {name}: {e}"))?;
    let pid = child.id().ok_or("no pid")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let ready = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.map_err(|e| e.to_string())? {
            if let Some(port) = line.strip_prefix("READY ") {
                return port.trim().parse::<u16>().map_err(|e| e.to_string());
            }
        }
        Err(format!("{name} exited before READY"))
    })
    .await
    .map_err(|_| format!("{name} did not say READY within 60 s"))??;
    // Keep draining its stdout (a full pipe would block it).
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let url = match protocol(name) {
        Protocol::Mcp => format!("http://127.0.0.1:{ready}/mcp"),
        Protocol::A2a => format!("http://127.0.0.1:{ready}/"),
    };
    // Give a just-started interpreter a moment to settle before the idle reading.
    tokio::time::sleep(Duration::from_millis(300)).await;
    Ok(Server { child, pid, url })
}

/// The shared state of one load: stop flag, measuring flag, counters.
struct Shared {
    measuring: AtomicBool,
    stop: AtomicBool,
    measured: AtomicU64,
    total: AtomicU64,
    cap: u64,
}

/// What one client saw.
#[derive(Default)]
struct Tally {
    latencies: Vec<Duration>,
    errors: Vec<String>,
    requests: u64,
}

/// One client: `steady` keeps its session; otherwise (soak churn) it opens a session, makes 10
/// calls and closes it, over and over.
async fn client_loop(
    client: reqwest::Client,
    url: String,
    name: String,
    index: u64,
    shared: Arc<Shared>,
    churn: bool,
) -> Tally {
    let mut tally = Tally::default();
    let mut session = None;
    let mut n = 0u64;
    while !shared.stop.load(Ordering::Relaxed) {
        n += 1;
        let (a, b) = ((index * 1_000_003 + n) as i64 % 1_000_000, 7);
        let measuring = shared.measuring.load(Ordering::Relaxed);
        let start = Instant::now();
        let result = match protocol(&name) {
            Protocol::A2a => clients::a2a_add(&client, &url, index << 32 | n, a, b).await,
            Protocol::Mcp => {
                if session.is_none() {
                    match McpSession::open(&client, &url).await {
                        Ok(s) => session = Some(s),
                        Err(e) => {
                            tally.errors.push(format!("open: {e}"));
                            tokio::time::sleep(Duration::from_millis(100)).await;
                            continue;
                        }
                    }
                }
                let s = session.as_mut().expect("session");
                let result = s.add(&client, a, b).await;
                if churn
                    && n.is_multiple_of(10)
                    && let Some(s) = session.take()
                    && let Err(e) = s.close(&client).await
                {
                    tally.errors.push(e);
                }
                result
            }
        };
        let elapsed = start.elapsed();
        shared.total.fetch_add(1, Ordering::Relaxed);
        if measuring {
            tally.requests += 1;
            tally.latencies.push(elapsed);
            if shared.measured.fetch_add(1, Ordering::Relaxed) + 1 >= shared.cap {
                shared.stop.store(true, Ordering::Relaxed);
            }
        }
        if let Err(e) = result {
            tally.errors.push(e);
        }
    }
    tally
}

fn http_client(o: &Options) -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(o.clients * 2)
        .tcp_nodelay(true)
        .build()
        .expect("client")
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// One server's figures (of one round, or the medians of several).
#[derive(Clone)]
struct Report {
    name: String,
    /// Calls per second over the measured window.
    rate: f64,
    /// Server CPU time (user + system) per call, in µs.
    cpu_us: f64,
    /// How busy the server was over the window (its CPU time ÷ the window), in %.
    server_busy: f64,
    /// How busy the clients were (this process), in %: near 100 they, not the server, set the
    /// pace.
    client_busy: f64,
    /// How much of the server's CPU other processes of the machine took, in %: the rest of that
    /// CPU's busy time. Above a few % the calls/s and latencies say more about the machine than
    /// about the server.
    others_busy: f64,
    /// Latencies over the window, in ms.
    p50: f64,
    p99: f64,
    max: f64,
    errors: usize,
    first_error: Option<String>,
    /// RSS idle (after start) and after the load, in KiB.
    rss_idle: f64,
    rss_loaded: f64,
    /// RSS growth per open session (MCP with sessions), in KiB.
    per_session: Option<f64>,
}

/// The median of each figure over several rounds.
fn median_report(rounds: &[Report]) -> Report {
    let median = |f: &dyn Fn(&Report) -> f64| {
        let mut v: Vec<f64> = rounds.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    Report {
        name: rounds[0].name.clone(),
        rate: median(&|r| r.rate),
        cpu_us: median(&|r| r.cpu_us),
        server_busy: median(&|r| r.server_busy),
        client_busy: median(&|r| r.client_busy),
        others_busy: median(&|r| r.others_busy),
        p50: median(&|r| r.p50),
        p99: median(&|r| r.p99),
        max: median(&|r| r.max),
        errors: rounds.iter().map(|r| r.errors).sum(),
        first_error: rounds.iter().find_map(|r| r.first_error.clone()),
        rss_idle: median(&|r| r.rss_idle),
        rss_loaded: median(&|r| r.rss_loaded),
        per_session: rounds[0]
            .per_session
            .map(|_| median(&|r| r.per_session.unwrap_or(0.0))),
    }
}

/// Start `perf record` on `pid`, when asked: DWARF call graphs (release builds keep no frame
/// pointers, so `-g` would give no callers), sampled at 999 Hz to keep the data small.
fn perf_start(o: &Options, name: &str, pid: u32) -> Option<std::process::Child> {
    let dir = o.perf.as_ref()?;
    std::fs::create_dir_all(dir).ok()?;
    let out = dir.join(format!("{name}.perf.data"));
    let mut command = std::process::Command::new("perf");
    command
        .args([
            "record",
            "--call-graph",
            "dwarf,16384",
            "-F",
            "999",
            "-q",
            "-o",
        ])
        .arg(&out)
        .args(["-p", &pid.to_string()])
        .stdout(Stdio::null());
    match command.spawn() {
        Ok(child) => Some(child),
        Err(e) => {
            eprintln!("load: perf record failed to start: {e}");
            None
        }
    }
}

fn perf_stop(perf: Option<std::process::Child>) {
    if let Some(mut perf) = perf {
        let _ = std::process::Command::new("kill")
            .args(["-INT", &perf.id().to_string()])
            .status();
        let _ = perf.wait();
    }
}

async fn measure(name: &str, o: &Options) -> Result<Report, String> {
    let mut server = start(name, o).await?;
    let pid = server.pid;
    let rss_idle = procfs::rss_kib(pid).ok_or("no VmRSS")?;
    let client = http_client(o);
    let shared = Arc::new(Shared {
        measuring: AtomicBool::new(false),
        stop: AtomicBool::new(false),
        measured: AtomicU64::new(0),
        total: AtomicU64::new(0),
        cap: o.requests,
    });
    let tasks: Vec<_> = (0..o.clients as u64)
        .map(|i| {
            tokio::spawn(client_loop(
                client.clone(),
                server.url.clone(),
                name.to_string(),
                i,
                shared.clone(),
                false,
            ))
        })
        .collect();
    tokio::time::sleep(Duration::from_secs_f64(o.warmup)).await;
    let cpu0 = procfs::cpu_seconds(pid).ok_or("no /proc stat")?;
    let client_cpu0 = procfs::cpu_seconds(std::process::id()).unwrap_or(0.0);
    let server_cpu = o.pin.map_or(0, |(cpu, _)| cpu);
    let busy0 = procfs::cpu_busy_seconds(server_cpu).unwrap_or(0.0);
    let perf = perf_start(o, name, pid);
    let t0 = Instant::now();
    shared.measuring.store(true, Ordering::Relaxed);
    let deadline = t0 + Duration::from_secs_f64(o.duration);
    while Instant::now() < deadline && !shared.stop.load(Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    shared.stop.store(true, Ordering::Relaxed);
    let mut tally = Tally::default();
    let joined = tokio::time::timeout(Duration::from_secs(60), futures::future::join_all(tasks))
        .await
        .map_err(|_| format!("{name}: the clients did not finish within 60 s of the end"))?;
    let seconds = t0.elapsed().as_secs_f64();
    let cpu1 = procfs::cpu_seconds(pid).ok_or("no /proc stat")?;
    let client_cpu1 = procfs::cpu_seconds(std::process::id()).unwrap_or(0.0);
    let busy1 = procfs::cpu_busy_seconds(server_cpu).unwrap_or(0.0);
    perf_stop(perf);
    for t in joined {
        let t = t.map_err(|e| e.to_string())?;
        tally.latencies.extend(t.latencies);
        tally.errors.extend(t.errors);
        tally.requests += t.requests;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let rss_loaded = procfs::rss_kib(pid).ok_or("no VmRSS")?;

    // The memory of one open session: open more, one call each, and divide the RSS growth.
    let mut per_session = None;
    if protocol(name) == Protocol::Mcp && !name.ends_with("-stateless") && o.sessions > 0 {
        let url = server.url.clone();
        let opened: Vec<Result<McpSession, String>> = {
            use futures::StreamExt;
            futures::stream::iter(0..o.sessions)
                .map(|i| {
                    let (client, url) = (client.clone(), url.clone());
                    async move {
                        let mut s = McpSession::open(&client, &url).await?;
                        s.add(&client, i as i64, 1).await?;
                        Ok(s)
                    }
                })
                .buffer_unordered(o.clients)
                .collect()
                .await
        };
        let mut sessions = Vec::new();
        for s in opened {
            match s {
                Ok(s) if s.has_id() => sessions.push(s),
                Ok(_) => tally
                    .errors
                    .push("a stateful server gave no session id".into()),
                Err(e) => tally.errors.push(format!("sessions phase: {e}")),
            }
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let rss = procfs::rss_kib(pid).ok_or("no VmRSS")?;
        if !sessions.is_empty() {
            per_session = Some((rss as f64 - rss_loaded as f64) / sessions.len() as f64);
        }
    }
    let _ = server.child.kill().await;

    tally.latencies.sort_unstable();
    let lat = &tally.latencies;
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let server_seconds = cpu1 - cpu0;
    Ok(Report {
        name: name.to_string(),
        rate: tally.requests as f64 / seconds,
        cpu_us: server_seconds * 1e6 / tally.requests.max(1) as f64,
        server_busy: server_seconds * 100.0 / seconds,
        client_busy: (client_cpu1 - client_cpu0) * 100.0 / seconds,
        others_busy: if o.pin.is_some() {
            ((busy1 - busy0 - server_seconds) * 100.0 / seconds).max(0.0)
        } else {
            f64::NAN
        },
        p50: ms(percentile(lat, 0.50)),
        p99: ms(percentile(lat, 0.99)),
        max: ms(lat.last().copied().unwrap_or_default()),
        errors: tally.errors.len(),
        first_error: tally.errors.first().cloned(),
        rss_idle: rss_idle as f64,
        rss_loaded: rss_loaded as f64,
        per_session,
    })
}

fn print_line(r: &Report) {
    println!(
        "{:<22} {:>8.0} calls/s  CPU {:>7.1} µs/call (busy {:>3.0} %, clients {:>3.0} %, others on its CPU {:>3.0} %)  p50 {:>6.2} ms  p99 {:>6.2} ms  max {:>7.2} ms  errors {}  RSS {:.1} → {:.1} MiB{}",
        r.name,
        r.rate,
        r.cpu_us,
        r.server_busy,
        r.client_busy,
        r.others_busy,
        r.p50,
        r.p99,
        r.max,
        r.errors,
        r.rss_idle / 1024.0,
        r.rss_loaded / 1024.0,
        r.per_session
            .map_or(String::new(), |k| format!("  {k:.1} KiB/session")),
    );
}

fn print_table(reports: &[Report]) {
    println!();
    println!(
        "| server | calls/s | server CPU per call | busy: server / clients / others on the server's CPU | p50 | p99 | max | errors | RSS idle → loaded | per open session |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for r in reports {
        println!(
            "| `{}` | {:.0} | {:.1} µs | {:.0} / {:.0} / {:.0} % | {:.2} ms | {:.2} ms | {:.2} ms | {} | {:.1} → {:.1} MiB | {} |",
            r.name,
            r.rate,
            r.cpu_us,
            r.server_busy,
            r.client_busy,
            r.others_busy,
            r.p50,
            r.p99,
            r.max,
            r.errors,
            r.rss_idle / 1024.0,
            r.rss_loaded / 1024.0,
            r.per_session
                .map_or("—".into(), |kib| format!("{kib:.1} KiB")),
        );
    }
    let find = |n: &str| reports.iter().find(|r| r.name == n);
    let pairs: Vec<_> = PAIRS
        .iter()
        .filter_map(|(a, b)| Some((find(a)?, find(b)?)))
        .collect();
    if !pairs.is_empty() {
        println!();
        println!("| ours ÷ bare | calls/s | CPU per call | p50 | p99 | RSS loaded | per session |");
        println!("|---|---|---|---|---|---|---|");
        for (a, b) in pairs {
            let ratio = |x: f64, y: f64| format!("{:.2}×", x / y);
            println!(
                "| `{}` ÷ `{}` | {} | {} | {} | {} | {} | {} |",
                a.name,
                b.name,
                ratio(a.rate, b.rate),
                ratio(a.cpu_us, b.cpu_us),
                ratio(a.p50, b.p50),
                ratio(a.p99, b.p99),
                ratio(a.rss_loaded, b.rss_loaded),
                match (a.per_session, b.per_session) {
                    (Some(x), Some(y)) => ratio(x, y),
                    _ => "—".into(),
                },
            );
        }
    }
}

/// Constant load on one server; RSS sampled every `o.sample` seconds.
async fn soak(o: &Options, minutes: f64) -> Result<(), String> {
    let name = o.servers[0].clone();
    let server = start(&name, o).await?;
    let pid = server.pid;
    let client = http_client(o);
    let shared = Arc::new(Shared {
        measuring: AtomicBool::new(true),
        stop: AtomicBool::new(false),
        measured: AtomicU64::new(0),
        total: AtomicU64::new(0),
        cap: u64::MAX,
    });
    let churning = protocol(&name) == Protocol::Mcp && !name.ends_with("-stateless");
    println!(
        "soak: {name}, {} clients{}, {minutes} min, RSS every {} s",
        o.clients,
        if churning {
            " (half open a session, make 10 calls and DELETE it, over and over)"
        } else {
            ""
        },
        o.sample
    );
    let tasks: Vec<_> = (0..o.clients as u64)
        .map(|i| {
            tokio::spawn(client_loop(
                client.clone(),
                server.url.clone(),
                name.clone(),
                i,
                shared.clone(),
                churning && i % 2 == 1,
            ))
        })
        .collect();
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(minutes * 60.0);
    let mut series: Vec<(f64, u64, u64)> = Vec::new();
    let cpu0 = procfs::cpu_seconds(pid).unwrap_or(0.0);
    loop {
        let rss = procfs::rss_kib(pid).ok_or("no VmRSS: the server died?")?;
        let t = start.elapsed().as_secs_f64();
        let calls = shared.total.load(Ordering::Relaxed);
        println!("  t={t:>6.0} s  RSS {:>8.1} MiB  calls {calls}", mib(rss));
        series.push((t, rss, calls));
        if Instant::now() >= end {
            break;
        }
        tokio::time::sleep(Duration::from_secs_f64(o.sample)).await;
    }
    shared.stop.store(true, Ordering::Relaxed);
    let mut errors = Vec::new();
    for t in futures::future::join_all(tasks).await {
        errors.extend(t.map_err(|e| e.to_string())?.errors);
    }
    let cpu = procfs::cpu_seconds(pid).unwrap_or(0.0) - cpu0;
    let calls = shared.total.load(Ordering::Relaxed);
    // Growth: least-squares slope over the samples after the first fifth of the run (at least
    // the idle reading at 0 s is left out).
    let skip = if series.len() > 2 {
        (series.len() / 5).clamp(1, series.len() - 2)
    } else {
        0
    };
    let tail = &series[skip..];
    let n = tail.len() as f64;
    let (mx, my) = (
        tail.iter().map(|s| s.0).sum::<f64>() / n,
        tail.iter().map(|s| mib(s.1)).sum::<f64>() / n,
    );
    let slope = tail
        .iter()
        .map(|s| (s.0 - mx) * (mib(s.1) - my))
        .sum::<f64>()
        / tail
            .iter()
            .map(|s| (s.0 - mx).powi(2))
            .sum::<f64>()
            .max(1e-9);
    let (first, last) = (mib(tail[0].1), mib(series[series.len() - 1].1));
    let grew = last - first > (first * 0.10).max(2.0);
    println!(
        "soak: {name}: {calls} calls in {:.0} s ({:.0}/s), {} errors, server CPU {:.1} µs per call",
        start.elapsed().as_secs_f64(),
        calls as f64 / start.elapsed().as_secs_f64(),
        errors.len(),
        cpu * 1e6 / calls.max(1) as f64,
    );
    println!(
        "soak: RSS {first:.1} MiB (at {:.0} s) → {last:.1} MiB; slope {:.2} MiB/min ({:.0} B per call); {}",
        tail[0].0,
        slope * 60.0,
        (series[series.len() - 1].1 as f64 - tail[0].1 as f64) * 1024.0
            / (series[series.len() - 1].2 - tail[0].2).max(1) as f64,
        if grew { "GREW" } else { "flat" }
    );
    if let Some(e) = errors.first() {
        return Err(format!("{} errors; first: {e}", errors.len()));
    }
    Ok(())
}

fn main() {
    if let Ok(name) = std::env::var(SERVER_VAR) {
        if !servers::serve(&name) {
            eprintln!("unknown {SERVER_VAR}={name}");
            std::process::exit(2);
        }
        return;
    }
    let o = options();
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    if let Some((_, cpu)) = o.pin
        && !procfs::pin_self(cpu)
    {
        eprintln!("load: could not pin the clients to CPU {cpu}");
    }
    // The library builds reqwest without a default rustls provider.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    println!(
        "load: {} ({} CPUs), load average {}, {}",
        procfs::cpu_model(),
        cpus,
        procfs::load_average(),
        match o.pin {
            Some((s, c)) => format!("server pinned to CPU {s}, clients to CPU {c}"),
            None => "unpinned (needs 2 CPUs and taskset)".into(),
        }
    );
    if let Some(minutes) = o.soak {
        if let Err(e) = runtime.block_on(soak(&o, minutes)) {
            eprintln!("soak failed: {e}");
            std::process::exit(1);
        }
        return;
    }
    println!(
        "load: {} clients, {} s warm-up, {} s measured (at most {} calls), {} extra sessions",
        o.clients, o.warmup, o.duration, o.requests, o.sessions
    );
    let mut rounds: Vec<(String, Vec<Report>)> = Vec::new();
    let mut failed = false;
    for round in 1..=o.rounds {
        if o.rounds > 1 {
            println!("round {round} of {}", o.rounds);
        }
        for name in &o.servers {
            match runtime.block_on(measure(name, &o)) {
                Ok(r) => {
                    print_line(&r);
                    if let Some(e) = &r.first_error {
                        eprintln!("  first error: {e}");
                        failed = true;
                    }
                    match rounds.iter_mut().find(|(n, _)| n == name) {
                        Some((_, v)) => v.push(r),
                        None => rounds.push((name.clone(), vec![r])),
                    }
                }
                Err(e) if e.contains("not installed") => println!("{name:<22} skipped: {e}"),
                Err(e) => {
                    println!("{name:<22} FAILED: {e}");
                    failed = true;
                }
            }
        }
    }
    let reports: Vec<Report> = rounds.iter().map(|(_, v)| median_report(v)).collect();
    if o.rounds > 1 {
        println!("\nmedians of {} rounds:", o.rounds);
    }
    print_table(&reports);
    if failed {
        std::process::exit(1);
    }
}
