use agent_toolkit::prelude::*;

/// Looks up a key.
#[tool]
fn lookup(#[preset] #[ctx] key: String) -> String {
    key
}

fn main() {}
