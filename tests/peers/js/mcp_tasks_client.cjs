// The official TypeScript MCP client (@modelcontextprotocol/sdk 1.x) using our server's MCP
// tasks through its experimental tasks API; run by tests/mcp/tasks.rs against
// `mcp-task-server` (tests/mcp/task_server.rs) over streamable HTTP.
//
// Usage: node mcp_tasks_client.cjs --url URL
//
// Lists the tools (the SDK learns from `execution.taskSupport` which tools run as tasks), then
// `callToolStream` of `slow_report` without saying `task`: the SDK makes it a task-augmented
// call because the listing said so, polls `tasks/get` and fetches `tasks/result`; records each
// message it yields. Then a long task is cancelled with `cancelTask`, `listTasks` lists both,
// and a plain `callTool` of the background tool answers with its result. Prints one JSON
// report line; observations are recorded, not judged: the Rust test asserts on them.
"use strict";

const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

function textOf(result) {
  return (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

async function main() {
  const url = process.argv[process.argv.indexOf("--url") + 1];
  const report = { errors: [] };
  const client = new Client(
    { name: "tasks-check", version: "1.0.0" },
    { capabilities: { tasks: { list: {}, cancel: {} } } },
  );
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    report.protocol_version = client.transport.protocolVersion ?? null;
    report.server_tasks = client.getServerCapabilities()?.tasks ?? null;
    const tools = await client.listTools();
    report.task_support = Object.fromEntries(
      tools.tools.map((t) => [t.name, t.execution?.taskSupport ?? null]),
    );

    report.stream = [];
    const stream = client.experimental.tasks.callToolStream({
      name: "slow_report",
      arguments: { topic: "js", seconds: 1 },
    });
    for await (const message of stream) {
      if (message.type === "taskCreated" || message.type === "taskStatus") {
        report.stream.push([message.type, message.task.status]);
        report.task_id = message.task.taskId;
      } else if (message.type === "result") {
        report.stream.push(["result", textOf(message.result), message.result.isError ?? false]);
      } else {
        report.stream.push([message.type, String(message.error?.message ?? message.error)]);
      }
    }

    let long = null;
    for await (const message of client.experimental.tasks.callToolStream(
      { name: "slow_report", arguments: { topic: "never", seconds: 60 } },
    )) {
      if (message.type === "taskCreated") {
        long = message.task.taskId;
        break;
      }
    }
    const cancelled = await client.experimental.tasks.cancelTask(long);
    report.cancelled = cancelled.status;
    report.cancelled_get = (await client.experimental.tasks.getTask(long)).status;
    const listed = await client.experimental.tasks.listTasks();
    report.listed = listed.tasks.map((t) => t.taskId);
    report.long_id = long;

    const plain = await client.callTool({ name: "slow_report", arguments: { topic: "plain", seconds: 0 } });
    report.plain = [textOf(plain), plain.isError ?? false];
  } catch (error) {
    report.errors.push(String(error?.stack ?? error));
  }
  console.log(JSON.stringify(report));
  await client.close().catch(() => {});
}

main();
