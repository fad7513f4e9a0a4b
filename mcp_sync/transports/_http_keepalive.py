"""A request handler for werkzeug's server that keeps HTTP/1.1 connections open.

werkzeug's development server closes the connection after every response, so a client
pays a TCP handshake and the server a new thread for each MCP call. This handler runs
the WSGI application itself and leaves the connection open when it safely can: the
request body was read to its end, the response had a ``Content-Length`` or went out in
chunks, and neither side asked for ``Connection: close``. A connection waits at most
``keep_alive_timeout`` seconds for its next request, and while it waits the server may
shut it down at once (see :class:`IdleTracker`).
"""

from __future__ import annotations

import contextlib
import email.utils
import logging
import socket
import threading
import time
from collections.abc import Iterable
from http import HTTPStatus
from typing import Any

from werkzeug.exceptions import ClientDisconnected
from werkzeug.serving import DechunkedInput, WSGIRequestHandler

__all__ = [
    "DEFAULT_IO_TIMEOUT",
    "DEFAULT_KEEP_ALIVE_TIMEOUT",
    "POOLED_KEEP_ALIVE_TIMEOUT",
    "IdleTracker",
    "KeepAliveRequestHandler",
]

log = logging.getLogger("mcp_sync.http.server")

DEFAULT_KEEP_ALIVE_TIMEOUT = 5.0
#: The default with ``max_threads``, where an idle connection keeps a thread of the pool.
POOLED_KEEP_ALIVE_TIMEOUT = 1.0
#: How long one read or write of a request in progress may stall by default: a client
#: that sends part of a body and then nothing, or stops reading its stream, frees its
#: thread after this. Waiting for the application has no limit here.
DEFAULT_IO_TIMEOUT = 60.0
# Left-over request body the server reads and throws away to keep a connection usable
# (a POST refused before its body was read); beyond this the connection is closed.
_MAX_DRAIN = 64 * 1024


