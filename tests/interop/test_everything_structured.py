"""The everything server's ``structured`` and ``link`` tools and its titles, used over
stdio and Streamable HTTP by the official SDK's client and by ours (V0618-16..24,
DES-10, issue 27 point 5)."""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import pytest
from mcp.client import Client as SdkClient
from mcp.client.stdio import StdioServerParameters

from mcp_sync import Client, types
from mcp_sync.transports.http_client import HttpClientTransport
from tests.helpers import LEGACY_ERA
from tests.interop.test_everything_server import (
    EVERYTHING_SERVER,
    EXCHANGE_BOUND,
    HTTP_MODES,
    ROOT,
    http_child,
)

pytestmark = [pytest.mark.interop, pytest.mark.timeout(60),
              pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

SUM_PRODUCT = {"sum": 9, "product": 20}


async def _drive_with_sdk(server: Any) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    with anyio.fail_after(EXCHANGE_BOUND):
        async with SdkClient(server, mode="legacy") as client:
            seen["version"] = client.protocol_version
            seen["tools"] = (await client.list_tools()).tools
            seen["structured"] = await client.call_tool("structured", {"a": 4, "b": 5})
            seen["link"] = await client.call_tool("link")
            link = seen["link"].content[0]
            seen["read"] = await client.read_resource(str(link.uri))
    return seen


def _check_sdk(seen: dict[str, Any]) -> None:
    assert seen["version"] == "2025-11-25"
    tools = {tool.name: tool for tool in seen["tools"]}
    assert all(tool.title for tool in tools.values()), [t.name for t in tools.values()]
    schema = tools["structured"].output_schema
    assert schema["properties"] == {"sum": {"type": "integer"},
                                    "product": {"type": "integer"}}
    assert sorted(schema["required"]) == ["product", "sum"]
    structured = seen["structured"]
    assert structured.structured_content == SUM_PRODUCT
    assert json.loads(structured.content[0].text) == SUM_PRODUCT
    (link,) = seen["link"].content
    assert link.type == "resource_link" and str(link.uri) == "static://hello"
    assert link.name == "hello" and link.title == "Hello"
    assert seen["read"].contents[0].text == "Hello, world!"


def test_sdk_client_over_stdio_uses_structured_and_link_v0618_20() -> None:
    """The SDK client negotiates 2025-11-25 over stdio, checks ``structured`` against its
    output schema, decodes ``link`` and reads the linked resource."""
    params = StdioServerParameters(command=sys.executable, args=[str(EVERYTHING_SERVER)],
                                   env={"PYTHONPATH": str(ROOT)}, cwd=str(ROOT))
    _check_sdk(anyio.run(_drive_with_sdk, params))


@pytest.mark.parametrize("mode", ["stateful-sse", "stateless-json"])
def test_sdk_client_over_http_uses_structured_and_link_v0618_22(mode: str) -> None:
    """The same over Streamable HTTP, with and without sessions."""
    with http_child(HTTP_MODES[mode]) as child:
        _check_sdk(anyio.run(_drive_with_sdk, child.url))


def _check_ours(client: Client) -> None:
    assert client.protocol_version == "2025-11-25"
    tools = {tool.name: tool for tool in client.list_tools()}
    assert all(tool.title for tool in tools.values())
    assert types.display_name(tools["structured"]) == "Sum and product"
    structured = client.call_tool("structured", {"a": 4, "b": 5})
    assert structured.structured == SUM_PRODUCT
    assert json.loads(structured.content[0].text) == SUM_PRODUCT  # type: ignore[union-attr]
    (link,) = client.call_tool("link").content
    assert isinstance(link, types.ResourceLink)
    (hello,) = client.read_resource(link.uri).contents
    assert isinstance(hello, types.TextResourceContents) and hello.text == "Hello, world!"


def test_our_client_over_stdio_uses_structured_and_link_des_10() -> None:
    with Client.stdio([sys.executable, str(EVERYTHING_SERVER)], cwd=str(ROOT),
                      timeout=20.0, **LEGACY_ERA) as client:
        _check_ours(client)


@pytest.mark.parametrize("mode", ["stateful-json", "stateless-sse"])
def test_our_client_over_http_uses_structured_and_link_des_10(mode: str) -> None:
    with http_child(HTTP_MODES[mode]) as child:
        transport = HttpClientTransport(child.url)
        try:
            client = Client(transport, timeout=20.0, **LEGACY_ERA)
        except BaseException:
            transport.close()
            raise
        with client:
            _check_ours(client)
