"""Structured tool output on the server (V0618-17..21, NAMBIG-3, NAMBIG-4, DES-10)."""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Any

import attrs
import jsonschema
import pytest

from mcp_sync import Server, types
from mcp_sync.protocol._convert import to_wire
from mcp_sync.testing import open_client
from tests.conftest import SPEC_DIR
from tests.helpers import Totals, add_arithmetic_tools
from tests.server_support import raw_session, request

SCHEMA_0618 = json.loads((SPEC_DIR / "schema-2025-06-18.json").read_text())


def check_0618(value: Any, definition: str) -> None:
    """``value`` fits ``definition`` of the 2025-06-18 schema."""
    jsonschema.validate(value, {"$ref": f"#/definitions/{definition}",
                                "definitions": SCHEMA_0618["definitions"]})


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@attrs.define
class Point:
    x: int
    y: int
    colour: Colour = Colour.RED


@dataclasses.dataclass
class Weather:
    temperature: float
    conditions: str


def make_server() -> Server:
    server = Server("structured")

    @server.tool(title="A point")
    def point(x: int, y: int) -> Point:
        return Point(x, y)

    @server.tool()
    def weather(city: str) -> Weather:
        return Weather(21.5, f"sunny in {city}")

    add_arithmetic_tools(server)

    @server.tool()
    def names() -> list[str]:
        return ["a", "b"]

    @server.tool()
    def lying() -> Totals:
        return {"sum": "many", "product": 1}  # type: ignore[typeddict-item]

    @server.tool(output_schema={"type": "object", "properties": {"n": {"type": "integer"}},
                                "required": ["n"]})
    def explicit() -> dict[str, Any]:
        return {"n": 7}

    @server.tool(output_schema={"type": "object", "required": ["n"]})
    def explicit_result() -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(text="seven")],
                                    structured_content={"n": 7})

    @server.tool(output_schema=False)
    def undeclared() -> int:
        return 1

    @server.tool()
    def text() -> str:
        return "plain"

    @server.tool()
    def loose() -> dict[str, Any]:
        return {"any": "thing"}

    @server.tool()
    def failing() -> Totals:
        raise RuntimeError("boom")

    return server


def tool_map(client: Any) -> dict[str, types.Tool]:
    return {tool.name: tool for tool in client.list_tools()}


def test_output_schema_from_the_return_annotation_v0618_17() -> None:
    """V0618-17: attrs classes, dataclasses and TypedDicts give an object schema, valid
    as a 2025-06-18 Tool; str, Any and output_schema=False give none."""
    with open_client(make_server()) as client:
        tools = tool_map(client)
        assert tools["point"].output_schema == {
            "type": "object",
            "properties": {"x": {"type": "integer"}, "y": {"type": "integer"},
                           "colour": {"type": "string", "enum": ["red", "blue"],
                                      "default": "red"}},
            "required": ["x", "y"], "additionalProperties": False}
        assert tools["weather"].output_schema is not None
        assert tools["weather"].output_schema["required"] == ["temperature", "conditions"]
        assert tools["totals"].output_schema == {
            "type": "object", "properties": {"sum": {"type": "integer"},
                                             "product": {"type": "integer"}},
            "required": ["sum", "product"], "additionalProperties": False}
        for name in ("undeclared", "text", "loose"):
            assert tools[name].output_schema is None, name
        for tool in client.list_tools():
            check_0618(to_wire(tool), "Tool")


def test_no_ref_or_defs_in_generated_schemas_nambig_3() -> None:
    """NAMBIG-3: generated output schemas are portable (no $ref/$defs/definitions)."""
    with open_client(make_server()) as client:
        for tool in client.list_tools():
            text = json.dumps(tool.output_schema)
            assert "$ref" not in text and "$defs" not in text and "definitions" not in text


