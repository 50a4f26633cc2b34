use agent_toolkit::prelude::*;

struct Credentials {
    token: String,
}

/// Calls an API.
#[tool]
fn call_api(path: String, #[preset] creds: Credentials) -> String {
    format!("{path} {}", creds.token)
}

fn main() {}
