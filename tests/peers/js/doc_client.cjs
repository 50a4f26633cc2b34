// A client written the way design document 000 describes it ("客户端实现指南"), on the official
// A2A JS SDK: the document's `A2AClientAgent` sends the user text plus its tools in a DataPart
// (`metadata {type: "tool-definitions", format: "langchain"}`), reads LangChain-shaped tool calls
// `{id, name, args, type: "tool_call"}` from the reply *message*, runs them locally with
// `executeToolLocally`, sends `Tool results: [...]` back as a new message (with the tools part
// again), and returns the final answer, the first text part of the last reply message.
//
// Where the document's pseudo-code cannot run as printed, the smallest change that makes it run
// was made, each marked `000:` below:
//   - the constructor cannot `await`; the client is made in `init()`;
//   - `A2AClient.sendMessage` takes `{message}` and the message needs a `messageId` (the SDK's
//     `Message` type requires both); its answer is a JSON-RPC response, whose `result` is the
//     reply message (the document's `response.message`);
//   - `parseA2AMessageForLangChain` comes from `@a2a-llm-proxy-agent/converter`, which is not
//     published; the stand-in below returns what the document uses of it: `toolCalls` and
//     `content` (the text of `parts[0]`);
//   - the tool results message carries the `contextId` of the reply that asked for the calls.
//     The document's server keeps its history per `contextId`, so without it no server can tell
//     which conversation the results belong to; `--no-context` sends them without it, as the
//     printed code does (A2aAgentServer then starts a new conversation whose question they are,
//     as the document's own server would).
//
// `--per-call` follows the document's step 2 instead of step 4: one message per tool call,
// `Tool "NAME" returned: <json>` (with the tools part) or `Tool NAME failed: <message>` (without
// it), reading `finalResponse.message.parts[0].text` after each.
//
// With SDK "v1" (A2A 1.0) there is no `A2AClient`; `ClientFactory.createFromUrl` makes the client
// and messages go through sdk.cjs, which converts the document's 0.3 shapes.
//
// Usage: node doc_client.cjs CARD_URL v1|v03 [--no-context] [--per-call] QUESTION
// Prints one JSON report on stdout: {answer, replies, results, error?}.
"use strict";

const crypto = require("crypto");
const fs = require("fs");
const { load } = require("./sdk.cjs");

const args = process.argv.slice(2);
const cardUrl = args[0];
const sdk = load(args[1]);
const keepContext = !args.includes("--no-context");
const perCall = args.includes("--per-call");
const question = args.filter((a) => !a.startsWith("--")).slice(2).join(" ");

// ---- the document's tool definitions -------------------------------------------------------

const weatherTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Get the current weather information for a given location",
    parameters: {
      type: "object",
      properties: {
        location: { type: "string", description: "The city and state, e.g. San Francisco, CA" },
        unit: { type: "string", enum: ["celsius", "fahrenheit"], description: "The temperature unit to use" },
      },
      required: ["location"],
    },
  },
};

const readFileTool = {
  type: "function",
  function: {
    name: "read_file",
    description: "Read contents from a file",
    parameters: {
      type: "object",
      properties: {
        file_path: { type: "string", description: "Absolute path to the file" },
        encoding: { type: "string", enum: ["utf-8", "ascii", "base64"], description: "File encoding" },
      },
      required: ["file_path"],
    },
  },
};

// ---- 步骤 3: 本地工具执行 ------------------------------------------------------------------

const executed = [];

async function executeToolLocally(toolCall) {
  const { name, args } = toolCall;
  executed.push({ name, args });
  switch (name) {
    case "get_weather":
      // 000 calls a weather API here; no network in tests, so a fixed reading.
      return { location: args.location, temperature: 18, unit: args.unit || "celsius" };
    case "read_file": {
      const content = await fs.promises.readFile(args.file_path, args.encoding || "utf-8");
      return { content, size: content.length };
    }
    default:
      throw new Error(`Unknown tool: ${name}`);
  }
}

// ---- parseA2AMessageForLangChain (stand-in, see the top of this file) -----------------------

function parseA2AMessageForLangChain(message) {
  if (!message || message.kind !== "message") return null;
  const toolCalls = message.parts
    .filter((p) => p.kind === "data" && p.data && Array.isArray(p.data.tool_calls))
    .flatMap((p) => p.data.tool_calls);
  const first = message.parts[0];
  return { content: first && first.kind === "text" ? first.text : "", toolCalls };
}

// ---- 步骤 4: 完整的客户端 Agent 工作流 -------------------------------------------------------

