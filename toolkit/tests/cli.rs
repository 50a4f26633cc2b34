//! The `agent-toolkit` binary run as a shell user would, against our servers (A2A, MCP over
//! stdio and over streamable HTTP) and the official Python SDKs' servers (a2a-sdk 1.x, mcp
//! 2.x): what it prints, where, and with which exit code.
//!
//! Own harness (`harness = false`): the test binary re-executes itself as our MCP stdio server
//! (`AGENT_TOOLKIT_CLI_TEST_SERVE=mcp-stdio`), since the CLI must start that server as a child
//! process.
//!
//! The cases against the Python servers need the `interop-tests` feature (the workspace's
//! `interop`).

#[path = "../../tests/peers/mod.rs"]
mod peers;
#[path = "../../tests/tls/mod.rs"]
mod tls;

use std::time::Duration;

use agent_toolkit::a2a::server::{A2aToolServer, ServerOptions};
use agent_toolkit::prelude::*;

const BIN: &str = env!("CARGO_BIN_EXE_agent-toolkit");
const SERVE_VAR: &str = "AGENT_TOOLKIT_CLI_TEST_SERVE";
const TOKEN: &str = "s3cret";

/// Add two integers.
#[tool(read_only, idempotent)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Count to `steps`, reporting progress after each step.
#[tool]
async fn slow(steps: u32, #[ctx] progress: ToolEmitter) -> String {
    for i in 1..=steps {
        tokio::time::sleep(Duration::from_millis(20)).await;
        progress.progress(i, Some(f64::from(steps)), format!("step {i}"));
    }
    format!("counted to {steps}")
}

/// Always fails.
#[tool]
fn fail() -> Result<String, ToolError> {
    Err(ToolError::execution("the disk is full"))
}

fn toolkit() -> Toolkit {
    Toolkit::builder()
        .register(Add)
        .register(Slow)
        .register(Fail)
        .build()
        .expect("fixture toolkit")
}

/// What one run of the CLI did.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

async fn cli(args: &[&str]) -> Run {
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        tokio::process::Command::new(BIN)
            .args(args)
            .env_remove("AGENT_TOOLKIT_TOKEN")
            .kill_on_drop(true)
            .output(),
    )
    .await
    .unwrap_or_else(|_| panic!("agent-toolkit {args:?} ran longer than 60 s"))
    .expect("run agent-toolkit");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn ok(run: &Run) {
    assert_eq!(run.code, 0, "{run:?}");
}

