//! The MCP types the public API hands out, so that using it needs no `rmcp` dependency of your
//! own: what [`McpClient`](super::McpClient) lists and returns, what
//! [`McpHttpService::with_config`](super::McpHttpService::with_config) takes.
//!
//! They are `rmcp`'s own types (the official Rust MCP SDK, which this module's protocol work
//! is built on), re-exported item by item. The crate itself is not re-exported: a public path
//! to it would lead through to its dependencies (serde among them), and the compiler would then
//! name those paths in the errors the `#[tool]` macro reports.
//!
//! ```no_run
//! use agent_toolkit::mcp::types::ContentBlock;
//! use agent_toolkit::mcp::{McpClient, McpTarget};
//!
//! # async fn run() -> Result<(), agent_toolkit::mcp::McpError> {
//! let client = McpClient::new(McpTarget::url("https://tools.example.com/mcp"));
//! let result = client.call_tool("add", serde_json::json!({"a": 1, "b": 2})).await?;
//! for block in &result.content {
//!     if let ContentBlock::Text(text) = block {
//!         println!("{}", text.text);
//!     }
//! }
//! # Ok(())
//! # }
//! ```

pub use rmcp::model::{
    Annotations, AudioContent, CallToolResult, ContentBlock, EmbeddedResource, Icon, ImageContent,
    Implementation, JsonObject, MetaObject, Resource, ResourceContents, TextContent, Tool,
    ToolAnnotations,
};
pub use rmcp::transport::StreamableHttpServerConfig;
/// OAuth token storage for [`McpOAuth::credential_store`](super::McpOAuth::credential_store):
/// the trait, the credentials it keeps, the error it returns, and the in-memory default.
pub use rmcp::transport::auth::{
    AuthError, CredentialStore, InMemoryCredentialStore, StoredCredentials,
};
