"""A tool server built on the official a2a-sdk 1.x, exposing tools by the project's convention.

Used by tests/a2a_client as a real peer for `RemoteToolRegistry` and `RemoteTool`:
- agent card at /.well-known/agent-card.json: one skill per tool (`id: "tool-<name>"`,
  `tags: ["tool"]`), the schemas and annotations in a `capabilities.extensions[]` entry
  (`params.tools.<name> = {skillId, inputSchema, annotations}`);
- invocation: `_tool_call: {name, params}` in `message.metadata` (a duplicate data part is
  accepted as a fallback);
- result: an artifact with `metadata._tool_result = true` (plus 004's `tool_name` and
  `execution_time_ms`) and a data part; tool errors as a
  completed task whose artifact has `metadata.is_error = true`;
- progress: WORKING status updates whose message holds a data part
  `{"progress", "total", "message"}` with `metadata.type = "progress"`;
- cancellation: recorded, and reported by the `stats` tool.

The JSON-RPC endpoint also answers the 0.3 methods (`enable_v0_3_compat=True`). With
`--only-v03` the card lists only the 0.3 interface, so clients must take the 0.3 path.

Usage: python a2a_tool_peer.py PORT [--name NAME] [--token TOKEN] [--only-v03] [--tls CERT KEY]
Prints `READY <port>` once listening. With `--tls` it serves https:// (uvicorn's `ssl_certfile`
and `ssl_keyfile`, PEM files) and its card names the https:// URL.
"""

import argparse
import asyncio
import sys
import time

import uvicorn
from google.protobuf import json_format, struct_pb2
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.responses import JSONResponse

from a2a.helpers.proto_helpers import get_data_parts, new_data_part, new_text_part
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
    AgentExtension,
    AgentInterface,
    AgentSkill,
    Task,
    TaskState,
    TaskStatus,
)

EXT_URI = "https://agent-toolkit.dev/a2a/ext/tools/v1"

parser = argparse.ArgumentParser()
parser.add_argument("port", type=int)
parser.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"), default=None,
                    help="serve https:// with this certificate chain and key (PEM files)")
parser.add_argument("--name", default="py-tools")
parser.add_argument("--token", default=None)
parser.add_argument("--only-v03", action="store_true")
args = parser.parse_args()

STATE = {"extra": False, "calls": {}, "cancelled": []}


def integral(v):
    """1.x peers get every number as a float (google.protobuf.Value): 3 arrives as 3.0."""
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


class ToolError(Exception):
    pass


async def t_add(params, progress):
    a, b = params.get("a"), params.get("b")
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        raise ToolError("`a` and `b` must be numbers")
    return {"sum": integral(a) + integral(b)}


async def t_slow(params, progress):
    steps = int(params.get("steps", 3))
    delay = float(params.get("delay_ms", 50)) / 1000.0
    for i in range(1, steps + 1):
        await asyncio.sleep(delay)
        await progress(i, steps, f"step {i} of {steps}")
    return {"done": steps}


async def t_fail(params, progress):
    raise ToolError(str(params.get("reason", "it failed")))


async def t_stats(params, progress):
    return {"calls": STATE["calls"], "cancelled": STATE["cancelled"]}


async def t_toggle_extra(params, progress):
    STATE["extra"] = not STATE["extra"]
    return {"extra": STATE["extra"]}


async def t_search(params, progress):
    return {"agent": args.name, "query": params.get("query", "")}


async def t_echo(params, progress):
    return {"echo": params.get("text", "")}


def obj(props, required):
    return {"type": "object", "properties": props, "required": required}


TOOLS = {
    "add": (t_add, "Add two integers.",
            obj({"a": {"type": "integer"}, "b": {"type": "integer"}}, ["a", "b"]),
            {"readOnlyHint": True, "idempotentHint": True}),
    "slow": (t_slow, "Count slowly, reporting progress at every step.",
             obj({"steps": {"type": "integer"}, "delay_ms": {"type": "integer"}}, ["steps"]),
             {"readOnlyHint": True}),
    "fail": (t_fail, "Always fails with the given reason.",
             obj({"reason": {"type": "string"}}, []), {"destructiveHint": False}),
    "stats": (t_stats, "Calls and cancellations seen so far.", obj({}, []),
              {"readOnlyHint": True}),
    "toggle_extra": (t_toggle_extra, "Add or remove the `echo` tool from the card.",
                     obj({}, []), {}),
    "search": (t_search, "Search this agent's index.",
               obj({"query": {"type": "string"}}, ["query"]), {"readOnlyHint": True}),
}
EXTRA = {
    "echo": (t_echo, "Echo the text back.", obj({"text": {"type": "string"}}, ["text"]),
             {"readOnlyHint": True}),
}


