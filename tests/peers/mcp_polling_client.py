"""The official Python MCP client (mcp 2.x) calling tools of our server whose event streams
close mid-call (SEP-1699 polling); run by tests/mcp/polling.rs.

Usage: mcp_polling_client.py --url URL

Calls `slow` (progress every step; the server closes streams of calls still running after a
while) and `closes` (closes its own stream), in the handshake era, and prints one JSON report:
each call's text and the progress seen. Observations are recorded, not judged.
"""

import argparse
import json

import anyio
from mcp import Client


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    args = parser.parse_args()
    report: dict = {"errors": []}
    try:
        async with Client(args.url, mode="legacy") as client:
            progress = []

            async def on_progress(done, total, message):
                progress.append(done)

            with anyio.fail_after(30):
                slow = await client.call_tool("slow", {"steps": 5}, progress_callback=on_progress)
                report["slow"] = {"text": text_of(slow), "is_error": slow.is_error}
                report["progress"] = progress
                closes = await client.call_tool("closes", {})
                report["closes"] = {"text": text_of(closes), "is_error": closes.is_error}
    except Exception as e:  # reported, never hidden
        report["errors"].append(f"{type(e).__name__}: {e}")
    print(json.dumps(report))


anyio.run(main)