class IdleTracker:
    """The connections waiting for their next request, which a closing server ends first."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: set[socket.socket] = set()
        self._closing = False

    def enter(self, connection: socket.socket) -> bool:
        """Mark ``connection`` idle; False if the server is closing (stop serving it)."""
        with self._lock:
            if self._closing:
                return False
            self._idle.add(connection)
            return True

    def leave(self, connection: socket.socket) -> None:
        with self._lock:
            self._idle.discard(connection)

    def close_idle(self) -> None:
        """Shut down every idle connection and refuse to let busy ones go idle again."""
        with self._lock:
            self._closing = True
            idle = list(self._idle)
        for connection in idle:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)


class _BodyReader:
    """The request body as ``wsgi.input``: stops at ``Content-Length`` and counts what is left."""

    def __init__(self, rfile: Any, length: int) -> None:
        self._rfile = rfile
        self.remaining = length

    def read(self, size: int = -1) -> bytes:
        if self.remaining <= 0:
            return b""
        if size < 0 or size > self.remaining:
            size = self.remaining
        data: bytes = self._rfile.read(size)
        self.remaining -= len(data)
        if not data:
            self.remaining = -1  # the peer closed mid-body: the connection is done
            raise ClientDisconnected()
        return data

    def readline(self, size: int = -1) -> bytes:
        if self.remaining <= 0:
            return b""
        if size < 0 or size > self.remaining:
            size = self.remaining
        data: bytes = self._rfile.readline(size)
        self.remaining -= len(data)
        if not data:
            self.remaining = -1
            raise ClientDisconnected()
        return data

    def __iter__(self) -> Any:
        return iter(self.readline, b"")

    def drain(self) -> bool:
        """Read what the application left unread; True if the connection may be reused."""
        if self.remaining == 0:
            return True
        if self.remaining < 0 or self.remaining > _MAX_DRAIN:
            return False
        try:
            while self.remaining > 0:
                self.read(self.remaining)
        except (ClientDisconnected, OSError):
            return False
        return True


class KeepAliveRequestHandler(WSGIRequestHandler):
    """Serves a WSGI application over HTTP/1.1, reusing each connection when it can.

    The server it runs under provides ``keep_alive_timeout`` (seconds an idle connection
    waits for its next request; 0 turns keep-alive off), ``io_timeout`` (seconds one read
    or write of a request in progress may stall), ``idle`` (an
    :class:`IdleTracker`) and ``crowded()`` (true when connections wait for a thread:
    a response then closes its connection, saying so, to give its thread up).

    A connection is only ever closed at the end of a response that says so, or while it
    waits for a request; never under a request the client may be sending, which it
    could not know to send again.
    """

    # HTTP/1.1 lets a response without a length go out in chunks, which streaming needs.
    protocol_version = "HTTP/1.1"
    # Each response goes out in as few segments as it can: the headers and the first
    # chunk share a buffered write, flushed once, with Nagle's delay turned off.
    wbufsize = -1
    disable_nagle_algorithm = True

    def finish(self) -> None:
        # Each stream closed whatever the other does: closing the buffered writer flushes
        # it, which fails when the client has gone, and the reader left open would keep
        # the socket's descriptor until the garbage collector found it.
        for stream in (self.wfile, self.rfile):
            with contextlib.suppress(OSError, ValueError):
                stream.close()

    def handle_one_request(self) -> None:
        tracker: IdleTracker = self.server.idle  # type: ignore[attr-defined]
        if not tracker.enter(self.connection):  # the server is closing
            self.close_connection = True
            return
        try:
            # Without keep-alive a fresh connection still gets io_timeout to say something.
            server: Any = self.server
            self.connection.settimeout(server.keep_alive_timeout or server.io_timeout)
            self.raw_requestline = self.rfile.readline(65537)
        except (OSError, ValueError):
            self.raw_requestline = b""
        finally:
            tracker.leave(self.connection)
        if not self.raw_requestline:
            self.close_connection = True
            return
        self.connection.settimeout(self.server.io_timeout)  # type: ignore[attr-defined]
        if len(self.raw_requestline) > 65536:
            self.send_error(414)
            self.close_connection = True
            return
        if self.parse_request():
            self.run_wsgi()

    def parse_request(self) -> bool:
        """Read the request line and header fields; on a bad request answer it and say False.

        http.server's own version parses the header block with the email package, which
        costs more than the rest of the request's head put together; this one reads the
        fields itself, with the same limits and the same answers. It leaves ``Expect:
        100-continue`` to :meth:`run_wsgi`.
        """
        self.command = None  # type: ignore[assignment]
        # Until the line is known good an error answer goes out with a status line (as
        # HTTP/1.0), not as http.server's bare HTTP/0.9 body that no client can read.
        self.request_version = "HTTP/1.0"
        self.close_connection = True
        self.requestline = requestline = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        words = requestline.split()
        if not words:
            return False
        if len(words) >= 3:
            version = _http_version(words[-1])
            if version is None:
                self.send_error(HTTPStatus.BAD_REQUEST, f"Bad request version ({words[-1]!r})")
                return False
            if version >= (2, 0):
                self.send_error(HTTPStatus.HTTP_VERSION_NOT_SUPPORTED,
                                f"Invalid HTTP version ({words[-1][5:]})")
                return False
            self.close_connection = version < (1, 1)
            self.request_version = words[-1]
        if not 2 <= len(words) <= 3:
            self.send_error(HTTPStatus.BAD_REQUEST, f"Bad request syntax ({requestline!r})")
            return False
        command, path = words[:2]
        if len(words) == 2:  # HTTP/0.9: a GET and nothing else, no headers
            self.close_connection = True
            if command == "GET":
                self.request_version = self.default_request_version
            else:
                self.send_error(HTTPStatus.BAD_REQUEST,
                                f"Bad HTTP/0.9 request type ({command!r})")
                return False
        if path.startswith("//"):  # read by clients as a host: no open redirects
            path = "/" + path.lstrip("/")
        self.command, self.path = command, path
        try:
            self.headers = RequestHeaders(_read_fields(self.rfile))  # type: ignore[assignment]
        except _BadHead as exc:
            self.send_error(exc.status, exc.reason)
            return False
        connection = self.headers.get("Connection", "").lower()
        if connection == "close":
            self.close_connection = True
        elif connection == "keep-alive":
            self.close_connection = False
        return True

    def run_wsgi(self) -> None:
        if self.headers.get("Expect", "").lower().strip(" \t") == "100-continue":
            self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            self.wfile.flush()
        self.environ = environ = self.make_environ()
        body: _BodyReader | None = None
        if "wsgi.input_terminated" not in environ:  # not chunked: bounded by Content-Length
            try:
                length = int(environ.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = -1
            if length < 0:
                self.send_error(400, "Bad Content-Length")
                self.close_connection = True
                return
            body = _BodyReader(self.rfile, length)
            environ["wsgi.input"] = body
            environ["wsgi.input_terminated"] = True
        elif not isinstance(environ["wsgi.input"], DechunkedInput):  # pragma: no cover
            self.close_connection = True
        if not self.server.keep_alive_timeout:  # type: ignore[attr-defined]
            self.close_connection = True
        if body is None:
            self.close_connection = True  # a chunked body cannot be drained safely here
        response = _Response(self, body)
        try:
            chunks = self.server.app(environ, response.start)
            try:
                response.send_all(chunks)
            finally:
                close = getattr(chunks, "close", None)
                if close is not None:
                    close()
        except (TimeoutError, ConnectionError) as exc:
            self.close_connection = True
            self.connection_dropped(exc, environ)
            return
        except Exception:
            self.close_connection = True
            log.exception("error while serving %s %s", self.command, self.path)
            if response.headers_sent is None:
                with contextlib.suppress(OSError):
                    self.send_error(500)
            return
        if not response.reusable or (body is not None and not body.drain()):
            self.close_connection = True


# http.client's limits for a header block, kept as they were.
_MAX_FIELD_LINE = 65536
_MAX_FIELDS = 100


class _BadHead(Exception):
    def __init__(self, status: HTTPStatus, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class RequestHeaders:
    """A request's header fields: ``get`` ignores case; ``items`` keeps order and repeats."""

    __slots__ = ("_fields", "_first")

    def __init__(self, fields: list[tuple[str, str]]) -> None:
        self._fields = fields
        first: dict[str, str] = {}
        for name, value in fields:
            first.setdefault(name.lower(), value)
        self._first = first

    def get(self, name: str, default: Any = None) -> Any:
        """The first field of this name, as ``email.message.Message.get`` gives it."""
        return self._first.get(name.lower(), default)

    def items(self) -> list[tuple[str, str]]:
        return list(self._fields)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._first


