"""The official TypeScript SDK's client against examples/everything_server.py, over stdio
(the client spawns the server) and over Streamable HTTP (the server's ``--http`` mode on a
free port, answering POSTs with event streams, or with JSON): it negotiates 2025-11-25 and
uses the tools ``structured``, ``ask`` and ``link`` (tests/interop/ts/client.mjs). The
SDK's client offers only its newest revision; the older-version checks have client.mjs
rewrite its initialize request to offer 2025-03-26, and the SDK's client accepts the
server's answer on its own.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

from tests.interop.test_everything_server import EVERYTHING_SERVER, http_child
from tests.interop.ts_sdk import requires_ts_sdk, run_ts_client
from tests.test_everything_server import TOOL_NAMES

pytestmark = [pytest.mark.interop, pytest.mark.timeout(60), requires_ts_sdk]

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}},
               "required": ["name"]}


#: The server's command-line flags for each way of serving HTTP tested here.
HTTP_FLAGS = {
    "http": [],
    # POSTs answered with JSON: the elicitation request travels on the GET stream the
    # SDK's client opens.
    "http-json": ["--json-response"],
}


def _drive(transport: str, *options: str) -> dict[str, Any]:
    """client.mjs's report of a whole run against the everything server."""
    if transport == "stdio":
        return run_ts_client(*options, "stdio", sys.executable, str(EVERYTHING_SERVER))
    with http_child(HTTP_FLAGS[transport]) as child:
        return run_ts_client(*options, "http", child.url)


@pytest.fixture(scope="module", params=["stdio", *HTTP_FLAGS])
def report(request: pytest.FixtureRequest) -> dict[str, Any]:
    # One run per transport serves every test below; it ends, children and all, before
    # the first of them starts.
    return _drive(request.param)


def _texts(result: dict[str, Any]) -> list[str]:
    return [item["text"] for item in result["content"] if item["type"] == "text"]


def test_negotiates_2025_11_25_v0618_10(report: dict[str, Any]) -> None:
    """V0618-10: offered its newest revision, the server answers with it."""
    assert report["offered"] == "2025-11-25"
    assert report["protocolVersion"] == "2025-11-25"
    assert report["serverInfo"]["name"] == "everything"


def test_every_tool_has_a_title_v0618_16(report: dict[str, Any]) -> None:
    """V0618-16: every tool the SDK lists carries a display title beside its name."""
    tools = {tool["name"]: tool for tool in report["tools"]}
    assert sorted(tools) == sorted(TOOL_NAMES)
    assert all(tool.get("title") for tool in tools.values()), tools
    assert tools["structured"]["title"] == "Sum and product"


def test_structured_output_v0618_17_19_21(report: dict[str, Any]) -> None:
    """V0618-17/18/19/21: ``structured`` declares an outputSchema and returns
    structuredContent that fits it, with the same data as text. V0618-20: the SDK's client
    checks structuredContent against the schema it listed, and throws when it does not fit."""
    (tool,) = [tool for tool in report["tools"] if tool["name"] == "structured"]
    assert tool["outputSchema"]["type"] == "object"
    assert tool["outputSchema"]["required"] == ["sum", "product"]
    result = report["structured"]
    assert result["structuredContent"] == {"sum": 7, "product": 12}
    assert not result.get("isError")
    assert [json_text.replace(" ", "") for json_text in _texts(result)] == [
        '{"sum":7,"product":12}']


def test_ask_elicits_through_the_sdk_v0618_29_31(report: dict[str, Any]) -> None:
    """V0618-15/29/31, V1125-34/36: the SDK's client declares form elicitation; each
    ``ask`` sends it a form request for a string ``name``, and its answer (accept
    {"name": "Ada"}, then decline, then cancel) reaches the tool."""
    assert [_texts(result) for result in report["ask"]] == [
        ["Hello, Ada!"], ["declined"], ["cancelled"]]
    assert len(report["elicitations"]) == 3
    for params in report["elicitations"]:
        assert params["message"] == "What is your name?"
        assert params["requestedSchema"] == NAME_SCHEMA
        assert params.get("mode", "form") == "form"


def test_link_then_read_v0618_22(report: dict[str, Any]) -> None:
    """V0618-22, NAMBIG-12: ``link`` returns a resource_link (with its required name) to
    static://hello, and the SDK's client reads that resource with resources/read."""
    (link,) = report["link"]["content"]
    assert link["type"] == "resource_link"
    assert (link["uri"], link["name"], link["mimeType"]) == (
        "static://hello", "hello", "text/plain")
    assert report["read"] == [{"contents": [
        {"uri": "static://hello", "mimeType": "text/plain", "text": "Hello, world!"}]}]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_older_client_gets_the_older_shapes_des_3(transport: str) -> None:
    """DES-3, V0618-9: offered 2025-03-26, the server agrees to it and keeps to it: no
    outputSchema, structuredContent or resource_link reach the SDK's client (the text stays),
    and no elicitation request is sent (``ask`` fails as a tool error instead)."""
    report = _drive(transport, "--offer", "2025-03-26")
    assert report["offered"] == report["protocolVersion"] == "2025-03-26"
    assert sorted(tool["name"] for tool in report["tools"]) == sorted(TOOL_NAMES)
    assert not [tool["name"] for tool in report["tools"] if "outputSchema" in tool]
    structured = report["structured"]
    assert "structuredContent" not in structured
    assert [json_text.replace(" ", "") for json_text in _texts(structured)] == [
        '{"sum":7,"product":12}']
    assert [item["type"] for item in report["link"]["content"]] == ["text"]
    assert "static://hello" in _texts(report["link"])[0]
    assert report["read"] == []
    assert report["elicitations"] == []
    assert all(result.get("isError") for result in report["ask"])
    assert "2025-06-18" in _texts(report["ask"][0])[0]
