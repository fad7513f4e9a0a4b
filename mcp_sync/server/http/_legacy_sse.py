"""The server side of the 2024-11-05 HTTP+SSE transport, for clients older than Streamable HTTP.

The old transport (HTTP-36/38) has two endpoints. A client opens an event stream with
``GET /sse``; the first event, ``endpoint``, carries the URI it must POST every message to
(``/messages?session_id=...``); everything the server sends, responses included, goes out
on that one stream as ``message`` events. The session is the stream: it starts with the
GET and ends when the stream closes, whoever closes it.

:class:`LegacySseEndpoints` serves both endpoints inside a
:class:`~mcp_sync.transports.http_server.StreamableHttpApp` made with ``legacy_sse=True``
(see :func:`~mcp_sync.transports.http_server.make_wsgi_app`), which applies its ``Host``,
``Origin`` and token checks to them too (HTTP-2). Each stream holds a worker thread of
the WSGI server for as long as it is open, so it counts against ``max_get_streams``.
"""

from __future__ import annotations

import collections
import logging
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING
from urllib.parse import quote

from werkzeug.wrappers import Request, Response

from ...errors import ConnectionClosed, ErrorCode
from ...protocol._jsonrpc import (
    ErrorResponse,
    Incoming,
    Invalid,
    Message,
    Notification,
    RequestId,
)
from ...protocol._jsonrpc import Request as RpcRequest
from ...protocol._jsonrpc import Response as RpcResponse
from ...protocol._sse import format_comment, format_data_event, format_event
from ...transports._decode import decode_frame
from ...transports.base import Transport
from ._auth_gate import authorize, identity_of, note_credentials, scope_refusal
from ._checks import accepts, error_response, normal_path, preflight, read_body
from ._inbox import Inbox
from ._session import MAX_QUEUED_EVENTS, encode_answer

if TYPE_CHECKING:
    from .._connection import ServerConnection
    from ._app import StreamableHttpApp

__all__ = [
    "DEFAULT_MESSAGES_PATH",
    "DEFAULT_SSE_PATH",
    "SESSION_PARAMETER",
    "LegacySseEndpoints",
    "LegacySseTransport",
]

log = logging.getLogger("mcp_sync.http.server")

DEFAULT_SSE_PATH = "/sse"
DEFAULT_MESSAGES_PATH = "/messages"
#: The query parameter of the POST URI naming the session (the official SDKs' name).
SESSION_PARAMETER = "session_id"

_SSE_HEADERS = {"Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no"}




class LegacySseTransport(Transport):
    """The transport of one old-style session: POST bodies in, one event stream out.

    The WSGI thread of a POST hands its message to :meth:`feed`; the engine's reader takes
    it in :meth:`read`. :meth:`write` never waits for the network: it queues a ``message``
    event for the thread that serves the session's stream (:meth:`next_chunk`).

    Args:
        session_id: the id carried by the POST URI.
        clock: the time source of :attr:`last_activity`.
        max_queued: events kept for a client that does not read, beyond which the oldest
            notifications are dropped; requests and responses are always kept.
    """

    def __init__(self, session_id: str, *, clock: Callable[[], float] = time.monotonic,
                 max_queued: int = MAX_QUEUED_EVENTS) -> None:
        self.session_id = session_id
        self._clock = clock
        self._max_queued = max_queued
        self._cond = threading.Condition()
        self._inbox = Inbox()
        self._closed = False
        self._stream_ended = False
        self._events: collections.deque[tuple[bytes, bool]] = collections.deque()
        #: When a message last went either way (``clock`` time).
        self.last_activity = clock()

    @property
    def closed(self) -> bool:
        return self._closed

    def read(self) -> Incoming | None:
        return self._inbox.get()

    def write(self, message: Message | Sequence[Message], *,
              related_to: RequestId | None = None) -> None:
        if isinstance(message, (RpcRequest, Notification, RpcResponse, ErrorResponse)):
            data = encode_answer(message)
            droppable = isinstance(message, Notification)
        else:
            # Batches are not part of 2024-11-05, but the engine only sends one to answer
            # a batch, which a client that sends batches can read.
            data = b"[" + b",".join(encode_answer(item) for item in message) + b"]"
            droppable = False
        payload = format_data_event(data)
        with self._cond:
            if self._closed or self._stream_ended:
                raise ConnectionClosed("the HTTP+SSE session has ended")
            self._events.append((payload, droppable))
            if len(self._events) > self._max_queued:
                for event in self._events:
                    if event[1]:
                        self._events.remove(event)
                        log.debug("session %s: dropped an unread notification",
                                  self.session_id)
                        break
            self.last_activity = self._clock()
            self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._inbox.end()
            self._cond.notify_all()

    def feed(self, incoming: Incoming) -> None:
        """Hand a POSTed message (or batch) to the engine.

        Raises:
            ConnectionClosed: the session has ended.
        """
        with self._cond:
            if self._closed or self._stream_ended:
                raise ConnectionClosed("the HTTP+SSE session has ended")
            self.last_activity = self._clock()
            self._inbox.put(incoming)

    def next_chunk(self, keepalive: float) -> tuple[bytes, bool]:
        """Wait for events and take them all.

        Returns ``(data, ended)``: the queued events (or a keep-alive comment after
        ``keepalive`` seconds of silence), and whether the stream is over: the session
        was closed, or :meth:`end_stream` was called, and nothing is left to send.
        """
        deadline = time.monotonic() + keepalive
        with self._cond:
            while True:
                if self._events and not self._stream_ended:
                    payload = b"".join(event[0] for event in self._events)
                    self._events.clear()
                    return payload, False
                if self._closed or self._stream_ended:
                    return b"", True
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return format_comment("keep-alive"), False
                self._cond.wait(remaining)

    def end_stream(self) -> None:
        """End the event stream (and so the session) from another thread."""
        with self._cond:
            self._stream_ended = True
            self._cond.notify_all()


