"""Faults over Streamable HTTP with real sockets on 127.0.0.1: vanishing clients,
clients that stop reading, a server that goes away.

The server is :func:`serve_http` with a short keep-alive, so that a vanished client is
noticed at the next keep-alive write. The test learns that the server let go of a
stream through Events set by the application's own bookkeeping (``_leave``,
``release_get_stream``), never by sleeping.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests

from mcp_sync import Client, Context, Server
from mcp_sync.errors import ConnectionLost, HttpError
from mcp_sync.transports.http_server import serve_http
from tests.http_server_helpers import (
    HEADERS,
    INITIALIZE,
    INITIALIZED,
    FakeClock,
    Gate,
    call,
    make_server,
    read_events,
)

TIMEOUT = (5, 20)


class Session:
    """One MCP session over real HTTP, with a ``requests.Session`` of its own."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.http = requests.Session()
        self.id: str | None = None

    def headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        headers = dict(HEADERS)
        if self.id is not None:
            headers["Mcp-Session-Id"] = self.id
        headers.update(extra or {})
        return headers

    def post(self, body: Any, *, stream: bool = False) -> requests.Response:
        return self.http.post(self.url, data=json.dumps(body), headers=self.headers(),
                              stream=stream, timeout=TIMEOUT)

    def initialize(self) -> None:
        response = self.post(INITIALIZE)
        assert response.status_code == 200, response.text
        self.id = response.headers["Mcp-Session-Id"]
        assert self.post(INITIALIZED).status_code == 202

    def ping(self) -> Any:
        with self.post(call("p", "ping"), stream=True) as response:
            for event in read_events(response):
                return json.loads(event.data)
        raise AssertionError("no answer to ping")

    def get(self) -> requests.Response:
        return self.http.get(self.url, headers=self.headers({"Accept": "text/event-stream"}),
                             stream=True, timeout=TIMEOUT)

    def delete(self) -> int:
        return self.http.delete(self.url, headers=self.headers(), timeout=TIMEOUT).status_code

    def close(self) -> None:
        self.http.close()


@pytest.fixture
def sessions() -> Iterator[Callable[[str], Session]]:
    made: list[Session] = []

    def make(url: str) -> Session:
        session = Session(url)
        made.append(session)
        return session

    yield make
    for session in made:
        session.close()


