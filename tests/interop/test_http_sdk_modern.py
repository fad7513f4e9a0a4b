"""Interop: the official MCP SDK's client, in its default mode, reaches our dual-era
Streamable HTTP server in the modern era (2026-07-28), and falls back to the legacy era
against a server that speaks only legacy versions.

Our server runs in this process (``serve_http`` on 127.0.0.1); what the SDK sent and
decoded is recorded at its transport and checked against schema-2026-07-28.json. IDs:
"How eras find each other" (Streamable HTTP), SEP-2243, SEP-2575, COEX-6.
"""

from __future__ import annotations

from contextlib import ExitStack
from typing import Annotated, Any

import anyio
import pytest
from mcp import MCPError
from mcp.client import Client as SdkClient
from mcp.client.streamable_http import streamable_http_client

from mcp_sync import Context, Server
from mcp_sync.protocol._versions import KNOWN_VERSIONS
from mcp_sync.server import Header
from mcp_sync.transports.http_server import serve_http
from tests.interop.test_http_sdk_client import _recorded_http
from tests.interop.test_official_sdk import _Traffic
from tests.scaleout_helpers import RedisServer, two_servers_behind_a_proxy
from tests.scaleout_helpers import redis_server as redis_server  # the fixture
from tests.wire_schema import check_traffic

pytestmark = [pytest.mark.interop, pytest.mark.timeout(60)]

MODERN = "2026-07-28"
EXCHANGE_BOUND = 30.0


def make_server(supported_versions: tuple[str, ...] | None = None) -> Server:
    server = Server("http-modern", version="3.0.0", instructions="One endpoint, both eras.",
                    supported_versions=supported_versions)

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def deploy(region: Annotated[str, Header("Region")], replicas: int = 1) -> str:
        """Deploy to a region, which also travels in the Mcp-Param-Region header."""
        return f"{region} x{replicas}"

    @server.tool()
    def countdown(steps: int, ctx: Context) -> str:
        """Count down, reporting progress at each step."""
        for step in range(1, steps + 1):
            ctx.report_progress(step, steps, f"step {step}")
        return "liftoff"

    @server.tool()
    def era(ctx: Context) -> str:
        """The protocol version this call is served with."""
        return ctx.protocol_version or "none"

    return server


async def _drive(url: str) -> dict[str, Any]:
    traffic = _Traffic()
    seen: dict[str, Any] = {"traffic": traffic, "progress": []}

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen["progress"].append((progress, total, message))

    with anyio.fail_after(EXCHANGE_BOUND):
        async with SdkClient(_recorded_http(url, traffic)) as client:
            seen["protocol_version"] = client.protocol_version
            seen["server_info"] = client.server_info
            seen["tools"] = {tool.name for tool in (await client.list_tools()).tools}
            seen["add"] = await client.call_tool("add", {"a": 2, "b": 40})
            seen["deploy"] = await client.call_tool("deploy", {"region": "Zürich",
                                                               "replicas": 2})
            seen["countdown"] = await client.call_tool(
                "countdown", {"steps": 3}, progress_callback=on_progress)
            seen["progress_at_return"] = list(seen["progress"])
            seen["era"] = await client.call_tool("era", {})
            try:
                await client.call_tool("no_such_tool", {})
            except MCPError as exc:
                seen["unknown_tool_error"] = exc
    return seen


def _texts(result: Any) -> list[str]:
    return [block.text for block in result.content]


def test_sdk_default_client_stays_modern_against_a_dual_era_server() -> None:
    """"How eras find each other": the SDK's server/discover probe is answered, so it
    stays modern: no initialize, no session; tools, Mcp-Param-* headers for an
    x-mcp-header argument (SEP-2243) and progress on the request's own stream work."""
    with serve_http(make_server()) as handle:
        seen = anyio.run(_drive, handle.url)
        assert handle.app.session_count == 0

    assert seen["protocol_version"] == MODERN
    assert (seen["server_info"].name, seen["server_info"].version) == ("http-modern", "3.0.0")
    assert seen["tools"] == {"add", "deploy", "countdown", "era"}
    assert _texts(seen["add"]) == ["42"]
    assert _texts(seen["deploy"]) == ["Zürich x2"]
    assert _texts(seen["countdown"]) == ["liftoff"]
    assert seen["progress_at_return"] == [(step, 3, f"step {step}") for step in (1, 2, 3)]
    assert _texts(seen["era"]) == [MODERN]
    assert seen["unknown_tool_error"].code == -32602

    traffic: _Traffic = seen["traffic"]
    methods = [message.get("method") for message in traffic.sent]
    assert methods[0] == "server/discover" and "initialize" not in methods
    check_traffic(traffic.sent, traffic.received, MODERN)


def test_sdk_default_client_falls_back_against_a_legacy_only_server() -> None:
    """COEX-6: a server without 2026-07-28 refuses the probe with a legacy error and the
    SDK continues in the legacy era, in a session."""
    with serve_http(make_server(KNOWN_VERSIONS)) as handle:
        seen = anyio.run(_drive, handle.url)

    assert seen["protocol_version"] == "2025-11-25"
    assert _texts(seen["add"]) == ["42"]
    assert _texts(seen["era"]) == ["2025-11-25"]
    methods = [message.get("method") for message in seen["traffic"].sent]
    assert methods[:2] == ["server/discover", "initialize"]


async def _modern_calls(url: str) -> list[str]:
    with anyio.fail_after(EXCHANGE_BOUND):
        async with SdkClient(streamable_http_client(url)) as client:
            assert client.protocol_version == MODERN
            return [(await client.call_tool("add", {"a": a, "b": 1})).content[0].text
                    for a in range(4)]


def test_modern_requests_scale_out_with_nothing_shared(redis_server: RedisServer) -> None:
    """Scale-out: through a round-robin proxy without affinity, each modern request goes
    to whichever server is next and every one is answered; no session exists."""
    with ExitStack() as stack:
        proxy, url = two_servers_behind_a_proxy(stack, make_server, redis_server.url)
        sums = anyio.run(_modern_calls, url)
        assert proxy.session_ids() == set()
        assert {index for index, _, _ in proxy.served} == {0, 1}
    assert sums == ["1", "2", "3", "4"]
