//! A2A server under load from a separate process: 10,000 tool calls, 64 at a time, against an
//! `A2aToolServer` in a child process, with the per-call latency distribution (p50, p99).
//!
//! The server is this bench binary itself, started again with `A2A_LOAD_SERVER=1`: it serves
//! a toolkit with one tool, `add(a, b)`, on 127.0.0.1 (a free port) on a 2-worker runtime and
//! prints `READY <port>`. The client (this process, 2 workers) sends A2A 1.0 `SendMessage`
//! requests with `_tool_call` over a pooled HTTP/1.1 client, 64 in flight; each answer must be a
//! COMPLETED task whose `_tool_result` artifact is the right sum, else it counts as an error.
//! One criterion iteration is the whole batch of 10,000 calls; the latencies of every call of
//! every iteration are kept and their percentiles printed at the end, with the error count
//! (which must be zero: the bench fails otherwise).
//!
//! Run with `cargo bench -p agent-toolkit-examples --features full --bench a2a_load`.

use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use agent_toolkit::a2a::server::A2aToolServer;
use agent_toolkit::prelude::*;
use criterion::{Criterion, criterion_group};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

const SERVER_VAR: &str = "A2A_LOAD_SERVER";
const CALLS: usize = 10_000;
const CONCURRENCY: usize = 64;

/// Add two integers.
#[tool(read_only)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// The child: serve the toolkit and say where.
fn serve() {
    runtime().block_on(async {
        let toolkit = Toolkit::builder().register(Add).build().expect("toolkit");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        println!("READY {}", listener.local_addr().expect("addr").port());
        A2aToolServer::new(&toolkit)
            .serve(listener)
            .await
            .expect("serve");
    });
}

/// One call; its latency, or why it failed.
async fn call(client: &reqwest::Client, url: &str, i: usize) -> Result<Duration, String> {
    let (a, b) = (i as i64, 7);
    let call = json!({"name": "add", "params": {"a": a, "b": b}});
    let body = json!({"jsonrpc": "2.0", "id": i, "method": "SendMessage", "params": {"message": {
        "messageId": format!("m-{i}"), "role": "ROLE_USER",
        "parts": [{"data": call, "mediaType": "application/json"}],
        "metadata": {"_tool_call": call}}}});
    let start = Instant::now();
    let response = client
        .post(url)
        .header("a2a-version", "1.0")
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .map_err(|e| format!("send: {e}"))?;
    let status = response.status();
    let answer: Value = response.json().await.map_err(|e| format!("read: {e}"))?;
    let elapsed = start.elapsed();
    let task = &answer["result"]["task"];
    let artifact = &task["artifacts"][0];
    let ok = status.is_success()
        && task["status"]["state"] == "TASK_STATE_COMPLETED"
        && artifact["metadata"]["_tool_result"] == true
        && artifact["metadata"]["is_error"] == false
        && artifact["metadata"]["wrapped"] == true
        && artifact["parts"][0]["data"]["result"].as_f64() == Some((a + b) as f64);
    if ok {
        Ok(elapsed)
    } else {
        Err(format!("HTTP {status}: {answer}"))
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn bench(c: &mut Criterion) {
    let rt = runtime();
    let exe = std::env::current_exe().expect("bench executable");
    let (mut child, port) = rt.block_on(async {
        let mut child = tokio::process::Command::new(exe)
            .env(SERVER_VAR, "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("start the server process");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let port: u16 = loop {
            let line = lines
                .next_line()
                .await
                .expect("read server stdout")
                .expect("server exited before READY");
            if let Some(port) = line.strip_prefix("READY ") {
                break port.trim().parse().expect("port");
            }
        };
        (child, port)
    });
    let url = format!("http://127.0.0.1:{port}/");
    // The library builds reqwest without a default rustls provider (its own clients bring
    // one): a plain client here needs the process-wide one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(CONCURRENCY)
        .build()
        .expect("client");
    let latencies = Mutex::new(Vec::with_capacity(CALLS * 20));
    let errors = Mutex::new(Vec::new());

    let mut group = c.benchmark_group("a2a_load");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(30));
    group.bench_function("10k_calls_64_concurrent", |b| {
        b.to_async(&rt).iter(|| async {
            let results: Vec<Result<Duration, String>> = futures::stream::iter(0..CALLS)
                .map(|i| call(&client, &url, i))
                .buffer_unordered(CONCURRENCY)
                .collect()
                .await;
            let mut lat = latencies.lock().expect("latencies");
            let mut err = errors.lock().expect("errors");
            for r in results {
                match r {
                    Ok(d) => lat.push(d),
                    Err(e) => err.push(e),
                }
            }
        })
    });
    group.finish();

    let mut lat = latencies.into_inner().expect("latencies");
    let errors = errors.into_inner().expect("errors");
    lat.sort_unstable();
    if !lat.is_empty() {
        println!(
            "a2a_load: {} calls ({} errors), latency p50 {:?}, p99 {:?}, max {:?}",
            lat.len() + errors.len(),
            errors.len(),
            percentile(&lat, 0.50),
            percentile(&lat, 0.99),
            lat[lat.len() - 1],
        );
    }
    rt.block_on(async {
        let _ = child.kill().await;
    });
    assert!(
        errors.is_empty(),
        "{} calls failed; first: {}",
        errors.len(),
        errors[0]
    );
}

criterion_group!(benches, bench);

fn main() {
    if std::env::var_os(SERVER_VAR).is_some() {
        serve();
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