def _http_version(text: str) -> tuple[int, int] | None:
    """``HTTP/1.1`` as (1, 1); None unless it is HTTP/ and two numbers of sane length."""
    if not text.startswith("HTTP/"):
        return None
    parts = text[5:].split(".")
    if len(parts) != 2 or not all(p.isascii() and p.isdigit() and len(p) <= 10 for p in parts):
        return None
    return int(parts[0]), int(parts[1])


def _read_fields(rfile: Any) -> list[tuple[str, str]]:
    """The header fields up to the blank line (or the end of input), unfolded."""
    fields: list[tuple[str, str]] = []
    lines = 0
    while True:
        line: bytes = rfile.readline(_MAX_FIELD_LINE + 1)
        if len(line) > _MAX_FIELD_LINE:
            raise _BadHead(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "Line too long")
        if line in (b"\r\n", b"\n", b""):
            return fields
        lines += 1
        if lines > _MAX_FIELDS:
            raise _BadHead(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "Too many headers")
        text = line.decode("iso-8859-1").rstrip("\r\n")
        if text[:1] in (" ", "\t"):  # an obsolete folded line continues the previous field
            if not fields:
                raise _BadHead(HTTPStatus.BAD_REQUEST, "Bad header line")
            name, value = fields[-1]
            more = text.strip(" \t")
            fields[-1] = (name, f"{value} {more}" if value else more)
            continue
        name, colon, value = text.partition(":")
        if not colon or not name or name != name.strip(" \t"):
            raise _BadHead(HTTPStatus.BAD_REQUEST, "Bad header line")
        fields.append((name, value.strip(" \t")))


