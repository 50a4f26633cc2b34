//! A2A tool server: a toolkit's tools offered to other agents over A2A (1.0 and 0.3).
//!
//! Shows `A2aToolServer` serving three `#[tool]`s on 127.0.0.1 — a JSON tool with an output
//! schema, an integer tool, and a slow one that reports progress through its `ToolEmitter` and
//! stops when the caller cancels — plus an `admin` group that is off, so its tool is not on
//! the card until the group is switched on. The agent card lists one skill per active tool and
//! carries their schemas in the tools extension.
//!
//! Run it with `cargo run --example a2a_tool_server --features a2a -- [PORT]` (or set
//! `A2A_PORT`; default 41241), then fetch `http://127.0.0.1:PORT/.well-known/agent-card.json`,
//! or call it from `examples/a2a_remote_tools.rs` or any A2A client:
//!
//! ```text
//! curl -s localhost:41241/ -H 'A2A-Version: 1.0' -H 'Content-Type: application/json' -d \
//!   '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1",
//!     "role":"ROLE_USER","parts":[{"data":{"name":"add","params":{"a":2,"b":3}}}],
//!     "metadata":{"_tool_call":{"name":"add","params":{"a":2,"b":3}}}}}}'
//! ```
//! Set `A2A_TOKEN` to require `Authorization: Bearer <token>` on calls.

use std::time::Duration;

use agent_toolkit::Json;
use agent_toolkit::a2a::server::{A2aToolServer, ServerOptions};
use agent_toolkit::prelude::*;
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema)]
struct Weather {
    city: String,
    temp_c: f64,
    sky: String,
}

/// Current weather of a city.
#[tool(read_only, idempotent)]
async fn get_weather(
    /// City name, e.g. "Paris".
    city: String,
) -> Json<Weather> {
    let temp_c = 12.0 + (city.len() % 10) as f64;
    Json(Weather {
        city,
        temp_c,
        sky: "sunny".into(),
    })
}

/// Add two integers.
#[tool(read_only)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Count to `n`, one step every `step_ms` milliseconds, reporting progress.
#[tool(read_only)]
async fn slow_count(
    /// How far to count.
    n: u32,
    /// Milliseconds per step.
    #[arg(default = 100)]
    step_ms: u64,
    #[ctx] progress: ToolEmitter,
    #[ctx] cancel: CancellationToken,
) -> Result<String, ToolError> {
    for i in 1..=n {
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(step_ms)) => {}
            _ = cancel.cancelled() => return Err(ToolError::execution("cancelled")),
        }
        progress.progress(i, Some(f64::from(n)), format!("counted {i}"));
    }
    Ok(format!("counted to {n}"))
}

/// Reset a user's password (admin only; the group is off by default).
#[tool(group = "admin", destructive)]
async fn reset_password(user: String) -> String {
    format!("password of {user} reset")
}

/// The toolkit the server offers.
fn toolkit() -> Toolkit {
    Toolkit::builder()
        .inactive_group("admin", "Account administration")
        .register(GetWeather)
        .register(Add)
        .register(SlowCount)
        .register(ResetPassword)
        .timeout(Duration::from_secs(30))
        .build()
        .expect("the example toolkit is valid")
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("A2A_PORT").ok())
        .map(|p| p.parse().expect("PORT must be a number"))
        .unwrap_or(41241);
    let toolkit = toolkit();
    let mut options = ServerOptions::new().name("Example tools");
    if let Ok(token) = std::env::var("A2A_TOKEN") {
        options = options.bearer_token(token);
    }
    let server = A2aToolServer::new(&toolkit).options(options);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let addr = listener.local_addr()?;
    println!("A2A tool server on http://{addr}/");
    println!("agent card: http://{addr}/.well-known/agent-card.json");
    let tools: Vec<String> = toolkit
        .definitions()
        .iter()
        .map(|d| d.name().to_string())
        .collect();
    println!("tools: {}", tools.join(", "));
    server.serve(listener).await
}
