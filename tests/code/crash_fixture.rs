//! The tools and the program of the code-mode crash tests, shared by the test binary and the
//! child processes (`tests/code/child.rs`).
//!
//! The program buys six items: for each, two slow read-only lookups at once (`price`, `stock`),
//! then a `charge`, which is not idempotent. Every effect is visible outside the process that
//! made it: `charge` appends `charge <item> <cents> <pid>` to the effects file, and the lookups
//! append `<tool> <item> <pid>` to the trace file when they start. A process can be told to
//! hang for good at one call ([`Hang`]), so that a test kills it at a known point: inside a
//! lookup, or inside a charge that already took effect.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_toolkit::prelude::*;
use agent_toolkit::toolkit::ToolkitBuilder;

/// Items the program buys.
pub const ITEMS: u32 = 6;

/// The program: lookups in parallel, then a charge, item after item. A charge that throws is
/// reported in the result rather than ending the program.
pub const PROGRAM: &str = r#"
    const receipts = [];
    for (let item = 0; item < 6; item++) {
        const [cents, left] = await Promise.all([tools.price({ item }), tools.stock({ item })]);
        try {
            receipts.push(await tools.charge({ item, cents: cents + left }));
        } catch (e) {
            receipts.push(`charge ${item} failed (${e.kind}): ${e.message}`);
        }
    }
    return receipts;
"#;

/// Where a process hangs for good (until it is killed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hang {
    Nowhere,
    /// In `price` of this item, after tracing its start.
    Price(u32),
    /// In `charge` of this item, after its effect is written.
    Charge(u32),
}

impl Hang {
    /// `none`, `price:N` or `charge:N`.
    pub fn parse(text: &str) -> Hang {
        match text.split_once(':') {
            None if text == "none" => Hang::Nowhere,
            Some(("price", n)) => Hang::Price(n.parse().expect("an item")),
            Some(("charge", n)) => Hang::Charge(n.parse().expect("an item")),
            _ => panic!("hang is `none`, `price:N` or `charge:N`, not `{text}`"),
        }
    }
}

/// The files the tools write their effects to, and where this process hangs.
pub struct Files {
    pub effects: PathBuf,
    pub trace: PathBuf,
    pub hang: Hang,
}

fn append(path: &Path, line: &str) {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("open a log of the crash tests");
    // One write per line: O_APPEND keeps lines of concurrent writers whole.
    file.write_all(format!("{line}\n").as_bytes())
        .expect("write a log of the crash tests");
}

/// How long a lookup takes.
const SLOW: Duration = Duration::from_millis(30);

/// The price of an item, in cents.
#[tool(read_only)]
async fn price(item: u32, #[ctx] files: Ctx<Files>) -> i64 {
    append(
        &files.trace,
        &format!("price {item} {}", std::process::id()),
    );
    if files.hang == Hang::Price(item) {
        std::future::pending::<()>().await;
    }
    tokio::time::sleep(SLOW).await;
    100 * (i64::from(item) + 1) + 7
}

/// How many of an item are in stock.
#[tool(read_only)]
async fn stock(item: u32, #[ctx] files: Ctx<Files>) -> i64 {
    append(
        &files.trace,
        &format!("stock {item} {}", std::process::id()),
    );
    tokio::time::sleep(SLOW).await;
    i64::from(item) * 3 + 1
}

/// Charge for an item (not idempotent: each call is a new charge).
#[tool]
async fn charge(item: u32, cents: i64, #[ctx] files: Ctx<Files>) -> String {
    append(
        &files.effects,
        &format!("charge {item} {cents} {}", std::process::id()),
    );
    if files.hang == Hang::Charge(item) {
        std::future::pending::<()>().await;
    }
    format!("receipt-{item}-{cents}")
}

/// A builder with the three tools, writing to `files`.
pub fn tools(files: Files) -> ToolkitBuilder {
    Toolkit::builder()
        .register(Price)
        .register(Stock)
        .register(Charge)
        .context(files)
}

/// The lines of a log (none when it does not exist yet).
pub fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// The charges of an effects file: `(item, pid)` in the order they were made.
pub fn charges(path: &Path) -> Vec<(u32, u32)> {
    lines(path)
        .iter()
        .map(|line| match line.split(' ').collect::<Vec<_>>()[..] {
            ["charge", item, _, pid] => (item.parse().unwrap(), pid.parse().unwrap()),
            _ => panic!("not a charge: {line}"),
        })
        .collect()
}

/// Whether process `pid` started `tool` for `item`, by the trace file.
pub fn started(trace: &Path, tool: &str, item: u32, pid: u32) -> bool {
    lines(trace)
        .iter()
        .any(|line| *line == format!("{tool} {item} {pid}"))
}

/// The database argument of `code-child`: `sqlite:PATH` or a `postgres://` URL.
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub async fn database(arg: &str) -> agent_toolkit::storage::Database {
    use agent_toolkit::storage::Database;
    let db = match arg.strip_prefix("sqlite:") {
        Some(path) => Database::sqlite(path).await,
        None => Database::postgres(arg).await,
    };
    db.expect("open the database")
}
