"""The MCP server of this site: its tools, written as plain functions."""

from mcp_sync import Context, Server
from mcp_sync.django import close_old_connections

server = Server("django-demo", version="1.0.0", instructions="Tools of the Django demo site.")
# Tools run on the server's threads, outside Django's request cycle: this closes their
# database connections before and after each call, as Django does around a view.
server.add_call_hook(close_old_connections)


@server.tool(annotations={"readOnlyHint": True})
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def countdown(steps: int, ctx: Context) -> str:
    """Count down, reporting progress at each step."""
    for step in range(1, steps + 1):
        ctx.report_progress(step, steps)
    return "liftoff"
