"""a2a-sdk 1.x as the client of our A2aToolServer (A2A 1.0 wire).

Usage: a2a_client_tools.py BASE_URL TOKEN|-

Fetches the agent card, calls `add` (blocking), streams `slow_count` (progress), then starts a
long `slow_count` stream and cancels it after the first progress event. Prints one JSON report
on stdout (the last line) for the Rust test to check; exits non-zero on an unexpected error.
"""

import asyncio
import json
import sys
import uuid

import httpx
from google.protobuf.json_format import MessageToDict

from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.helpers.proto_helpers import new_data_part
from a2a.types import CancelTaskRequest, GetTaskRequest, Message, Role, SendMessageRequest

TOOLS_EXT = "https://agent-toolkit.dev/a2a/ext/tools/v1"


def call_message(name, params):
    """The project convention: `_tool_call` in message.metadata, the same call as a data part."""
    call = {"name": name, "params": params}
    msg = Message(
        role=Role.ROLE_USER,
        message_id=str(uuid.uuid4()),
        parts=[new_data_part(call, "application/json")],
    )
    msg.metadata.update({"_tool_call": call})
    return msg


def event_kind(event):
    d = MessageToDict(event)
    (kind, body), = d.items()
    return kind, body


async def main():
    url, token = sys.argv[1], sys.argv[2]
    headers = {"Authorization": f"Bearer {token}"} if token != "-" else {}
    http = httpx.AsyncClient(headers=headers, timeout=30)
    report = {}

    card = await A2ACardResolver(http, url).get_agent_card()
    card_d = MessageToDict(card)
    report["card"] = {
        "skills": [
            {"id": s["id"], "name": s["name"], "tags": s.get("tags", [])}
            for s in card_d.get("skills", [])
        ],
        "interfaces": card_d.get("supportedInterfaces", []),
        "tools": next(
            (e.get("params", {}).get("tools", {}) for e in card_d["capabilities"].get("extensions", [])
             if e["uri"] == TOOLS_EXT),
            None,
        ),
        "security": card_d.get("securityRequirements"),
    }

    blocking = await create_client(card, client_config=ClientConfig(streaming=False, httpx_client=http))
    events = [e async for e in blocking.send_message(SendMessageRequest(message=call_message("add", {"a": 2, "b": 3})))]
    kind, task = event_kind(events[-1])
    report["add"] = {"kind": kind, "task": task}

    events = [e async for e in blocking.send_message(SendMessageRequest(message=call_message("add", {"a": "two", "b": 3})))]
    report["add_bad"] = event_kind(events[-1])[1]

    streaming = await create_client(card, client_config=ClientConfig(streaming=True, httpx_client=http))
    kinds, progress, artifacts, states = [], [], [], []
    msg = call_message("slow_count", {"n": 3, "step_ms": 20})
    async for event in streaming.send_message(SendMessageRequest(message=msg)):
        kind, body = event_kind(event)
        kinds.append(kind)
        if kind == "statusUpdate":
            states.append(body["status"]["state"])
            for part in body["status"].get("message", {}).get("parts", []):
                if "data" in part:
                    progress.append(part["data"])
        elif kind == "artifactUpdate":
            artifacts.append(body["artifact"])
        elif kind == "task":
            states.append(body["status"]["state"])
    report["stream"] = {"kinds": kinds, "states": states, "progress": progress, "artifacts": artifacts}

    msg = call_message("slow_count", {"n": 200, "step_ms": 50})
    cancel_kinds, cancel_states, task_id, cancel_answer = [], [], None, None
    async for event in streaming.send_message(SendMessageRequest(message=msg)):
        kind, body = event_kind(event)
        cancel_kinds.append(kind)
        if kind == "task":
            task_id = body["id"]
        if kind == "statusUpdate":
            cancel_states.append(body["status"]["state"])
            has_progress = any("data" in p for p in body["status"].get("message", {}).get("parts", []))
            if has_progress and cancel_answer is None:
                canceled = await blocking.cancel_task(CancelTaskRequest(id=task_id))
                cancel_answer = MessageToDict(canceled)["status"]["state"]
    after = await blocking.get_task(GetTaskRequest(id=task_id))
    report["cancel"] = {
        "kinds": cancel_kinds,
        "states": cancel_states,
        "cancel_answer": cancel_answer,
        "final": MessageToDict(after)["status"]["state"],
        "artifacts": len(after.artifacts),
    }
    await http.aclose()
    print(json.dumps(report))


asyncio.run(main())
