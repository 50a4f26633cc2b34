//! A real model for the tests: llama.cpp's own HTTP server (the PyPI wheel `xllamacpp`) with
//! Qwen2.5-Coder-0.5B-Instruct (or the 1.5B with `REAL_MODEL=1.5b`, see [`size`]), on a free
//! loopback port, speaking both the OpenAI
//! (`/v1/chat/completions`) and the Anthropic (`/v1/messages`) wire.
//!
//! `tests/model/setup.sh` installs the server and assembles the weights under `target/model/`
//! (checked by sha256; `.ci/run` calls it, and [`ModelServer::shared`] calls it when it has not
//! run). Two chat templates are served, each by its own server ([`Template`]):
//! - [`Template::Structured`]: `tests/model/structured.jinja`, with which llama.cpp returns
//!   structured `tool_calls`;
//! - [`Template::Own`]: the model's own template from the GGUF, with which the model writes its
//!   calls as text and only the library's text-call reading makes them calls.
//!
//! Servers are shared by the tests of a binary and live until it exits (their standard input is
//! a pipe from this process: when it closes, they exit). When the setup cannot run (no
//! `python3`, no network for the first download), [`ModelServer::shared`] returns `None` after
//! one loud line, so a developer without them can run the other tests; under CI (`CI` set) it
//! panics instead.
//!
//! Include it with `#[path = "../model/mod.rs"] mod model;`.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use agent_toolkit::RetryPolicy;
use agent_toolkit::model::{AnthropicMessages, GenerationOptions, OpenAiChat};

/// Which chat template the server renders prompts with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Template {
    /// A template under which llama.cpp returns structured tool calls.
    Structured,
    /// The model's own template (Qwen's): tool calls come back as text.
    Own,
}

/// Which model: Qwen2.5-Coder-0.5B-Instruct (the tests and CI), or the 1.5B when the
/// environment says `REAL_MODEL=1.5b` (the benches; `setup.sh 1.5b` fetches it).
pub fn size() -> &'static str {
    match std::env::var("REAL_MODEL").as_deref() {
        Ok("1.5b") | Ok("1.5B") => "1.5b",
        _ => "0.5b",
    }
}

/// The file name of the weights under `target/model/`.
fn weights() -> String {
    format!("qwen2.5-coder-{}-instruct-q4_k_m.gguf", size())
}

/// A running llama.cpp server.
pub struct ModelServer {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    pub template: Template,
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The repository's root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Where `setup.sh` puts the server and the weights.
fn model_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"));
    let target = if target.is_absolute() {
        target
    } else {
        root().join(target)
    };
    target.join("model")
}

fn unavailable(why: String) -> Option<ModelServer> {
    if std::env::var_os("CI").is_some() {
        panic!("the real model is not available under CI: {why}");
    }
    eprintln!(
        "\n!!! SKIPPED: the real model is not available ({why}); run tests/model/setup.sh; \
         the real-model tests did not run !!!\n"
    );
    None
}