def active_tools():
    tools = dict(TOOLS)
    if STATE["extra"]:
        tools.update(EXTRA)
    return tools


def build_card():
    url = f"{'https' if args.tls else 'http'}://127.0.0.1:{args.port}/a2a/jsonrpc"
    tools = active_tools()
    params = struct_pb2.Struct()
    params.update({"tools": {
        name: {"skillId": f"tool-{name}", "inputSchema": schema, "annotations": ann}
        for name, (_, _, schema, ann) in tools.items()
    }})
    interfaces = [AgentInterface(protocol_binding="JSONRPC", protocol_version="0.3", url=url)]
    if not args.only_v03:
        interfaces.insert(
            0, AgentInterface(protocol_binding="JSONRPC", protocol_version="1.0", url=url))
    return AgentCard(
        name=args.name,
        description="a2a-sdk 1.x tool peer",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True, extensions=[AgentExtension(
            uri=EXT_URI, description="Skills tagged 'tool' are callable tools",
            required=False, params=params)]),
        default_input_modes=["application/json"],
        default_output_modes=["application/json"],
        skills=[AgentSkill(id=f"tool-{name}", name=name, description=desc, tags=["tool"])
                for name, (_, desc, _, _) in tools.items()],
        supported_interfaces=interfaces,
    )


def tool_call_of(message):
    meta = json_format.MessageToDict(message.metadata) if message.HasField("metadata") else {}
    call = meta.get("_tool_call")
    if isinstance(call, dict):
        return call
    for data in get_data_parts(list(message.parts)):
        if isinstance(data, dict) and "name" in data:
            return data
    return None


class ToolExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        msg = context.message
        await event_queue.enqueue_event(Task(
            id=context.task_id, context_id=context.context_id,
            status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED), history=[msg]))
        up = TaskUpdater(event_queue=event_queue, task_id=context.task_id,
                         context_id=context.context_id)
        await up.start_work()
        call = tool_call_of(msg)
        name = (call or {}).get("name")
        params = {k: integral(v) for k, v in ((call or {}).get("params") or {}).items()}
        STATE["calls"][str(name)] = STATE["calls"].get(str(name), 0) + 1

        async def progress(done, total, text):
            part = new_data_part({"progress": done, "total": total, "message": text},
                                 media_type="application/json")
            part.metadata.update({"type": "progress"})
            await up.update_status(TaskState.TASK_STATE_WORKING,
                                   message=up.new_agent_message([part]))

        tool = active_tools().get(name)
        started = time.monotonic()
        try:
            if tool is None:
                raise ToolError(f"unknown tool `{name}`")
            result = await tool[0](params, progress)
        except ToolError as e:
            await up.add_artifact(parts=[new_text_part(str(e))], name=str(name),
                                  metadata={"_tool_result": True, "is_error": True},
                                  last_chunk=True)
            await up.complete()
            return
        # Design 004's result metadata: the tool's name and how long it ran.
        elapsed_ms = int((time.monotonic() - started) * 1000)
        await up.add_artifact(parts=[new_data_part(result, media_type="application/json")],
                              name=name, metadata={"_tool_result": True, "is_error": False,
                                                   "tool_name": name,
                                                   "execution_time_ms": elapsed_ms},
                              last_chunk=True)
        await up.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        STATE["cancelled"].append(context.task_id)
        await TaskUpdater(event_queue, context.task_id or "", context.context_id or "").cancel()


class BearerAuth(BaseHTTPMiddleware):
    async def dispatch(self, request, call_next):
        if args.token and request.url.path.startswith("/a2a/"):
            if request.headers.get("authorization") != f"Bearer {args.token}":
                return JSONResponse({"error": "unauthorized"}, status_code=401)
        return await call_next(request)


async def modify_card(_card):
    return build_card()


card = build_card()
handler = DefaultRequestHandler(agent_executor=ToolExecutor(), task_store=InMemoryTaskStore(),
                                agent_card=card)
app = Starlette(
    routes=[*create_agent_card_routes(agent_card=card, card_modifier=modify_card),
            *create_jsonrpc_routes(request_handler=handler, rpc_url="/a2a/jsonrpc",
                                   enable_v0_3_compat=True)],
    middleware=[Middleware(BearerAuth)],
)


class Server(uvicorn.Server):
    async def startup(self, sockets=None):
        await super().startup(sockets)
        print(f"READY {args.port}", flush=True)


if __name__ == "__main__":
    tls = {"ssl_certfile": args.tls[0], "ssl_keyfile": args.tls[1]} if args.tls else {}
    config = uvicorn.Config(app, host="127.0.0.1", port=args.port, log_level="warning", **tls)
    asyncio.run(Server(config).serve())
    sys.exit(0)
