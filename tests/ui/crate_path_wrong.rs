use agent_toolkit::prelude::*;

mod elsewhere {}

/// The path leads to a module that is not agent_toolkit: the error is at the path.
#[tool(crate = "elsewhere")]
fn lost(word: String) -> String {
    word
}

fn main() {}
