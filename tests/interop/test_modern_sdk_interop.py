"""Our client against the official Python SDK's server in the modern era (2026-07-28).

``sdk_modern_server.py`` beside this file runs as a child process, over stdio and over
Streamable HTTP. Its tools answer with input-required results (SEP-2322), which our client
answers through the same handlers as the legacy era's server requests, and it publishes
changes that reach our notification callbacks through ``subscriptions/listen``.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_sync import Client, types
from mcp_sync.client import ElicitationRequest
from mcp_sync.errors import MethodNotFound
from tests.helpers import wait_until_listening
from tests.interop.test_http_sdk_server import ROOT, _free_port, running

pytestmark = [pytest.mark.interop, pytest.mark.timeout(90)]

SERVER = Path(__file__).with_name("sdk_modern_server.py")
STDIO = [sys.executable, str(SERVER)]


def elicit(request: ElicitationRequest) -> Any:
    return request.accept({"name": "Ada"})


def sample(params: types.CreateMessageRequestParams) -> dict[str, Any]:
    return {"role": "assistant", "model": "echo",
            "content": {"type": "text", "text": f"{len(params.messages)} message(s)"}}


HANDLERS: dict[str, Any] = {"elicitation_handler": elicit, "sampling_handler": sample,
                            "roots": ["file:///srv/data"]}


@pytest.fixture
def http_url() -> Iterator[str]:
    import subprocess

    port = _free_port()
    process = subprocess.Popen([sys.executable, str(SERVER), "--http", str(port)],
                               cwd=str(ROOT), stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until_listening(port, process, 20.0, "the SDK server")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


def test_stdio_modern_era_with_the_sdk_server() -> None:
    """"How eras find each other" (stdio): the SDK server answers server/discover, so the
    client speaks 2026-07-28; discover's serverInfo, capabilities and instructions."""
    with Client.stdio(STDIO, timeout=30) as client:
        assert client.era == "modern"
        assert client.protocol_version == "2026-07-28"
        assert client.server_info.name == "sdk-modern"
        assert client.instructions == "Modern-era interop tools."
        assert {tool.name for tool in client.list_tools()} >= {"ask", "twice", "notify"}


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_input_required_answered_through_the_handlers_sep_2322(
        transport: str, request: pytest.FixtureRequest) -> None:
    """SEP-2322: elicitation, sampling and roots asked in one input-required result are
    answered by elicitation_handler, sampling_handler and roots; the retry carries the
    answers and the request state exactly as sent."""
    if transport == "stdio":
        client = Client.stdio(STDIO, timeout=30, **HANDLERS)
    else:
        client = Client.http(request.getfixturevalue("http_url"), timeout=30, **HANDLERS)
    with client:
        assert client.era == "modern"
        result = client.call_tool("ask", {"kinds": "elicit,sample,roots"})
    seen = json.loads(result.content[0].text)
    assert seen["state"] == "state-of-elicit,sample,roots"
    assert seen["answers"]["elicit"] == {"action": "accept", "content": {"name": "Ada"}}
    assert seen["answers"]["sample"]["content"]["text"] == "1 message(s)"
    assert seen["answers"]["roots"] == {"roots": [{"uri": "file:///srv/data"}]}


def test_several_rounds_under_one_call() -> None:
    """SEP-2322: a second input-required result is answered too, its new state echoed."""
    with Client.stdio(STDIO, timeout=30, **HANDLERS) as client:
        assert client.call_tool("twice", {}).content[0].text == "round-2: Ada"


def test_missing_handler_fails_the_call() -> None:
    """An input request the client cannot serve (no elicitation handler) fails the call
    with -32601, as the legacy era would answer it."""
    with Client.stdio(STDIO, timeout=30) as client, pytest.raises(MethodNotFound):
        client.call_tool("ask", {"kinds": "elicit"})


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_listen_routes_changes_to_the_callbacks(
        transport: str, request: pytest.FixtureRequest) -> None:
    """subscriptions/listen: with on_list_changed and a subscribed resource, the client
    keeps a listen request open; the SDK server's notifications reach the callbacks."""
    heard: list[str] = []
    both = threading.Event()
    acknowledged = threading.Event()

    def note(item: str) -> None:
        heard.append(item)
        if {"tools", "memo://one"} <= set(heard):
            both.set()

    def on_notification(method: str, params: dict[str, Any]) -> None:
        wanted = params.get("notifications", {})
        if (method == "notifications/subscriptions/acknowledged"
                and wanted.get("resourceSubscriptions")):
            acknowledged.set()

    callbacks: dict[str, Any] = {"on_list_changed": note, "on_resource_updated": note,
                                 "on_notification": on_notification}
    if transport == "stdio":
        client = Client.stdio(STDIO, timeout=30, **callbacks)
    else:
        client = Client.http(request.getfixturevalue("http_url"), timeout=30, **callbacks)
    with client:
        client.subscribe_resource("memo://one")
        assert acknowledged.wait(20)
        assert client.call_tool("notify", {}).content[0].text == "published"
        assert both.wait(20)
    # One listen request at a time: the one replaced at the subscription was ended.
    assert sorted(heard) == ["memo://one", "tools"]


def test_http_modern_requests_with_the_sdk_server(http_url: str) -> None:
    """Streamable HTTP: a modern request (with MCP-Protocol-Version, Mcp-Method,
    Mcp-Name) succeeds, so the era is modern; no session is made."""
    with Client.http(http_url, timeout=30) as client:
        assert client.era == "modern"
        assert client.read_resource("memo://one").contents[0].text == "one"


@pytest.mark.parametrize("mode", ["stream", "sse"])
def test_default_client_against_the_sdk_servers_of_each_http_flavour(
        mode: str, tmp_path: Path) -> None:
    """"How eras find each other" (HTTP): the SDK's Streamable HTTP server answers the
    modern probe (modern era); its 2024-11-05 HTTP+SSE server refuses it and initialize
    with 405, so the client ends in the legacy era on the old transport (HTTP-37)."""
    from mcp_sync.transports.http_client import HttpClientTransport

    with running(mode, tmp_path) as server, Client.http(server.url, timeout=30) as client:
        transport = client._engine.transport
        assert isinstance(transport, HttpClientTransport)
        assert client.era == ("modern" if mode == "stream" else "legacy")
        assert transport.legacy == (mode == "sse")
        assert client.call_tool("add", {"a": 2, "b": 3}).content[0].text == "5"
