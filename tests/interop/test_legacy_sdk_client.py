"""Interop: the official SDK's 2024-11-05 HTTP+SSE client against our legacy endpoints.

Our server runs in this process (``serve_http`` with ``legacy_sse=True`` on 127.0.0.1), so
the autouse ``wire`` fixture checks every message it encodes; what the SDK received is
recorded at its transport and checked against the schema too.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from mcp.client import Client as SdkClient
from mcp.client.sse import sse_client

from mcp_sync import Context, Server
from mcp_sync.transports.http_server import serve_http
from tests.interop.test_official_sdk import _RecordingReader, _RecordingWriter, _Traffic
from tests.wire_schema import check_traffic

pytestmark = pytest.mark.interop

EXCHANGE_BOUND = 30.0


def make_server() -> Server:
    server = Server("legacy-interop", version="2.0.0")

    @server.tool(annotations={"readOnlyHint": True})
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def countdown(steps: int, ctx: Context) -> str:
        """Count down, reporting progress at each step."""
        for step in range(1, steps + 1):
            ctx.report_progress(step, steps)
        return "liftoff"

    return server


@contextlib.asynccontextmanager
async def _recorded_sse(url: str, traffic: _Traffic,
                        sessions: list[str]) -> AsyncIterator[tuple[Any, Any]]:
    async with sse_client(url, on_session_created=sessions.append) as (read_stream,
                                                                        write_stream):
        yield (_RecordingReader(read_stream, traffic.received),
               _RecordingWriter(write_stream, traffic.sent))


async def _drive(url: str) -> dict[str, Any]:
    traffic = _Traffic()
    seen: dict[str, Any] = {"traffic": traffic, "progress": [], "sessions": []}

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen["progress"].append((progress, total))

    with anyio.fail_after(EXCHANGE_BOUND):
        async with SdkClient(_recorded_sse(url, traffic, seen["sessions"])) as client:
            seen["protocol_version"] = client.protocol_version
            seen["server_info"] = client.server_info
            seen["tools"] = (await client.list_tools()).tools
            seen["add"] = await client.call_tool("add", {"a": 20, "b": 22})
            seen["countdown"] = await client.call_tool(
                "countdown", {"steps": 2}, progress_callback=on_progress)
    return seen


@pytest.mark.timeout(60)
def test_sdk_sse_client_initializes_lists_and_calls() -> None:
    """HTTP-36, HTTP-38: the SDK's old-transport client connects to GET /sse, learns the
    POST URI (with our session id) from `endpoint`, initializes, lists tools, calls tools
    (with progress), and its disconnect ends the session on our side."""
    server = make_server()
    with serve_http(server, legacy_sse=True, keepalive_interval=0.5) as handle:
        sse_url = handle.url.rsplit("/", 1)[0] + "/sse"
        seen = anyio.run(_drive, sse_url)
        legacy = handle.app.legacy
        assert legacy is not None
        # The SDK closed its stream; the server notices at its next keep-alive at the
        # latest, and ends the session then.
        for session in list(legacy._sessions.values()):
            assert session.connection.wait_closed(10)
        assert legacy.session_count == 0 and handle.app.get_stream_count == 0

    assert len(seen["sessions"]) == 1 and len(seen["sessions"][0]) >= 43
    assert seen["protocol_version"] == "2025-11-25"
    assert (seen["server_info"].name, seen["server_info"].version) == ("legacy-interop",
                                                                      "2.0.0")
    assert {tool.name for tool in seen["tools"]} == {"add", "countdown"}
    assert [(c.type, c.text) for c in seen["add"].content] == [("text", "42")]
    assert [c.text for c in seen["countdown"].content] == ["liftoff"]
    assert seen["progress"] == [(1, 2), (2, 2)]
    traffic: _Traffic = seen["traffic"]
    for message in traffic.received:
        assert isinstance(message, dict), f"the SDK could not parse a message: {message!r}"
    # DES-19: both sides' messages fit the negotiated version's schema.
    check_traffic(traffic.sent, traffic.received, seen["protocol_version"])
    assert "initialize" in [m.get("method") for m in traffic.sent]