impl ModelServer {
    /// The server of `template` shared by this test binary, started on first use; `None`
    /// (after a loud line) when the model cannot be set up and this is not CI.
    pub fn shared(template: Template) -> Option<&'static ModelServer> {
        static STRUCTURED: OnceLock<Option<ModelServer>> = OnceLock::new();
        static OWN: OnceLock<Option<ModelServer>> = OnceLock::new();
        let cell = match template {
            Template::Structured => &STRUCTURED,
            Template::Own => &OWN,
        };
        cell.get_or_init(|| Self::start(template)).as_ref()
    }

    /// A server of its own (for tests that stop it), or `None` as [`shared`](Self::shared).
    pub fn start(template: Template) -> Option<ModelServer> {
        static SETUP: OnceLock<Result<(), String>> = OnceLock::new();
        if let Err(why) = SETUP.get_or_init(setup) {
            return unavailable(why.clone());
        }
        let dir = model_dir();
        let python = dir.join("venv/bin/python");
        let mut last_error = String::new();
        // A free port can be taken by someone else before the server binds it: try a few.
        for _ in 0..3 {
            let port = free_port();
            let mut command = Command::new(&python);
            command
                .arg(root().join("tests/model/serve.py"))
                .arg(dir.join(weights()))
                .arg(port.to_string())
                .env("OMP_WAIT_POLICY", "passive")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(log(port));
            if template == Template::Structured {
                command.arg(root().join("tests/model/structured.jinja"));
            }
            let mut child = match command.spawn() {
                Ok(child) => child,
                Err(e) => return unavailable(format!("{} cannot start: {e}", python.display())),
            };
            let Some(stdout) = child.stdout.take() else {
                return unavailable("the server's stdout was not captured".into());
            };
            let mut line = String::new();
            let ready =
                BufReader::new(stdout).read_line(&mut line).is_ok() && line.trim() == "ready";
            if ready {
                return Some(ModelServer {
                    child,
                    url: format!("http://127.0.0.1:{port}"),
                    template,
                });
            }
            let _ = child.kill();
            let status = child.wait().map(|s| s.to_string()).unwrap_or_default();
            last_error =
                format!("llama.cpp's server did not become ready on port {port} ({status})");
        }
        unavailable(last_error)
    }

    /// Kill the server at once (a crash, as far as its clients can tell).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The port the server listens on.
    pub fn port(&self) -> u16 {
        self.url
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_default()
    }

    /// `OpenAiChat` on this server (`/v1/chat/completions`), model `local`.
    pub fn openai(&self) -> OpenAiChat {
        self.openai_with(true)
    }

    /// [`openai`](Self::openai) with text calls read or not.
    pub fn openai_with(&self, text_calls: bool) -> OpenAiChat {
        OpenAiChat::builder()
            .base_url(format!("{}/v1", self.url))
            .model("local")
            .timeout(REQUEST_TIMEOUT)
            .retry(retries())
            .text_tool_calls(text_calls)
            .build()
            .expect("OpenAiChat for the model server")
    }

    /// [`openai`](Self::openai) with constrained tool calls.
    pub fn openai_constrained(&self) -> OpenAiChat {
        OpenAiChat::builder()
            .base_url(format!("{}/v1", self.url))
            .model("local")
            .timeout(REQUEST_TIMEOUT)
            .retry(retries())
            .constrained_tool_calls(true)
            .build()
            .expect("OpenAiChat for the model server")
    }

    /// `AnthropicMessages` on this server (`/v1/messages`), model `local`.
    pub fn anthropic(&self) -> AnthropicMessages {
        self.anthropic_with(true)
    }

    /// [`anthropic`](Self::anthropic) with text calls read or not.
    pub fn anthropic_with(&self, text_calls: bool) -> AnthropicMessages {
        AnthropicMessages::builder()
            .base_url(&self.url)
            .model("local")
            .timeout(REQUEST_TIMEOUT)
            .retry(retries())
            .text_tool_calls(text_calls)
            .build()
            .expect("AnthropicMessages for the model server")
    }
}

/// The requests of the tests queue at a one-slot server; this bounds one, queue included.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(180);

fn retries() -> RetryPolicy {
    RetryPolicy::exponential(1, Duration::from_millis(200), 2.0)
}

/// What every real-model test asks for: deterministic answers, bounded length (a small model
/// that repeats itself must not run until the context is full).
pub fn options() -> GenerationOptions {
    GenerationOptions::new()
        .with_temperature(0.0)
        .with_max_tokens(200)
}

/// The server's log, `target/model/logs/server-PORT.log` (it logs every request).
fn log(port: u16) -> Stdio {
    let dir = model_dir().join("logs");
    let file = std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::File::create(dir.join(format!("server-{port}.log"))));
    file.map_or_else(|_| Stdio::null(), Stdio::from)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// Runs `tests/model/setup.sh` unless its results are there.
fn setup() -> Result<(), String> {
    let dir = model_dir();
    let ready =
        dir.join("venv/.ready").is_file() && dir.join(format!("{}.sha256", weights())).is_file();
    if ready {
        return Ok(());
    }
    let started = Instant::now();
    let output = Command::new("bash")
        .arg(root().join("tests/model/setup.sh"))
        .arg(size())
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("tests/model/setup.sh cannot run: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "tests/model/setup.sh failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    eprintln!("set up the real model in {:.0?}", started.elapsed());
    Ok(())
}
