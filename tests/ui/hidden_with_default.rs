use agent_toolkit::prelude::*;

/// Uses an API key.
#[tool]
fn call_api(#[preset] #[arg(default = String::new(), description = "The key")] key: String) -> String {
    key
}

fn main() {}
