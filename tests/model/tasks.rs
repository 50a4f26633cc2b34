//! Everyday tasks for a real model: tools with fixed answers, what each task must call, and what
//! its answer must say. Used by the real-model tests (`tests/real_model/`) and the task suite
//! (`tests/benches/tasks.rs`). A task is judged on structure (which tools ran, with which
//! arguments, one result per call, the key fact in the answer), never on exact prose.
//!
//! Include it with `#[path = "../model/tasks.rs"] mod tasks;` next to `model`.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_toolkit::prelude::*;
use agent_toolkit::toolkit::ToolkitBuilder;
use serde_json::{Value, json};

/// Every tool call that reached a tool body: the tool and its arguments as the tool saw them.
#[derive(Default)]
pub struct Log(Mutex<Vec<(String, Value)>>);

impl Log {
    fn record(&self, tool: &str, args: Value) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((tool.to_owned(), args));
    }

    /// The calls so far.
    pub fn calls(&self) -> Vec<(String, Value)> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// The account a tool works for: a context value, never shown to the model.
pub struct Account {
    pub user: String,
}

/// Get the current weather of a city.
#[tool(read_only)]
pub async fn get_weather(
    /// The city, e.g. "Paris".
    city: String,
    #[ctx] log: Ctx<Log>,
) -> String {
    log.record("get_weather", json!({ "city": city }));
    let weather = match city.to_lowercase().trim() {
        "paris" => "21°C, sunny",
        "berlin" => "15°C, rainy",
        "tokyo" => "26°C, cloudy",
        "london" => "12°C, foggy",
        _ => "18°C, clear",
    };
    format!("{city}: {weather}")
}

/// Add two numbers.
#[tool(read_only)]
pub async fn add(a: f64, b: f64, #[ctx] log: Ctx<Log>) -> String {
    log.record("add", json!({ "a": a, "b": b }));
    format!("{}", a + b)
}

/// Multiply two numbers.
#[tool(read_only)]
pub async fn multiply(a: f64, b: f64, #[ctx] log: Ctx<Log>) -> String {
    log.record("multiply", json!({ "a": a, "b": b }));
    format!("{}", a * b)
}

/// Read a text file.
#[tool(read_only)]
pub async fn read_file(
    /// Absolute path of the file.
    path: String,
    #[ctx] log: Ctx<Log>,
) -> Result<String, ToolError> {
    log.record("read_file", json!({ "path": path }));
    match path.as_str() {
        "/etc/motd" => Ok("Welcome to Orion. Planned maintenance: Friday 22:00.".into()),
        "/srv/notes.txt" => Ok("Buy milk. Call the plumber on Tuesday.".into()),
        other => Err(ToolError::execution(format!(
            "no such file: {other}; the files are /etc/motd and /srv/notes.txt"
        ))),
    }
}

/// Convert an amount of money from one currency to another.
#[tool(read_only)]
pub async fn convert_currency(
    amount: f64,
    /// Currency code to convert from, e.g. "USD".
    from: String,
    /// Currency code to convert to, e.g. "EUR".
    to: String,
    #[ctx] log: Ctx<Log>,
) -> Result<String, ToolError> {
    log.record(
        "convert_currency",
        json!({ "amount": amount, "from": from, "to": to }),
    );
    let rate = |code: &str| match code.to_uppercase().as_str() {
        "USD" => Some(1.0),
        "EUR" => Some(0.92),
        "GBP" => Some(0.79),
        "JPY" => Some(150.0),
        _ => None,
    };
    match (rate(&from), rate(&to)) {
        (Some(f), Some(t)) => Ok(format!("{amount} {from} = {:.2} {to}", amount / f * t)),
        _ => Err(ToolError::execution(format!(
            "unknown currency; known: USD, EUR, GBP, JPY (got {from} and {to})"
        ))),
    }
}

/// Find a contact's email address by name.
#[tool(read_only)]
pub async fn search_contacts(name: String, #[ctx] log: Ctx<Log>) -> String {
    log.record("search_contacts", json!({ "name": name }));
    match name.to_lowercase().trim() {
        "alice" => "Alice Martin: alice@example.com".into(),
        "bob" => "Bob Chen: bob@example.com".into(),
        other => format!("no contact named {other}"),
    }
}

