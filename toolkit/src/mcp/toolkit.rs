//! The two ways most users serve MCP, as methods of [`Toolkit`]: over stdio, and as a
//! streamable-HTTP service.

use super::error::McpError;
use super::http::McpHttpService;
use super::server::McpServer;
use crate::toolkit::Toolkit;

impl Toolkit {
    /// Serve this toolkit over MCP on stdin/stdout until the client disconnects (stdin
    /// closes). Log to stderr only: stdout carries the protocol.
    ///
    /// A line that is not JSON gets a `-32700` parse error (with `"id": null`), one that is
    /// JSON but not a JSON-RPC message a `-32600`; the server keeps serving either way.
    pub async fn serve_mcp_stdio(&self) -> Result<(), McpError> {
        McpServer::new(self).serve_stdio().await
    }

    /// A streamable-HTTP MCP endpoint serving this toolkit, to mount in an axum router
    /// (`Router::new().nest_service("/mcp", toolkit.mcp_http_service())`). Each client session
    /// gets its own [`view`](Toolkit::view) of the toolkit. See
    /// [`McpHttpService`].
    pub fn mcp_http_service(&self) -> McpHttpService {
        McpHttpService::new(McpServer::new(self))
    }
}
