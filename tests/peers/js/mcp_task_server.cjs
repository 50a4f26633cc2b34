// An MCP server written with the official TypeScript SDK (@modelcontextprotocol/sdk 1.x) whose
// tools run only as tasks (its experimental tasks API: `registerToolTask`, taskSupport
// "required", an `InMemoryTaskStore`), over stdio; imported by our client in tests/mcp/tasks.rs
// with `McpClientOptions::run_as_tasks`.
//
// Tools:
//   brew(kind, ms)   a task that completes after `ms` with the text "<kind> is ready";
//   burn()           a task that fails after 50 ms with an `isError` result "burnt";
//   add(a, b)        an ordinary tool (no task) → "<a + b>".
//
// Usage: node mcp_task_server.cjs   (stdio; stdout carries MCP messages only)
"use strict";

const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { InMemoryTaskStore } = require("@modelcontextprotocol/sdk/experimental/tasks");
const z = require("zod");

const taskStore = new InMemoryTaskStore();
const server = new McpServer(
  { name: "js-task-server", version: "1.0.0" },
  { capabilities: { tasks: { requests: { tools: { call: {} } }, list: {}, cancel: {} } }, taskStore },
);

function taskTool(name, description, inputSchema, run) {
  server.experimental.tasks.registerToolTask(
    name,
    { description, inputSchema },
    {
      async createTask(args, { taskStore, taskRequestedTtl }) {
        const task = await taskStore.createTask({ ttl: taskRequestedTtl });
        (async () => {
          const [status, result] = await run(args);
          await taskStore.storeTaskResult(task.taskId, status, result);
        })();
        return { task };
      },
      async getTask(_args, { taskId, taskStore }) {
        return await taskStore.getTask(taskId);
      },
      async getTaskResult(_args, { taskId, taskStore }) {
        return await taskStore.getTaskResult(taskId);
      },
    },
  );
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

taskTool("brew", "Brew something; takes `ms`.", { kind: z.string(), ms: z.number() }, async ({ kind, ms }) => {
  await sleep(ms);
  return ["completed", { content: [{ type: "text", text: `${kind} is ready` }] }];
});

taskTool("burn", "Fail after a moment.", {}, async () => {
  await sleep(50);
  return ["failed", { content: [{ type: "text", text: "burnt" }], isError: true }];
});

server.registerTool("add", { description: "Add two integers.", inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({
  content: [{ type: "text", text: String(a + b) }],
}));

server.connect(new StdioServerTransport());
