"""The official MCP SDK's client listening to an mcp_sync server in the modern era, over
real stdio pipes and over Streamable HTTP on 127.0.0.1 (the server is
tests/servers/changing_server.py).

The SDK's client in its default mode probes with ``server/discover``, stays modern, and
opens ``subscriptions/listen`` streams through its ``Client.listen`` API (SEP-2575).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client import Client as SdkClient
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ResourceUpdated, SubscriptionLost, ToolsListChanged

from mcp_sync.transports.http_server import serve_http
from tests.helpers import load_module

pytestmark = [pytest.mark.interop, pytest.mark.timeout(45)]

ROOT = Path(__file__).resolve().parents[2]
CHANGING_SERVER = ROOT / "tests" / "servers" / "changing_server.py"
MODERN = "2026-07-28"
EXCHANGE_BOUND = 30.0


def _params() -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[str(CHANGING_SERVER)],
                                 env={"PYTHONPATH": str(ROOT)}, cwd=str(ROOT))


async def _listen_and_change(connect: Callable[[], Any]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    with anyio.fail_after(EXCHANGE_BOUND):
        async with SdkClient(connect()) as client:
            seen["version"] = client.protocol_version
            seen["capabilities"] = client.server_capabilities
            async with client.listen(tools_list_changed=True,
                                     resource_subscriptions=["notes://a"]) as sub:
                seen["honored"] = sub.honored
                await client.call_tool("grow", {"name": "sprout"})
                seen["first"] = await sub.__anext__()
                await client.call_tool("touch", {"uri": "notes://a"})
                seen["second"] = await sub.__anext__()
            seen["tools"] = [tool.name for tool in (await client.list_tools()).tools]
            # The server ends a stream: the SDK's iteration stops.
            async with client.listen(tools_list_changed=True) as ended:
                await client.call_tool("end_listening", {})
                try:
                    seen["after_end"] = await ended.__anext__()
                except (StopAsyncIteration, SubscriptionLost) as exc:
                    seen["after_end"] = exc
            seen["still_serving"] = await client.call_tool("grow", {"name": "again"})
    return seen


def _check(seen: dict[str, Any]) -> None:
    assert seen["version"] == MODERN
    assert seen["capabilities"].tools.list_changed is True
    assert seen["capabilities"].resources.subscribe is True
    assert seen["honored"].tools_list_changed is True
    assert seen["honored"].resource_subscriptions == ["notes://a"]
    assert seen["first"] == ToolsListChanged()
    assert seen["second"] == ResourceUpdated(uri="notes://a")
    assert "sprout" in seen["tools"]
    # notifications/cancelled from the server is the spec's end on stdio; the SDK calls
    # a stream ended that way lost (re-listen and refetch), not a changed list.
    assert isinstance(seen["after_end"], (StopAsyncIteration, SubscriptionLost))
    assert seen["still_serving"].is_error is False


def test_the_sdk_client_hears_tools_changed_and_resource_updates_on_its_listen_stream(
) -> None:
    """SEP-2575 "Subscriptions" with the official client over stdio: its listen stream
    is acknowledged with what it asked for, a tool that adds a tool makes it see
    ToolsListChanged, a touched resource ResourceUpdated; leaving the stream cancels it
    and the connection goes on; a stream the server ends stops the SDK's iteration."""
    _check(anyio.run(_listen_and_change, lambda: stdio_client(_params())))


def test_the_sdk_client_listens_over_streamable_http() -> None:
    """The same over Streamable HTTP: the listen stream is the event stream of the
    SDK's listen POST; leaving it closes that stream (the cancel of the era)."""
    changing = load_module(CHANGING_SERVER)
    with serve_http(changing.make_server(), keepalive_interval=0.1) as handle:
        seen = anyio.run(_listen_and_change, lambda: streamable_http_client(handle.url))
        assert handle.app.session_count == 0
    _check(seen)
