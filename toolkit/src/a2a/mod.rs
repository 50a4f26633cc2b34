//! A2A (Agent2Agent) interop: tool definitions over A2A and remote tools between agents.
