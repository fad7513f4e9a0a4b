"""A Streamable HTTP server played by hand, for the HTTP client transport's tests.

:class:`FakeServer` serves a small WSGI application with werkzeug's threaded server on
127.0.0.1 and records every HTTP request it receives; :class:`Play` is enough of an MCP
server to drive a :class:`~mcp_sync.Client`, with parts a test overrides.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

import attrs
from werkzeug.serving import WSGIRequestHandler, make_server
from werkzeug.wrappers import Request as WsgiRequest
from werkzeug.wrappers import Response as WsgiResponse

from mcp_sync import Client
from mcp_sync.protocol._sse import format_event
from mcp_sync.protocol._versions import KNOWN_VERSIONS
from mcp_sync.transports.http_client import HttpClientTransport
from tests.conftest import schema_errors

BOTH = "application/json, text/event-stream"
WAIT = 10.0

# --- a server played by hand -------------------------------------------------------------


@attrs.define
class Seen:
    """One HTTP request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]  # names in lower case
    body: Any
    port: int

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


class _QuietHandler(WSGIRequestHandler):
    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass


Handler = Callable[[Seen], WsgiResponse]


class FakeServer:
    """Serves ``handler`` on a free port; records what arrives; :meth:`stop` ends it all."""

    def __init__(self, handler: Handler, ssl_context: Any = None) -> None:
        self.handler = handler
        self.seen: list[Seen] = []
        self._arrived = threading.Condition()
        self._streams: list[queue.Queue[bytes | None]] = []
        self._streams_lock = threading.Lock()
        self.server = make_server("127.0.0.1", 0, self._app, threaded=True,
                                  request_handler=_QuietHandler, ssl_context=ssl_context)
        self.port = self.server.server_port
        scheme = "https" if ssl_context is not None else "http"
        self.url = f"{scheme}://127.0.0.1:{self.port}/mcp"
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,),
                                        name="test:fake-http-server")
        self._thread.start()

    def _app(self, environ: dict[str, Any], start_response: Any) -> Any:
        request = WsgiRequest(environ)
        raw = request.get_data()
        body = json.loads(raw) if raw else None
        path = request.path + (f"?{request.query_string.decode()}"
                               if request.query_string else "")
        seen = Seen(request.method, path, {k.lower(): v for k, v in request.headers.items()},
                    body, int(environ.get("REMOTE_PORT", 0)))
        with self._arrived:
            self.seen.append(seen)
            self._arrived.notify_all()
        return self.handler(seen)(environ, start_response)

    def wait_for(self, predicate: Callable[[list[Seen]], bool], timeout: float = WAIT) -> None:
        with self._arrived:
            assert self._arrived.wait_for(lambda: predicate(self.seen), timeout), \
                [(s.method, s.body) for s in self.seen]

    def requests(self, method: str) -> list[Seen]:
        with self._arrived:
            return [seen for seen in self.seen if seen.method == method]

    def stream(self, chunks: Iterator[bytes] | None = None) -> tuple[queue.Queue[bytes | None],
                                                                        Iterator[bytes]]:
        """A body that yields ``chunks`` first, then whatever is put in the queue, until None.

        :meth:`stop` puts None in every such queue, so no handler thread outlives the test.
        """
        feed: queue.Queue[bytes | None] = queue.Queue()
        with self._streams_lock:
            self._streams.append(feed)

        def body() -> Iterator[bytes]:
            if chunks is not None:
                yield from chunks
            while (item := feed.get()) is not None:
                yield item

        return feed, body()

    def stop(self) -> None:
        with self._streams_lock:
            for feed in self._streams:
                feed.put(None)
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(WAIT)

    def check_bodies(self) -> None:
        """Every JSON-RPC body we posted fits the schema (HTTP-7)."""
        for seen in self.seen:
            if seen.method == "POST":
                assert not schema_errors(seen.body), (seen.body, schema_errors(seen.body))


def json_reply(value: Any, status: int = 200, headers: dict[str, str] | None = None
               ) -> WsgiResponse:
    return WsgiResponse(json.dumps(value), status=status, headers=headers,
                        content_type="application/json")


def sse_body(messages: list[Any], first_id: int | None = None, stream: str = "s") -> bytes:
    out = b""
    for n, message in enumerate(messages):
        event_id = None if first_id is None else f"{stream}:{first_id + n}"
        out += format_event(json.dumps(message), event_id=event_id)
    return out


