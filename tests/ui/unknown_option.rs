use agent_toolkit::prelude::*;

/// Does things.
#[tool(read_olny, group = "g")]
fn do_things() -> String {
    String::new()
}

fn main() {}
