"""What a client user reads: timeouts that name the call, is_error, HTTP 404."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from mcp_sync import Client, RequestTimeout, Server, SessionExpired, types
from mcp_sync.testing import open_client
from mcp_sync.transports.http_client import HttpError
from mcp_sync.transports.http_server import serve_http
from tests.http_client_helpers import Play, serving
from tests.http_client_helpers import open_client as open_http_client

pytestmark = pytest.mark.timeout(30)

serve = pytest.fixture(serving)


def _slow_server(release: threading.Event) -> Server:
    server = Server("slow")

    @server.tool
    def crawl() -> str:
        """Waits for the test."""
        release.wait(10)
        return "done"

    @server.resource("data://slow")
    def slow_data() -> str:
        release.wait(10)
        return "data"

    @server.prompt
    def slow_prompt() -> str:
        release.wait(10)
        return "prompt"

    @server.tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    return server


def test_request_timeout_names_the_tool_prompt_resource_or_method() -> None:
    """LIFECYCLE-9, LIFECYCLE-10: the timeout says what it waited for, not only an id."""
    release = threading.Event()
    with open_client(_slow_server(release)) as client:
        try:
            with pytest.raises(RequestTimeout, match=r"tools/call of tool 'crawl' within 0.2s"):
                client.call_tool("crawl", timeout=0.2)
            with pytest.raises(RequestTimeout, match=r"prompts/get of prompt 'slow_prompt'"):
                client.get_prompt("slow_prompt", timeout=0.2)
            with pytest.raises(RequestTimeout, match=r"resources/read of 'data://slow'"):
                client.read_resource("data://slow", timeout=0.2)
            with pytest.raises(RequestTimeout, match=r"tools/call of tool 'crawl'"):
                client.call_tool_async("crawl", timeout=0.2).result(10)
        finally:
            release.set()
        assert client.call_tool("add", {"a": 1, "b": 2}).is_error is False


def test_is_error_is_false_on_success_and_the_wire_form_stays_valid(wire: Any) -> None:
    """TOOLS-4: a missing isError means false; the client shows False, not None. The
    server still leaves it out (the wire fixture checks every message against the
    schema), and a failure still says True."""
    server = Server("ok")

    @server.tool
    def fine() -> dict[str, int]:
        return {"n": 1}

    @server.tool
    def broken() -> str:
        raise RuntimeError("no")

    with open_client(server) as client:
        assert client.call_tool("fine").is_error is False
        assert client.call_tool_async("fine").result(10).is_error is False
        assert client.call_tool("broken").is_error is True
    results = [message["result"] for message in wire.sent
               if isinstance(message, dict) and "content" in message.get("result", {})]
    assert len(results) == 3
    assert [result.get("isError") for result in results] == [None, None, True]


def test_an_explicit_is_error_false_from_a_server_stays_false() -> None:
    """An isError the server sent is kept as it is; only a missing one becomes False."""
    server = Server("ok")

    @server.tool
    def explicit() -> types.CallToolResult:
        return types.CallToolResult(content=[], is_error=False)

    with open_client(server) as client:
        assert client.call_tool("explicit").is_error is False


def test_a_wrong_path_is_reported_as_not_found(serve: Any) -> None:
    """HTTP-9: a 404 to initialize (no session yet) says nothing is served there, with
    the status, and not a JSON-RPC code that never was on the wire."""
    server = Server("web")
    with serve_http(server) as handle:
        url = handle.url.replace("/mcp", "/not-mcp")
        with pytest.raises(HttpError) as caught:
            Client.http(url, timeout=10)
    assert caught.value.status == 404
    assert str(caught.value) == (f"no MCP endpoint at {url} (HTTP 404 Not Found); "
                                 "check the path (often /mcp)")
    assert "-32603" not in str(caught.value)


def test_an_expired_session_is_reported_as_such(serve: Any) -> None:
    """HTTP-34: a 404 to a request with our session id is SessionExpired, whose text
    says so without a JSON-RPC code."""
    play = Play("json")
    server = serve(play)
    with open_http_client(server.url) as client:
        client.ping()
        play.sessions += 1  # the server forgets the session
        with pytest.raises(SessionExpired) as caught:
            client.call_tool("echo", {"n": 1})
    assert str(caught.value).startswith("the server ended the session (HTTP 404)")
    assert "code" not in str(caught.value)


def test_an_is_error_null_from_a_server_reads_as_false(scripted: Any) -> None:
    """A server that writes ``"isError": null`` (not a boolean, as TOOLS-4 wants) is
    read leniently: the client shows False, as for a missing one."""
    server = scripted({"tools": {}}, {
        "tools/call": lambda params: {"content": [{"type": "text", "text": "ok"}],
                                      "isError": None}})
    with Client(server.peer.transport) as client:
        assert client.call_tool("any").is_error is False
