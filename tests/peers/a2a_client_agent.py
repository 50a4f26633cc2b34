"""a2a-sdk 1.x as the client of our A2aAgentServer: client-side tools, the project's convention.

Usage: a2a_client_agent.py BASE_URL

Sends a question with its own tool definitions in a `tool-definitions` data part (`format:
"openai"`: calls in the OpenAI wire shape, on the task; `"langchain"` would ask for design
document 000's dialect instead), runs the
tool calls the agent sends back (task INPUT_REQUIRED, `tool-calls` part) locally, returns the
results in a `tool-results` part on the same task, and reads the final answer artifact. Prints
one JSON report on stdout.
"""

import asyncio
import json
import sys
import uuid

import httpx
from google.protobuf.json_format import MessageToDict

from a2a.client import ClientConfig, create_client
from a2a.helpers.proto_helpers import new_data_part
from a2a.types import Message, Part, Role, SendMessageRequest

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]


def get_weather(city):
    return {"city": city, "temp_c": 18}


def data_part(data, kind, fmt=None):
    part = new_data_part(data, "application/json")
    meta = {"type": kind}
    if fmt:
        meta["format"] = fmt
    part.metadata.update(meta)
    return part


async def send(client, message):
    events = [e async for e in client.send_message(SendMessageRequest(message=message))]
    return MessageToDict(events[-1])["task"]


async def main():
    url = sys.argv[1]
    http = httpx.AsyncClient(timeout=30)
    client = await create_client(url, client_config=ClientConfig(streaming=False, httpx_client=http))
    report = {"rounds": []}

    context_id = str(uuid.uuid4())
    question = Message(
        role=Role.ROLE_USER,
        message_id=str(uuid.uuid4()),
        context_id=context_id,
        parts=[Part(text="What's the weather in Paris?"), data_part({"tools": TOOLS}, "tool-definitions", "openai")],
    )
    task = await send(client, question)
    while task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED":
        parts = task["status"]["message"]["parts"]
        calls = [c for p in parts if p.get("metadata", {}).get("type") == "tool-calls" for c in p["data"]["tool_calls"]]
        results = []
        for call in calls:
            args = json.loads(call["function"]["arguments"])
            out = get_weather(**args)
            results.append({"tool_call_id": call["id"], "name": call["function"]["name"], "content": json.dumps(out), "is_error": False})
        report["rounds"].append({"calls": calls, "results": results})
        answer = Message(
            role=Role.ROLE_USER,
            message_id=str(uuid.uuid4()),
            context_id=context_id,
            task_id=task["id"],
            parts=[data_part({"tool_results": results}, "tool-results")],
        )
        task = await send(client, answer)
        if len(report["rounds"]) > 5:
            break
    report["final"] = task

    # Invalid tool definitions: the request is refused with the problems listed.
    bad = Message(
        role=Role.ROLE_USER,
        message_id=str(uuid.uuid4()),
        parts=[Part(text="hi"), data_part({"tools": [{"type": "tool", "function": {"name": "x"}}]}, "tool-definitions")],
    )
    try:
        await send(client, bad)
        report["invalid_tools"] = "accepted"
    except Exception as e:  # the SDK raises its JSON-RPC error type
        report["invalid_tools"] = f"{type(e).__name__}: {e}"
    await http.aclose()
    print(json.dumps(report))


asyncio.run(main())
