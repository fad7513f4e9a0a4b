"""The ``mcp-sync`` command: talk to an MCP server over stdio from a shell.

Examples::

    mcp-sync tools -- python examples/demo_server.py
    mcp-sync call add '{"a": 1, "b": 2}' -- python examples/demo_server.py
    mcp-sync ping -- python examples/demo_server.py
    mcp-sync tools -- http://127.0.0.1:8000/mcp      (a Streamable HTTP server)
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from typing import Any

from ._version import __version__
from .client import Client
from .errors import McpError
from .protocol._convert import to_wire

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcp-sync",
        description="Start an MCP server over stdio and talk to it. Put the server's "
                    "command after '--', or the URL of a Streamable HTTP server.")
    parser.add_argument("--version", action="version", version=f"mcp-sync {__version__}")
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="seconds to wait for each answer (default 30)")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("info", help="print the server's name, version and capabilities")
    commands.add_parser("tools", help="list the server's tools as JSON")
    commands.add_parser("ping", help="check that the server answers")
    call = commands.add_parser("call", help="call a tool and print its result as JSON")
    call.add_argument("tool", help="the tool's name")
    call.add_argument("arguments", nargs="?", default="{}",
                      help="the arguments as a JSON object (default {})")
    return parser


def _split(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    argv = list(argv)
    if "--" not in argv:
        return argv, []
    at = argv.index("--")
    return argv[:at], argv[at + 1:]


def _print(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    # Every failure is printed below, with what the library knows of it: its own
    # warning of a lost connection would say the same thing a second time.
    logging.getLogger("mcp_sync").addHandler(logging.NullHandler())
    ours, server_command = _split(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    options = parser.parse_args(ours)
    if not server_command:
        parser.error("give the server's command after '--'")
    arguments: Any = None
    if options.command == "call":
        try:
            arguments = json.loads(options.arguments)
        except ValueError as exc:
            parser.error(f"arguments are not valid JSON: {exc}")
        if not isinstance(arguments, dict):
            parser.error("arguments must be a JSON object")
    try:
        if len(server_command) == 1 and server_command[0].startswith(("http://", "https://")):
            client = Client.http(server_command[0], timeout=options.timeout)
        else:
            client = Client.stdio(server_command, timeout=options.timeout)
        with client:
            if options.command == "info":
                _print({"serverInfo": to_wire(client.server_info),
                        "protocolVersion": client.protocol_version,
                        "capabilities": to_wire(client.server_capabilities),
                        "instructions": client.instructions})
            elif options.command == "tools":
                _print([to_wire(tool) for tool in client.list_tools()])
            elif options.command == "ping":
                client.ping()
                print("ok")
            else:
                result = client.call_tool(options.tool, arguments)
                _print(to_wire(result))
                return 1 if result.is_error else 0
    except McpError as exc:
        print(f"mcp-sync: {exc}", file=sys.stderr)
        return 2
    return 0
