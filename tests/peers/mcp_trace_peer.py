"""Trace context with the official Python MCP SDK (mcp 2.x), which propagates W3C trace
context in `_meta` when an OpenTelemetry SDK is installed; used by tests/otel.

Usage: mcp_trace_peer.py server       (stdio server; its tool `trace_id` answers the trace id
                                       of the span the SDK serves the call in)
       mcp_trace_peer.py client URL   (calls `multiply` on the streamable-HTTP server at URL
                                       inside a span of its own; prints {"trace_id", "span_id"}
                                       of that span as its last line)
"""

import json
import sys

import anyio
from mcp import Client
from mcp.server import MCPServer
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

# A real tracer: spans get ids, and the SDK injects and extracts their context.
trace.set_tracer_provider(TracerProvider())


def hex_ids(span) -> dict:
    context = span.get_span_context()
    return {"trace_id": f"{context.trace_id:032x}", "span_id": f"{context.span_id:016x}"}


def serve() -> None:
    mcp = MCPServer("python-trace-peer")

    @mcp.tool()
    def trace_id() -> str:
        """The trace id of the span this call is served in."""
        return hex_ids(trace.get_current_span())["trace_id"]

    try:
        mcp.run()
    except BaseException:  # the client closed stdin while the SDK was writing: the end
        pass


async def call(url: str) -> None:
    tracer = trace.get_tracer("python-client")
    with tracer.start_as_current_span("python client") as span:
        async with Client(url) as client:
            result = await client.call_tool("multiply", {"a": 6, "b": 7})
            text = "".join(c.text for c in result.content if getattr(c, "type", None) == "text")
        report = hex_ids(span)
        report["result"] = text
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["server"]:
        serve()
    elif sys.argv[1:2] == ["client"] and len(sys.argv) == 3:
        anyio.run(call, sys.argv[2])
    else:
        sys.exit(__doc__)
