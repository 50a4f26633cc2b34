// An MCP server written with the official TypeScript SDK (@modelcontextprotocol/sdk 1.x, the
// `McpServer` API), imported by our client in tests/mcp/js.rs. The SDK speaks the 2025-11-25
// handshake era only: it knows nothing of `server/discover` (a JSON-RPC "method not found" over
// stdio; over HTTP the request never reaches it, see below).
//
// Usage: node mcp_server.cjs              (stdio; stdout carries MCP messages only)
//        node mcp_server.cjs --http PORT  (streamable HTTP at http://127.0.0.1:PORT/mcp with
//                                          sessions; prints `READY <port>` once listening)
//
// Tools:
//   add(a, b)        integers → structured output {sum} (with its output schema), and the same
//                    JSON as text;
//   countdown(n)     reports progress n times (total n, message "<k> left"), then "liftoff";
//   fail()           throws; the SDK answers with an `isError` result;
//   enable_extra()   registers the tool `extra(word)` → "WORD!" on this server at run time; the
//                    SDK then sends `notifications/tools/list_changed` itself.
//
// Over HTTP every session has its own `McpServer` (as in the SDK's own examples: one server
// connects to one transport), so `extra` appears in the session that asked for it. A request
// without a known session that is not `initialize` is answered as the SDK's examples answer it:
// HTTP 400 with the JSON-RPC error -32000 "Bad Request: No valid session ID provided".
//
// With PEER_LOG=1 every message (and, over HTTP, every request with its status) is logged on
// stderr. The scripts resolve the SDK through NODE_PATH (target/js/node_modules, made by
// setup.sh).
"use strict";

const crypto = require("crypto");
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { StreamableHTTPServerTransport } = require("@modelcontextprotocol/sdk/server/streamableHttp.js");
const { createMcpExpressApp } = require("@modelcontextprotocol/sdk/server/express.js");
const { isInitializeRequest } = require("@modelcontextprotocol/sdk/types.js");
const z = require("zod");

const log = process.env.PEER_LOG ? (...a) => console.error("[mcp_server.cjs]", ...a) : null;

/** Connect `server` to `transport`, logging the messages both ways with PEER_LOG. */
async function connect(server, transport) {
  await server.connect(transport);
  if (!log) return;
  const received = transport.onmessage;
  transport.onmessage = (message, extra) => {
    log("<", JSON.stringify(message));
    received(message, extra);
  };
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    log(">", JSON.stringify(message));
    return send(message, options);
  };
}

function build() {
  const server = new McpServer({ name: "js-peer", version: "1.0.0" });

  server.registerTool(
    "add",
    {
      description: "Add two integers.",
      inputSchema: { a: z.number().int(), b: z.number().int() },
      outputSchema: { sum: z.number().int() },
      annotations: { readOnlyHint: true, idempotentHint: true },
    },
    async ({ a, b }) => {
      const output = { sum: a + b };
      return { content: [{ type: "text", text: JSON.stringify(output) }], structuredContent: output };
    },
  );

  server.registerTool(
    "countdown",
    {
      description: "Count down from n, reporting progress.",
      inputSchema: { n: z.number().int().min(1) },
    },
    async ({ n }, extra) => {
      const progressToken = extra._meta?.progressToken;
      for (let i = 1; i <= n; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        if (progressToken !== undefined) {
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken, progress: i, total: n, message: `${n - i} left` },
          });
        }
      }
      return { content: [{ type: "text", text: "liftoff" }] };
    },
  );

  server.registerTool("fail", { description: "Always fails." }, async () => {
    throw new Error("the tool failed on purpose");
  });

  server.registerTool("enable_extra", { description: "Add the tool `extra`." }, async () => {
    if (!extraRegistered) {
      extraRegistered = true;
      // Registering on a connected server makes the SDK send notifications/tools/list_changed.
      server.registerTool(
        "extra",
        { description: "Shout a word.", inputSchema: { word: z.string() } },
        async ({ word }) => ({ content: [{ type: "text", text: `${word.toUpperCase()}!` }] }),
      );
    }
    return { content: [{ type: "text", text: "extra enabled" }] };
  });
  let extraRegistered = false;

  return server;
}

async function serveStdio() {
  await connect(build(), new StdioServerTransport());
}

function serveHttp(port) {
  const app = createMcpExpressApp({ host: "127.0.0.1" });
  const transports = new Map(); // session id → transport

  if (log) {
    app.use((req, res, next) => {
      const request = `HTTP ${req.method} session ${req.headers["mcp-session-id"] ?? "-"}`;
      log(request, req.body?.method ?? "");
      res.on("finish", () => log(request, "finished", res.statusCode));
      next();
    });
  }

  const noSession = (res, message) =>
    res.status(400).json({ jsonrpc: "2.0", error: { code: -32000, message }, id: null });

  app.post("/mcp", async (req, res) => {
    const sessionId = req.headers["mcp-session-id"];
    let transport = sessionId ? transports.get(sessionId) : undefined;
    if (!transport) {
      if (sessionId || !isInitializeRequest(req.body)) {
        return noSession(res, "Bad Request: No valid session ID provided");
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        onsessioninitialized: (id) => transports.set(id, transport),
      });
      transport.onclose = () => {
        if (transport.sessionId) transports.delete(transport.sessionId);
      };
      await connect(build(), transport);
    }
    await transport.handleRequest(req, res, req.body);
  });

  // The standalone SSE stream (GET) and the end of a session (DELETE).
  const bySession = async (req, res) => {
    const transport = transports.get(req.headers["mcp-session-id"]);
    if (!transport) return noSession(res, "Bad Request: Invalid or missing session ID");
    await transport.handleRequest(req, res);
  };
  app.get("/mcp", bySession);
  app.delete("/mcp", bySession);

  const listener = app.listen(port, "127.0.0.1", () => console.log(`READY ${port}`));
  listener.on("error", (e) => {
    console.error(e);
    process.exit(1);
  });
}

const args = process.argv.slice(2);
if (args[0] === "--http") {
  serveHttp(Number(args[1]));
} else {
  serveStdio().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
