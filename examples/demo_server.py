"""A small MCP server over stdio: the one the quick start's client talks to.

Run it directly to serve on stdin/stdout, or let a client spawn it:
``Client.stdio([sys.executable, "examples/demo_server.py"])``.
"""

from mcp_sync import Context, Server

server = Server("demo", version="1.0.0", instructions="Arithmetic and echo tools.")


@server.tool(annotations={"readOnlyHint": True})
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def echo(message: str) -> str:
    """Return the message unchanged."""
    return message


@server.tool()
def countdown(steps: int, ctx: Context) -> str:
    """Count down, reporting progress at each step; stops early if cancelled."""
    for done in range(1, steps + 1):
        if ctx.cancelled:
            break
        ctx.report_progress(done, steps, f"step {done} of {steps}")
    return "liftoff"


if __name__ == "__main__":
    server.run_stdio()
