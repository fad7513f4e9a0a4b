"""An mcp_sync server over stdio whose tools misbehave the ways test_stdio needs.

Run as ``tools_server.py [MAX_MESSAGE_SIZE]``; with a size, lines from the client longer
than that are refused.
"""

from __future__ import annotations

import os
import sys

from mcp_sync import Context, Server
from mcp_sync.transports.stdio import StdioServerTransport

server = Server("tools", version="1.0.0")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def shout(text: str) -> str:
    """Print the text with print(), as careless tool code does."""
    print(text)
    print(text, flush=True)
    return "shouted"


@server.tool()
def spew(size: int) -> str:
    """Write ``size`` bytes of log lines to stderr."""
    line = "e" * 99 + "\n"
    count, rest = divmod(size, len(line))
    sys.stderr.write(line * count + "f" * rest + "\n")
    sys.stderr.flush()
    return "spewed"


@server.tool()
def getenv(name: str) -> str:
    """The value of an environment variable, empty if unset."""
    return os.environ.get(name, "")


@server.tool()
def getcwd() -> str:
    """The working directory."""
    return os.getcwd()


@server.tool()
def lines(count: int) -> str:
    """Text of ``count`` lines."""
    return "\n".join(f"line {i}" for i in range(count))


@server.tool()
def hang(ctx: Context) -> str:
    """Report our pid as progress, then wait until cancelled."""
    ctx.report_progress(1, message=str(os.getpid()))
    ctx.wait_cancelled(120)
    return "released"


def main() -> None:
    if len(sys.argv) > 1:
        transport = StdioServerTransport(max_message_size=int(sys.argv[1]))
        connection = server.connect(transport)
        try:
            connection.wait_closed()
        finally:
            connection.close()
    else:
        server.run_stdio()


if __name__ == "__main__":
    main()
