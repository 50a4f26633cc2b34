//! Tools shared by the tests.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_toolkit::context::{ContextRejection, ToolProgress};
use agent_toolkit::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Address {
    /// Street and number.
    pub street: String,
    pub city: String,
    pub zip: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Weather {
    pub city: String,
    pub degrees: f64,
}

pub struct User {
    pub name: String,
}

/// Get the current weather for a location.
///
/// Uses the paid API.
#[tool(group = "weather", read_only, timeout = "2s", retries = 2)]
pub async fn get_weather(
    /// City and state, e.g. "San Francisco, CA".
    location: String,
    /// Temperature unit.
    unit: Option<Unit>,
    #[arg(default = 3)] days: u32,
    #[preset] api_key: String,
    #[ctx] user: Ctx<User>,
) -> Result<Json<Weather>, ToolError> {
    let degrees = if unit == Some(Unit::Fahrenheit) {
        70.0
    } else {
        21.0
    };
    Ok(Json(Weather {
        city: format!("{location}/{days}/{}/{}", api_key, user.name),
        degrees,
    }))
}

/// Echo the arguments the tool received, to observe where each came from.
#[tool]
pub fn echo(
    /// A required value.
    a: String,
    #[arg(rename = "bee", description = "A renamed value.")] b: Option<i64>,
    #[arg(default = 7)] c: i64,
    #[arg(default)] d: bool,
    #[preset] secret: String,
) -> String {
    format!("a={a} b={b:?} c={c} d={d} secret={secret}")
}

/// Store a shipping address.
#[tool(name = "store_address", description = "Store an address.", idempotent)]
pub async fn save_address(address: Address, tags: Vec<String>) -> String {
    format!(
        "{} {} {:?} {}",
        address.street,
        address.city,
        address.zip,
        tags.len()
    )
}

/// Who is asking: shows context layering.
#[tool]
pub fn whoami(#[ctx] user: Ctx<User>, #[ctx] info: CallInfo) -> String {
    format!("{} via {}#{}", user.name, info.tool_name, info.call_id)
}

/// Optional context and a custom extractor.
#[tool]
pub fn tenant_of(#[ctx] user: Option<Ctx<User>>, #[ctx] t: Tenant) -> String {
    format!(
        "{}:{}",
        user.map(|u| u.name.clone()).unwrap_or_default(),
        t.0
    )
}

/// A user-defined extractor, like axum's `FromRequestParts`.
pub struct Tenant(pub String);

pub struct Session {
    pub tenant: String,
}

impl FromToolContext for Tenant {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ContextRejection> {
        ctx.get::<Session>()
            .map(|s| Tenant(s.tenant.clone()))
            .ok_or_else(ContextRejection::missing::<Session>)
    }
}

/// Report progress twice.
#[tool]
pub async fn slow_count(n: u32, #[ctx] emitter: ToolEmitter) -> u32 {
    for i in 1..=n {
        emitter.progress(i, Some(f64::from(n)), format!("step {i}"));
    }
    emitter.chunk("done");
    n
}

/// Every option at once (only its stored metadata is looked at).
#[tool(sequential, background, requires_approval, destructive)]
pub fn all_options() -> &'static str {
    "all"
}

/// Always fails.
#[tool(destructive)]
pub fn fail_io() -> Result<String, std::io::Error> {
    Err(std::io::Error::other("disk on fire"))
}

/// Panics.
#[tool]
pub async fn explode(#[arg(default)] sync_part: bool) -> String {
    panic!("boom {sync_part}")
}

/// Takes any JSON.
#[tool]
pub fn any_json(value: serde_json::Value) -> String {
    value.to_string()
}

/// Takes no arguments.
#[tool]
pub fn ping() -> &'static str {
    "pong"
}

/// A counter whose methods are tools.
pub struct Counter {
    pub hits: AtomicUsize,
}

#[tools]
impl Counter {
    /// Add to the counter.
    #[tool(group = "counter")]
    pub async fn add(
        &self,
        /// How much to add.
        by: usize,
    ) -> usize {
        self.hits.fetch_add(by, Ordering::SeqCst) + by
    }

    /// Read the counter.
    #[tool(group = "counter", read_only)]
    pub fn read(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }

    /// Not a tool: no #[tool].
    pub fn reset(&self) {
        self.hits.store(0, Ordering::SeqCst);
    }
}

/// A toolkit with most fixtures registered.
pub fn toolkit() -> Toolkit {
    Toolkit::builder()
        .group("weather", "Weather lookups")
        .inactive_group("counter", "Counting")
        .register(GetWeather)
        .preset("api_key", "k1")
        .register(Echo)
        .preset("secret", "s3")
        .register(SaveAddress)
        .register(Whoami)
        .register(TenantOf)
        .register(SlowCount)
        .register(FailIo)
        .register(Explode)
        .register(AnyJson)
        .register(Ping)
        .register(Arc::new(Counter {
            hits: AtomicUsize::new(0),
        }))
        .context(User {
            name: "toolkit-user".into(),
        })
        .build()
        .expect("fixture toolkit builds")
}

pub fn progress_events(rx: &mut tokio::sync::mpsc::Receiver<ToolProgress>) -> Vec<ToolProgress> {
    let mut out = Vec::new();
    while let Ok(p) = rx.try_recv() {
        out.push(p);
    }
    out
}
