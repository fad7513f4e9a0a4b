"""The ``mcp-sync`` command (also ``python -m mcp_sync``): talk to an MCP server from a
shell. See docs/cli.md.

Examples::

    mcp-sync tools -- python examples/everything_server.py
    mcp-sync call add a=1 b=2 -- python examples/everything_server.py
    mcp-sync --json call add '{"a": 1, "b": 2}' --url http://127.0.0.1:8000/mcp
    mcp-sync bridge --port 8000 -- python examples/everything_server.py
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ._cli._run import run

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line (``sys.argv[1:]`` if None); returns the exit status.

    Every failure prints one line on stderr and gives a non-zero status: 1 the server
    answered with an error (or the tool reported one), 2 bad usage, 3 the server could
    not be reached or went away, 4 timeout, 130 interrupted (Ctrl-C cancels the call
    at the server first).
    """
    return run(sys.argv[1:] if argv is None else argv)
