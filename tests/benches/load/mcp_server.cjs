// The official TypeScript MCP SDK's server for the load bench (tests/benches/load.rs):
// @modelcontextprotocol/sdk 1.x, `McpServer` with one tool, `add(a, b) -> a + b`, over
// streamable HTTP at http://127.0.0.1:PORT/mcp in the SDK's express app. Prints `READY <port>`
// once listening.
//
// Usage: node mcp_server.cjs PORT              (sessions: one McpServer and
//                                               StreamableHTTPServerTransport per session, as in
//                                               the SDK's examples and tests/peers/js/mcp_server.cjs)
//        node mcp_server.cjs PORT --stateless  (the SDK's stateless example: a server and a
//                                               transport per request, sessionIdGenerator
//                                               undefined, enableJsonResponse)
//
// Resolves the SDK through NODE_PATH (target/js/node_modules, made by tests/peers/setup.sh).
"use strict";

const crypto = require("crypto");
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StreamableHTTPServerTransport } = require("@modelcontextprotocol/sdk/server/streamableHttp.js");
const { createMcpExpressApp } = require("@modelcontextprotocol/sdk/server/express.js");
const { isInitializeRequest } = require("@modelcontextprotocol/sdk/types.js");
const z = require("zod");

function build() {
  const server = new McpServer({ name: "ts-load", version: "1.0.0" });
  server.registerTool(
    "add",
    { description: "Add two integers.", inputSchema: { a: z.number().int(), b: z.number().int() } },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
  );
  return server;
}

const port = Number(process.argv[2]);
const stateless = process.argv.slice(3).includes("--stateless");
const app = createMcpExpressApp({ host: "127.0.0.1" });
const noSession = (res) =>
  res.status(400).json({ jsonrpc: "2.0", error: { code: -32000, message: "Bad Request: No valid session ID provided" }, id: null });

if (stateless) {
  app.post("/mcp", async (req, res) => {
    const server = build();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => {
      transport.close();
      server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
} else {
  const transports = new Map(); // session id → transport
  app.post("/mcp", async (req, res) => {
    const sessionId = req.headers["mcp-session-id"];
    let transport = sessionId ? transports.get(sessionId) : undefined;
    if (!transport) {
      if (sessionId || !isInitializeRequest(req.body)) return noSession(res);
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        onsessioninitialized: (id) => transports.set(id, transport),
      });
      transport.onclose = () => {
        if (transport.sessionId) transports.delete(transport.sessionId);
      };
      await build().connect(transport);
    }
    await transport.handleRequest(req, res, req.body);
  });
  const bySession = async (req, res) => {
    const transport = transports.get(req.headers["mcp-session-id"]);
    if (!transport) return noSession(res);
    await transport.handleRequest(req, res);
  };
  app.get("/mcp", bySession);
  app.delete("/mcp", bySession);
}

const listener = app.listen(port, "127.0.0.1", () => console.log(`READY ${port}`));
listener.on("error", (e) => {
  console.error(e);
  process.exit(1);
});
