//! MCP (Model Context Protocol) interop through `rmcp`: serve a toolkit, import MCP tools.
