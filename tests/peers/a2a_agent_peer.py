"""An agent on the official a2a-sdk 1.x that plays the client-side tools flow.

1. The client sends a user message plus a data part with `metadata.type = "tool-definitions"`
   (`{"tools": [OpenAI function tools]}`).
2. The agent answers with the task in TASK_STATE_INPUT_REQUIRED and, in the status message, a
   data part with `metadata.type = "tool-calls"` (`{"tool_calls": [OpenAI wire tool calls]}`).
3. The client runs the calls and sends a data part with `metadata.type = "tool-results"` on the
   same task; the agent completes the task with a text artifact quoting every result.

The user text scripts the agent: `call NAME with {json}` (several joined by ` ; ` are asked for
in one round); `repeat N` asks for the same calls N rounds in a row; `forever` never stops
asking (for max-rounds tests); `malformed` asks with an invalid tool-calls part (for the
client's validation). A call naming a tool the client did not offer is refused with a failed
task. Conversation turns are counted per contextId and reported in the answer.

Usage: python a2a_agent_peer.py PORT [--tls CERT KEY]
Prints `READY <port>` once listening. With `--tls` it serves https:// (uvicorn's `ssl_certfile`
and `ssl_keyfile`, PEM files) and its card names the https:// URL.
"""

import argparse
import asyncio
import json
import re
import sys
import uuid

import uvicorn
from google.protobuf import json_format
from starlette.applications import Starlette

from a2a.helpers.proto_helpers import new_data_part, new_text_part
from a2a.server.agent_execution.agent_executor import AgentExecutor
from a2a.server.agent_execution.context import RequestContext
from a2a.server.events.event_queue import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks.inmemory_task_store import InMemoryTaskStore
from a2a.server.tasks.task_updater import TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Task,
    TaskState,
    TaskStatus,
)

parser = argparse.ArgumentParser()
parser.add_argument("port", type=int)
parser.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"), default=None,
                    help="serve https:// with this certificate chain and key (PEM files)")
args = parser.parse_args()

TURNS = {}  # contextId -> number of user turns
TASKS = {}  # taskId -> {"calls": [...], "rounds_left": int|None, "results": [...]}


def parts_of(message, kind):
    out = []
    for part in message.parts:
        if not part.HasField("data"):
            continue
        meta = json_format.MessageToDict(part.metadata) if part.HasField("metadata") else {}
        if meta.get("type") == kind:
            out.append(json_format.MessageToDict(part.data))
    return out


def text_of(message):
    return "\n".join(p.text for p in message.parts if p.HasField("text"))


def plan(text):
    calls = []
    for m in re.finditer(r"call\s+([A-Za-z0-9_-]+)\s+with\s+(\{.*?\})(?=\s*;|\s*$|\s+repeat|\s+forever)",
                         text):
        calls.append((m.group(1), json.loads(m.group(2))))
    rounds = 1
    m = re.search(r"repeat\s+(\d+)", text)
    if m:
        rounds = int(m.group(1))
    if "forever" in text:
        rounds = None
    return calls, rounds


def tool_calls_part(calls):
    wire = [{"id": f"call_{uuid.uuid4().hex[:8]}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(arguments)}}
            for name, arguments in calls]
    part = new_data_part({"tool_calls": wire}, media_type="application/json")
    part.metadata.update({"type": "tool-calls", "format": "openai"})
    return part


class ClientToolsAgent(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        msg = context.message
        if context.current_task is None:
            await event_queue.enqueue_event(Task(
                id=context.task_id, context_id=context.context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED), history=[msg]))
        up = TaskUpdater(event_queue=event_queue, task_id=context.task_id,
                         context_id=context.context_id)
        await up.start_work()
        state = TASKS.get(context.task_id)
        if state is None:
            # A new turn: read the offered tools and the script.
            TURNS[context.context_id] = TURNS.get(context.context_id, 0) + 1
            offered = {t["function"]["name"] for d in parts_of(msg, "tool-definitions")
                       for t in d.get("tools", [])}
            if "malformed" in text_of(msg):
                part = new_data_part({"tool_calls": [{"type": "function",
                                                      "function": {"name": 7}}]},
                                     media_type="application/json")
                part.metadata.update({"type": "tool-calls", "format": "openai"})
                await up.requires_input(up.new_agent_message([part]))
                return
            calls, rounds = plan(text_of(msg))
            missing = [name for name, _ in calls if name not in offered]
            if missing:
                await up.failed(up.new_agent_message([new_text_part(
                    f"not offered by the client: {', '.join(missing)}; offered: "
                    f"{', '.join(sorted(offered))}")]))
                return
            if not calls:
                await up.add_artifact(parts=[new_text_part(
                    f"turn {TURNS[context.context_id]}: nothing to do")], name="answer")
                await up.complete()
                return
            state = {"calls": calls, "rounds_left": rounds, "results": []}
            TASKS[context.task_id] = state
        else:
            results = [r for d in parts_of(msg, "tool-results") for r in d.get("tool_results", [])]
            state["results"].extend(results)
            if state["rounds_left"] is not None:
                state["rounds_left"] -= 1
            if state["rounds_left"] == 0:
                del TASKS[context.task_id]
                lines = [f"{r.get('name')} -> {r.get('content')}"
                         + (" (error)" if r.get("is_error") else "") for r in state["results"]]
                answer = f"turn {TURNS[context.context_id]}: " + " | ".join(lines)
                await up.add_artifact(parts=[new_text_part(answer)], name="answer")
                await up.complete()
                return
        await up.requires_input(up.new_agent_message([tool_calls_part(state["calls"])]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        TASKS.pop(context.task_id, None)
        await TaskUpdater(event_queue, context.task_id or "", context.context_id or "").cancel()


url = f"{'https' if args.tls else 'http'}://127.0.0.1:{args.port}/a2a/jsonrpc"
card = AgentCard(
    name="py-client-tools-agent",
    description="a2a-sdk 1.x agent that asks its client to run the client's own tools",
    version="1.0.0",
    capabilities=AgentCapabilities(streaming=True),
    default_input_modes=["text/plain", "application/json"],
    default_output_modes=["text/plain"],
    skills=[AgentSkill(id="client-tools", name="client tools",
                       description="Uses the tools its client offers", tags=["agent"])],
    supported_interfaces=[
        AgentInterface(protocol_binding="JSONRPC", protocol_version="1.0", url=url),
        AgentInterface(protocol_binding="JSONRPC", protocol_version="0.3", url=url)],
)
handler = DefaultRequestHandler(agent_executor=ClientToolsAgent(),
                                task_store=InMemoryTaskStore(), agent_card=card)
app = Starlette(routes=[
    *create_agent_card_routes(agent_card=card),
    *create_jsonrpc_routes(request_handler=handler, rpc_url="/a2a/jsonrpc",
                           enable_v0_3_compat=True)])


class Server(uvicorn.Server):
    async def startup(self, sockets=None):
        await super().startup(sockets)
        print(f"READY {args.port}", flush=True)


if __name__ == "__main__":
    tls = {"ssl_certfile": args.tls[0], "ssl_keyfile": args.tls[1]} if args.tls else {}
    config = uvicorn.Config(app, host="127.0.0.1", port=args.port, log_level="warning", **tls)
    asyncio.run(Server(config).serve())
    sys.exit(0)
