"""HTTP/1.1 keep-alive under ``serve_http``/``run_http``: connections are reused safely.

Driven over real sockets on 127.0.0.1 with ``http.client`` (one connection object, so
reuse is visible) and raw sockets for the cases a polite client never produces.
"""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any

import pytest

from mcp_sync import Client
from mcp_sync.transports import _http_serving
from mcp_sync.transports.http_server import HttpServerHandle, serve_http
from tests.http_server_helpers import (
    HEADERS,
    INITIALIZE,
    INITIALIZED,
    call,
    make_server,
    parse_sse,
    read_until_closed,
)

pytestmark = pytest.mark.timeout(30)


@pytest.fixture
def served(request: pytest.FixtureRequest) -> Iterator[HttpServerHandle]:
    options: dict[str, Any] = getattr(request, "param", {})
    with serve_http(make_server(), **options) as handle:
        yield handle


def _post(conn: http.client.HTTPConnection, body: Any,
          headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
    conn.request("POST", "/mcp", body=json.dumps(body).encode(),
                 headers={**HEADERS, **(headers or {})})
    return conn.getresponse()


def _open_session(conn: http.client.HTTPConnection) -> str:
    response = _post(conn, INITIALIZE)
    assert response.status == 200
    response.read()
    session = response.getheader("Mcp-Session-Id")
    assert session
    response = _post(conn, INITIALIZED, {"Mcp-Session-Id": session})
    assert response.status == 202
    response.read()
    return session


def _answer(response: http.client.HTTPResponse) -> Any:
    data = response.read()
    if response.getheader("Content-Type", "").startswith("text/event-stream"):
        return json.loads(parse_sse(data)[-1].data)
    return json.loads(data)


@pytest.mark.parametrize("served", [{}, {"json_response": True}], indirect=True,
                         ids=["sse", "json"])
def test_one_connection_carries_a_whole_session(served: HttpServerHandle) -> None:
    """HTTP-7, HTTP-12: initialize, notification and calls all travel on one connection."""
    conn = http.client.HTTPConnection(served.host, served.port, timeout=10)
    try:
        conn.connect()
        first_socket = conn.sock
        session = _open_session(conn)
        for n in range(5):
            response = _post(conn, call(n + 2, "tools/call",
                                        {"name": "add", "arguments": {"a": n, "b": 1}}),
                             {"Mcp-Session-Id": session})
            assert response.status == 200
            assert response.getheader("Connection") is None
            assert _answer(response)["result"]["content"][0]["text"] == str(n + 1)
        assert conn.sock is first_socket  # never reconnected
    finally:
        conn.close()


def test_client_reuses_connections() -> None:
    """Client.http keeps its connections open between calls (requests' pool + keep-alive)."""
    opened = []
    original = _http_serving._WsgiServer.process_request

    def counting(self: Any, request: Any, address: Any) -> None:
        opened.append(address)
        original(self, request, address)

    _http_serving._WsgiServer.process_request = counting  # type: ignore[method-assign]
    try:
        with serve_http(make_server()) as handle, Client.http(handle.url, timeout=10) as client:
            client.call_tool("add", {"a": 1, "b": 2})
            before = len(opened)
            for _ in range(20):
                assert client.call_tool("add", {"a": 1, "b": 2}).content[0].text == "3"
            # Not one per call. A call may still go out on a second post thread (with a
            # session, so a connection, of its own) when the caller was woken by the answer
            # before the thread that posted it was back in the pool, as under a loaded CI.
            assert len(opened) - before <= 3
    finally:
        _http_serving._WsgiServer.process_request = original  # type: ignore[method-assign]


def test_connection_close_from_client_is_honoured(served: HttpServerHandle) -> None:
    """A client that asks for ``Connection: close`` gets it, and the socket ends."""
    with socket.create_connection((served.host, served.port), timeout=10) as sock:
        body = json.dumps(INITIALIZE).encode()
        head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n"
                f"Accept: application/json, text/event-stream\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                f"Connection: close\r\n\r\n").encode()
        sock.sendall(head + body)
        received = read_until_closed(sock)
    assert received.startswith(b"HTTP/1.1 200")
    assert b"\r\nConnection: close\r\n" in received


@pytest.mark.parametrize("served", [{"keep_alive_timeout": 0}], indirect=True)
def test_keep_alive_can_be_turned_off(served: HttpServerHandle) -> None:
    conn = http.client.HTTPConnection(served.host, served.port, timeout=10)
    try:
        response = _post(conn, INITIALIZE)
        response.read()
        assert response.status == 200
        assert response.getheader("Connection") == "close"
    finally:
        conn.close()


@pytest.mark.parametrize("served", [{"keep_alive_timeout": 0.2}], indirect=True)
def test_idle_connection_is_closed_after_the_timeout(served: HttpServerHandle) -> None:
    with socket.create_connection((served.host, served.port), timeout=10) as sock:
        sock.sendall(_raw_post(served.port, json.dumps(INITIALIZE).encode()))
        received = read_until_closed(sock)  # the answer, then EOF once the idle time ends
    assert received.startswith(b"HTTP/1.1 200")
    assert b"Connection: close" not in received


@pytest.mark.parametrize("served", [{"max_body_size": 1024}], indirect=True)
def test_refused_large_body_closes_the_connection(served: HttpServerHandle) -> None:
    """HTTP-5 (413): a body the server never read cannot be skipped; it says so and closes."""
    body = b"[" + b" " * 200_000 + b"]"
    with socket.create_connection((served.host, served.port), timeout=10) as sock:
        sock.sendall(_raw_post(served.port, body))
        received = read_until_closed(sock)
    assert received.startswith(b"HTTP/1.1 413")
    assert b"\r\nConnection: close\r\n" in received


def test_truncated_body_ends_the_request_and_others_are_served(served: HttpServerHandle) -> None:
    """A body shorter than its Content-Length, then the client's half-close: no hang."""
    with socket.create_connection((served.host, served.port), timeout=10) as sock:
        body = json.dumps(INITIALIZE).encode()
        head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n"
                f"Accept: application/json, text/event-stream\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body) + 50}\r\n\r\n")
        sock.sendall(head.encode() + body)
        sock.shutdown(socket.SHUT_WR)
        received = read_until_closed(sock)
    assert received.startswith(b"HTTP/1.1 400")
    with Client.http(served.url, timeout=10) as client:
        assert client.call_tool("add", {"a": 2, "b": 2}).content[0].text == "4"


