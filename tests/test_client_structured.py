"""The client's check of structured tool output (V0618-20, DES-10)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from mcp_sync import Client, Server, types
from mcp_sync.errors import ToolOutputError
from mcp_sync.testing import open_client
from tests.helpers import ScriptedServer, add_arithmetic_tools

pytestmark = pytest.mark.timeout(30)

Start = Callable[..., ScriptedServer]

OUTPUT_SCHEMA = {"type": "object", "properties": {"sum": {"type": "integer"}},
                 "required": ["sum"]}
TOOLS = {"tools": [
    {"name": "sum", "inputSchema": {"type": "object"}, "outputSchema": OUTPUT_SCHEMA},
    {"name": "plain", "inputSchema": {"type": "object"}},
]}


def answers(results: dict[str, dict[str, Any]]) -> dict[str, Callable[[dict[str, Any]], Any]]:
    return {"tools/list": lambda params: TOOLS,
            "tools/call": lambda params: results[params["name"]]}


def test_a_conforming_result_is_exposed_as_structured_v0618_20(scripted: Start) -> None:
    """V0618-20: a result that fits the listed schema comes back with .structured."""
    server = scripted({"tools": {}}, answers({"sum": {
        "content": [{"type": "text", "text": '{"sum": 3}'}], "structuredContent": {"sum": 3}}}),
        version="2025-06-18")
    with Client(server.peer.transport) as client:
        assert client.list_tools()[0].output_schema == OUTPUT_SCHEMA
        result = client.call_tool("sum", {"a": 1, "b": 2})
        assert result.structured == {"sum": 3}
        assert client.call_tool_async("sum").result(10).structured == {"sum": 3}


def test_a_mismatching_result_raises_v0618_20(scripted: Start) -> None:
    """V0618-20: structuredContent that breaks the listed schema raises ToolOutputError,
    which carries the result and names the problem; the async call fails the same way."""
    bad = {"content": [{"type": "text", "text": "x"}], "structuredContent": {"sum": "three"}}
    server = scripted({"tools": {}}, answers({"sum": bad}), version="2025-06-18")
    with Client(server.peer.transport) as client:
        client.list_tools()
        with pytest.raises(ToolOutputError, match="sum") as raised:
            client.call_tool("sum")
        assert raised.value.result.structured == {"sum": "three"}
        assert any("three" in problem for problem in raised.value.problems)
        with pytest.raises(ToolOutputError):
            client.call_tool_async("sum").result(10)


def test_missing_structured_content_is_an_error_unless_is_error_des_10(
        scripted: Start) -> None:
    """DES-10: a declared schema with no structuredContent raises, except on isError
    results; a tool without a schema is not checked."""
    results = {"sum": {"content": [{"type": "text", "text": "3"}]},
               "plain": {"content": [{"type": "text", "text": "anything"}]}}
    server = scripted({"tools": {}}, answers(results), version="2025-06-18")
    with Client(server.peer.transport) as client:
        client.list_tools()
        with pytest.raises(ToolOutputError, match="no structuredContent"):
            client.call_tool("sum")
        results["sum"] = {"content": [{"type": "text", "text": "failed"}], "isError": True}
        assert client.call_tool("sum").is_error
        assert client.call_tool("plain").structured is None


def test_the_check_can_be_switched_off_v0618_20(scripted: Start) -> None:
    """V0618-20: validate_tool_output=False takes results as they come."""
    bad = {"content": [], "structuredContent": {"sum": "three"}}
    server = scripted({"tools": {}}, answers({"sum": bad}), version="2025-06-18")
    with Client(server.peer.transport, validate_tool_output=False) as client:
        client.list_tools()
        assert client.call_tool("sum").structured == {"sum": "three"}


def test_an_unlisted_tool_is_not_checked_v0618_20(scripted: Start) -> None:
    """V0618-20: the check uses the schema tools/list gave; before listing there is none."""
    bad = {"content": [], "structuredContent": {"sum": "three"}}
    server = scripted({"tools": {}}, answers({"sum": bad}), version="2025-06-18")
    with Client(server.peer.transport) as client:
        assert client.call_tool("sum").structured == {"sum": "three"}


def test_our_client_with_our_server_des_10() -> None:
    """DES-10 end to end: our server's structured results pass our client's check."""
    server = Server("structured")
    add_arithmetic_tools(server)

    with open_client(server) as client:
        tools = {tool.name: tool for tool in client.list_tools()}
        assert tools["totals"].output_schema is not None
        assert client.call_tool("totals", {"a": 2, "b": 3}).structured == {
            "sum": 5, "product": 6}
        added = client.call_tool("add", {"a": 2, "b": 3})
        assert added.structured == {"result": 5}
        assert added.content == [types.TextContent(text="5")]
