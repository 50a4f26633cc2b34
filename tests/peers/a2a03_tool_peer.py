"""A tool server on the official a2a-sdk 0.3.26: the pure A2A 0.3 wire (`kind` shapes,
`message/send`, `message/stream`, `tasks/cancel`, card with `protocolVersion: "0.3.0"` and `url`).

Same convention as a2a_tool_peer.py: skills `tool-<name>` tagged `tool`, schemas in a
`capabilities.extensions[]` entry, `_tool_call` in `message.metadata`, results as artifacts with
`metadata._tool_result`, `is_error` on tool errors, progress as `working` status updates with a
progress data part, cancellations recorded and reported by `stats`.

Usage: python a2a03_tool_peer.py PORT [--name NAME] [--tls CERT KEY]
Prints `READY <port>` once listening. With `--tls` it serves https:// (uvicorn's `ssl_certfile`
and `ssl_keyfile`, PEM files) and its card names the https:// URL.
"""

import argparse
import asyncio
import sys
import time

import uvicorn

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentSkill,
    DataPart,
    Part,
    TaskState,
    TextPart,
)
from a2a.utils import new_task

EXT_URI = "https://agent-toolkit.dev/a2a/ext/tools/v1"

parser = argparse.ArgumentParser()
parser.add_argument("port", type=int)
parser.add_argument("--name", default="py03-tools")
parser.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"), default=None,
                    help="serve https:// with this certificate chain and key (PEM files)")
args = parser.parse_args()

STATE = {"calls": {}, "cancelled": []}


class ToolError(Exception):
    pass


async def t_add(params, progress):
    a, b = params.get("a"), params.get("b")
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        raise ToolError("`a` and `b` must be numbers")
    return {"sum": a + b}


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
             obj({"reason": {"type": "string"}}, []), {}),
    "stats": (t_stats, "Calls and cancellations seen so far.", obj({}, []),
              {"readOnlyHint": True}),
}


def tool_call_of(message):
    call = (message.metadata or {}).get("_tool_call")
    if isinstance(call, dict):
        return call
    for part in message.parts:
        if isinstance(part.root, DataPart) and "name" in part.root.data:
            return part.root.data
    return None


class ToolExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task or new_task(context.message)
        await event_queue.enqueue_event(task)
        up = TaskUpdater(event_queue, task.id, task.context_id)
        await up.start_work()
        call = tool_call_of(context.message) or {}
        name = call.get("name")
        params = call.get("params") or {}
        STATE["calls"][str(name)] = STATE["calls"].get(str(name), 0) + 1

        async def progress(done, total, text):
            part = Part(root=DataPart(data={"progress": done, "total": total, "message": text},
                                      metadata={"type": "progress"}))
            await up.update_status(TaskState.working, message=up.new_agent_message([part]))

        tool = TOOLS.get(name)
        started = time.monotonic()
        try:
            if tool is None:
                raise ToolError(f"unknown tool `{name}`")
            result = await tool[0](params, progress)
        except ToolError as e:
            await up.add_artifact([Part(root=TextPart(text=str(e)))], name=str(name),
                                  metadata={"_tool_result": True, "is_error": True},
                                  last_chunk=True)
            await up.complete()
            return
        # Design 004's result metadata: the tool's name and how long it ran.
        elapsed_ms = int((time.monotonic() - started) * 1000)
        await up.add_artifact([Part(root=DataPart(data=result))], name=name,
                              metadata={"_tool_result": True, "is_error": False,
                                        "tool_name": name, "execution_time_ms": elapsed_ms},
                              last_chunk=True)
        await up.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        STATE["cancelled"].append(context.task_id)
        await TaskUpdater(event_queue, context.task_id or "", context.context_id or "").cancel()


card = AgentCard(
    name=args.name,
    description="a2a-sdk 0.3.26 tool peer",
    url=f"{'https' if args.tls else 'http'}://127.0.0.1:{args.port}/",
    version="1.0.0",
    protocol_version="0.3.0",
    capabilities=AgentCapabilities(streaming=True, extensions=[AgentExtension(
        uri=EXT_URI, description="Skills tagged 'tool' are callable tools", required=False,
        params={"tools": {
            name: {"skillId": f"tool-{name}", "inputSchema": schema, "annotations": ann}
            for name, (_, _, schema, ann) in TOOLS.items()}})]),
    default_input_modes=["application/json"],
    default_output_modes=["application/json"],
    skills=[AgentSkill(id=f"tool-{name}", name=name, description=desc, tags=["tool"])
            for name, (_, desc, _, _) in TOOLS.items()],
)
app = A2AStarletteApplication(
    agent_card=card,
    http_handler=DefaultRequestHandler(agent_executor=ToolExecutor(),
                                       task_store=InMemoryTaskStore()),
).build()


class Server(uvicorn.Server):
    async def startup(self, sockets=None):
        await super().startup(sockets)
        print(f"READY {args.port}", flush=True)


if __name__ == "__main__":
    tls = {"ssl_certfile": args.tls[0], "ssl_keyfile": args.tls[1]} if args.tls else {}
    config = uvicorn.Config(app, host="127.0.0.1", port=args.port, log_level="warning", **tls)
    asyncio.run(Server(config).serve())
    sys.exit(0)