def test_non_objects_are_wrapped_as_result_nambig_4() -> None:
    """NAMBIG-4, V0618-18: an int or a list is wrapped as {"result": value}, with a
    matching schema; the text is the value's JSON."""
    with open_client(make_server()) as client:
        tools = tool_map(client)
        assert tools["add"].output_schema == {
            "type": "object", "properties": {"result": {"type": "integer"}},
            "required": ["result"]}
        added = client.call_tool("add", {"a": 2, "b": 3})
        assert added.structured == {"result": 5}
        assert added.content == [types.TextContent(text="5")]
        listed = client.call_tool("names")
        assert listed.structured_content == {"result": ["a", "b"]}
        assert json.loads(listed.content[0].text) == ["a", "b"]


def test_structured_content_with_its_json_text_v0618_21() -> None:
    """V0618-18/21: an object result is structuredContent plus the same data as JSON text;
    enums go out as their values; the results fit the 2025-06-18 schema."""
    with open_client(make_server()) as client:
        for name, arguments in (("point", {"x": 1, "y": 2}), ("weather", {"city": "Oslo"}),
                                ("totals", {"a": 3, "b": 4}), ("explicit", {})):
            result = client.call_tool(name, arguments)
            assert not result.is_error, result
            assert json.loads(result.content[0].text) == result.structured_content
            check_0618(to_wire(result), "CallToolResult")
        assert client.call_tool("point", {"x": 1, "y": 2}).structured == {
            "x": 1, "y": 2, "colour": "red"}
        assert client.call_tool("totals", {"a": 3, "b": 4}).structured == {
            "sum": 7, "product": 12}


def test_a_returned_call_tool_result_keeps_its_content_v0618_19() -> None:
    """V0618-19: a CallToolResult with structured content is checked and sent as it is."""
    with open_client(make_server()) as client:
        result = client.call_tool("explicit_result")
        assert result.structured == {"n": 7}
        assert result.content == [types.TextContent(text="seven")]


def test_a_non_conforming_return_is_not_sent_v0618_19() -> None:
    """V0618-19: output that breaks the schema becomes an isError result naming the
    problem; the bad structured content never reaches the client."""
    with raw_session(make_server(), version="2025-06-18") as (peer, _):
        answer = peer.call(request("tools/call", {"name": "lying"}))["result"]
        assert answer["isError"] is True
        assert "structuredContent" not in answer
        text = answer["content"][0]["text"]
        assert "does not match its output schema" in text and "sum" in text
        failing = peer.call(request("tools/call", {"name": "failing"}))["result"]
        assert failing["isError"] is True and failing["content"][0]["text"] == "Error: boom"


@pytest.mark.parametrize("version", ["2025-03-26", "2024-11-05"])
def test_older_sessions_get_neither_schema_nor_structured_content_des_10(
        version: str) -> None:
    """DES-10, DES-3: before 2025-06-18 tools/list has no outputSchema and results have
    no structuredContent, but keep their JSON text."""
    with raw_session(make_server(), version=version) as (peer, _):
        tools = peer.call(request("tools/list"))["result"]["tools"]
        assert all("outputSchema" not in tool for tool in tools)
        answer = peer.call(request("tools/call", {"name": "totals",
                                                  "arguments": {"a": 2, "b": 5}}))["result"]
        assert answer == {"content": [{"type": "text", "text": '{"sum": 7, "product": 10}'}]}


def test_newer_session_sees_schema_and_structured_content_on_the_wire() -> None:
    """V0618-17/18: a 2025-06-18 session gets outputSchema and structuredContent."""
    with raw_session(make_server(), version="2025-06-18") as (peer, _):
        tools = {tool["name"]: tool
                 for tool in peer.call(request("tools/list"))["result"]["tools"]}
        assert tools["totals"]["outputSchema"]["type"] == "object"
        assert tools["point"]["title"] == "A point"
        answer = peer.call(request("tools/call", {"name": "totals",
                                                  "arguments": {"a": 2, "b": 5}}))["result"]
        assert answer["structuredContent"] == {"sum": 7, "product": 10}


def test_an_explicit_schema_must_be_an_object_schema_v0618_17() -> None:
    """V0618-17: output_schema= must describe an object; anything else is refused at
    registration."""
    server = Server("bad")
    with pytest.raises(TypeError, match="output_schema"):
        server.add_tool(lambda: 1, name="bad", output_schema={"type": "integer"})