def test_closing_the_server_ends_idle_connections(served: HttpServerHandle) -> None:
    conn = http.client.HTTPConnection(served.host, served.port, timeout=10)
    try:
        response = _post(conn, INITIALIZE)
        response.read()
        assert response.status == 200
        served.close()
        assert conn.sock is not None
        assert conn.sock.recv(1) == b""  # the server shut the idle connection down
    finally:
        conn.close()


def _raw_post(port: int, body: bytes) -> bytes:
    head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Accept: application/json, text/event-stream\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n")
    return head.encode() + body


@pytest.mark.parametrize("served", [{"max_threads": 1}], indirect=True)
def test_bounded_pool_serves_a_second_client_while_the_first_stays_connected(
        served: HttpServerHandle) -> None:
    """With one thread, the first connection's idle wait is short and the second is served.

    While the second waits, the pool is crowded: the first connection's next answer
    would say ``Connection: close``.
    """
    first = http.client.HTTPConnection(served.host, served.port, timeout=10)
    second = http.client.HTTPConnection(served.host, served.port, timeout=10)
    try:
        response = _post(first, INITIALIZE)
        response.read()
        assert response.status == 200
        response = _post(second, INITIALIZE)
        assert response.status == 200
        assert "result" in _answer(response)
    finally:
        first.close()
        second.close()



def test_head_gets_headers_only_and_the_connection_stays_usable(
        served: HttpServerHandle) -> None:
    conn = http.client.HTTPConnection(served.host, served.port, timeout=10)
    try:
        conn.request("HEAD", "/mcp")
        response = conn.getresponse()
        assert response.read() == b""
        assert response.status == 405  # the endpoint serves GET, POST and DELETE
        response = _post(conn, INITIALIZE)
        assert response.status == 200
        assert "result" in _answer(response)
    finally:
        conn.close()


def test_every_response_says_who_served_it_and_when(served: HttpServerHandle) -> None:
    conn = http.client.HTTPConnection(served.host, served.port, timeout=10)
    try:
        before = datetime.now(timezone.utc).replace(microsecond=0)
        for _ in range(2):  # the second from the Date value formatted for the first
            response = _post(conn, INITIALIZE)
            assert response.status == 200
            response.read()
            after = datetime.now(timezone.utc)
            date = parsedate_to_datetime(response.getheader("Date", ""))
            assert before <= date <= after
            assert response.getheader("Server", "").startswith("Werkzeug/")
            assert response.version == 11
    finally:
        conn.close()
