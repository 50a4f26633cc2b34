use agent_toolkit::prelude::*;

/// A budget of nothing.
#[tool(max_output_bytes = 0)]
fn nothing() -> String {
    String::new()
}

/// A budget that is not a number.
#[tool(max_output_bytes = "64KiB")]
fn words() -> String {
    String::new()
}

fn main() {}