class Released:
    """Counts calls of an app method the server runs when it lets go of a stream."""

    def __init__(self, app: Any, name: str) -> None:
        self.calls = 0
        self._changed = threading.Condition()
        original = getattr(app, name)

        def wrapper(*args: Any) -> Any:
            try:
                return original(*args)
            finally:
                with self._changed:
                    self.calls += 1
                    self._changed.notify_all()

        setattr(app, name, wrapper)

    def wait_for(self, count: int, timeout: float = 5.0) -> bool:
        return self.wait_until(lambda: self.calls >= count, timeout)

    def wait_until(self, predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
        """Wait until ``predicate`` holds, checking it after each call."""
        with self._changed:
            return self._changed.wait_for(predicate, timeout)


def raw_post(url: str, session_id: str, body: dict[str, Any]) -> socket.socket:
    """POST over a bare socket and read until the SSE stream has begun."""
    host, port = url.split("//")[1].split("/")[0].split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    data = json.dumps(body).encode()
    sock.sendall(
        f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        f"Mcp-Session-Id: {session_id}\r\nContent-Length: {len(data)}\r\n\r\n".encode() + data)
    received = b""
    while b"text/event-stream" not in received or b"\r\n\r\n" not in received:
        chunk = sock.recv(4096)
        assert chunk, received
        received += chunk
    return sock


# --- clients that vanish ------------------------------------------------------------------------


@pytest.mark.timeout(30)
def test_client_vanishing_from_a_post_stream_is_no_cancellation_http_16_cancel_10(
        sessions: Any) -> None:
    """HTTP-16, CANCEL-10: the socket of a POST's SSE stream is closed mid-call: the
    server lets go of the stream, the handler runs to its end uncancelled, other
    sessions are served meanwhile, and DELETE then ends the session (count back to 0)."""
    gate = Gate()
    server = make_server(gate)
    with serve_http(server, keepalive_interval=0.1) as handle:
        left = Released(handle.app, "_leave")
        vanishing, other = sessions(handle.url), sessions(handle.url)
        vanishing.initialize()
        other.initialize()
        state = handle.app._sessions[str(vanishing.id)]
        sock = raw_post(handle.url, str(vanishing.id),
                        call(7, "tools/call", {"name": "wait", "arguments": {}}))
        assert gate.reached.wait(5)
        # Only the POST stream is under way once the earlier answers have closed.
        assert left.wait_until(lambda: state.active == 1)
        sock.close()
        assert left.wait_until(lambda: state.active == 0), "the server kept the stream"
        assert not gate.finished.is_set()  # and the handler is still running
        assert other.ping()["result"] == {}
        gate.opened.set()
        assert gate.finished.wait(5)
        assert gate.cancelled is False
        assert vanishing.ping()["result"] == {}  # the session itself lives on
        assert handle.app.session_count == 2
        assert vanishing.delete() == 204
        assert other.delete() == 204
        assert handle.app.session_count == 0
    assert not server._connections


@pytest.mark.timeout(30)
def test_client_vanishing_from_the_get_stream_frees_its_slot_http_21(sessions: Any) -> None:
    """HTTP-21: the client's GET stream socket is closed: the server notices at the
    next keep-alive, the stream's slot is released, the session and the others go on,
    and a new GET is accepted."""
    server = make_server()
    with serve_http(server, keepalive_interval=0.1, max_get_streams=1) as handle:
        released = Released(handle.app, "release_get_stream")
        first, second = sessions(handle.url), sessions(handle.url)
        first.initialize()
        second.initialize()
        stream = first.get()
        assert stream.status_code == 200
        next(stream.iter_content(chunk_size=None))  # the opening comment
        assert handle.app.get_stream_count == 1
        with second.get() as refused:
            assert refused.status_code == 405  # the one slot is taken
        stream.close()
        assert released.wait_for(1), "the server kept the vanished GET stream"
        assert handle.app.get_stream_count == 0
        assert first.ping()["result"] == {}
        with second.get() as accepted:
            assert accepted.status_code == 200
            assert handle.app.get_stream_count == 1
        assert released.wait_for(2)
        assert first.delete() == 204 and second.delete() == 204


@pytest.mark.timeout(30)
def test_abandoned_session_expires_and_is_counted_down_http_34(sessions: Any) -> None:
    """HTTP-34: a client that vanishes without DELETE: its session expires after
    ``session_timeout`` of silence, its id then gets 404, the count goes down."""
    clock = FakeClock()
    server = make_server()
    with serve_http(server, session_timeout=60, clock=clock) as handle:
        gone, staying = sessions(handle.url), sessions(handle.url)
        gone.initialize()
        gone.close()  # vanishes: no DELETE
        clock.advance(30)
        staying.initialize()
        assert handle.app.session_count == 2
        clock.advance(31)
        assert handle.app.sweep() == 1
        assert handle.app.session_count == 1
        revived = sessions(handle.url)
        revived.id = gone.id
        assert revived.post(call(1, "ping")).status_code == 404
        assert staying.ping()["result"] == {}
        assert staying.delete() == 204
    assert not server._connections


# --- clients that stop reading ------------------------------------------------------------------


def flooding_server(entered: threading.Event, done: threading.Event) -> Server:
    server = Server("flood")

    @server.tool()
    def flood(count: int, ctx: Context) -> str:
        entered.set()
        for n in range(count):
            ctx.info(f"{n:06d}" + "x" * 8192)
        done.set()
        return "flooded"

    return server


@pytest.mark.timeout(60)
def test_client_not_reading_its_post_stream_buffers_a_bounded_queue_gen_3(
        sessions: Any, record_property: Any) -> None:
    """A client that stops reading the SSE stream of its call while the tool sends
    3,000 log messages of 8 KiB: the server's queue for that stream stays within
    MAX_QUEUED_EVENTS (the oldest notifications are dropped), the tool is never
    blocked by the slow client, and the response still arrives last once it reads."""
    from mcp_sync.server.http._session import MAX_QUEUED_EVENTS

    entered, done = threading.Event(), threading.Event()
    server = flooding_server(entered, done)
    with serve_http(server, keepalive_interval=0.2) as handle:
        client = sessions(handle.url)
        client.initialize()
        response = client.post(call(1, "tools/call", {"name": "flood",
                                                      "arguments": {"count": 3000}}),
                               stream=True)
        try:
            assert entered.wait(5)
            streams = list(handle.app._sessions[client.id].transport._posts.values())
            assert len(streams) == 1
            assert done.wait(20), "the tool was blocked by a client that does not read"
            queued = len(streams[0].queue)
            record_property("queued_events", queued)
            assert queued <= MAX_QUEUED_EVENTS + 1
            messages = [json.loads(event.data) for event in read_events(response)]
        finally:
            response.close()
        logs = [m for m in messages if m.get("method") == "notifications/message"]
        record_property("log_messages_received", len(logs))
        assert messages[-1]["result"]["content"][0]["text"] == "flooded"
        assert len(logs) < 3000  # some were dropped rather than buffered
        numbers = [int(m["params"]["data"][:6]) for m in logs]
        assert numbers == sorted(numbers)  # what arrives is in order
        assert client.delete() == 204


# --- a server that goes away ---------------------------------------------------------------------


@pytest.mark.timeout(30)
def test_http_server_closing_mid_call_fails_the_caller_promptly_shutdown_5() -> None:
    """SHUTDOWN-5: the HTTP server shuts down while a call waits: the caller gets a
    typed error at once (HttpError: its stream ended unanswered and could not be
    resumed), and a later call fails at once with ConnectionLost."""
    gate = Gate()
    server = make_server(gate)
    handle = serve_http(server, keepalive_interval=0.1)
    try:
        client = Client.http(handle.url, timeout=20, read_timeout=5)
        try:
            future = client.call_tool_async("until_cancelled")
            assert gate.reached.wait(5)
            began = time.monotonic()
            handle.close()
            with pytest.raises((HttpError, ConnectionLost)):
                future.result(10)
            assert time.monotonic() - began < 5.0
            began = time.monotonic()
            with pytest.raises(ConnectionLost):
                client.ping(timeout=20)
            assert time.monotonic() - began < 5.0  # failed fast, not at its timeout
            assert client.closed
        finally:
            client.close()
    finally:
        handle.close()
