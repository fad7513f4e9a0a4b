"""Interop: the official MCP SDK's client against our Streamable HTTP server.

Our server runs in this process (``serve_http`` on 127.0.0.1), so the autouse ``wire``
fixture checks every message it encodes against a schema; what the SDK
decoded is recorded at its transport and checked too. Three modes: stateful with SSE
answers, stateful with JSON answers, stateless. The server here speaks only the legacy
versions, so the SDK falls back to initialize; against a dual-era server it stays modern
(test_http_sdk_modern).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from mcp import MCPError
from mcp.client import Client as SdkClient
from mcp.client.streamable_http import streamable_http_client

from mcp_sync import Context, Server
from mcp_sync.protocol._versions import KNOWN_VERSIONS
from mcp_sync.transports.http_server import serve_http
from tests.interop.test_official_sdk import _RecordingReader, _RecordingWriter, _Traffic
from tests.wire_schema import check_traffic

pytestmark = pytest.mark.interop

#: The SDK waits this long for an unanswered ``server/discover`` before falling back.
SDK_DISCOVER_TIMEOUT = 10.0
#: Connecting must be far quicker: the probe has to be refused at once.
CONNECT_BOUND = 5.0
EXCHANGE_BOUND = 30.0


def make_server(supported_versions: tuple[str, ...] | None = KNOWN_VERSIONS) -> Server:
    """The test server; by default it speaks only the legacy versions."""
    server = Server("http-interop", version="1.0.0", instructions="Arithmetic over HTTP.",
                    supported_versions=supported_versions)

    @server.tool(annotations={"readOnlyHint": True})
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def echo(message: str) -> str:
        """Return the message unchanged."""
        return message

    @server.tool()
    def countdown(steps: int, ctx: Context) -> str:
        """Count down, reporting progress at each step."""
        for step in range(1, steps + 1):
            ctx.report_progress(step, steps, f"step {step} of {steps}")
        return "liftoff"

    return server


@contextlib.asynccontextmanager
async def _recorded_http(url: str, traffic: _Traffic) -> AsyncIterator[tuple[Any, Any]]:
    async with streamable_http_client(url) as (read_stream, write_stream):
        yield (_RecordingReader(read_stream, traffic.received),
               _RecordingWriter(write_stream, traffic.sent))


async def _drive(url: str) -> dict[str, Any]:
    traffic = _Traffic()
    seen: dict[str, Any] = {"traffic": traffic, "progress": []}

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen["progress"].append((progress, total, message))

    with anyio.fail_after(EXCHANGE_BOUND):
        started = time.monotonic()
        async with SdkClient(_recorded_http(url, traffic)) as client:
            seen["connect_seconds"] = time.monotonic() - started
            seen["protocol_version"] = client.protocol_version
            seen["server_info"] = client.server_info
            seen["instructions"] = client.instructions
            seen["tools"] = (await client.list_tools()).tools
            seen["add"] = await client.call_tool("add", {"a": 2, "b": 40})
            seen["echo"] = await client.call_tool("echo", {"message": "Zürich ✓"})
            seen["countdown"] = await client.call_tool(
                "countdown", {"steps": 3}, progress_callback=on_progress)
            seen["progress_at_return"] = list(seen["progress"])
            try:
                await client.call_tool("no_such_tool", {})
            except MCPError as exc:
                seen["unknown_tool_error"] = exc
            seen["ping"] = await client.session.send_ping()
    return seen


MODES = {
    "stateful-sse": {},
    "stateful-json": {"json_response": True},
    "stateless": {"stateless": True},
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("mode", list(MODES))
def test_sdk_client_over_streamable_http(mode: str) -> None:
    """The SDK's default client probes a legacy-only server, falls back quickly (COEX-6)
    and works in every mode.

    HTTP-5, HTTP-8, HTTP-10, HTTP-11, HTTP-12, HTTP-13, HTTP-29, HTTP-31, HTTP-32,
    LIFECYCLE-2/3/4, VERSION-3, TOOLS-2/4/7, PROGRESS-3, PING-2; "Living with newer peers".
    """
    server = make_server()
    with serve_http(server, **MODES[mode]) as handle:
        seen = anyio.run(_drive, handle.url)
        assert handle.app.session_count == 0  # the SDK ended its session with DELETE

    assert seen["connect_seconds"] < CONNECT_BOUND < SDK_DISCOVER_TIMEOUT
    assert seen["protocol_version"] == "2025-11-25"
    assert (seen["server_info"].name, seen["server_info"].version) == ("http-interop", "1.0.0")
    assert seen["instructions"] == "Arithmetic over HTTP."
    tools = {tool.name: tool for tool in seen["tools"]}
    assert set(tools) == {"add", "echo", "countdown"}
    assert tools["add"].annotations is not None and tools["add"].annotations.read_only_hint

    assert [(c.type, c.text) for c in seen["add"].content] == [("text", "42")]
    assert [c.text for c in seen["echo"].content] == ["Zürich ✓"]
    assert [c.text for c in seen["countdown"].content] == ["liftoff"]
    if mode != "stateful-json":
        # On an SSE answer progress precedes the result (HTTP-13); in JSON mode it
        # travels on the GET stream and may come after.
        assert seen["progress_at_return"] == [
            (step, 3, f"step {step} of 3") for step in (1, 2, 3)]
    error = seen.get("unknown_tool_error")
    assert error is not None and error.code == -32602
    assert seen["ping"].model_dump(exclude_none=True) == {}

    traffic: _Traffic = seen["traffic"]
    for message in traffic.received:
        assert isinstance(message, dict), f"the SDK could not parse a message: {message!r}"
    # DES-19: both sides' messages fit the negotiated version's schema.
    check_traffic(traffic.sent, traffic.received, seen["protocol_version"])
    methods = [m.get("method") for m in traffic.sent]
    assert methods[:2] == ["server/discover", "initialize"]
    probe = next(m for m in traffic.received if m.get("id") == traffic.sent[0]["id"])
    assert probe["error"]["code"] == -32601
