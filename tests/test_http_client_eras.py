"""The dual-era client over Streamable HTTP, against fake servers on 127.0.0.1.

DIGEST-NEWER "How eras find each other" (HTTP), COEX-10, and the modern request headers
of 2026-07-28 (SEP-2243: Mcp-Method, Mcp-Name, Mcp-Param-*, the base64 sentinel).
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import CancelledError
from typing import Any

import pytest
from werkzeug.wrappers import Response as WsgiResponse

from mcp_sync import Client
from mcp_sync.errors import ModernOnlyServer
from mcp_sync.protocol._versions import KNOWN_VERSIONS
from tests.http_client_helpers import FakeServer, Seen, serving

pytestmark = pytest.mark.timeout(30)

MODERN = "2026-07-28"
META_VERSION = "io.modelcontextprotocol/protocolVersion"


@pytest.fixture
def serve() -> Iterator[Callable[[Any], FakeServer]]:
    yield from serving()


def reply(message: dict[str, Any], result: dict[str, Any], status: int = 200,
          headers: dict[str, str] | None = None) -> WsgiResponse:
    return WsgiResponse(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}),
                        status=status, mimetype="application/json", headers=headers)


def refuse(message: dict[str, Any], code: int, text: str, data: Any = None,
           status: int = 400) -> WsgiResponse:
    error: dict[str, Any] = {"code": code, "message": text}
    if data is not None:
        error["data"] = data
    return WsgiResponse(json.dumps({"jsonrpc": "2.0", "id": message.get("id"), "error": error}),
                        status=status, mimetype="application/json")


TOOLS = [{"name": "lookup", "inputSchema": {"type": "object", "properties": {
    "region": {"type": "string", "x-mcp-header": "Region"},
    "count": {"type": "integer", "x-mcp-header": "Count"},
    "query": {"type": "string"}}}}]


def modern_server(seen: Seen) -> WsgiResponse:
    """A modern-only server: discover, tools/list and tools/call; nothing else."""
    if seen.method != "POST":
        return WsgiResponse(status=405)
    message = seen.body
    meta = (message.get("params") or {}).get("_meta") or {}
    if META_VERSION not in meta:
        return refuse(message, -32022, "Unsupported protocol version",
                      {"supported": [MODERN], "requested": ""})
    if message["method"] == "server/discover":
        return reply(message, {"resultType": "complete", "supportedVersions": [MODERN],
                               "capabilities": {"tools": {}}, "ttlMs": 0,
                               "cacheScope": "public",
                               "_meta": {"io.modelcontextprotocol/serverInfo":
                                         {"name": "modern-http", "version": "1"}}})
    if message["method"] == "tools/list":
        return reply(message, {"resultType": "complete", "tools": TOOLS, "ttlMs": 0,
                               "cacheScope": "public"})
    if message["method"] == "tools/call":
        return reply(message, {"resultType": "complete",
                               "content": [{"type": "text", "text": "ok"}]})
    return refuse(message, -32601, "Method not found", status=404)


def test_modern_requests_carry_the_era_headers_and_no_session(
        serve: Callable[[Any], FakeServer]) -> None:
    """SEP-2243, SEP-2575: MCP-Protocol-Version equal to _meta's, Mcp-Method, Mcp-Name,
    Mcp-Param-* for x-mcp-header arguments (base64 sentinel for non-ASCII), none for the
    others; no Mcp-Session-Id, no GET stream, no DELETE."""
    server = serve(modern_server)
    with Client.http(server.url, timeout=20) as client:
        assert client.era == "modern"
        assert client.server_info.name == "modern-http"
        client.list_tools()
        client.call_tool("lookup", {"region": "Zürich", "count": 3, "query": "q"})
    posts = server.requests("POST")
    assert [seen.body["method"] for seen in posts] == [
        "server/discover", "tools/list", "tools/call"]
    for seen in posts:
        assert seen.header("MCP-Protocol-Version") == MODERN
        assert seen.body["params"]["_meta"][META_VERSION] == MODERN
        assert seen.header("Mcp-Method") == seen.body["method"]
        assert seen.header("Mcp-Session-Id") is None
    call = posts[-1]
    assert call.header("Mcp-Name") == "lookup"
    encoded = base64.b64encode("Zürich".encode()).decode()
    assert call.header("Mcp-Param-Region") == f"=?base64?{encoded}?="
    assert call.header("Mcp-Param-Count") == "3"
    assert call.header("Mcp-Param-Query") is None
    assert server.requests("GET") == [] and server.requests("DELETE") == []


def test_legacy_client_meets_a_modern_only_http_server_coex_10(
        serve: Callable[[Any], FakeServer]) -> None:
    """COEX-10: the initialize POST answered 400 with -32022 (modern versions only): the
    typed ModernOnlyServer error, and no try of the 2024-11-05 transport (no GET)."""
    server = serve(modern_server)
    with pytest.raises(ModernOnlyServer) as caught:
        Client.http(server.url, timeout=20, supported_versions=KNOWN_VERSIONS)
    assert caught.value.server_versions == (MODERN,)
    assert [seen.body["method"] for seen in server.requests("POST")] == ["initialize"]
    assert server.requests("GET") == []


def test_a_4xx_without_a_modern_body_means_legacy(
        serve: Callable[[Any], FakeServer]) -> None:
    """"How eras find each other" (HTTP): the modern probe refused 400 with a non-modern
    body (as a legacy server checking MCP-Protocol-Version does, COEX-6) sends the client
    to initialize on the same URL."""
    def legacy(seen: Seen) -> WsgiResponse:
        if seen.method != "POST":
            return WsgiResponse(status=405)
        message = seen.body
        if seen.header("MCP-Protocol-Version") == MODERN:
            return refuse(message, -32600, "Bad Request: unsupported protocol version")
        if message.get("method") == "initialize":
            return reply(message, {"protocolVersion": "2025-11-25", "capabilities": {},
                                   "serverInfo": {"name": "old", "version": "1"}},
                         headers={"Mcp-Session-Id": "s-1"})
        if "id" not in message:
            return WsgiResponse(status=202)
        return reply(message, {})

    server = serve(legacy)
    with Client.http(server.url, timeout=20, listen=False) as client:
        assert client.era == "legacy"
        assert client.protocol_version == "2025-11-25"
        client.ping()
    methods = [seen.body.get("method") for seen in server.requests("POST")]
    assert methods[:3] == ["server/discover", "initialize", "notifications/initialized"]
    assert server.requests("POST")[-1].header("Mcp-Method") == "ping"


def test_cancelling_a_modern_call_closes_its_stream_and_posts_nothing(
        serve: Callable[[Any], FakeServer]) -> None:
    """2026-07-28 over HTTP: closing the response stream is the cancellation; no
    notifications/cancelled is posted, and the client goes on working."""
    holder: dict[str, FakeServer] = {}
    opened = threading.Event()

    def server_with_a_slow_tool(seen: Seen) -> WsgiResponse:
        message = seen.body
        if seen.method == "POST" and message.get("method") == "tools/call" and \
                message["params"]["name"] == "slow":
            _, body = holder["server"].stream(iter([b": open\n\n"]))
            opened.set()
            return WsgiResponse(body, mimetype="text/event-stream")
        return modern_server(seen)

    server = holder["server"] = serve(server_with_a_slow_tool)
    with Client.http(server.url, timeout=20) as client:
        client.list_tools()
        future = client.call_tool_async("slow", {})
        assert opened.wait(10)
        assert future.cancel()
        with pytest.raises(CancelledError):
            future.result(5)
        assert client.call_tool("lookup", {"region": "x"}).content[0].text == "ok"
    methods = [seen.body.get("method") for seen in server.requests("POST")]
    assert "notifications/cancelled" not in methods
