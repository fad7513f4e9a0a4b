"""Helpers for the Streamable HTTP server tests: a test server, SSE reading, a fake clock.

``WsgiPeer`` drives the WSGI application in-process with werkzeug's test client;
``read_events`` reads a streamed ``requests`` response over a real socket. Every
JSON-RPC message either one hands back has been checked against the 2025-03-26 schema.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

from werkzeug.test import Client as WerkzeugClient
from werkzeug.test import TestResponse

from mcp_sync import Context, Server
from mcp_sync.protocol._sse import SseEvent, SseParser
from tests.conftest import schema_errors
from tests.helpers import INITIALIZE, INITIALIZED

__all__ = [
    "HEADERS",
    "INITIALIZE",
    "INITIALIZED",
    "FakeClock",
    "Gate",
    "WsgiPeer",
    "call",
    "checked",
    "make_server",
    "messages_of",
    "parse_sse",
    "read_events",
    "read_until_closed",
]

#: What a well-behaved client sends with every POST (HTTP-6, AMBIG-12).
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def call(request_id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A request as a wire dict."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def checked(message: Any) -> Any:
    """``message`` itself, after asserting that it fits the schema."""
    errors = schema_errors(message)
    assert not errors, (message, errors)
    return message


class Gate:
    """An Event a tool blocks on, with a second Event saying the tool got there."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self.opened = threading.Event()
        self.finished = threading.Event()
        self.cancelled = False


def make_server(gate: Gate | None = None) -> Server:
    """A small server: add, echo, progress (reports each step), and wait (blocks on ``gate``)."""
    server = Server("http-test", version="1.0")

    @server.tool(annotations={"readOnlyHint": True})
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def echo(message: str) -> str:
        """Return the message."""
        return message

    @server.tool()
    def progress(steps: int, ctx: Context) -> str:
        """Report progress at each step."""
        for step in range(1, steps + 1):
            ctx.report_progress(step, steps, f"step {step}")
        return "done"

    @server.tool()
    def wait(ctx: Context) -> str:
        """Report progress once, then block until the test opens the gate."""
        assert gate is not None
        ctx.report_progress(1, 2)
        gate.reached.set()
        opened = gate.opened.wait(30)
        gate.cancelled = ctx.cancelled
        gate.finished.set()
        return "released" if opened else "never released"

    @server.tool()
    def until_cancelled(ctx: Context) -> str:
        """Block until the client cancels the call."""
        assert gate is not None
        gate.reached.set()
        gate.cancelled = ctx.wait_cancelled(30)
        gate.finished.set()
        return "cancelled" if gate.cancelled else "timed out"

    return server


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def parse_sse(data: bytes) -> list[SseEvent]:
    """All events of a complete SSE body."""
    return SseParser().feed(data)


def messages_of(response: TestResponse) -> list[Any]:
    """The JSON-RPC messages of a POST answer, SSE or JSON, each schema-checked; events
    without data (a 2025-11-25 priming event, V1125-12) carry no message."""
    content_type = response.headers.get("Content-Type", "")
    if content_type.startswith("text/event-stream"):
        return [checked(json.loads(event.data)) for event in parse_sse(response.get_data())
                if event.data]
    if content_type.startswith("application/json"):
        return [checked(json.loads(response.get_data()))]
    return []


class WsgiPeer:
    """A client driving the WSGI application in-process (werkzeug's test client)."""

    def __init__(self, app: Any) -> None:
        self.client = WerkzeugClient(app)
        self.session_id: str | None = None

    def post(self, body: Any, *, headers: dict[str, str] | None = None,
             session: bool = True, raw: bytes | None = None) -> TestResponse:
        all_headers = dict(HEADERS)
        if session and self.session_id is not None:
            all_headers["Mcp-Session-Id"] = self.session_id
        all_headers.update(headers or {})
        data = raw if raw is not None else json.dumps(body).encode()
        # Buffered: the body is read in full and closed, as a server closes it.
        return self.client.post("/mcp", data=data, headers=all_headers, buffered=True)

    def initialize(self, **params: Any) -> TestResponse:
        message = json.loads(json.dumps(INITIALIZE))
        message["params"].update(params)
        response = self.post(message, session=False)
        assert response.status_code == 200, response.get_data()
        self.session_id = response.headers["Mcp-Session-Id"]
        assert self.post(INITIALIZED).status_code == 202
        return response

    def request(self, message: dict[str, Any], **options: Any) -> list[Any]:
        response = self.post(message, **options)
        assert response.status_code == 200, (response.status_code, response.get_data())
        return messages_of(response)

    def result(self, message: dict[str, Any]) -> Any:
        answers = [m for m in self.request(message) if "id" in m and "method" not in m]
        assert len(answers) == 1, answers
        assert "result" in answers[0], answers[0]
        return answers[0]["result"]


def read_events(response: Any) -> Iterator[SseEvent]:
    """Events of a streamed ``requests`` response, as they arrive."""
    parser = SseParser()
    for chunk in response.iter_content(chunk_size=None):
        yield from parser.feed(chunk)


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends on ``sock`` until it closes (or resets) the connection."""
    received = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return received
        if not chunk:
            return received
        received += chunk


def exchange_raw(host: str, port: int, data: bytes) -> bytes:
    """Send ``data`` on a new connection, half-close, and read all the server says until
    it closes; a server may refuse (and close) before all of it was sent."""
    with socket.create_connection((host, port), timeout=10) as sock:
        try:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        return read_until_closed(sock)
