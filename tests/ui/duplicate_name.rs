use agent_toolkit::prelude::*;

/// Searches.
#[tool(name = "search", name = "find")]
fn search(query: String) -> String {
    query
}

fn main() {}
