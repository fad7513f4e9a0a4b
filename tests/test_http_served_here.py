"""Which threads carry a Streamable HTTP call, and how many handlers run at once.

A POST holding one request answered as JSON is served on the thread that received it,
which would otherwise only wait for the answer; an SSE answer streams while a worker
serves. Either way ``max_workers`` bounds the handlers running at once per session. On
the client, the thread that read an answer hands it to the engine itself.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from mcp_sync import Client, Context, Server
from mcp_sync.errors import RequestTimeout
from mcp_sync.jsonrpc import Request, Response
from mcp_sync.transports.http_client import HttpClientTransport
from mcp_sync.transports.http_server import serve_http
from tests.helpers import LEGACY_ERA
from tests.http_server_helpers import Gate, make_server

pytestmark = pytest.mark.timeout(30)

WAIT = 10.0
QUIET = 0.3  # how long to look for a second handler that must not have started


def _server(max_workers: int = 16) -> tuple[Server, threading.Event, threading.Condition,
                                            list[int]]:
    server = Server("served-here", max_workers=max_workers)
    release = threading.Event()
    running = threading.Condition()
    counts = [0, 0]  # running now, most at once

    @server.tool()
    def thread_name() -> str:
        return threading.current_thread().name

    @server.tool()
    def hold(ctx: Context) -> str:
        with running:
            counts[0] += 1
            counts[1] = max(counts[1], counts[0])
            running.notify_all()
        try:
            release.wait(WAIT)
            return "done"
        finally:
            with running:
                counts[0] -= 1

    return server, release, running, counts


@pytest.mark.parametrize(("json_response", "on_worker"), [(True, False), (False, True)],
                         ids=["json", "sse"])
def test_a_json_answer_is_served_on_the_request_thread(json_response: bool,
                                                       on_worker: bool) -> None:
    server, _, _, _ = _server()
    with serve_http(server, json_response=json_response) as handle, \
            Client.http(handle.url, **LEGACY_ERA) as client:
        name = client.call_tool("thread_name", {}).content[0].text
    assert ("worker" in name) is on_worker, name


def test_max_workers_still_bounds_handlers_served_on_request_threads() -> None:
    server, release, running, counts = _server(max_workers=1)
    with serve_http(server, json_response=True) as handle, \
            Client.http(handle.url, **LEGACY_ERA) as client, ThreadPoolExecutor(2) as callers:
        try:
            first = callers.submit(client.call_tool, "hold", {})
            with running:
                assert running.wait_for(lambda: counts[0] == 1, WAIT)
            second = callers.submit(client.call_tool, "hold", {})
            with running:
                assert not running.wait_for(lambda: counts[0] == 2, QUIET)
        finally:
            release.set()
        assert first.result(WAIT).content[0].text == "done"
        assert second.result(WAIT).content[0].text == "done"
    assert counts[1] == 1


def test_the_client_hands_each_answer_to_the_engine_from_the_thread_that_read_it() -> None:
    server, _, _, _ = _server()
    received: list[tuple[object, str]] = []
    arrived = threading.Condition()

    def receiver(message: object, serve_here: bool) -> list[object]:
        with arrived:
            received.append((message, threading.current_thread().name))
            arrived.notify_all()
        return []

    with serve_http(server, json_response=True) as handle:
        transport = HttpClientTransport(handle.url, listen=False, legacy_fallback=False)
        try:
            assert transport.attach_receiver(receiver)  # type: ignore[arg-type]
            transport.write(Request(1, "initialize", {
                "protocolVersion": "2025-03-26", "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}))
            with arrived:
                assert arrived.wait_for(lambda: received, WAIT)
            (message, thread), = received
            assert isinstance(message, Response) and message.id == 1
            assert ":post-" in thread, thread  # the sender that read it, not a reader
        finally:
            transport.close()
        assert transport.read() is None  # the reader only ever hears of the end


def test_a_request_served_on_the_request_thread_can_be_cancelled_ambig_8_cancel_4() -> None:
    """CANCEL-4 for a JSON answer: the cancellation arrives on another POST while the
    thread that received the request is busy serving it."""
    gate = Gate()
    with serve_http(make_server(gate), json_response=True) as handle, \
            Client.http(handle.url, **LEGACY_ERA) as client:
        future = client.call_tool_async("until_cancelled", {}, timeout=2.0)
        assert gate.reached.wait(WAIT)  # being served when its timeout cancels it
        with pytest.raises(RequestTimeout):
            future.result(WAIT)
        assert gate.finished.wait(WAIT) and gate.cancelled
        assert client.call_tool("add", {"a": 2, "b": 3}).content[0].text == "5"
