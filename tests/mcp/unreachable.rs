//! Servers that cannot be started or reached: a clear error at once, naming what was tried.

use agent_toolkit::mcp::{McpImport, McpTarget};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_servers_give_clear_errors() {
    let missing = McpImport::connect(McpTarget::command("/nonexistent/mcp-server", ["--x"]), "x")
        .await
        .unwrap_err();
    let text = missing.to_string();
    assert!(
        text.contains("could not start the MCP server `/nonexistent/mcp-server --x`"),
        "{text}"
    );
    let port = crate::peers::free_port();
    let refused = McpImport::connect(McpTarget::url(format!("http://127.0.0.1:{port}/mcp")), "x")
        .await
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("could not connect to the MCP server"),
        "{refused}"
    );
}
