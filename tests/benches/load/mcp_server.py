"""The official Python MCP SDK's server for the load bench (tests/benches/load.rs): `mcp` 2.x
`MCPServer` (FastMCP) with one tool, `add(a, b) -> a + b`, over streamable HTTP at
http://127.0.0.1:PORT/mcp under uvicorn (access log off). Prints `READY <port>` once listening.

Usage: mcp_server.py PORT               (sessions, answers as server-sent events: the default)
       mcp_server.py PORT --stateless   (stateless_http=True, json_response=True)

Run with the SDK install of tests/peers/setup.sh (target/py/mcp/bin/python).
"""

import sys

import anyio
import uvicorn
from mcp.server import MCPServer

# WARNING: at the default INFO the SDK logs a line per stateless request ("Terminating
# session"), as uvicorn would log each request without `access_log=False`.
mcp = MCPServer("python-load", log_level="WARNING")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class Server(uvicorn.Server):
    async def startup(self, sockets=None):
        await super().startup(sockets)
        print(f"READY {self.config.port}", flush=True)


if __name__ == "__main__":
    port = int(sys.argv[1])
    stateless = "--stateless" in sys.argv[2:]
    # What `mcp.run(transport="streamable-http")` does, with the two modes' settings.
    app = mcp.streamable_http_app(
        host="127.0.0.1", stateless_http=stateless, json_response=stateless
    )
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", access_log=False
    )
    anyio.run(Server(config).serve)
