"""a2a-sdk 0.3.26 (pure A2A 0.3 wire) as the client of our servers.

Usage: a2a03_client.py TOOLS_URL AGENT_URL

Against the A2aToolServer: fetch the card, call `add` (blocking), stream `slow_count`
(progress), cancel a long `slow_count`. Against the A2aAgentServer: the client-side tools flow
(tool definitions → tool calls → tool results → answer). Prints one JSON report on stdout.
"""

import asyncio
import json
import sys
import uuid

import httpx

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import (
    DataPart,
    Message,
    Part,
    Role,
    TaskIdParams,
    TaskQueryParams,
    TextPart,
)


def call_message(name, params):
    call = {"name": name, "params": params}
    return Message(
        role=Role.user,
        message_id=str(uuid.uuid4()),
        parts=[Part(root=DataPart(data=call))],
        metadata={"_tool_call": call},
    )


def dump(model):
    return model.model_dump(mode="json", exclude_none=True, by_alias=True)


async def tools(url, report):
    http = httpx.AsyncClient(timeout=30)
    card = await A2ACardResolver(http, url).get_agent_card()
    report["card"] = {
        "protocolVersion": card.protocol_version,
        "url": card.url,
        "preferredTransport": card.preferred_transport,
        "skills": [s.id for s in card.skills],
        "extension_tools": sorted(
            next(e.params["tools"] for e in card.capabilities.extensions if e.params and "tools" in e.params)
        ),
    }
    blocking = ClientFactory(ClientConfig(streaming=False, httpx_client=http)).create(card)
    events = [e async for e in blocking.send_message(call_message("add", {"a": 2, "b": 3}))]
    task, _ = events[-1]
    report["add"] = dump(task)
    events = [e async for e in blocking.send_message(call_message("no_such_tool", {}))]
    report["unknown"] = dump(events[-1][0])

    streaming = ClientFactory(ClientConfig(streaming=True, httpx_client=http)).create(card)
    kinds, progress, final = [], [], None
    async for task, update in streaming.send_message(call_message("slow_count", {"n": 3, "step_ms": 20})):
        kinds.append(update.kind if update is not None else "task")
        if update is not None and update.kind == "status-update" and update.status.message:
            progress.extend(p.root.data for p in update.status.message.parts if isinstance(p.root, DataPart))
        final = task
    report["stream"] = {"kinds": kinds, "progress": progress, "final": dump(final)}

    answer, states = None, []
    async for task, update in streaming.send_message(call_message("slow_count", {"n": 200, "step_ms": 50})):
        states.append(task.status.state.value)
        if update is not None and update.kind == "status-update" and update.status.message and answer is None:
            answer = dump(await blocking.cancel_task(TaskIdParams(id=task.id)))
            task_id = task.id
    after = await blocking.get_task(TaskQueryParams(id=task_id))
    report["cancel"] = {"answer": answer["status"]["state"], "states": states, "final": after.status.state.value}
    await http.aclose()


TOOLS = [{
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}]


async def agent(url, report):
    http = httpx.AsyncClient(timeout=30)
    client = await ClientFactory.connect(url, client_config=ClientConfig(streaming=False, httpx_client=http))
    context_id = str(uuid.uuid4())
    question = Message(
        role=Role.user,
        message_id=str(uuid.uuid4()),
        context_id=context_id,
        parts=[
            Part(root=TextPart(text="What's the weather in Paris?")),
            Part(root=DataPart(data={"tools": TOOLS}, metadata={"type": "tool-definitions", "format": "openai"})),
        ],
    )
    events = [e async for e in client.send_message(question)]
    task = events[-1][0]
    rounds = []
    while task.status.state.value == "input-required" and len(rounds) < 5:
        calls = [c for p in task.status.message.parts if isinstance(p.root, DataPart)
                 and (p.root.metadata or {}).get("type") == "tool-calls" for c in p.root.data["tool_calls"]]
        results = []
        for call in calls:
            args = json.loads(call["function"]["arguments"])
            results.append({"tool_call_id": call["id"], "name": call["function"]["name"],
                            "content": json.dumps({"city": args["city"], "temp_c": 18}), "is_error": False})
        rounds.append({"calls": calls})
        answer = Message(
            role=Role.user,
            message_id=str(uuid.uuid4()),
            context_id=context_id,
            task_id=task.id,
            parts=[Part(root=DataPart(data={"tool_results": results}, metadata={"type": "tool-results"}))],
        )
        events = [e async for e in client.send_message(answer)]
        task = events[-1][0]
    report["agent"] = {"rounds": rounds, "final": dump(task)}
    await http.aclose()


async def main():
    report = {}
    await tools(sys.argv[1], report)
    await agent(sys.argv[2], report)
    print(json.dumps(report))


asyncio.run(main())
