"""An mcp_sync client for the official MCP conformance suite's client scenarios.

The suite (``@modelcontextprotocol/conformance``, see ``.ci/conformance``) starts a mock
server for a scenario, then runs this program with the server's URL as the last argument
and the scenario's name in ``MCP_CONFORMANCE_SCENARIO``::

    npx @modelcontextprotocol/conformance client --scenario tools_call \\
        --command "python examples/conformance_client.py"

Each scenario is a short, ordinary use of :class:`~mcp_sync.Client` over Streamable HTTP;
the mock server checks what it was sent. The version offered is the one named in
``MCP_CONFORMANCE_PROTOCOL_VERSION`` (our newest if unset). The ``auth/*`` scenarios need
an OAuth client, which mcp_sync does not have yet: for those the program says so and
exits with status 2, as it does for a scenario it does not know.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from mcp_sync import Client, ElicitationRequest, ElicitationResult, types

#: The tool whose input schema json-schema-2020-12-preservation checks, and the tool to
#: echo it back with.
SCHEMA_TOOL = "json_schema_2020_12_tool"
ECHO_TOOL = "json_schema_echo"


def connect(url: str, **options: Any) -> Client:
    """A client of ``url``, offering the version the suite asked for."""
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION")
    if version:
        options["protocol_version"] = version
    return Client.http(url, name="mcp-sync-conformance-client", timeout=20, **options)


def text_of(result: types.CallToolResult) -> str:
    """The text items of a tool result, joined."""
    return " ".join(item.text for item in result.content if isinstance(item, types.TextContent))


def initialize(url: str) -> None:
    """Connect (``initialize``, then ``notifications/initialized``) and disconnect."""
    with connect(url) as client:
        print(f"connected to {client.server_info.name}, protocol {client.protocol_version}")


def tools_call(url: str) -> None:
    """Call ``add_numbers`` with two numbers."""
    with connect(url) as client:
        names = [tool.name for tool in client.list_tools()]
        if "add_numbers" not in names:
            raise RuntimeError(f"the server offers no add_numbers tool: {names}")
        print(text_of(client.call_tool("add_numbers", {"a": 5, "b": 3})))


def accept_with_defaults(request: ElicitationRequest) -> ElicitationResult[Any]:
    """Answer an elicitation as a user who accepts the form as it was pre-filled: every
    field that has a default keeps it (SEP-1034)."""
    return request.accept(request.defaults)


def elicitation_defaults(url: str) -> None:
    """Call the tool that elicits a form with defaults, and accept it unchanged."""
    with connect(url, elicitation_handler=accept_with_defaults) as client:
        print(text_of(client.call_tool("test_client_elicitation_defaults", {})))


def sse_retry(url: str) -> None:
    """Call ``test_reconnection``, whose event stream the server closes before answering:
    the answer arrives after reconnecting (SEP-1699). Without the optional GET stream for
    the server's own messages, the only GET the server sees is the reconnection."""
    with connect(url, listen=False) as client:
        print(text_of(client.call_tool("test_reconnection", {})))


def json_schema_preservation(url: str) -> None:
    """Send the input schema of a tool back to the server exactly as it was listed."""
    with connect(url) as client:
        tools = {tool.name: tool for tool in client.list_tools()}
        if SCHEMA_TOOL not in tools:
            raise RuntimeError(f"the server offers no {SCHEMA_TOOL} tool: {sorted(tools)}")
        schema = tools[SCHEMA_TOOL].input_schema
        print(text_of(client.call_tool(ECHO_TOOL, {"schema": schema})))


#: The client scenarios of the suite that this program runs, by name.
SCENARIOS: dict[str, Callable[[str], None]] = {
    "initialize": initialize,
    "tools_call": tools_call,
    "elicitation-sep1034-client-defaults": elicitation_defaults,
    "sse-retry": sse_retry,
    "json-schema-2020-12-preservation": json_schema_preservation,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the scenario named by ``MCP_CONFORMANCE_SCENARIO`` against the URL in ``argv``.

    Args:
        argv: the command-line arguments; ``sys.argv[1:]`` if None. The last one is the
            server's URL.

    Returns:
        0 when the scenario ran to its end, 1 when it failed, 2 when it cannot be run.
    """
    args = sys.argv[1:] if argv is None else list(argv)
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if not args:
        print("usage: conformance_client.py URL (with MCP_CONFORMANCE_SCENARIO set)",
              file=sys.stderr)
        return 2
    if scenario.startswith("auth/"):
        print(f"scenario {scenario!r} needs an OAuth client, which mcp_sync does not "
              "have yet: not run", file=sys.stderr)
        return 2
    run = SCENARIOS.get(scenario)
    if run is None:
        print(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}",
              file=sys.stderr)
        return 2
    try:
        run(args[-1])
    except Exception as exc:  # reported to the suite through stderr and the status
        print(f"scenario {scenario!r} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
