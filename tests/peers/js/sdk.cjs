// The official A2A JS SDK in either of its generations, behind the A2A 0.3 object shapes that
// design document 000 is written in (`{kind: "message", role: "user", parts: [{kind: "text",
// text}, {kind: "data", data, metadata}]}`).
//
// - "v03": @a2a-js/sdk 0.3.14 (installed under the alias `a2a-sdk-v03`), the last 0.3 release:
//   the API the document uses (`A2AClient.fromCardUrl`, `AgentExecutor`, `kind` fields). Its
//   objects already have the document's shapes; nothing is converted.
// - "v1": @a2a-js/sdk 1.x, which speaks A2A 1.0 and models messages as protobuf objects
//   (`{content: {$case: "text", value}}`, `role: Role.ROLE_USER`). Messages are converted at
//   this boundary only, through the SDK's own `Message.fromJSON` / `toJSON` (the A2A 1.0 JSON
//   form), so the document's logic in the peers stays as written.
//
// The scripts resolve the SDK through NODE_PATH (target/js/node_modules, made by setup.sh).
"use strict";

const crypto = require("crypto");

function load(version) {
  if (version === "v03") {
    const server = require("a2a-sdk-v03/server");
    const express = require("a2a-sdk-v03/server/express");
    const client = require("a2a-sdk-v03/client");
    return {
      version,
      server,
      express,
      client,
      // 0.3 objects are the document's objects.
      toDoc: (m) => m,
      fromDoc: (m) => m,
      taskToDoc: (t) => t,
      // The 0.3 card: one JSON-RPC endpoint, `url` + `protocolVersion`.
      card: (base, fields) => ({
        ...fields,
        protocolVersion: "0.3.0",
        url: `${base}/a2a/jsonrpc`,
        preferredTransport: "JSONRPC",
      }),
      agentEvent: (m) => m,
    };
  }
  if (version === "v1") {
    const root = require("@a2a-js/sdk");
    const server = require("@a2a-js/sdk/server");
    const express = require("@a2a-js/sdk/server/express");
    const client = require("@a2a-js/sdk/client");
    return {
      version,
      server,
      express,
      client,
      root,
      toDoc: (m) => messageToDoc(root.Message.toJSON(m)),
      fromDoc: (m) => root.Message.fromJSON(messageToV1(m)),
      taskToDoc: (t) => taskToDoc(root.Task.toJSON(t)),
      card: (base, fields) => ({
        ...fields,
        supportedInterfaces: [
          { url: `${base}/a2a/jsonrpc`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
        ],
      }),
      agentEvent: (m) => server.AgentEvent.message(m),
    };
  }
  throw new Error(`unknown SDK version ${version}: use v1 or v03`);
}

// A2A 1.0 JSON → the document's 0.3 shape.
function partToDoc(p) {
  const out = {};
  if (p.text !== undefined) Object.assign(out, { kind: "text", text: p.text });
  else if (p.data !== undefined) Object.assign(out, { kind: "data", data: p.data });
  else if (p.url !== undefined) Object.assign(out, { kind: "file", file: { uri: p.url } });
  else Object.assign(out, { kind: "file", file: { bytes: p.raw } });
  if (p.metadata) out.metadata = p.metadata;
  return out;
}

function messageToDoc(m) {
  const out = {
    kind: "message",
    messageId: m.messageId,
    role: m.role === "ROLE_AGENT" ? "agent" : "user",
    parts: (m.parts || []).map(partToDoc),
  };
  if (m.contextId) out.contextId = m.contextId;
  if (m.taskId) out.taskId = m.taskId;
  if (m.metadata) out.metadata = m.metadata;
  return out;
}

function taskToDoc(t) {
  const state = (t.status && t.status.state) || "TASK_STATE_UNSPECIFIED";
  const status = {
    state: state.replace(/^TASK_STATE_/, "").toLowerCase().replace(/_/g, "-"),
  };
  if (t.status && t.status.message) status.message = messageToDoc(t.status.message);
  return {
    kind: "task",
    id: t.id,
    contextId: t.contextId,
    status,
    artifacts: (t.artifacts || []).map((a) => ({ ...a, parts: (a.parts || []).map(partToDoc) })),
  };
}

// The document's 0.3 shape → A2A 1.0 JSON.
function messageToV1(m) {
  const out = {
    messageId: m.messageId || crypto.randomUUID(),
    role: m.role === "agent" ? "ROLE_AGENT" : "ROLE_USER",
    parts: m.parts.map((p) => {
      const part = {};
      if (p.kind === "text") part.text = p.text;
      else if (p.kind === "data") Object.assign(part, { data: p.data, mediaType: "application/json" });
      else throw new Error(`part kind ${p.kind} is not used by these peers`);
      if (p.metadata) part.metadata = p.metadata;
      return part;
    }),
  };
  if (m.contextId) out.contextId = m.contextId;
  if (m.taskId) out.taskId = m.taskId;
  if (m.metadata) out.metadata = m.metadata;
  return out;
}

module.exports = { load };
