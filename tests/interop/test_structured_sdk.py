"""Structured tool output between our client and a server built on the official SDK
(V0618-17..21, DES-10): the SDK derives output schemas from typed returns, our client
checks its results against them and exposes ``result.structured``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcp_sync import Client
from tests.helpers import LEGACY_ERA

pytestmark = [pytest.mark.interop, pytest.mark.timeout(60)]

SDK_SERVER = '''\
from typing import TypedDict

from pydantic import BaseModel
from mcp.server.mcpserver import MCPServer

server = MCPServer("sdk-structured", version="1.0.0")


class Weather(BaseModel):
    temperature: float
    conditions: str


class Totals(TypedDict):
    sum: int
    product: int


@server.tool()
def weather(city: str) -> Weather:
    return Weather(temperature=21.5, conditions=f"sunny in {city}")


@server.tool()
def totals(a: int, b: int) -> Totals:
    return {"sum": a + b, "product": a * b}


@server.tool()
def add(a: int, b: int) -> int:
    return a + b


if __name__ == "__main__":
    server.run("stdio")
'''


@pytest.fixture
def sdk_script(tmp_path: Path) -> Path:
    pytest.importorskip("mcp")
    path = tmp_path / "sdk_structured.py"
    path.write_text(SDK_SERVER)
    return path


def test_our_client_checks_the_sdk_servers_structured_output_v0618_20(
        sdk_script: Path) -> None:
    """V0618-17/18/20, NAMBIG-4: the SDK's output schemas are listed; each result
    conforms and is exposed as .structured; an int is wrapped as {"result": ...}."""
    with Client.stdio([sys.executable, str(sdk_script)], timeout=20, **LEGACY_ERA) as client:
        tools = {tool.name: tool for tool in client.list_tools()}
        weather = client.call_tool("weather", {"city": "Oslo"})
        totals = client.call_tool("totals", {"a": 2, "b": 3})
        added = client.call_tool("add", {"a": 2, "b": 3})
    assert client.protocol_version == "2025-11-25"
    for name in ("weather", "totals", "add"):
        schema = tools[name].output_schema
        assert schema is not None and schema["type"] == "object", name
    assert weather.structured == {"temperature": 21.5, "conditions": "sunny in Oslo"}
    assert totals.structured == {"sum": 5, "product": 6}
    assert added.structured == {"result": 5}