class _LegacySseBody:
    """The WSGI body of one old-style stream: ``endpoint`` first, then messages.

    ``on_close`` runs exactly once, when the WSGI server closes the body: after the
    stream ended, or when writing to a client that went away failed.
    """

    def __init__(self, transport: LegacySseTransport, endpoint: str, *, keepalive: float,
                 on_close: Callable[[], None]) -> None:
        self._transport = transport
        self._first: bytes | None = format_event(endpoint, event="endpoint")
        self._keepalive = keepalive
        self._on_close = on_close
        self._ended = False
        self._closed = False

    def __iter__(self) -> _LegacySseBody:
        return self

    def __next__(self) -> bytes:
        if self._first is not None:
            first, self._first = self._first, None
            return first
        while not self._ended:
            payload, self._ended = self._transport.next_chunk(self._keepalive)
            if payload:
                return payload
        raise StopIteration

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._on_close()


class _LegacySession:
    def __init__(self, transport: LegacySseTransport, connection: ServerConnection,
                 identity: str | None) -> None:
        self.transport = transport
        self.connection = connection
        self.identity = identity  # who opened the stream (V0618-45)


class LegacySseEndpoints:
    """The GET and POST endpoints of the old transport, inside a Streamable HTTP app.

    The app routes requests for either path here once its ``Host`` and ``Origin``
    checks passed; these endpoints then check the method, the token and the request
    itself. Sessions live in this object and end with their streams.

    Args:
        app: the application whose server, options and GET-stream bound are used.
        sse_path: where old clients GET their event stream.
        messages_path: where they POST their messages.

    Raises:
        ValueError: the two paths are the same.
    """

    def __init__(self, app: StreamableHttpApp, sse_path: str = DEFAULT_SSE_PATH,
                 messages_path: str = DEFAULT_MESSAGES_PATH) -> None:
        self.sse_path = normal_path(sse_path)
        self.messages_path = normal_path(messages_path)
        if self.sse_path == self.messages_path:
            raise ValueError("legacy_sse_path and legacy_messages_path must differ")
        self._app = app
        self._lock = threading.Lock()
        self._sessions: dict[str, _LegacySession] = {}
        self._closed = False

    @property
    def session_count(self) -> int:
        """How many old-style sessions (open streams) there are."""
        with self._lock:
            return len(self._sessions)

    def handles(self, path: str) -> bool:
        """Whether ``path`` (already without trailing slashes) is one of the two endpoints."""
        return path in (self.sse_path, self.messages_path)

    def respond(self, request: Request) -> Response:
        """Answer a request for one of the two paths (``handles`` was true)."""
        stream = normal_path(request.environ.get("PATH_INFO", "")) == self.sse_path
        allow = "GET, OPTIONS" if stream else "POST, OPTIONS"
        if request.method == "OPTIONS":
            return preflight(allow)
        if request.method not in allow.split(", "):
            # A POST here is how a new client probes an old server (HTTP-37): 405 tells
            # it to try the GET.
            return error_response(405, ErrorCode.INVALID_REQUEST,
                                  f"Method Not Allowed: {request.method}",
                                  headers={"Allow": allow})
        refused = authorize(self._app, request)
        if refused is not None:
            return refused
        return self._open(request) if stream else self._post(request)

    # --- GET: the stream, which is the session ------------------------------------------------

    def _open(self, request: Request) -> Response:
        if not accepts(request, "text/event-stream"):
            return error_response(406, ErrorCode.INVALID_REQUEST,
                                  "Not Acceptable: the client must accept text/event-stream")
        if not self._app.claim_get_stream():
            # The old transport has no stream-less mode to fall back to, unlike a GET on
            # the MCP endpoint (405); the client may try again later.
            return error_response(503, ErrorCode.INTERNAL_ERROR,
                                  "Service Unavailable: too many open event streams",
                                  headers={"Retry-After": "5"})
        session_id = secrets.token_urlsafe(32)
        transport = LegacySseTransport(session_id, clock=self._app.clock)
        try:
            connection = self._app.server.connect(transport)
        except BaseException:
            transport.close()
            self._app.release_get_stream()
            raise
        session = _LegacySession(transport, connection, identity_of(request))
        with self._lock:
            closing = self._closed
            if not closing:
                self._sessions[session_id] = session
        if closing:
            connection.close()
            self._app.release_get_stream()
            return error_response(503, ErrorCode.INTERNAL_ERROR, "The server is shutting down")
        self._app.session_started()
        log.debug("legacy session %s started", session_id)
        script_name = request.environ.get("SCRIPT_NAME", "").rstrip("/")
        endpoint = (f"{quote(script_name + self.messages_path)}"
                    f"?{SESSION_PARAMETER}={session_id}")
        body = _LegacySseBody(transport, endpoint, keepalive=self._app.keepalive_interval,
                              on_close=lambda: self._stream_closed(session_id))
        return Response(body, status=200, content_type="text/event-stream",
                        headers=_SSE_HEADERS)

    def _stream_closed(self, session_id: str) -> None:
        with self._lock:
            session = self._sessions.pop(session_id, None)
        self._app.release_get_stream()
        if session is not None:
            log.debug("legacy session %s ended with its stream", session_id)
            session.connection.close()

    # --- POST: one client message -------------------------------------------------------------

    def _post(self, request: Request) -> Response:
        session_id = request.args.get(SESSION_PARAMETER)
        if not session_id:
            return error_response(400, ErrorCode.INVALID_REQUEST,
                                  f"Bad Request: the {SESSION_PARAMETER} query parameter is "
                                  f"required; open a session with GET {self.sse_path}")
        with self._lock:
            session = self._sessions.get(session_id)
        if session is None or session.identity != identity_of(request):
            return error_response(404, ErrorCode.INVALID_REQUEST,
                                  "Not Found: the session does not exist or has ended")
        # Old clients always send JSON; a missing Content-Type is tolerated, a wrong one
        # is not (AMBIG-12).
        if request.headers.get("Content-Type") and request.mimetype != "application/json":
            return error_response(415, ErrorCode.INVALID_REQUEST,
                                  "Unsupported Media Type: the body must be application/json")
        body = read_body(request, self._app.max_body_size)
        if body is None:
            return error_response(413, ErrorCode.INVALID_REQUEST, "Payload Too Large: the "
                                  f"limit is {self._app.max_body_size} bytes")
        incoming = decode_frame(body)
        if isinstance(incoming, Invalid):
            # Refused here rather than answered on the stream: HTTP-9's shape, and what
            # the old transport's servers did.
            return error_response(400, incoming.error.code, incoming.error.message,
                                  data=incoming.error.data, request_id=incoming.id)
        refused = scope_refusal(self._app, request, incoming)
        if refused is not None:
            return refused
        note_credentials(session.transport, request, incoming)
        try:
            session.transport.feed(incoming)
        except ConnectionClosed:
            return error_response(404, ErrorCode.INVALID_REQUEST,
                                  "Not Found: the session does not exist or has ended")
        return Response(status=202)

    # --- upkeep -------------------------------------------------------------------------------

    def sweep(self, idle_timeout: float | None) -> int:
        """End the streams (so the sessions) silent both ways for ``idle_timeout`` seconds.

        Returns:
            How many were ended.
        """
        if idle_timeout is None:
            return 0
        now = self._app.clock()
        with self._lock:
            idle = [session for session in self._sessions.values()
                    if now - session.transport.last_activity >= idle_timeout]
        for session in idle:
            log.debug("legacy session %s idle; ending its stream", session.transport.session_id)
            session.transport.end_stream()
        return len(idle)

    def close(self) -> None:
        """End every old-style session; their streams then end. Idempotent."""
        with self._lock:
            self._closed = True
            sessions = list(self._sessions.values())
        for session in sessions:
            session.connection.close()