/// Send an email.
#[tool(requires_approval)]
pub async fn send_email(
    /// The recipient's email address.
    to: String,
    /// The text of the email.
    body: String,
    #[ctx] log: Ctx<Log>,
) -> String {
    log.record("send_email", json!({ "to": to, "body": body }));
    format!("email sent to {to}")
}

/// Delete a file.
#[tool(requires_approval, destructive)]
pub async fn delete_file(path: String, #[ctx] log: Ctx<Log>) -> String {
    log.record("delete_file", json!({ "path": path }));
    format!("deleted {path}")
}

/// Get the latest price of a stock by its ticker symbol.
#[tool(read_only)]
pub async fn get_stock_price(
    /// Ticker symbol, e.g. "ACME".
    symbol: String,
    #[preset] api_key: String,
    #[ctx] account: Ctx<Account>,
    #[ctx] log: Ctx<Log>,
) -> String {
    log.record(
        "get_stock_price",
        json!({ "symbol": symbol, "api_key": api_key, "user": account.user }),
    );
    let price = match symbol.to_uppercase().as_str() {
        "ACME" => "132.50",
        "GLOBEX" => "48.10",
        _ => "10.00",
    };
    format!("{} is trading at {price} USD", symbol.to_uppercase())
}

/// Get the current local time in a city.
#[tool(read_only)]
pub async fn get_time(city: String, #[ctx] log: Ctx<Log>) -> String {
    log.record("get_time", json!({ "city": city }));
    let time = match city.to_lowercase().trim() {
        "tokyo" => "14:30",
        "new york" => "01:30",
        _ => "06:30",
    };
    format!("It is {time} in {city}.")
}

/// Look up the status of an order by its number.
#[tool(read_only)]
pub async fn lookup_order(order_number: u32, #[ctx] log: Ctx<Log>) -> String {
    log.record("lookup_order", json!({ "order_number": order_number }));
    match order_number {
        4521 => "Order 4521: shipped on Monday, arriving Thursday.".into(),
        n => format!("Order {n}: processing."),
    }
}

/// Get the population of a country.
#[tool(read_only)]
pub async fn get_population(country: String, #[ctx] log: Ctx<Log>) -> String {
    log.record("get_population", json!({ "country": country }));
    match country.to_lowercase().trim() {
        "canada" => "Canada: 40 million people".into(),
        "japan" => "Japan: 124 million people".into(),
        other => format!("{other}: unknown"),
    }
}

/// Get the road distance in kilometres between two cities.
#[tool(read_only)]
pub async fn get_distance(from: String, to: String, #[ctx] log: Ctx<Log>) -> String {
    log.record("get_distance", json!({ "from": from, "to": to }));
    format!("The road distance from {from} to {to} is 1054 km.")
}

/// Look up a user account by its username.
#[tool(read_only)]
pub async fn lookup_user(
    /// The username, in lowercase.
    username: String,
    #[ctx] log: Ctx<Log>,
) -> Result<String, ToolError> {
    log.record("lookup_user", json!({ "username": username }));
    if username != username.to_lowercase() {
        return Err(ToolError::execution(format!(
            "usernames are lowercase: call lookup_user again with \"{}\"",
            username.to_lowercase()
        )));
    }
    match username.as_str() {
        "alice" => Ok("alice: role admin, active since 2021".into()),
        other => Err(ToolError::execution(format!("no user named {other}"))),
    }
}

/// Get the city where a person lives.
#[tool(read_only)]
pub async fn get_user_city(
    /// The person's first name.
    name: String,
    #[ctx] log: Ctx<Log>,
) -> String {
    log.record("get_user_city", json!({ "name": name }));
    match name.to_lowercase().trim() {
        "alice" => {
            "Alice lives in Berlin. Call get_weather with city Berlin to get the weather there."
                .into()
        }
        other => format!("no person named {other}"),
    }
}

/// Generate a report about a topic (takes a while; runs in the background).
#[tool(background)]
pub async fn generate_report(topic: String, #[ctx] log: Ctx<Log>) -> String {
    log.record("generate_report", json!({ "topic": topic }));
    tokio::time::sleep(Duration::from_millis(50)).await;
    format!("Report on {topic}: 3 pages, revenue up 12%.")
}