/// Checks every subcommand against one MCP server reached with `server` (`--mcp-cmd ..` or
/// `--mcp-url ..`), whose tools are our fixture's.
async fn check_our_tools(server: &[&str]) {
    let with = |rest: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = vec!["tools".into()];
        v.push(rest[0].into());
        v.extend(server.iter().map(|s| s.to_string()));
        v.extend(rest[1..].iter().map(|s| s.to_string()));
        v
    };
    let run_with = |rest: &[&str]| {
        let args = with(rest);
        async move {
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            cli(&refs).await
        }
    };

    let list = run_with(&["list"]).await;
    ok(&list);
    let header = list.stdout.lines().next().unwrap_or_default();
    assert!(
        header.starts_with("NAME") && header.contains("DESCRIPTION"),
        "{list:?}"
    );
    let add_row = list
        .stdout
        .lines()
        .find(|l| l.starts_with("add "))
        .unwrap_or_else(|| panic!("no add row: {list:?}"));
    assert!(add_row.contains("a*,b*"), "{list:?}");
    assert!(add_row.contains("read-only,idempotent"), "{list:?}");
    assert!(add_row.contains("Add two integers."), "{list:?}");

    let json = run_with(&["list", "--json"]).await;
    ok(&json);
    let tools: serde_json::Value = serde_json::from_str(&json.stdout).expect("--json is JSON");
    let names: Vec<&str> = tools
        .as_array()
        .expect("an array")
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["add", "slow", "fail"]);
    assert_eq!(
        tools[0]["inputSchema"]["required"],
        serde_json::json!(["a", "b"])
    );
    assert_eq!(tools[0]["annotations"]["readOnlyHint"], true);

    let call = run_with(&["call", "add", r#"{"a": 2, "b": 3}"#]).await;
    ok(&call);
    assert_eq!(call.stdout.trim(), "5", "{call:?}");

    let slow = run_with(&["call", "slow", r#"{"steps": 3}"#]).await;
    ok(&slow);
    assert_eq!(slow.stdout.trim(), "counted to 3", "{slow:?}");
    for step in 1..=3 {
        assert!(
            slow.stderr
                .contains(&format!("progress: {step}/3 step {step}")),
            "progress {step} missing on stderr: {slow:?}"
        );
    }

    let failed = run_with(&["call", "fail"]).await;
    assert_eq!(failed.code, 1, "{failed:?}");
    assert!(failed.stdout.contains("the disk is full"), "{failed:?}");
    assert!(
        failed.stderr.contains("`fail` reported an error"),
        "{failed:?}"
    );

    let bad_args = run_with(&["call", "add", r#"{"a": "two"}"#]).await;
    assert_eq!(bad_args.code, 1, "{bad_args:?}");
    assert!(bad_args.stdout.contains("argument `a`"), "{bad_args:?}");

    let unknown = run_with(&["call", "nope"]).await;
    assert_eq!(unknown.code, 2, "{unknown:?}");
    assert!(
        unknown
            .stderr
            .contains("no tool `nope`; the server offers: add, slow, fail"),
        "{unknown:?}"
    );

    let not_json = run_with(&["call", "add", "{a: 1}"]).await;
    assert_eq!(not_json.code, 2, "{not_json:?}");
    assert!(
        not_json.stderr.contains("the arguments are not valid JSON"),
        "{not_json:?}"
    );
    let not_object = run_with(&["call", "add", "[1, 2]"]).await;
    assert_eq!(not_object.code, 2, "{not_object:?}");
    assert!(
        not_object.stderr.contains("must be a JSON object"),
        "{not_object:?}"
    );
}

async fn our_mcp_stdio_server() {
    let exe = std::env::current_exe().expect("current exe");
    let exe = exe.to_str().expect("utf-8 path");
    // `env` gives the child the variable that makes it serve (see `main`).
    let cmd = format!("env {SERVE_VAR}=mcp-stdio {}", shell_quote(exe));
    check_our_tools(&["--mcp-cmd", &cmd]).await;
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

async fn our_mcp_http_server() {
    let app = axum::Router::new().nest_service("/mcp", toolkit().mcp_http_service());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    check_our_tools(&["--mcp-url", &url]).await;
    server.abort();
}

async fn our_a2a_server() {
    let toolkit = toolkit();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = A2aToolServer::new(&toolkit)
        .options(ServerOptions::new().name("CLI fixture").bearer_token(TOKEN));
    let task = tokio::spawn(server.serve(listener));

    let card = cli(&["card", &url]).await;
    ok(&card);
    assert!(card.stdout.starts_with("CLI fixture (version"), "{card:?}");
    assert!(card.stdout.contains("JSONRPC 1.0 at"), "{card:?}");
    assert!(
        card.stdout.contains("tool-add [tool]: Add two integers."),
        "{card:?}"
    );
    let card_json = cli(&["card", &url, "--json"]).await;
    ok(&card_json);
    let card_value: serde_json::Value = serde_json::from_str(&card_json.stdout).unwrap();
    assert_eq!(card_value["name"], "CLI fixture");

    // Calls need the token; the card does not.
    let refused = cli(&["tools", "call", "--a2a", &url, "add", r#"{"a":1,"b":2}"#]).await;
    assert_eq!(refused.code, 3, "{refused:?}");
    assert!(refused.stderr.starts_with("error: "), "{refused:?}");

    let with_token = ["--a2a", url.as_str(), "--token", TOKEN];
    check_our_tools(&with_token).await;
    task.abort();
}

#[cfg(feature = "interop-tests")]
async fn python_mcp_server() {
    let py = peers::python(peers::Env::Mcp);
    let script = peers::workspace_root().join("tests/peers/mcp_server_peer.py");
    let cmd = format!(
        "{} {}",
        shell_quote(py.to_str().unwrap()),
        shell_quote(script.to_str().unwrap())
    );
    let list = cli(&["tools", "list", "--mcp-cmd", &cmd]).await;
    ok(&list);
    assert!(
        list.stdout.lines().any(|l| l.starts_with("add ")),
        "{list:?}"
    );
    assert!(
        list.stdout.lines().any(|l| l.starts_with("countdown ")),
        "{list:?}"
    );
    let call = cli(&[
        "tools",
        "call",
        "--mcp-cmd",
        &cmd,
        "add",
        r#"{"a":20,"b":22}"#,
    ])
    .await;
    ok(&call);
    assert!(call.stdout.contains("42"), "{call:?}");
    let countdown = cli(&[
        "tools",
        "call",
        "--mcp-cmd",
        &cmd,
        "countdown",
        r#"{"n":3}"#,
    ])
    .await;
    ok(&countdown);
    assert!(countdown.stderr.contains("progress: 1/3"), "{countdown:?}");
    assert!(countdown.stderr.contains("progress: 3/3"), "{countdown:?}");
}

#[cfg(feature = "interop-tests")]
async fn python_a2a_server() {
    let port = peers::free_port();
    let _peer =
        peers::spawn_ready(peers::Env::A2a1, "a2a_tool_peer.py", &[&port.to_string()]).await;
    let url = format!("http://127.0.0.1:{port}");
    let card = cli(&["card", &url]).await;
    ok(&card);
    assert!(card.stdout.contains("[tool]"), "{card:?}");
    let list = cli(&["tools", "list", "--a2a", &url, "--json"]).await;
    ok(&list);
    let tools: serde_json::Value = serde_json::from_str(&list.stdout).unwrap();
    let first = tools[0]["name"].as_str().expect("a tool").to_string();
    assert!(!first.is_empty(), "{list:?}");
    let call = cli(&["tools", "call", "--a2a", &url, "add", r#"{"a":20,"b":22}"#]).await;
    ok(&call);
    assert!(call.stdout.contains("42"), "{call:?}");
}

async fn unreachable_servers_and_usage_mistakes() {
    let port = peers::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let a2a = cli(&["tools", "list", "--a2a", &url]).await;
    assert_eq!(a2a.code, 3, "{a2a:?}");
    assert!(
        a2a.stderr.contains("could not reach the A2A agent"),
        "{a2a:?}"
    );
    let mcp = cli(&["tools", "list", "--mcp-url", &format!("{url}/mcp")]).await;
    assert_eq!(mcp.code, 3, "{mcp:?}");
    assert!(mcp.stderr.contains("could not connect"), "{mcp:?}");
    let missing = cli(&["tools", "list", "--mcp-cmd", "/nonexistent/server --flag"]).await;
    assert_eq!(missing.code, 3, "{missing:?}");
    assert!(missing.stderr.contains("could not start"), "{missing:?}");
    let none = cli(&["tools", "list"]).await;
    assert_eq!(none.code, 2, "{none:?}");
    let two = cli(&["tools", "list", "--a2a", &url, "--mcp-url", &url]).await;
    assert_eq!(two.code, 2, "{two:?}");
    let token_for_cmd = cli(&["tools", "list", "--mcp-cmd", "server", "--token", "x"]).await;
    assert_eq!(token_for_cmd.code, 2, "{token_for_cmd:?}");
    assert!(
        token_for_cmd.stderr.contains("not for --mcp-cmd"),
        "{token_for_cmd:?}"
    );
    let bad_header = cli(&["tools", "list", "--a2a", &url, "--header", "no-colon"]).await;
    assert_eq!(bad_header.code, 2, "{bad_header:?}");
    assert!(bad_header.stderr.contains("NAME: VALUE"), "{bad_header:?}");
    let bad_ca = cli(&[
        "tools",
        "list",
        "--a2a",
        &url,
        "--ca-cert",
        "/nonexistent.pem",
    ])
    .await;
    assert_eq!(bad_ca.code, 2, "{bad_ca:?}");
    assert!(bad_ca.stderr.contains("/nonexistent.pem"), "{bad_ca:?}");
}

/// Our A2A and MCP servers over TLS, with a certificate from a CA made here: reached with
/// `--ca-cert` and `--token`, refused with a clear error without the CA.
async fn https_servers_with_a_private_ca() {
    let pki = tls::pki("agent-toolkit CLI test CA");
    let files = pki.files("cli-ca");
    let ca = files.ca.clone();

    let port = peers::free_port();
    let url = format!("https://localhost:{port}/");
    let server = A2aToolServer::new(&toolkit()).options(
        ServerOptions::new()
            .name("CLI TLS fixture")
            .bearer_token(TOKEN)
            .public_url(url.clone()),
    );
    tls::serve_on(server.router(), &pki, port);
    let card = cli(&["card", &url, "--ca-cert", &ca]).await;
    ok(&card);
    assert!(card.stdout.contains("CLI TLS fixture"), "{card:?}");
    let call = cli(&[
        "tools",
        "call",
        "--a2a",
        &url,
        "--token",
        TOKEN,
        "--ca-cert",
        &ca,
        "add",
        r#"{"a":40,"b":2}"#,
    ])
    .await;
    ok(&call);
    assert!(call.stdout.contains("42"), "{call:?}");
    let untrusted = cli(&["card", &url]).await;
    assert_eq!(untrusted.code, 3, "{untrusted:?}");
    assert!(untrusted.stderr.contains("certificate"), "{untrusted:?}");
    assert!(untrusted.stderr.contains("--ca-cert FILE"), "{untrusted:?}");

    let app = axum::Router::new().nest_service("/mcp", toolkit().mcp_http_service());
    let addr = tls::serve(app, &pki);
    let mcp = format!("https://localhost:{}/mcp", addr.port());
    let list = cli(&["tools", "list", "--mcp-url", &mcp, "--ca-cert", &ca]).await;
    ok(&list);
    assert!(list.stdout.contains("add"), "{list:?}");
    let untrusted = cli(&["tools", "list", "--mcp-url", &mcp]).await;
    assert_eq!(untrusted.code, 3, "{untrusted:?}");
    assert!(untrusted.stderr.contains("certificate"), "{untrusted:?}");
    assert!(untrusted.stderr.contains("--ca-cert FILE"), "{untrusted:?}");
}

/// The Python SDKs' A2A and MCP servers behind TLS (uvicorn with a certificate from a CA made
/// here): with `--ca-cert`, `card` shows the a2a-sdk 1.x server's https:// interfaces, `tools
/// call --a2a` calls its `add`, and `tools list`/`tools call --mcp-url` list and call the mcp
/// 2.x server's tools; without it, `card` and `tools list --mcp-url` exit 3 with an error naming
/// `UnknownIssuer`.
#[cfg(feature = "interop-tests")]
async fn python_servers_behind_tls() {
    let pki = tls::pki("agent-toolkit CLI test CA (python)");
    let files = pki.files("cli-py");
    let (cert, key, ca) = (files.cert.clone(), files.key.clone(), files.ca.clone());

    let port = peers::free_port().to_string();
    let _a2a = peers::spawn_ready(
        peers::Env::A2a1,
        "a2a_tool_peer.py",
        &[&port, "--tls", &cert, &key],
    )
    .await;
    let url = format!("https://127.0.0.1:{port}");
    let card = cli(&["card", &url, "--ca-cert", &ca]).await;
    ok(&card);
    assert!(
        card.stdout
            .contains(&format!("JSONRPC 1.0 at {url}/a2a/jsonrpc")),
        "{card:?}"
    );
    let call = cli(&[
        "tools",
        "call",
        "--a2a",
        &url,
        "--ca-cert",
        &ca,
        "add",
        r#"{"a":20,"b":22}"#,
    ])
    .await;
    ok(&call);
    assert!(call.stdout.contains("42"), "{call:?}");
    let untrusted = cli(&["card", &url]).await;
    assert_eq!(untrusted.code, 3, "{untrusted:?}");
    assert!(untrusted.stderr.contains("UnknownIssuer"), "{untrusted:?}");

    let port = peers::free_port().to_string();
    let _mcp = peers::spawn_ready(
        peers::Env::Mcp,
        "mcp_server_peer.py",
        &["--http", &port, "--tls", &cert, &key],
    )
    .await;
    let mcp = format!("https://127.0.0.1:{port}/mcp");
    let list = cli(&["tools", "list", "--mcp-url", &mcp, "--ca-cert", &ca]).await;
    ok(&list);
    assert!(
        list.stdout.lines().any(|l| l.starts_with("add ")),
        "{list:?}"
    );
    let call = cli(&[
        "tools",
        "call",
        "--mcp-url",
        &mcp,
        "--ca-cert",
        &ca,
        "add",
        r#"{"a":20,"b":22}"#,
    ])
    .await;
    ok(&call);
    assert!(call.stdout.contains(r#""result": 42"#), "{call:?}");
    let untrusted = cli(&["tools", "list", "--mcp-url", &mcp]).await;
    assert_eq!(untrusted.code, 3, "{untrusted:?}");
    assert!(untrusted.stderr.contains("UnknownIssuer"), "{untrusted:?}");
}

fn main() {
    if std::env::var(SERVE_VAR).as_deref() == Ok("mcp-stdio") {
        let rt = tokio::runtime::Runtime::new().expect("runtime");
        if let Err(e) = rt.block_on(toolkit().serve_mcp_stdio()) {
            eprintln!("cli test server: {e}");
            std::process::exit(1);
        }
        return;
    }
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    type Case = (
        &'static str,
        fn() -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>,
    );
    let cases: Vec<Case> = vec![
        ("our_mcp_stdio_server", || Box::pin(our_mcp_stdio_server())),
        ("our_mcp_http_server", || Box::pin(our_mcp_http_server())),
        ("our_a2a_server", || Box::pin(our_a2a_server())),
        #[cfg(feature = "interop-tests")]
        ("python_mcp_server", || Box::pin(python_mcp_server())),
        #[cfg(feature = "interop-tests")]
        ("python_a2a_server", || Box::pin(python_a2a_server())),
        #[cfg(feature = "interop-tests")]
        ("python_servers_behind_tls", || {
            Box::pin(python_servers_behind_tls())
        }),
        ("https_servers_with_a_private_ca", || {
            Box::pin(https_servers_with_a_private_ca())
        }),
        ("unreachable_servers_and_usage_mistakes", || {
            Box::pin(unreachable_servers_and_usage_mistakes())
        }),
    ];
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut failed = Vec::new();
    let mut ran = 0;
    for (name, case) in cases {
        if filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        ran += 1;
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rt.block_on(case())));
        match outcome {
            Ok(()) => println!("test {name} ... ok"),
            Err(_) => {
                println!("test {name} ... FAILED");
                failed.push(name);
            }
        }
    }
    println!("\n{ran} CLI tests, {} failed", failed.len());
    if !failed.is_empty() {
        println!("failed: {}", failed.join(", "));
        std::process::exit(1);
    }
}
