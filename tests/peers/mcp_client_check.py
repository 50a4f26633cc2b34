"""The official Python MCP client (mcp 2.x) driving our server; run by tests/mcp.

Usage: mcp_client_check.py --stdio EXE | --url URL   [--mode auto|legacy|2026-07-28]

Connects (mode "auto" probes `server/discover` and uses 2026-07-28 when the server offers it,
else falls back to `initialize`; "legacy" uses `initialize`; "2026-07-28" adopts that revision
without probing), then
exercises what the tests check and prints one JSON report on stdout. Observations are recorded,
not judged: the Rust test asserts on them, so a failure shows what was actually seen. Python's
own checks (output-schema validation of structured content, the shape of every result) apply
as the SDK applies them: a violation raises and is reported under "errors".
"""

import argparse
import json
import sys
import time

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--stdio")
    parser.add_argument("--url")
    parser.add_argument("--mode", default="auto")
    args = parser.parse_args()
    server = StdioServerParameters(command=args.stdio) if args.stdio else args.url

    report: dict = {"errors": []}
    list_changed = anyio.Event()
    notifications: list[str] = []

    async def on_message(message) -> None:
        if isinstance(message, Exception):
            notifications.append(f"exception: {message!r}")
            return
        notifications.append(message.method)
        if isinstance(message, types.ToolListChangedNotification):
            list_changed.set()

    async def step(name, body):
        try:
            await body()
        except Exception as e:  # reported, never hidden
            report["errors"].append(f"{name}: {type(e).__name__}: {e}")

    started = time.monotonic()
    async with Client(server, mode=args.mode, message_handler=on_message) as client:
        report["connect_seconds"] = round(time.monotonic() - started, 3)
        report["protocol_version"] = client.protocol_version
        report["server_name"] = client.server_info.name if client.server_info else None
        caps = client.server_capabilities
        report["list_changed_capability"] = bool(caps.tools and caps.tools.list_changed)

        async def listing():
            tools = (await client.list_tools()).tools
            report["tools"] = [t.name for t in tools]
            add = next(t for t in tools if t.name == "add")
            report["add_output_schema"] = add.output_schema
            report["add_annotations"] = add.annotations.model_dump(by_alias=True, exclude_none=True)

        await step("list_tools", listing)

        async def call_add():
            result = await client.call_tool("add", {"a": 2, "b": 3})
            report["add"] = {
                "is_error": result.is_error,
                "structured": result.structured_content,
                "text": text_of(result),
            }

        await step("call add", call_add)

        async def call_slow():
            events = []

            async def on_progress(progress, total, message):
                events.append([progress, total, message])

            result = await client.call_tool("slow", {"steps": 3}, progress_callback=on_progress)
            report["slow"] = {"text": text_of(result), "progress": events}

        await step("call slow", call_slow)

        async def call_fail():
            result = await client.call_tool("fail", {})
            report["fail"] = {"is_error": result.is_error, "text": text_of(result)}

        await step("call fail", call_fail)

        async def bad_arguments():
            result = await client.call_tool("add", {"a": "two", "b": 3})
            report["bad_arguments"] = {"is_error": result.is_error, "text": text_of(result)}

        await step("bad arguments", bad_arguments)

        async def refused(name):
            try:
                await client.call_tool(name, {})
                report[f"call_{name}"] = {"refused": False}
            except MCPError as e:
                report[f"call_{name}"] = {"refused": True, "code": e.code, "message": e.error.message}

        await step("unknown tool", lambda: refused("nope"))
        await step("disabled tool", lambda: refused("secret"))

        async def cancel_slow():
            first_progress = anyio.Event()

            async def on_progress(progress, total, message):
                first_progress.set()

            async def run_call():
                await client.call_tool("slow", {"steps": 200, "delay_ms": 50}, progress_callback=on_progress)

            async with anyio.create_task_group() as tg:
                tg.start_soon(run_call)
                with anyio.fail_after(10):
                    await first_progress.wait()
                tg.cancel_scope.cancel()
            # The server drops the call's future when it handles `notifications/cancelled`.
            count = None
            for _ in range(50):
                result = await client.call_tool("cancelled_count", {})
                count = result.structured_content or json.loads(text_of(result))
                if count:
                    break
                await anyio.sleep(0.05)
            report["cancelled_count"] = count

        await step("cancel", cancel_slow)

        async def unlock_handshake_era():
            result = await client.call_tool("unlock", {})
            report["unlock"] = text_of(result)
            with anyio.move_on_after(5):
                await list_changed.wait()
            report["list_changed_received"] = list_changed.is_set()

        async def unlock_stateless_era():
            # 2026-07-28 pushes nothing: changes arrive on a `subscriptions/listen` stream.
            async with client.listen(tools_list_changed=True) as subscription:
                report["listen_honored"] = bool(subscription.honored.tools_list_changed)
                result = await client.call_tool("unlock", {})
                report["unlock"] = text_of(result)
                report["unlock_is_error"] = result.is_error
                if result.is_error:
                    return
                with anyio.move_on_after(5):
                    async for event in subscription:
                        report["listen_event"] = type(event).__name__
                        list_changed.set()
                        break
            report["list_changed_received"] = list_changed.is_set()

        async def unlock():
            if client.protocol_version == "2026-07-28":
                await unlock_stateless_era()
            else:
                await unlock_handshake_era()
            tools = (await client.list_tools()).tools
            report["tools_after_unlock"] = [t.name for t in tools]
            if "secret" in report["tools_after_unlock"]:
                result = await client.call_tool("secret", {})
                report["secret"] = text_of(result)

        await step("unlock", unlock)

    report["notifications"] = notifications
    print(json.dumps(report))


if __name__ == "__main__":
    try:
        anyio.run(main)
    except Exception as e:
        print(json.dumps({"fatal": f"{type(e).__name__}: {e}"}))
        sys.exit(1)
