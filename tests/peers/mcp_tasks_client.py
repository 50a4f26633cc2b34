"""The official Python MCP client (mcp 2.x) using our server's MCP tasks (revision 2025-11-25);
run by tests/mcp/tasks.rs.

Usage: mcp_tasks_client.py --url URL | --stdio EXE   --phase start|finish|in-process [--task ID]

- start: what the server announces (the `tasks` capability, `execution.taskSupport` of each
  tool), a task-augmented call of `slow_report`, and the task's first status.
- finish --task ID: a new session (the server may have been restarted meanwhile) finds the task
  (`tasks/get`, `tasks/list`), waits for its result (`tasks/result`), and cannot cancel it.
- in-process: cancellation, a failing task, refusals, and a plain call of a background tool.

- every phase: the `notifications/tasks/status` the session was sent (mcp 2.3 keeps that method
  out of its core tables; a client extension observes it, validated as the SDK's
  `TaskStatusNotificationParams`).

Every answer is validated with the SDK's own types of revision 2025-11-25 (`mcp_types`).
mcp 2.3 has those types but no call API for tasks; requests go through the session's
`send_request` where its result check knows the method, and through its dispatcher for a
task-augmented `tools/call` (the session checks every `tools/call` answer as a
`CallToolResult`, which a `CreateTaskResult` is not). Prints one JSON report; observations
are recorded, not judged: the Rust test asserts on them.
"""

import argparse
import json

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.extension import ClientExtension, NotificationBinding
from mcp.shared.exceptions import MCPError


class TaskStatus(ClientExtension):
    """Observes `notifications/tasks/status`."""

    identifier = "dev.agent-toolkit.test/task-status"

    def __init__(self):
        self.seen = []

    def notifications(self):
        async def seen(params):
            self.seen.append({"id": params.task_id, "status": params.status})

        return [
            NotificationBinding(
                method="notifications/tasks/status",
                params_type=types.TaskStatusNotificationParams,
                handler=seen,
            )
        ]


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


async def create_task(client, name, arguments):
    raw = await client.session._dispatcher.send_raw_request(
        "tools/call", {"name": name, "arguments": arguments, "task": {"ttl": 600000}}, {}
    )
    return types.CreateTaskResult.model_validate(raw).task


async def get_task(client, task_id):
    request = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id))
    return await client.session.send_request(request, types.GetTaskResult)


async def task_result(client, task_id):
    request = types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task_id))
    return await client.session.send_request(request, types.CallToolResult)


async def cancel_task(client, task_id):
    request = types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task_id))
    return await client.session.send_request(request, types.CancelTaskResult)


async def list_tasks(client):
    return await client.session.send_request(types.ListTasksRequest(), types.ListTasksResult)


def task_report(task):
    return {
        "id": task.task_id,
        "status": task.status,
        "message": task.status_message,
        "created_at": task.created_at,
        "last_updated_at": task.last_updated_at,
        "ttl": task.ttl,
        "poll_interval": task.poll_interval,
    }


async def refused(body):
    try:
        await body()
    except MCPError as e:
        return {"code": e.code, "message": e.error.message}
    return {"code": None}


async def wait_until_ended(client, task_id):
    for _ in range(200):
        task = await get_task(client, task_id)
        if task.status not in ("working", "input_required"):
            return task
        await anyio.sleep(0.05)
    return task


async def announced(client, report):
    caps = client.server_capabilities
    report["tasks_capability"] = caps.tasks.model_dump(mode="json", exclude_none=True) if caps.tasks else None
    tools = await client.list_tools()
    report["task_support"] = {
        t.name: (t.execution.task_support if t.execution else None) for t in tools.tools
    }


async def start(client, report):
    await announced(client, report)
    task = await create_task(client, "slow_report", {"topic": "Q3", "seconds": 3})
    report["created"] = task_report(task)
    report["first_get"] = task_report(await get_task(client, task.task_id))


async def finish(client, report, task_id):
    report["get"] = task_report(await get_task(client, task_id))
    listed = await list_tasks(client)
    report["listed"] = [t.task_id for t in listed.tasks]
    result = await task_result(client, task_id)
    report["result"] = {
        "text": text_of(result),
        "is_error": result.is_error,
        "related_task": (result.meta or {}).get("io.modelcontextprotocol/related-task"),
    }
    report["after"] = task_report(await get_task(client, task_id))
    report["cancel_ended"] = await refused(lambda: cancel_task(client, task_id))


async def in_process(client, report):
    await announced(client, report)
    long = await create_task(client, "slow_report", {"topic": "never", "seconds": 60})
    cancelled = await cancel_task(client, long.task_id)
    report["cancelled"] = task_report(cancelled)
    report["cancelled_get"] = task_report(await get_task(client, long.task_id))
    result = await task_result(client, long.task_id)
    report["cancelled_result"] = {"text": text_of(result), "is_error": result.is_error}

    failing = await create_task(client, "failing_job", {})
    report["failed"] = task_report(await wait_until_ended(client, failing.task_id))
    result = await task_result(client, failing.task_id)
    report["failed_result"] = {"text": text_of(result), "is_error": result.is_error}

    report["not_a_task_tool"] = await refused(lambda: create_task(client, "add", {"a": 1, "b": 2}))
    report["unknown_tool"] = await refused(lambda: create_task(client, "nope", {}))
    report["bad_arguments"] = await refused(lambda: create_task(client, "slow_report", {"topic": 5}))
    report["unknown_task"] = await refused(lambda: get_task(client, "mcp-task-0000"))

    plain = await client.call_tool("slow_report", {"topic": "now", "seconds": 0})
    report["plain_call"] = {"text": text_of(plain), "is_error": plain.is_error}
    listed = await list_tasks(client)
    report["listed"] = [t.task_id for t in listed.tasks]
    report["created_ids"] = [long.task_id, failing.task_id]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url")
    parser.add_argument("--stdio")
    parser.add_argument("--phase", required=True)
    parser.add_argument("--task")
    args = parser.parse_args()
    report: dict = {"errors": []}
    try:
        server = StdioServerParameters(command=args.stdio, args=["stdio"]) if args.stdio else args.url
        status = TaskStatus()
        async with Client(server, mode="legacy", extensions=[status]) as client:
            report["protocol_version"] = client.protocol_version
            if args.phase == "start":
                await start(client, report)
            elif args.phase == "finish":
                await finish(client, report, args.task)
            else:
                await in_process(client, report)
                # The notifications of the tasks that ended come while the session lasts.
                with anyio.move_on_after(5):
                    while len(status.seen) < 2:
                        await anyio.sleep(0.05)
        report["status_notifications"] = status.seen
    except Exception as e:  # reported, never hidden
        report["errors"].append(f"{type(e).__name__}: {e}")
    print(json.dumps(report))


anyio.run(main)
