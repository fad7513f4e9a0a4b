"""Elicitation with real peers: the everything server's ``ask`` tool driven by the
official SDK's client (stdio) and by ours (stdio and Streamable HTTP), and our client's
elicitation_handler answering an official-SDK server tool that elicits."""

from __future__ import annotations

import queue
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import types as sdk
from mcp.client import Client as SdkClient
from mcp.client.stdio import StdioServerParameters

from mcp_sync import (
    Client,
    ElicitationRequest,
    ElicitationResult,
    UrlElicitationRequired,
    types,
)
from mcp_sync.transports.http_client import HttpClientTransport
from tests.helpers import LEGACY_ERA
from tests.interop.test_everything_server import EVERYTHING_SERVER, ROOT, http_child
from tests.interop.test_official_sdk import _recorded_stdio, _Traffic

pytestmark = [pytest.mark.interop, pytest.mark.timeout(45),
              pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

SDK_SERVER = '''\
from pydantic import BaseModel
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import UrlElicitationRequiredError
from mcp.types import ElicitRequestURLParams

server = MCPServer("sdk-elicit", version="1.0.0")


class Booking(BaseModel):
    name: str
    seats: int = 2
    vegetarian: bool = False


@server.tool()
async def connect(ctx: Context) -> str:
    result = await ctx.elicit_url("Connect your account", "https://example.com/connect",
                                  "e-9")
    if result.action == "accept":
        await ctx.request_context.session.send_elicit_complete("e-9")
    return result.action


@server.tool()
async def locked() -> str:
    raise UrlElicitationRequiredError([ElicitRequestURLParams(
        message="Authorise first", url="https://example.com/auth", elicitation_id="e-10")])


@server.tool()
async def book(ctx: Context) -> str:
    result = await ctx.elicit("Who is booking?", Booking)
    if result.action == "accept":
        return f"{result.data.name}: {result.data.seats} seats, veg={result.data.vegetarian}"
    return result.action


server.run()
'''


def _text(result: types.CallToolResult) -> str:
    (item,) = result.content
    assert isinstance(item, types.TextContent), item
    return item.text


def _name_handler(seen: list[ElicitationRequest]) -> Any:
    def handler(request: ElicitationRequest) -> ElicitationResult[Any]:
        seen.append(request)
        return request.accept({"name": "Ada"})
    return handler


async def _ask_with_sdk(action: str) -> tuple[list[Any], Any, Any]:
    asked: list[Any] = []

    async def elicit(context: Any, params: Any) -> sdk.ElicitResult:
        asked.append(params)
        if action == "accept":
            return sdk.ElicitResult(action="accept", content={"name": "SDK"})
        return sdk.ElicitResult(action=action)  # type: ignore[arg-type]

    traffic = _Traffic()
    params = StdioServerParameters(command=sys.executable, args=[str(EVERYTHING_SERVER)],
                                   env={"PYTHONPATH": str(ROOT)}, cwd=str(ROOT))
    with anyio.fail_after(30):
        async with SdkClient(_recorded_stdio(params, traffic), mode="legacy",
                             elicitation_callback=elicit) as client:
            version = client.protocol_version
            result = await client.call_tool("ask", {})
    return asked, result, version


@pytest.mark.parametrize(("action", "expected"), [
    ("accept", "Hello, SDK!"), ("decline", "declined"), ("cancel", "cancelled")])
def test_sdk_client_answers_ask_v0618_29(action: str, expected: str) -> None:
    """V0618-29/31, V1125-36: the official client, negotiating 2025-11-25 over stdio,
    answers the ``ask`` tool's form request; each action reaches the tool."""
    asked, result, version = anyio.run(_ask_with_sdk, action)
    assert version == "2025-11-25"
    assert result.content[0].text == expected
    assert asked[0].message == "What is your name?"
    assert asked[0].requested_schema == {"type": "object", "required": ["name"],
                                         "properties": {"name": {"type": "string"}}}


def test_our_client_answers_ask_over_stdio() -> None:
    """V0618-29/33: our client over stdio; the handler sees the server's identity."""
    seen: list[ElicitationRequest] = []
    with Client.stdio([sys.executable, str(EVERYTHING_SERVER)], cwd=str(ROOT),
                      env={"PYTHONPATH": str(ROOT)},
                      elicitation_handler=_name_handler(seen), **LEGACY_ERA) as client:
        assert client.protocol_version == "2025-11-25"
        assert _text(client.call_tool("ask")) == "Hello, Ada!"
    assert seen[0].server_info is not None and seen[0].server_info.name == "everything"


@pytest.mark.parametrize("flags", [[], ["--json-response"]])
def test_our_client_answers_ask_over_http(flags: list[str]) -> None:
    """V0618-29: our client over Streamable HTTP, where the request travels on the
    tools/call's event stream (or the session's GET stream when answers are JSON)."""
    seen: list[ElicitationRequest] = []
    with http_child(flags) as child:
        transport = HttpClientTransport(child.url)
        try:
            client = Client(transport, timeout=20.0, elicitation_handler=_name_handler(seen))
        except BaseException:
            transport.close()
            raise
        with client:
            assert _text(client.call_tool("ask")) == "Hello, Ada!"
    assert seen[0].message == "What is your name?"


@pytest.mark.parametrize(("answer", "expected"), [
    ({"name": "Ada", "seats": 4, "vegetarian": True}, "Ada: 4 seats, veg=True"),
    (None, "decline")])
def test_our_client_answers_an_sdk_server_v0618_34(
        tmp_path: Path, answer: dict[str, Any] | None, expected: str) -> None:
    """V0618-29/34, V1125-38: an official-SDK server's ctx.elicit reaches our handler
    (defaults included, to pre-fill); what the handler accepts is checked and used."""
    script = tmp_path / "sdk_elicit_server.py"
    script.write_text(SDK_SERVER, encoding="utf-8")
    seen: list[ElicitationRequest] = []

    def handler(request: ElicitationRequest) -> ElicitationResult[Any]:
        seen.append(request)
        return request.decline() if answer is None else request.accept(answer)

    with Client.stdio([sys.executable, str(script)], elicitation_handler=handler,
                      timeout=30.0, **LEGACY_ERA) as client:
        assert client.protocol_version == "2025-11-25"
        assert _text(client.call_tool("book")) == expected
    assert seen[0].mode == "form" and seen[0].message == "Who is booking?"
    assert seen[0].defaults == {"seats": 2, "vegetarian": False}
    assert seen[0].server_info is not None and seen[0].server_info.name == "sdk-elicit"


def test_url_mode_with_an_sdk_server_v1125_40_43(tmp_path: Path) -> None:
    """V1125-40/41/42/43: an official-SDK server's URL-mode elicitation reaches our
    handler with the URL's host; its completion notice reaches on_elicitation_complete;
    its -32042 error is raised as UrlElicitationRequired with the list."""
    script = tmp_path / "sdk_elicit_server.py"
    script.write_text(SDK_SERVER, encoding="utf-8")
    seen: list[ElicitationRequest] = []
    completed: queue.SimpleQueue[str] = queue.SimpleQueue()

    def handler(request: ElicitationRequest) -> ElicitationResult[Any]:
        seen.append(request)
        return request.accept()

    with Client.stdio([sys.executable, str(script)], elicitation_handler=handler,
                      elicitation_modes=("form", "url"), on_elicitation_complete=completed.put,
                      timeout=30.0, **LEGACY_ERA) as client:
        assert _text(client.call_tool("connect")) == "accept"
        assert completed.get(timeout=10) == "e-9"
        with pytest.raises(UrlElicitationRequired) as caught:
            client.call_tool("locked")
    assert (seen[0].mode, seen[0].url_host, seen[0].elicitation_id) == (
        "url", "example.com", "e-9")
    assert caught.value.elicitations == [{
        "mode": "url", "message": "Authorise first", "url": "https://example.com/auth",
        "elicitationId": "e-10"}]


OUR_URL_SERVER = '''\
from mcp_sync import Context, Server, UrlElicitationRequired

server = Server("ours")


@server.tool()
def connect(ctx: Context) -> str:
    result = ctx.elicit_url("Connect your account", "https://example.com/connect",
                            elicitation_id="e-1")
    if result.accepted:
        ctx.complete_elicitation("e-1")
    return result.action


@server.tool()
def locked() -> str:
    raise UrlElicitationRequired(elicitations=[{
        "message": "Authorise first", "url": "https://example.com/auth",
        "elicitationId": "e-2"}])


server.run_stdio()
'''


async def _url_mode_with_sdk(script: Path) -> dict[str, Any]:
    seen: dict[str, Any] = {"asked": []}

    async def elicit(context: Any, params: Any) -> sdk.ElicitResult:
        seen["asked"].append(params)
        return sdk.ElicitResult(action="accept")

    traffic = _Traffic()
    params = StdioServerParameters(command=sys.executable, args=[str(script)],
                                   env={"PYTHONPATH": str(ROOT)}, cwd=str(ROOT))
    with anyio.fail_after(30):
        async with SdkClient(_recorded_stdio(params, traffic), mode="legacy",
                             elicitation_callback=elicit) as client:
            seen["connect"] = await client.call_tool("connect", {})
            try:
                await client.call_tool("locked", {})
            except Exception as exc:  # the SDK's own error class
                seen["locked"] = exc
    seen["traffic"] = traffic
    return seen


def test_sdk_client_with_our_url_mode_v1125_40_41_43(tmp_path: Path) -> None:
    """V1125-40/41/43: the official client receives our URL-mode request, our
    completion notice for its id, and our -32042 error with its list."""
    script = tmp_path / "our_url_server.py"
    script.write_text(OUR_URL_SERVER, encoding="utf-8")
    seen = anyio.run(_url_mode_with_sdk, script)
    asked = seen["asked"][0]
    assert (asked.mode, asked.url, asked.elicitation_id) == (
        "url", "https://example.com/connect", "e-1")
    assert seen["connect"].content[0].text == "accept"
    notices = [message for message in seen["traffic"].received
               if isinstance(message, dict)
               and message.get("method") == "notifications/elicitation/complete"]
    assert [notice["params"] for notice in notices] == [{"elicitationId": "e-1"}]
    error = seen["locked"]
    assert getattr(error, "code", None) == -32042
    assert error.data["elicitations"][0]["elicitationId"] == "e-2"
