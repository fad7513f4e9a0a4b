"""An MCP server built on the official Python SDK, served over stdio when run.

The interop tests spawn it to check that mcp_sync's client gets on with a server it did
not write. Keep the tools small and deterministic: the tests assert their exact output.
"""

from __future__ import annotations

from mcp import MCPError
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("sdk-interop", version="2.0.0", instructions="Tools for interop tests.")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def echo(message: str) -> str:
    """Return the message unchanged."""
    return message


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Count to steps, reporting progress after each one."""
    for done in range(1, steps + 1):
        await ctx.report_progress(done, steps, f"step {done} of {steps}")
    return f"counted {steps}"


@server.tool()
def fail(reason: str) -> str:
    """Always raise, so the failure comes back as an error result."""
    raise ValueError(reason)


@server.tool()
def reject(value: str) -> str:
    """Refuse the call with a JSON-RPC error rather than an error result."""
    # The SDK answers an unknown tool with an error *result*; raising MCPError is how an
    # SDK tool produces a protocol-level error, which our client must map to RpcError.
    raise MCPError(-32602, f"value refused: {value}", {"value": value})


if __name__ == "__main__":
    server.run("stdio")
