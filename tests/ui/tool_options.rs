use agent_toolkit::prelude::*;

#[tool(name = "has space", description = "", group = "", read_only = "yes", retries = 5000000000, timeout = "0s")]
fn options(a: String) -> String {
    a
}

/// Repeats options.
#[tool(group = "a", group = "b", sequential, sequential = true, description = "x", description = "y")]
fn repeated() {}

fn main() {}