/// The preset every `get_stock_price` registration binds, which the model must never see.
pub const API_KEY: &str = "sk-test-7f3a9c";
/// The user in the context of every toolkit, which the model must never see.
pub const USER: &str = "ada-lovelace";

/// A toolkit of `tools` (by name), logging into `log`, with the preset and the account bound.
/// `finance` holds `convert_currency` and `get_stock_price`; it is on unless `finance_off`.
pub fn toolkit(tools: &[&str], log: Arc<Log>, finance_off: bool) -> Toolkit {
    let builder = Toolkit::builder();
    let builder = if finance_off {
        builder.inactive_group("finance", "Currency conversion and stock prices")
    } else {
        builder.group("finance", "Currency conversion and stock prices")
    };
    register(builder, tools, |b| b)
        .context_shared(log)
        .context(Account { user: USER.into() })
        .loop_guard(loop_guard())
        .build()
        .expect("task toolkit")
}

/// Whether the toolkit's loop guard is on: `TASKS_LOOP_GUARD=off` measures without it.
pub fn loop_guard() -> bool {
    std::env::var("TASKS_LOOP_GUARD").map_or(true, |v| v != "off")
}

/// The task toolkit of `tools`, every one deferred (in the deferred group `catalog`): the
/// model is shown none of them and finds them by searching.
pub fn deferred_toolkit(tools: &[&str], log: Arc<Log>) -> Toolkit {
    let builder = Toolkit::builder()
        .group("finance", "Currency conversion and stock prices")
        .deferred_group(
            "catalog",
            "Weather, arithmetic, files, contacts, email, orders, places",
        );
    register(builder, tools, |b| b.in_group("catalog"))
        .context_shared(log)
        .context(Account { user: USER.into() })
        .build()
        .expect("deferred task toolkit")
}

fn register(
    mut builder: ToolkitBuilder,
    tools: &[&str],
    each: impl Fn(ToolkitBuilder) -> ToolkitBuilder,
) -> ToolkitBuilder {
    for &tool in tools {
        builder = match tool {
            "get_weather" => builder.register(GetWeather),
            "add" => builder.register(Add),
            "multiply" => builder.register(Multiply),
            "read_file" => builder.register(ReadFile),
            "convert_currency" => builder.register(ConvertCurrency).in_group("finance"),
            "search_contacts" => builder.register(SearchContacts),
            "send_email" => builder.register(SendEmail),
            "delete_file" => builder.register(DeleteFile),
            "get_stock_price" => builder
                .register(GetStockPrice)
                .preset("api_key", API_KEY)
                .in_group("finance"),
            "get_time" => builder.register(GetTime),
            "lookup_order" => builder.register(LookupOrder),
            "get_population" => builder.register(GetPopulation),
            "get_distance" => builder.register(GetDistance),
            "lookup_user" => builder.register(LookupUser),
            "generate_report" => builder.register(GenerateReport),
            "get_user_city" => builder.register(GetUserCity),
            other => panic!("no tool {other} in the task toolkit"),
        };
        builder = each(builder);
    }
    builder
}

/// How the approver answers `requires_approval` calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Approve {
    Yes,
    No,
}

/// One task.
pub struct Task {
    pub name: &'static str,
    pub prompt: &'static str,
    pub tools: &'static [&'static str],
    /// Calls that must have reached a tool body: the tool, and arguments the call's must
    /// include (strings compared without case).
    pub calls: &'static [(&'static str, &'static str)],
    /// A call that must have been made but not run (denied).
    pub denied: Option<&'static str>,
    /// Words the answer must contain (without case); any one of each inner list.
    pub answer: &'static [&'static [&'static str]],
    pub approve: Approve,
    /// `finance` starts switched off and the agent manages it (`reset_equipped_tools`).
    pub finance_off: bool,
}

const fn task(
    name: &'static str,
    prompt: &'static str,
    tools: &'static [&'static str],
    calls: &'static [(&'static str, &'static str)],
    answer: &'static [&'static [&'static str]],
) -> Task {
    Task {
        name,
        prompt,
        tools,
        calls,
        denied: None,
        answer,
        approve: Approve::Yes,
        finance_off: false,
    }
}

