// A server written the way design document 000 describes it ("服务端实现"): an `AgentExecutor`
// named `LLMAgentExecutor` on the official A2A JS SDK, which takes the client's tools out of the
// message with the document's `extractToolsFromMessage`, keeps the history per `contextId`, binds
// the tools to its LLM and answers with a **Message**: tool calls in a data part in LangChain's
// shape `{id, name, args, type: "tool_call"}`, or the final answer as text.
//
// No hosted model runs here, so `llm` is a small deterministic script with LangChain's surface
// (`bind({tools})`, `stream(messages)` yielding AI message chunks). It reads the last human
// message:
//   - tool results (`Tool results: [...]`, `Tool "X" returned: ...`, `Tool X failed: ...`) →
//     the answer, quoting every result it was given: `Final answer: get_weather -> {...} | ...`;
//   - `call NAME with {json}` (several joined by ` ; `) → those tool calls, with the text "Let me
//     use my tools." next to them, as LangChain chat models return content beside tool_calls;
//     a NAME the client did not send as a tool gets a plain-text refusal;
//   - `unknown shape` → tool calls in a shape that is neither LangChain's nor OpenAI's (a broken
//     server, for the client's error handling);
//   - `say nothing` → no text and no calls: the reply holds only an empty `tool_calls` list;
//   - anything else → `You said: <text>`.
//
// Usage: node doc_server.cjs PORT v1|v03
// Prints `READY <port>` once listening.
"use strict";

const crypto = require("crypto");
const { load } = require("./sdk.cjs");

const port = Number(process.argv[2]);
// The document's log lines, shown with PEER_LOG=1 (stderr is the test's own output).
const log = process.env.PEER_LOG ? (...a) => console.error(...a) : () => {};
const sdk = load(process.argv[3] || "v1");
const express = require("express");

// ---- src/tools.ts of the document ----------------------------------------------------------

/** 从 A2A Message 的 parts 中提取工具定义 (the document's function, as written). */
function extractToolsFromMessage(message) {
  log("[ToolExtractor] Extracting tools from message...");
  for (const part of message.parts) {
    if (part.kind !== "data") continue;
    const dataPart = part;
    if (
      dataPart.data &&
      typeof dataPart.data === "object" &&
      "tools" in dataPart.data &&
      Array.isArray(dataPart.data.tools)
    ) {
      const tools = dataPart.data.tools;
      if (validateTools(tools)) {
        log(`[ToolExtractor] Found ${tools.length} valid tools in DataPart`);
        return tools;
      } else {
        log("[ToolExtractor] Tools found but validation failed");
      }
    }
  }
  log("[ToolExtractor] No tools found in message");
  return [];
}

function validateTools(tools) {
  if (!Array.isArray(tools) || tools.length === 0) {
    return false;
  }
  for (const tool of tools) {
    if (
      typeof tool !== "object" ||
      tool === null ||
      tool.type !== "function" ||
      typeof tool.function !== "object" ||
      typeof tool.function.name !== "string" ||
      typeof tool.function.description !== "string" ||
      typeof tool.function.parameters !== "object"
    ) {
      return false;
    }
  }
  return true;
}

function convertToolsForLangChain(tools) {
  return tools.map((tool) => ({
    type: "function",
    function: {
      name: tool.function.name,
      description: tool.function.description,
      parameters: tool.function.parameters,
    },
  }));
}

// ---- LangChain stand-ins -------------------------------------------------------------------

/** A2A history → LangChain messages: user text → human, agent text + tool calls → AI. */
function a2aMessagesToLangChain(history) {
  return history.map((m) => {
    const content = m.parts.filter((p) => p.kind === "text").map((p) => p.text).join("\n");
    if (m.role === "agent") {
      const calls = m.parts
        .filter((p) => p.kind === "data" && p.data && Array.isArray(p.data.tool_calls))
        .flatMap((p) => p.data.tool_calls);
      return { type: "ai", content, tool_calls: calls };
    }
    return { type: "human", content };
  });
}

const RESULTS = /^(Tool results:|Tool "[^"]+" returned:|Tool \S+ failed:)/;

/** The scripted chat model (see the top of this file). */
class ScriptedChatModel {
  constructor(tools = []) {
    this.tools = tools;
  }

  bind({ tools }) {
    return new ScriptedChatModel(tools);
  }

  async *stream(messages) {
    yield this.respond(messages);
  }

  respond(messages) {
    const last = messages[messages.length - 1];
    const text = last.content.trim();
    if (RESULTS.test(text)) {
      return { type: "ai", content: `Final answer: ${describeResults(text)}`, tool_calls: [] };
    }
    if (text.includes("say nothing")) {
      return { type: "ai", content: "", tool_calls: [] };
    }
    if (text.includes("unknown shape")) {
      return {
        type: "ai",
        content: "",
        tool_calls: [],
        broken_calls: [{ tool: "get_weather", input: { location: "Paris" } }],
      };
    }
    const offered = new Set(this.tools.map((t) => t.function.name));
    const calls = [];
    for (const m of text.matchAll(/call\s+([A-Za-z0-9_-]+)\s+with\s+(\{.*?\})(?=\s*;|\s*$)/g)) {
      if (!offered.has(m[1])) {
        return { type: "ai", content: `I have no tool named ${m[1]}.`, tool_calls: [] };
      }
      calls.push({
        id: `call_${crypto.randomUUID().slice(0, 8)}`,
        name: m[1],
        args: JSON.parse(m[2]),
        type: "tool_call",
      });
    }
    if (calls.length > 0) {
      return { type: "ai", content: "Let me use my tools.", tool_calls: calls };
    }
    return { type: "ai", content: `You said: ${text}`, tool_calls: [] };
  }
}

