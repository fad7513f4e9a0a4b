"""Connections, threads and options of ``serve_http``/``run_http`` (waitress underneath).

Driven over real sockets on 127.0.0.1 with ``http.client`` (one connection object, so
reuse is visible) and raw sockets for the cases a polite client never produces.
"""

from __future__ import annotations

import http.client
import json
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import pytest

from mcp_sync import Client
from mcp_sync.transports.http_server import HttpServerHandle, serve_http
from tests.http_server_helpers import (
    HEADERS,
    INITIALIZE,
    INITIALIZED,
    Gate,
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


@pytest.mark.parametrize("served", [{"json_response": True}], indirect=True)
def test_one_connection_carries_a_whole_session(served: HttpServerHandle) -> None:
    """HTTP-7, HTTP-12: initialize, notification and calls all travel on one connection.

    (An SSE answer ends its connection: waitress closes after every chunked response.)
    """
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
    ports: list[str] = []

    def recording(app: Any) -> Any:
        def wsgi(environ: dict[str, Any], start_response: Any) -> Any:
            ports.append(environ["REMOTE_PORT"])
            return app(environ, start_response)
        return wsgi

    with serve_http(make_server(), json_response=True, wrap=recording) as handle, \
            Client.http(handle.url, timeout=10) as client:
        client.call_tool("add", {"a": 1, "b": 2})
        before = set(ports)
        for _ in range(20):
            assert client.call_tool("add", {"a": 1, "b": 2}).content[0].text == "3"
        # Not one per call. A call may still go out on a second post thread (with a
        # session, so a connection, of its own) when the caller was woken by the answer
        # before the thread that posted it was back in the pool, as under a loaded CI.
        assert len(set(ports) - before) <= 3


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


def test_close_joins_every_thread_it_started() -> None:
    """Streams open, a call in flight, a connection idle: close() leaves no thread behind."""
    before = set(threading.enumerate())
    gate = Gate()
    handle = serve_http(make_server(gate))
    idle = http.client.HTTPConnection(handle.host, handle.port, timeout=10)
    try:
        with Client.http(handle.url, timeout=10) as client:
            pending = client.send_request_async(
                "tools/call", {"name": "until_cancelled", "arguments": {}})
            assert gate.reached.wait(10)
            _post(idle, INITIALIZE).read()
            handle.close()
            with pytest.raises(Exception):  # noqa: B017 - ended, however the client says so
                pending.result(10)
    finally:
        idle.close()
        handle.close()
    started = [t for t in threading.enumerate() if t not in before]
    for thread in started:
        thread.join(5.0)
    assert [t.name for t in started if t.is_alive()] == []


def test_keep_alive_timeout_is_refused_with_a_reason() -> None:
    with pytest.raises(TypeError, match=r"keep_alive_timeout.*io_timeout"):
        serve_http(make_server(), keep_alive_timeout=5)


@pytest.mark.parametrize("options", [{"max_threads": 4, "max_get_streams": 4},
                                     {"max_threads": 1}, {"io_timeout": 0}])
def test_options_that_would_starve_or_never_end_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        serve_http(make_server(), **options)


@pytest.mark.parametrize("served", [{"io_timeout": 0.5}], indirect=True)
def test_idle_connection_is_closed_after_io_timeout(served: HttpServerHandle) -> None:
    with socket.create_connection((served.host, served.port), timeout=10) as sock:
        sock.sendall(_raw_post(served.port, json.dumps(INITIALIZE).encode()))
        received = read_until_closed(sock)  # the answer, then EOF once the idle time ends
    assert received.startswith(b"HTTP/1.1 200")


@pytest.mark.parametrize("served", [{"io_timeout": 0.5}], indirect=True)
def test_a_client_that_stops_mid_body_frees_its_connection(served: HttpServerHandle) -> None:
    """Half a body, then silence: the connection ends after io_timeout, others are served."""
    with socket.create_connection((served.host, served.port), timeout=10) as sock:
        body = json.dumps(INITIALIZE).encode()
        sock.sendall(_raw_post(served.port, body)[:-20])
        with Client.http(served.url, timeout=10) as client:
            assert client.call_tool("add", {"a": 2, "b": 2}).content[0].text == "4"
        try:
            received = read_until_closed(sock)
        except TimeoutError:
            pytest.fail("the server still waits for the rest of the body")
    assert received == b"" or received.startswith(b"HTTP/1.1 400")


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
    assert received == b"" or received.startswith(b"HTTP/1.1 400")
    with Client.http(served.url, timeout=10) as client:
        assert client.call_tool("add", {"a": 2, "b": 2}).content[0].text == "4"


@pytest.mark.parametrize("served", [{"json_response": True}], indirect=True)
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


@pytest.mark.parametrize("served", [{"max_threads": 2, "max_get_streams": 1}],
                         indirect=True)
def test_bounded_pool_serves_a_second_client_while_the_first_stays_connected(
        served: HttpServerHandle) -> None:
    """An idle connection holds no thread: with two, two clients stay connected."""
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
            assert response.getheader("Server") == "mcp_sync"
            assert response.version == 11
    finally:
        conn.close()


_FOREGROUND = """
import sys
from tests.http_server_helpers import make_server
make_server().run_http(port=0)
print("returned", file=sys.stderr, flush=True)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT is a POSIX signal")
def test_run_http_serves_in_the_foreground_until_ctrl_c() -> None:
    process = subprocess.Popen([sys.executable, "-c", _FOREGROUND], stderr=subprocess.PIPE,
                               text=True, cwd=Path(__file__).parent.parent)
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert line.startswith("Serving MCP on http://127.0.0.1:"), line
        url = line.split()[3]
        with Client.http(url, timeout=10) as client:
            assert client.call_tool("add", {"a": 2, "b": 3}).content[0].text == "5"
            process.send_signal(signal.SIGINT)
            assert process.wait(10) == 0
        assert "returned" in process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
        if process.stderr is not None:
            process.stderr.close()
