// The official TypeScript MCP client (@modelcontextprotocol/sdk 1.x, `Client`) driving our
// server; run by tests/mcp/js.rs against the fixture toolkit (tests/mcp/fixture.rs).
//
// Usage: node mcp_client.cjs --stdio EXE   (StdioClientTransport: spawns EXE)
//        node mcp_client.cjs --url URL     (StreamableHTTPClientTransport)
//
// The SDK knows only the handshake era (its newest revision is 2025-11-25): it sends
// `initialize` and nothing else to settle the revision. Then it lists the tools, calls `add`
// (the SDK checks the structured content against the tool's output schema), `slow` with a
// progress callback, `fail` (an `isError` result), `nope` (refused by the server), and `unlock`
// (which switches on a group for this session: the server sends
// `notifications/tools/list_changed`), lists again and calls the tool that appeared.
//
// Prints one JSON report line on stdout. Observations are recorded, not judged: the Rust test
// asserts on them, so a failure shows what was actually seen. What the SDK raises goes under
// "errors", what it reports to `Client.onerror` under "client_errors". "wire" lists every
// message's method (or `result`/`error <code>` for a response) in the order it crossed the
// transport, `>` sent and `<` received.
//
// A known race in this SDK (modelcontextprotocol/typescript-sdk#2580, open): it answers a
// response at once but dispatches a notification a microtask later, so a progress notification
// read in the same chunk as its call's response finds the progress handler gone; the SDK then
// reports "Received a progress notification for an unknown token" to `onerror` instead of
// calling `onprogress`. The wire shows the notification arrived before the response; the
// notifications lost that way are recorded (with their params) under `slow.late`, and whether
// they carried the call's own token, so the test can account for every one.
"use strict";

const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { McpError, ToolListChangedNotificationSchema } = require("@modelcontextprotocol/sdk/types.js");

/** `inner` with every message it carries recorded in `report.wire`, and the revision asked for
 * and answered in `initialize` in `report.initialize`. */
function recording(inner, report) {
  const describe = (m) => m.method ?? ("error" in m ? `error ${m.error.code}` : "result");
  const initializeIds = new Set();
  const outer = {
    start: () => inner.start(),
    close: () => inner.close(),
    send: (message, options) => {
      report.wire.push(`> ${describe(message)}`);
      if (message.method === "tools/call") {
        report.progress_tokens[message.params.name] = message.params._meta?.progressToken ?? null;
      }
      if (message.method === "initialize") {
        initializeIds.add(message.id);
        report.initialize.requested = message.params.protocolVersion;
      }
      return inner.send(message, options);
    },
    get sessionId() {
      return inner.sessionId;
    },
    setProtocolVersion: (version) => inner.setProtocolVersion?.(version),
  };
  inner.onmessage = (message, extra) => {
    report.wire.push(`< ${describe(message)}`);
    if (initializeIds.has(message.id) && message.result) {
      report.initialize.answered = message.result.protocolVersion;
    }
    outer.onmessage?.(message, extra);
  };
  inner.onclose = () => outer.onclose?.();
  inner.onerror = (e) => outer.onerror?.(e);
  return outer;
}

const textOf = (result) =>
  result.content
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");

async function main() {
  const args = process.argv.slice(2);
  const report = { errors: [], wire: [], initialize: {}, progress_tokens: {} };
  let inner;
  if (args[0] === "--stdio") {
    inner = new StdioClientTransport({ command: args[1], stderr: "inherit" });
  } else if (args[0] === "--url") {
    inner = new StreamableHTTPClientTransport(new URL(args[1]));
  } else {
    throw new Error("usage: mcp_client.cjs --stdio EXE | --url URL");
  }

  const client = new Client({ name: "js-check", version: "1.0.0" });
  let listChanged;
  const listChangedSeen = new Promise((resolve) => (listChanged = resolve));
  let listChangedCount = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    listChangedCount += 1;
    listChanged();
  });

  const UNKNOWN_TOKEN = "Received a progress notification for an unknown token: ";
  const late = [];
  report.client_errors = [];
  client.onerror = (e) => {
    const message = String(e?.message ?? e);
    if (message.startsWith(UNKNOWN_TOKEN)) {
      late.push(JSON.parse(message.slice(UNKNOWN_TOKEN.length)).params);
    } else {
      report.client_errors.push(message);
    }
  };

  const step = async (name, body) => {
    try {
      await body();
    } catch (e) {
      report.errors.push(`${name}: ${e?.constructor?.name}: ${e?.message ?? e}`);
    }
  };

  const started = performance.now();
  await client.connect(recording(inner, report));
  report.connect_ms = Math.round(performance.now() - started);
  report.server_name = client.getServerVersion()?.name ?? null;
  report.list_changed_capability = client.getServerCapabilities()?.tools?.listChanged === true;

  await step("list tools", async () => {
    const { tools } = await client.listTools();
    report.tools = tools.map((t) => t.name);
    const add = tools.find((t) => t.name === "add");
    report.add_output_schema = add.outputSchema ?? null;
    report.add_annotations = add.annotations ?? null;
  });

  await step("call add", async () => {
    const result = await client.callTool({ name: "add", arguments: { a: 2, b: 3 } });
    report.add = {
      is_error: result.isError ?? false,
      structured: result.structuredContent ?? null,
      text: textOf(result),
    };
  });

  await step("call slow", async () => {
    const progress = [];
    const wireFrom = report.wire.length;
    // 150 ms between steps: only the last notification can share a chunk with the response.
    const steps = { steps: 3, delay_ms: 150 };
    const result = await client.callTool({ name: "slow", arguments: steps }, undefined, {
      onprogress: (p) => progress.push([p.progress, p.total, p.message]),
    });
    // Let notifications already read get dispatched (those the SDK drops land in `late`).
    await new Promise((resolve) => setTimeout(resolve, 50));
    report.slow = {
      text: textOf(result),
      progress,
      late: late.map((p) => [p.progress, p.total, p.message]),
      // The dropped ones carried this call's token (they were late, not foreign).
      late_tokens_match: late.every((p) => p.progressToken === report.progress_tokens.slow),
      wire: report.wire.slice(wireFrom),
    };
  });

  await step("call fail", async () => {
    const result = await client.callTool({ name: "fail", arguments: {} });
    report.fail = { is_error: result.isError ?? false, text: textOf(result) };
  });

  await step("call nope", async () => {
    try {
      await client.callTool({ name: "nope", arguments: {} });
      report.call_nope = { refused: false };
    } catch (e) {
      if (!(e instanceof McpError)) throw e;
      report.call_nope = { refused: true, code: e.code, message: e.message };
    }
  });

  await step("unlock", async () => {
    const result = await client.callTool({ name: "unlock", arguments: {} });
    report.unlock = textOf(result);
    const timeout = new Promise((resolve) => setTimeout(resolve, 5000).unref());
    await Promise.race([listChangedSeen, timeout]);
    report.list_changed_received = listChangedCount;
    const { tools } = await client.listTools();
    report.tools_after_unlock = tools.map((t) => t.name);
    if (report.tools_after_unlock.includes("secret")) {
      report.secret = textOf(await client.callTool({ name: "secret", arguments: {} }));
    }
  });

  await client.close();
  return report;
}

main().then(
  (report) => process.stdout.write(`${JSON.stringify(report)}\n`, () => process.exit(0)),
  (e) => process.stdout.write(`${JSON.stringify({ fatal: String(e?.stack ?? e) })}\n`, () => process.exit(1)),
);