def result(message: dict[str, Any], value: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": message["id"], "result": value}


class Play:
    """Enough of an MCP server over Streamable HTTP to drive a Client; tests override parts.

    ``mode`` is "json" or "sse" (HTTP-10); ``session`` the id handed out at initialize, or
    None for a server without sessions; ``get`` answers the GET stream (405 by default).
    """

    def __init__(self, mode: str = "json", session: str | None = "s-1",
                 version: str = "2025-03-26") -> None:
        self.mode = mode
        self.session = session
        self.sessions = 0
        self.version = version
        self.server: FakeServer | None = None
        self.client_answers: queue.Queue[Any] = queue.Queue()
        self.get: Handler = lambda seen: WsgiResponse(status=405)
        self.tool: Callable[[dict[str, Any]], Any] = self.echo_tool

    def start(self, ssl_context: Any = None) -> FakeServer:
        self.server = FakeServer(self.handle, ssl_context)
        return self.server

    def handle(self, seen: Seen) -> WsgiResponse:
        if seen.method == "GET":
            return self.get(seen)
        if seen.method == "DELETE":
            return WsgiResponse(status=200)
        message = seen.body
        if isinstance(message, list):
            return self.reply([self.answer(item) for item in message if "method" in item
                               and "id" in item])
        if "method" not in message or "id" not in message:
            if "method" not in message:
                self.client_answers.put(message)
            return WsgiResponse(status=202)
        if message["method"] == "initialize":
            self.sessions += 1
            headers = {}
            if self.session is not None:
                headers["Mcp-Session-Id"] = f"{self.session}-{self.sessions}" \
                    if self.sessions > 1 else self.session
            return self.reply([self.answer(message)], headers)
        expected = self.current_session()
        if expected is not None and seen.header("Mcp-Session-Id") != expected:
            return WsgiResponse(status=404 if seen.header("Mcp-Session-Id") else 400)
        outcome = self.answer(message)
        if isinstance(outcome, WsgiResponse):
            return outcome
        return self.reply([outcome])

    def current_session(self) -> str | None:
        if self.session is None:
            return None
        return self.session if self.sessions <= 1 else f"{self.session}-{self.sessions}"

    def answer(self, message: dict[str, Any]) -> Any:
        method = message["method"]
        if method == "initialize":
            return result(message, {
                "protocolVersion": self.version, "capabilities": {"tools": {}},
                "serverInfo": {"name": "play", "version": "1"}})
        if method == "ping":
            return result(message, {})
        if method == "tools/list":
            return result(message, {"tools": [{"name": "echo", "inputSchema": {
                "type": "object"}}]})
        if method == "tools/call":
            return self.tool(message)
        return {"jsonrpc": "2.0", "id": message["id"],
                "error": {"code": -32601, "message": f"Method not found: {method}"}}

    def echo_tool(self, message: dict[str, Any]) -> Any:
        text = json.dumps(message["params"].get("arguments", {}), sort_keys=True,
                          ensure_ascii=False)
        return result(message, {"content": [{"type": "text", "text": text}]})

    def reply(self, messages: list[Any], headers: dict[str, str] | None = None) -> WsgiResponse:
        if self.mode == "json":
            return json_reply(messages[0] if len(messages) == 1 else messages, headers=headers)
        return WsgiResponse(sse_body(messages), headers=headers, mimetype="text/event-stream")


def open_client(url: str, **options: Any) -> Client:
    """A client of a fake server here; those play legacy servers, so unless the test says
    otherwise the client speaks only the legacy era and its first POST is initialize."""
    options.setdefault("supported_versions", KNOWN_VERSIONS)
    transport_options = {key: options.pop(key) for key in list(options)
                         if key in {"headers", "max_message_size", "reconnect_delay",
                                    "legacy_fallback", "listen", "max_senders",
                                    "max_reconnects", "read_timeout", "http_timeout"}}
    transport = HttpClientTransport(url, **transport_options)
    try:
        return Client(transport, timeout=options.pop("timeout", WAIT), **options)
    except BaseException:
        transport.close()
        raise


def posted_methods(server: FakeServer) -> list[str]:
    return [seen.body.get("method", "(answer)") for seen in server.requests("POST")]


def serving() -> Iterator[Callable[[Any], FakeServer]]:
    """Starts a Play, an OldServer or a plain handler; stops them all when resumed."""
    servers: list[FakeServer] = []

    def start(what: Any, **options: Any) -> FakeServer:
        server = what.start(**options) if hasattr(what, "start") else FakeServer(what, **options)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()
    for server in servers:
        server.check_bodies()
