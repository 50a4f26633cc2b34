use agent_toolkit::prelude::*;

/// Parameters with attribute mistakes.
#[tool]
fn lookup(
    #[arg(rename = "q")]
    #[arg(rename = "query")]
    query: String,
    #[arg(rename = "")] empty: String,
    #[ctx]
    #[arg(rename = "info")]
    call: CallInfo,
    #[preset(key)] key: String,
    #[ctx]
    #[ctx]
    token: CancellationToken,
    #[arg] limit: u32,
    #[arg(rename = "q")] other: String,
) -> String {
    let _ = (empty, call, key, token, limit, other);
    query
}

fn main() {}