/// The task set.
pub fn tasks() -> Vec<Task> {
    vec![
        task(
            "weather",
            "What is the weather in Paris?",
            &["get_weather"],
            &[("get_weather", r#"{"city":"Paris"}"#)],
            &[&["21"]],
        ),
        task(
            "weather_rain",
            "Is it raining in Berlin right now?",
            &["get_weather"],
            &[("get_weather", r#"{"city":"Berlin"}"#)],
            &[&["rain"]],
        ),
        task(
            "no_tool_capital",
            "What is the capital of Italy? Answer in one word.",
            &["get_weather"],
            &[],
            &[&["Rome"]],
        ),
        task(
            "no_tool_greeting",
            "How do you say 'thank you' in French?",
            &["get_weather"],
            &[],
            &[&["merci"]],
        ),
        task(
            "add",
            "What is 1234 plus 4321?",
            &["add", "multiply"],
            &[("add", r#"{"a":1234,"b":4321}"#)],
            &[&["5555"]],
        ),
        task(
            "multiply",
            "What is 12 multiplied by 34?",
            &["add", "multiply"],
            &[("multiply", r#"{"a":12,"b":34}"#)],
            &[&["408"]],
        ),
        task(
            "read_file",
            "Read the file /etc/motd and tell me when the maintenance is.",
            &["read_file"],
            &[("read_file", r#"{"path":"/etc/motd"}"#)],
            &[&["Friday"]],
        ),
        task(
            "currency",
            "Convert 100 USD to EUR.",
            &["convert_currency"],
            &[(
                "convert_currency",
                r#"{"amount":100,"from":"USD","to":"EUR"}"#,
            )],
            &[&["92"]],
        ),
        task(
            "contact",
            "What is Bob's email address?",
            &["search_contacts"],
            &[("search_contacts", r#"{"name":"Bob"}"#)],
            &[&["bob@example.com"]],
        ),
        task(
            "stock_preset",
            "What is the current price of ACME stock?",
            &["get_stock_price"],
            &[(
                "get_stock_price",
                r#"{"symbol":"ACME","api_key":"sk-test-7f3a9c","user":"ada-lovelace"}"#,
            )],
            &[&["132.5"]],
        ),
        task(
            "time",
            "What time is it in Tokyo?",
            &["get_time", "get_weather"],
            &[("get_time", r#"{"city":"Tokyo"}"#)],
            &[&["14:30"]],
        ),
        task(
            "order",
            "What is the status of order 4521?",
            &["lookup_order"],
            &[("lookup_order", r#"{"order_number":4521}"#)],
            &[&["shipped"]],
        ),
        task(
            "population",
            "What is the population of Canada?",
            &["get_population"],
            &[("get_population", r#"{"country":"Canada"}"#)],
            &[&["40"]],
        ),
        task(
            "distance",
            "How far is it by road from Paris to Berlin?",
            &["get_distance"],
            &[("get_distance", r#"{"from":"Paris","to":"Berlin"}"#)],
            &[&["1054", "1,054"]],
        ),
        task(
            "delete_approved",
            "Delete the file /tmp/old.log.",
            &["delete_file"],
            &[("delete_file", r#"{"path":"/tmp/old.log"}"#)],
            &[],
        ),
        Task {
            denied: Some("delete_file"),
            approve: Approve::No,
            ..task(
                "delete_denied",
                "Delete the file /tmp/cache.txt.",
                &["delete_file"],
                &[],
                &[],
            )
        },
        task(
            "chained_email",
            "Find Alice's email address, then send her an email saying hello.",
            &["search_contacts", "send_email"],
            &[
                ("search_contacts", r#"{"name":"Alice"}"#),
                ("send_email", r#"{"to":"alice@example.com"}"#),
            ],
            &[],
        ),
        task(
            "chained_read",
            "Read /srv/notes.txt and tell me which day to call the plumber.",
            &["read_file"],
            &[("read_file", r#"{"path":"/srv/notes.txt"}"#)],
            &[&["Tuesday"]],
        ),
        task(
            "two_cities",
            "Call get_weather twice: once for Paris, once for Berlin.",
            &["get_weather"],
            &[
                ("get_weather", r#"{"city":"Paris"}"#),
                ("get_weather", r#"{"city":"Berlin"}"#),
            ],
            &[],
        ),
        task(
            "error_recovery",
            "What role does the user ALICE have?",
            &["lookup_user"],
            &[("lookup_user", r#"{"username":"alice"}"#)],
            &[&["admin"]],
        ),
        task(
            "background",
            "Generate a report about sales.",
            &["generate_report"],
            &[("generate_report", r#"{"topic":"sales"}"#)],
            &[],
        ),
        task(
            "chained_weather",
            "First find the city where Alice lives, then get the weather there.",
            &["get_user_city", "get_weather"],
            &[
                ("get_user_city", r#"{"name":"Alice"}"#),
                ("get_weather", r#"{"city":"Berlin"}"#),
            ],
            &[&["15"]],
        ),
        task(
            "currency_words",
            "Convert 100 dollars to euros.",
            &["convert_currency"],
            &[(
                "convert_currency",
                r#"{"amount":100,"from":"USD","to":"EUR"}"#,
            )],
            &[&["92"]],
        ),
        task(
            "order_hash",
            "What is the status of order #A-4521?",
            &["lookup_order"],
            &[("lookup_order", r#"{"order_number":4521}"#)],
            &[&["shipped"]],
        ),
        task(
            "error_path",
            "Read the notes file.",
            &["read_file"],
            &[("read_file", r#"{"path":"/srv/notes.txt"}"#)],
            &[&["plumber"]],
        ),
        Task {
            finance_off: true,
            ..task(
                "group_meta",
                "Equip the finance tools, then convert 50 GBP to USD.",
                &["convert_currency", "get_weather"],
                &[(
                    "convert_currency",
                    r#"{"amount":50,"from":"GBP","to":"USD"}"#,
                )],
                &[&["63"]],
            )
        },
        Task {
            finance_off: true,
            ..task(
                "group_on",
                "Convert 50 GBP to USD.",
                &["convert_currency", "get_weather"],
                &[(
                    "convert_currency",
                    r#"{"amount":50,"from":"GBP","to":"USD"}"#,
                )],
                &[&["63"]],
            )
        },
    ]
}

/// Whether `actual` includes every key of `expected` with an equal value (strings without case,
/// numbers by value).
pub fn includes(actual: &Value, expected: &Value) -> bool {
    let Some(expected) = expected.as_object() else {
        return false;
    };
    expected
        .iter()
        .all(|(key, want)| match (actual.get(key), want) {
            (Some(Value::String(a)), Value::String(w)) => a.trim().eq_ignore_ascii_case(w),
            (Some(Value::Number(a)), Value::Number(w)) => a.as_f64() == w.as_f64(),
            (Some(a), w) => a == w,
            (None, _) => false,
        })
}

/// Why the calls in `log` do not do `task`, if they do not.
pub fn check_calls(task: &Task, log: &[(String, Value)]) -> Result<(), String> {
    for (tool, args) in task.calls {
        let want: Value = serde_json::from_str(args).expect("task arguments are JSON");
        if !log.iter().any(|(t, a)| t == tool && includes(a, &want)) {
            return Err(format!("no call of {tool} with {args}; calls: {log:?}"));
        }
    }
    if task.calls.is_empty() && task.denied.is_none() && !log.is_empty() {
        return Err(format!("no tool should have run; calls: {log:?}"));
    }
    if let Some(tool) = task.denied
        && log.iter().any(|(t, _)| t == tool)
    {
        return Err(format!("{tool} ran although it was denied"));
    }
    Ok(())
}

/// Why `answer` does not say what `task` needs, if it does not.
pub fn check_answer(task: &Task, answer: &str) -> Result<(), String> {
    let lower = answer.to_lowercase();
    for any in task.answer {
        if !any.iter().any(|w| lower.contains(&w.to_lowercase())) {
            return Err(format!("the answer does not say {any:?}: {answer:?}"));
        }
    }
    Ok(())
}