class _Response:
    """The WSGI ``start_response`` and the writing of one response."""

    def __init__(self, handler: KeepAliveRequestHandler, body: _BodyReader | None) -> None:
        self._handler = handler
        self._body = body
        self._status: str | None = None
        self._headers: list[tuple[str, str]] = []
        self.headers_sent: str | None = None
        self._chunked = False
        self.reusable = True

    def start(self, status: str, headers: list[tuple[str, str]],
              exc_info: Any = None) -> Any:
        if exc_info is not None:
            try:
                if self.headers_sent is not None:
                    raise exc_info[1].with_traceback(exc_info[2])
            finally:
                exc_info = None
        elif self._status is not None:
            raise AssertionError("start_response was already called")
        self._status = status
        self._headers = headers
        return self.write

    def send_all(self, chunks: Iterable[bytes]) -> None:
        for chunk in chunks:
            self.write(chunk)
        if self.headers_sent is None:
            self.write(b"")
        if self._chunked:
            self._handler.wfile.write(b"0\r\n\r\n")
        self._handler.wfile.flush()

    def write(self, data: bytes) -> None:
        handler = self._handler
        if self.headers_sent is None:
            self._send_headers()
        if data and handler.command != "HEAD":  # a HEAD answer has headers only
            if self._chunked:
                handler.wfile.write(b"%x\r\n%b\r\n" % (len(data), data))
            else:
                handler.wfile.write(data)
        handler.wfile.flush()

    def _send_headers(self) -> None:
        handler = self._handler
        assert self._status is not None, "write() before start_response()"
        code_text, _, reason = self._status.partition(" ")
        code = int(code_text)
        handler.log_request(code)
        # The head is written as one piece: http.server's send_header() per line would
        # cost more than the rest of a small response.
        lines = [f"{handler.protocol_version} {code} {reason}\r\n",
                 f"Server: {handler.version_string()}\r\n",
                 f"Date: {_http_date()}\r\n"]
        names = set()
        for name, value in self._headers:
            lowered = name.lower()
            names.add(lowered)
            if lowered == "connection":
                if value.lower() == "close":
                    handler.close_connection = True
                elif value.lower() == "keep-alive":
                    handler.close_connection = False
            lines.append(f"{name}: {value}\r\n")
        framed = ("content-length" in names or handler.command == "HEAD"
                  or 100 <= code < 200 or code in (204, 304))
        if not framed:
            if handler.request_version >= "HTTP/1.1":
                self._chunked = True
                lines.append("Transfer-Encoding: chunked\r\n")
            else:
                handler.close_connection = True  # the end of the body is the end of the data
        if self._body is not None and not 0 <= self._body.remaining <= _MAX_DRAIN:
            handler.close_connection = True  # answered without reading a large body
        if handler.server.crowded():  # type: ignore[attr-defined]
            handler.close_connection = True
        if handler.close_connection and "connection" not in names:
            lines.append("Connection: close\r\n")
        lines.append("\r\n")
        if handler.request_version != "HTTP/0.9":  # which had no head at all
            handler.wfile.write("".join(lines).encode("latin-1"))
        self.headers_sent = self._status


_date_cache: tuple[int, str] = (0, "")


def _http_date() -> str:
    """The ``Date`` header's value, formatted once per second rather than per response."""
    global _date_cache
    now = int(time.time())
    second, text = _date_cache
    if second != now:
        text = email.utils.formatdate(now, usegmt=True)
        _date_cache = (now, text)  # one tuple, swapped whole: no reader sees half of it
    return text
