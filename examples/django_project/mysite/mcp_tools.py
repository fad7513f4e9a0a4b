"""The MCP server of this site: its tools, written as plain functions."""

from mcp_sync import Context, Server

server = Server("django-demo", version="1.0.0", instructions="Tools of the Django demo site.")


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