/** What the results text says, one `name -> result` per result. */
function describeResults(text) {
  if (text.startsWith("Tool results:")) {
    const results = JSON.parse(text.slice("Tool results:".length));
    return results
      .map((r) => ("error" in r ? `${r.name} failed: ${r.error}` : `${r.name} -> ${JSON.stringify(r.result)}`))
      .join(" | ");
  }
  return text;
}

// ---- index.ts of the document --------------------------------------------------------------

const contexts = new Map(); // contextId -> A2A messages

class LLMAgentExecutor {
  constructor() {
    this.llm = new ScriptedChatModel();
  }

  async execute(requestContext, eventBus) {
    const userMessage = sdk.toDoc(requestContext.userMessage);
    const taskId = requestContext.taskId;
    const contextId = requestContext.contextId;

    log(`[LLMAgentExecutor] Processing message ${userMessage.messageId} (task ${taskId})`);

    // ========== 提取工具定义 ==========
    const toolDefinitions = extractToolsFromMessage(userMessage);
    if (toolDefinitions.length > 0) {
      log(
        `[LLMAgentExecutor] Extracted ${toolDefinitions.length} tools:`,
        toolDefinitions.map((t) => t.function.name).join(", "),
      );
    }
    // =================================

    // The document elides "Task 初始化和 status update 代码" and answers with a Message
    // (`response.message` on the client), so no task is published here.

    const historyForLLM = contexts.get(contextId) || [];
    historyForLLM.push(userMessage);
    contexts.set(contextId, historyForLLM);

    const langchainMessages = a2aMessagesToLangChain(historyForLLM);

    try {
      // ========== 动态绑定工具 ==========
      let llmToUse = this.llm;
      if (toolDefinitions.length > 0) {
        const langchainTools = convertToolsForLangChain(toolDefinitions);
        llmToUse = this.llm.bind({ tools: langchainTools });
        log("[LLMAgentExecutor] Bound tools to LLM");
      }
      // ==================================

      const stream = await llmToUse.stream(langchainMessages);

      // The document's "流式处理代码" is elided: collect the chunks, then answer with one
      // message holding the text and, when the model called tools, the calls in a data part.
      let ai = null;
      for await (const chunk of stream) ai = chunk;
      const parts = [];
      if (ai.content) parts.push({ kind: "text", text: ai.content });
      // The calls' part is left out when there are none, unless the message would be empty.
      if (ai.tool_calls.length > 0 || (!ai.content && !ai.broken_calls)) {
        parts.push({
          kind: "data",
          data: { tool_calls: ai.tool_calls },
          metadata: { type: "tool-calls", format: "langchain" },
        });
      }
      if (ai.broken_calls) {
        parts.push({ kind: "data", data: { tool_calls: ai.broken_calls }, metadata: { type: "tool-calls" } });
      }
      const reply = {
        kind: "message",
        role: "agent",
        messageId: crypto.randomUUID(),
        contextId,
        parts,
      };
      historyForLLM.push(reply);
      eventBus.publish(sdk.agentEvent(sdk.fromDoc(reply)));
    } catch (error) {
      console.error("[LLMAgentExecutor] error:", error);
      eventBus.publish(
        sdk.agentEvent(
          sdk.fromDoc({
            kind: "message",
            role: "agent",
            messageId: crypto.randomUUID(),
            contextId,
            parts: [{ kind: "text", text: `Error: ${error.message}` }],
          }),
        ),
      );
    } finally {
      eventBus.finished();
    }
  }

  async cancelTask() {}
}

// ---- the HTTP server -----------------------------------------------------------------------

const base = `http://127.0.0.1:${port}`;
const cardFields = {
  name: "doc-000-llm-agent",
  description: "An LLM agent that runs its clients' tools on the client (design document 000)",
  version: "1.0.0",
  capabilities: { streaming: false, pushNotifications: false },
  defaultInputModes: ["text/plain", "application/json"],
  defaultOutputModes: ["text/plain", "application/json"],
  skills: [
    { id: "chat", name: "chat", description: "Chats, with the client's tools", tags: ["llm"] },
  ],
};
const card = sdk.version === "v1"
  ? sdk.root.AgentCard.fromJSON(sdk.card(base, cardFields))
  : sdk.card(base, cardFields);

const handler = new sdk.server.DefaultRequestHandler(
  card,
  new sdk.server.InMemoryTaskStore(),
  new LLMAgentExecutor(),
);
const app = express();
app.use(
  "/.well-known/agent-card.json",
  sdk.express.agentCardHandler({ agentCardProvider: handler }),
);
app.use(
  "/a2a/jsonrpc",
  sdk.express.jsonRpcHandler({
    requestHandler: handler,
    userBuilder: sdk.express.UserBuilder.noAuthentication,
  }),
);
app.listen(port, "127.0.0.1", () => {
  console.log(`READY ${port}`);
});
