"""An MCP server written with the official Python SDK (mcp 2.x), imported by our client in
tests/mcp.

Usage: mcp_server_peer.py            (stdio)
       mcp_server_peer.py --http PORT (streamable HTTP at http://127.0.0.1:PORT/mcp; prints READY)
       mcp_server_peer.py --http PORT --tls CERT KEY
                                      (the same at https://, the SDK's Starlette app under
                                      uvicorn with these PEM files; prints READY once listening)

Tools: `add` (structured output), `countdown` (reports progress; counts the calls cancelled
under it, read back with `cancellations`), `enable_extra` (adds the tool `extra` at run time and
tells the client the tool list changed), and `crash` (the process dies in the middle of the
call, for the import side's connection-loss handling).
"""

import os
import sys

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver import Context

mcp = MCPServer("python-peer")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


cancelled = 0


@mcp.tool()
async def countdown(n: int, ctx: Context) -> str:
    """Count down from n, reporting progress."""
    global cancelled
    try:
        for i in range(1, n + 1):
            await anyio.sleep(0.02)
            await ctx.report_progress(i, total=n, message=f"{n - i} left")
    except anyio.get_cancelled_exc_class():
        cancelled += 1
        raise
    return "liftoff"


@mcp.tool()
def cancellations() -> int:
    """How many countdowns were cancelled by the client."""
    return cancelled


def extra(word: str) -> str:
    """Shout a word."""
    return word.upper() + "!"


@mcp.tool()
async def enable_extra(ctx: Context) -> str:
    """Add the tool `extra`."""
    if "extra" not in [t.name for t in await mcp.list_tools()]:
        mcp.add_tool(extra)
    # Handshake-era sessions hear it as a pushed notification; 2026 listeners through the bus.
    await ctx.session.send_tool_list_changed()
    await ctx.notify_tools_changed()
    return "extra enabled"


@mcp.tool()
async def crash() -> str:
    """Die in the middle of the call."""
    await anyio.sleep(0.1)
    os._exit(3)


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--http" and sys.argv[3] == "--tls":
        import uvicorn

        class Server(uvicorn.Server):
            async def startup(self, sockets=None):
                await super().startup(sockets)
                print(f"READY {port}", flush=True)

        # What `mcp.run(transport="streamable-http")` does, plus the certificate and key.
        port = int(sys.argv[2])
        app = mcp.streamable_http_app(host="127.0.0.1")
        config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                ssl_certfile=sys.argv[4], ssl_keyfile=sys.argv[5])
        anyio.run(Server(config).serve)
    elif len(sys.argv) == 3 and sys.argv[1] == "--http":
        port = int(sys.argv[2])
        print(f"READY {port}", flush=True)
        mcp.run(transport="streamable-http", host="127.0.0.1", port=port)
    else:
        mcp.run()
