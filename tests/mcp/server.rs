//! `mcp-test-server`: the fixture toolkit served over stdio, for the MCP tests (peers and raw
//! protocol checks start it as a child process). Not an example: see `examples/mcp_server.rs`.

mod fixture;

#[tokio::main]
async fn main() {
    if let Err(e) = fixture::toolkit().serve_mcp_stdio().await {
        eprintln!("mcp-test-server: {e}");
        std::process::exit(1);
    }
}
