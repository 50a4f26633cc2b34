"""An MCP server written with the official Python SDK (mcp 2.x) whose tools ask their caller
during the call, imported by our client in tests/mcp/forwarded.rs.

Usage: mcp_asking_peer.py             (stdio)
       mcp_asking_peer.py --http PORT (streamable HTTP at http://127.0.0.1:PORT/mcp; prints READY)

Tools: `book` asks the user (`elicitation/create`) whether to book a table and for how many
guests (a default of 2), and `title` asks the client's model (`sampling/createMessage`) for a
title. `asked` says how many questions the server has sent so far (each call of `book` or
`title` sends one, again when the call is made again).
"""

import sys

from pydantic import BaseModel, Field

from mcp import types
from mcp.server import MCPServer
from mcp.server.mcpserver import Context

mcp = MCPServer("asking-peer")

questions = 0


class Booking(BaseModel):
    confirm: bool = Field(description="Book it?")
    guests: int = Field(default=2, description="How many guests")


@mcp.tool()
async def book(table: str, ctx: Context) -> str:
    """Book a table, asking the user first."""
    global questions
    questions += 1
    answer = await ctx.elicit(message=f"Book table {table}?", schema=Booking)
    if answer.action == "accept":
        if not answer.data.confirm:
            return f"{table}: not booked"
        return f"{table}: booked for {answer.data.guests}"
    return f"{table}: {answer.action}"


@mcp.tool()
async def title(text: str, ctx: Context) -> str:
    """A title for a text, written by the client's model."""
    global questions
    questions += 1
    result = await ctx.session.create_message(
        messages=[
            types.SamplingMessage(
                role="user", content=types.TextContent(type="text", text=f"A title for: {text}")
            )
        ],
        max_tokens=20,
        system_prompt="Answer with a title only.",
        related_request_id=ctx.request_id,
    )
    return f"title: {result.content.text} (by {result.model})"


@mcp.tool()
def asked() -> int:
    """How many questions the server has sent."""
    return questions


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        port = int(sys.argv[2])
        print(f"READY {port}", flush=True)
        mcp.run(transport="streamable-http", host="127.0.0.1", port=port)
    else:
        mcp.run()
