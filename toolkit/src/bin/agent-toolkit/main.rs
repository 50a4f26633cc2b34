//! `agent-toolkit`: inspect and call the tools of A2A and MCP servers from the command line.
fn main() {}
