//! Private names for feature combinations the code would otherwise spell again and again. Not
//! features: users pick engines and protocols, these follow.
//!
//! - `cfg(durable)`: a durable store is compiled in (the `sqlite` or the `postgres` feature),
//!   instead of `any(feature = "sqlite", feature = "postgres")`.
//! - `cfg(http)`: an HTTP client is built (the `openai`, `anthropic`, `a2a` or `mcp` feature),
//!   instead of `any(feature = "openai", feature = "anthropic", feature = "a2a", feature = "mcp")`.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(durable)");
    if on("SQLITE") || on("POSTGRES") {
        println!("cargo::rustc-cfg=durable");
    }
    println!("cargo::rustc-check-cfg=cfg(http)");
    if on("OPENAI") || on("ANTHROPIC") || on("A2A") || on("MCP") {
        println!("cargo::rustc-cfg=http");
    }
}

/// Whether feature `name` (upper case, as Cargo passes it) is on.
fn on(name: &str) -> bool {
    std::env::var_os(format!("CARGO_FEATURE_{name}")).is_some()
}