const replies = [];
const sentResults = [];

class A2AClientAgent {
  constructor(serverUrl, tools) {
    this.serverUrl = serverUrl;
    this.tools = tools;
    this.contextId = undefined;
  }

  // 000: the document awaits `A2AClient.fromCardUrl` in the constructor.
  async init() {
    if (sdk.version === "v03") {
      this.client = await sdk.client.A2AClient.fromCardUrl(this.serverUrl);
    } else {
      const base = this.serverUrl.replace(/\/\.well-known\/agent-card\.json$/, "");
      this.client = await new sdk.client.ClientFactory().createFromUrl(base);
    }
    return this;
  }

  // 000: the document's `client.sendMessage(message)` and `response.message`.
  async send(message) {
    if (keepContext && this.contextId) message.contextId = this.contextId;
    let result;
    if (sdk.version === "v03") {
      const response = await this.client.sendMessage({ message });
      if (response.error) throw new Error(`JSON-RPC error ${response.error.code}: ${response.error.message}`);
      result = response.result;
    } else {
      const reply = await this.client.sendMessage({ message: sdk.fromDoc(message) });
      result = "status" in reply ? sdk.taskToDoc(reply) : sdk.toDoc(reply);
    }
    replies.push(result);
    if (result.contextId) this.contextId = result.contextId;
    return { message: result.kind === "message" ? result : undefined };
  }

  /** 发送用户消息并处理工具调用循环 */
  async sendMessageWithTools(userText) {
    let currentMessage = this.buildMessage(userText);
    let maxIterations = 5;

    while (maxIterations-- > 0) {
      const response = await this.send(currentMessage);
      const parsed = parseA2AMessageForLangChain(response.message);

      if (!parsed || parsed.toolCalls.length === 0) {
        return parsed?.content || "No response";
      }

      console.error(`Executing ${parsed.toolCalls.length} tool(s)...`);
      const toolResults = [];
      for (const toolCall of parsed.toolCalls) {
        try {
          const result = await executeToolLocally(toolCall);
          toolResults.push({ name: toolCall.name, result: result });
        } catch (error) {
          toolResults.push({ name: toolCall.name, error: error.message });
        }
      }
      sentResults.push(...toolResults);
      currentMessage = this.buildMessage(`Tool results: ${JSON.stringify(toolResults)}`);
    }
    throw new Error("Max tool call iterations exceeded");
  }

  /** 步骤 2: one message per tool call, reading the answer after each. */
  async sendMessagePerCall(userText) {
    const response = await this.send(this.buildMessage(userText));
    const parsed = parseA2AMessageForLangChain(response.message);
    if (!parsed || parsed.toolCalls.length === 0) return parsed?.content || "No response";
    let answer = "No response";
    for (const toolCall of parsed.toolCalls) {
      let toolResultMessage;
      try {
        const toolResult = await executeToolLocally(toolCall);
        sentResults.push({ name: toolCall.name, result: toolResult });
        toolResultMessage = this.buildMessage(
          `Tool "${toolCall.name}" returned: ${JSON.stringify(toolResult)}`,
        );
      } catch (toolError) {
        sentResults.push({ name: toolCall.name, error: toolError.message });
        toolResultMessage = {
          kind: "message",
          role: "user",
          messageId: crypto.randomUUID(),
          parts: [{ kind: "text", text: `Tool ${toolCall.name} failed: ${toolError.message}` }],
        };
      }
      const finalResponse = await this.send(toolResultMessage);
      answer = finalResponse.message ? finalResponse.message.parts[0].text : "No response";
      console.error("Final answer:", answer);
    }
    return answer;
  }

  /** 构造带工具定义的消息 */
  buildMessage(text) {
    return {
      kind: "message",
      role: "user",
      messageId: crypto.randomUUID(), // 000: required by the SDK's Message type
      parts: [
        { kind: "text", text },
        {
          kind: "data",
          data: { tools: this.tools },
          metadata: { type: "tool-definitions", format: "langchain" },
        },
      ],
    };
  }
}

async function main() {
  const report = {};
  try {
    const agent = await new A2AClientAgent(cardUrl, [weatherTool, readFileTool]).init();
    report.answer = perCall
      ? await agent.sendMessagePerCall(question)
      : await agent.sendMessageWithTools(question);
  } catch (error) {
    report.error = String(error && error.message ? error.message : error);
  }
  report.replies = replies;
  report.results = sentResults;
  report.executed = executed;
  console.log(JSON.stringify(report));
}

main();
