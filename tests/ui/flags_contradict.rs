use agent_toolkit::prelude::*;

/// Deletes a file.
#[tool(destructive, idempotent, read_only)]
fn delete(path: String) -> String {
    path
}

/// Reads a file; `read_only = false` turns the flag off, so this is no contradiction.
#[tool(read_only = false, destructive)]
fn truncate(path: String) -> String {
    path
}

/// Rebuilds the index after the calls before it, in the background, once approved: these
/// combinations each mean something and compile.
#[tool(background, sequential, requires_approval, retries = 1, timeout = "1m")]
async fn reindex() -> String {
    String::new()
}

fn main() {
    let _ = Toolkit::builder().register(Delete).register(Truncate).register(Reindex);
}
