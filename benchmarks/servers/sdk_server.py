"""The benchmark's server on the official SDK (``mcp``): tools ``echo`` and ``many_items``.

Serves stdio by default; ``--http PORT`` serves Streamable HTTP at ``/mcp`` on 127.0.0.1
with the SDK's own uvicorn runner, as SSE streams unless ``--json-response``.
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import TextContent

server = MCPServer("bench-sdk", version="1.0.0")


@server.tool()
def echo(message: str) -> str:
    """Return the message unchanged."""
    return message


@server.tool(structured_output=False)
def many_items(n: int) -> list[TextContent]:
    """Return n small text items."""
    return [TextContent(type="text", text=f"item {i}") for i in range(n)]


def main() -> None:
    if len(sys.argv) == 1:
        # Serving stdio takes no options. Importing argparse and parsing none would cost
        # the connect row about 5 ms (it looks up translations and the terminal's size),
        # a cost of this script rather than of the library it measures.
        server.run("stdio")
        return
    import argparse

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--http", type=int, metavar="PORT")
    parser.add_argument("--json-response", action="store_true")
    args = parser.parse_args()
    if args.http is None:
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.http,
                   json_response=args.json_response)


if __name__ == "__main__":
    main()
