"""The Streamable HTTP WSGI application: requests checked, sessions kept, bodies routed.

Every request passes the same gate, in this order: path (404), shutdown (503), ``Host``
(421), ``Origin`` (403), method (405), token (401, 403: :mod:`._auth_gate`). Then a POST
is checked for ``Accept`` (406), ``Content-Type`` (415), size (413), body (400), scopes (403),
``MCP-Protocol-Version`` (400) and session id (400 when missing, 404 when unknown); a GET
or DELETE for ``MCP-Protocol-Version``, session id and (GET) ``Accept``. What passes is
handed to the session's :class:`~mcp_sync.server.http._session.SessionTransport`,
whose streams become the SSE or JSON answers. With ``legacy_sse`` the two paths of the
old HTTP+SSE transport pass the same path, shutdown, ``Host`` and ``Origin`` gates and
are then handed to :class:`~mcp_sync.server.http._legacy_sse.LegacySseEndpoints`. GET and
DELETE are served by :mod:`mcp_sync.server.http._get`, answers built without werkzeug
by :mod:`mcp_sync.server.http._answer`. With a session store, sessions are shared with
the other processes using it through :mod:`mcp_sync.server.http._shared`.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from werkzeug.wrappers import Request, Response

from ...engine._threads import ThreadGroup, WorkerPool
from ...errors import ConnectionClosed, ErrorCode
from ...protocol._http_headers import METHOD_HEADER, NAME_HEADER
from ...protocol._jsonrpc import Batch, Incoming, Invalid
from ...protocol._jsonrpc import Request as RpcRequest
from ...transports._decode import decode_frame
from ._answer import SSE_HEADERS as _SSE_HEADERS
from ._answer import PostAnswer as _PostAnswer
from ._answer import cors_fields as _cors_fields
from ._auth import ResourceServer
from ._auth_gate import authorize, identity_of, note_credentials, scope_refusal, well_known
from ._checks import (
    DEFAULT_ALLOWED_ORIGINS,
    SESSION_HEADER,
    SESSION_KEY,
    VERSION_HEADER,
    TruncatedBody,
    accepts,
    error_response,
    host_allowed,
    normal_path,
    note_version,
    origin_allowed,
    preflight,
    read_body,
    refusal,
    refuse_version,
    unknown_session,
)
from ._event_store import EventStore, MemoryEventStore
from ._get import GetAndDelete
from ._host import ConnectionHost
from ._legacy_sse import DEFAULT_MESSAGES_PATH, DEFAULT_SSE_PATH, LegacySseEndpoints
from ._modern import is_modern_post, param_headers_asked, post_modern, refuse_modern_get
from ._session import SessionTransport
from ._shared import LocalSession as _Session
from ._shared import SharedSessions
from ._sse_body import Polling, SseBody
from ._stateless import post_stateless
from ._store import SessionStore, SessionStoreError

if TYPE_CHECKING:
    from .._connection import ServerConnection

__all__ = ["SESSION_HEADER", "VERSION_HEADER", "StreamableHttpApp", "TokenVerifier"]

log = logging.getLogger("mcp_sync.http.server")

#: Called with each request (a :class:`werkzeug.wrappers.Request`); a falsy result is 401.
TokenVerifier = Callable[[Request], object]

_ALLOW, _ALLOW_STATELESS = "GET, POST, DELETE, OPTIONS", "POST, OPTIONS"
#: The headers a modern request mirrors from its body, for a browser's preflight.
MODERN_HEADERS = (METHOD_HEADER, NAME_HEADER)
#: How long an initialize POST waits for its answer; the session answers it at once.
_INITIALIZE_WAIT = 30.0
#: How long a JSON answer waits for the GET stream to write the messages related to it.
_RELATED_HEAD_START = 5.0


class StreamableHttpApp(GetAndDelete):
    """The WSGI application serving one :class:`~mcp_sync.Server` over Streamable HTTP.

    Build it with :func:`~mcp_sync.transports.http_server.make_wsgi_app` (every option
    is documented there). Close it when the process stops serving: that ends every
    session and joins the background threads. It is also a context manager.
    """

    def __init__(
        self,
        server: ConnectionHost,
        path: str = "/mcp",
        *,
        stateless: bool = False,
        json_response: bool = False,
        allowed_origins: Sequence[str] | None = DEFAULT_ALLOWED_ORIGINS,
        allowed_hosts: Sequence[str] | None = None,
        token_verifier: TokenVerifier | None = None,
        auth: ResourceServer | None = None,
        max_body_size: int = 4 * 1024 * 1024,
        max_get_streams: int = 4,
        get_stream_timeout: float | None = 300.0,
        keepalive_interval: float = 15.0,
        session_timeout: float | None = 1800.0,
        abandoned_session_timeout: float | None = 60.0,
        max_sessions: int = 1000,
        event_store: EventStore | None = None,
        session_store: SessionStore | None = None,
        clock: Callable[[], float] = time.monotonic,
        legacy_sse: bool = False,
        legacy_sse_path: str = DEFAULT_SSE_PATH,
        legacy_messages_path: str = DEFAULT_MESSAGES_PATH,
        wsgi_threads: int | None = None,
        sse_poll_after: float | None = None,
        sse_retry: float = 1.0,
    ) -> None:
        if max_body_size < 1 or max_get_streams < 0 or max_sessions < 1:
            raise ValueError("max_body_size and max_sessions must be positive, "
                             "max_get_streams at least 0")
        for name, value in (("get_stream_timeout", get_stream_timeout),
                            ("session_timeout", session_timeout),
                            ("abandoned_session_timeout", abandoned_session_timeout),
                            ("keepalive_interval", keepalive_interval),
                            ("sse_poll_after", sse_poll_after)):
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be positive")
        self.server = server
        self.path = path
        self.stateless = stateless
        self.json_response = json_response
        self.allowed_origins = None if allowed_origins is None else tuple(allowed_origins)
        self.allowed_hosts = None if allowed_hosts is None else tuple(allowed_hosts)
        self.token_verifier = token_verifier
        self.auth = auth
        self.max_body_size = max_body_size
        self.max_get_streams = max_get_streams
        self.get_stream_timeout = get_stream_timeout
        self.keepalive_interval = keepalive_interval
        self.session_timeout = session_timeout
        self.abandoned_session_timeout = abandoned_session_timeout
        if sse_retry < 0:
            raise ValueError("sse_retry cannot be negative")
        self.sse_poll_after = sse_poll_after
        self.sse_retry = sse_retry
        self._host_checked = False
        if wsgi_threads is not None:
            self._check_host_threads(wsgi_threads, "wsgi_threads")
        self.max_sessions = max_sessions
        if session_store is not None and (event_store is not None or stateless):
            raise ValueError("a session_store has its own event store and needs sessions: "
                             "give it without event_store, not in stateless mode")
        self._shared = None if session_store is None else SharedSessions(self, session_store)
        self.event_store: EventStore = (
            event_store if event_store is not None else MemoryEventStore()
            if session_store is None else session_store.event_store)
        self._clock = self.clock = clock
        self.legacy: LegacySseEndpoints | None = None
        if legacy_sse:
            self.legacy = LegacySseEndpoints(self, legacy_sse_path, legacy_messages_path)
            if self.legacy.handles(normal_path(path)):
                raise ValueError("the legacy paths must differ from the MCP endpoint's")
        self._lock = threading.Lock()
        self._sessions: dict[str, _Session] = {}
        self._starting = 0
        self._stateless_connections: set[ServerConnection] = set()
        self._get_streams = 0
        self._closed = False
        self._threads = ThreadGroup("http")
        self._closer = WorkerPool(self._threads, "closer", 1, idle_timeout=30.0)
        # Workers for the connections that each serve one POST (modern requests,
        # stateless mode), kept between requests: a thread started per request would
        # cost more than the request. The WSGI server's threads bound how many run.
        self._request_workers = WorkerPool(self._threads, "request", 1024,
                                           idle_timeout=server.idle_thread_timeout)
        self._stop = threading.Event()
        self._sweeper_started = False

    # --- life ------------------------------------------------------------------------------

    @property
    def session_count(self) -> int:
        """How many sessions are open."""
        with self._lock:
            return len(self._sessions)

    @property
    def get_stream_count(self) -> int:
        """How many GET streams are open (counted against ``max_get_streams``)."""
        with self._lock:
            return self._get_streams

    def close(self) -> None:
        """End every session and stream, and join the background threads; idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            sessions = list(self._sessions.values())
            self._sessions.clear()
            stateless = list(self._stateless_connections)
        self._stop.set()
        for session in sessions:
            self._end_session(session, everywhere=False)
        if self._shared is not None:
            self._shared.close()
        for connection in stateless:
            connection.close()
        if self.legacy is not None:
            self.legacy.close()
        self._closer.close()
        self._request_workers.close()
        self._threads.join(10.0)

    def __enter__(self) -> StreamableHttpApp:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def sweep(self) -> int:
        """Expire idle sessions and end idle GET streams now; returns how many sessions ended.

        A background thread does this periodically; call it yourself when time comes
        from a ``clock`` of your own.
        """
        now = self._clock()
        expired: list[_Session] = []
        with self._lock:
            for session in list(self._sessions.values()):
                limit = self._idle_limit(session)
                if limit is not None and session.active == 0 and now - session.last_seen >= limit:
                    del self._sessions[session.id]
                    expired.append(session)
            live = list(self._sessions.values())
        if self._shared is not None:
            expired.extend(self._shared.sweep(live))
            with self._lock:
                for session in expired:
                    self._sessions.pop(session.id, None)
        for session in expired:
            log.debug("session %s expired", session.id)
            self._end_session(session, everywhere=False)
        if self.legacy is not None:
            self.legacy.sweep(self.session_timeout)
        if self.get_stream_timeout is not None:
            for session in live:
                session.transport.kick_idle_consumer(session.transport.standalone,
                                                     self.get_stream_timeout)
        return len(expired)

    def _sweep_loop(self) -> None:
        timeouts = [t for t in (self.session_timeout, self.get_stream_timeout,
                                self.abandoned_session_timeout) if t]
        interval = min(max(min(timeouts, default=60.0) / 4, 0.05), 30.0)
        while not self._stop.wait(interval):
            try:
                self.sweep()
            except Exception:
                log.exception("sweeping idle sessions failed")

    def _check_host_threads(self, threads: int, known_from: str) -> None:
        """Warn when open GET streams could hold every thread of the WSGI server."""
        self._host_checked = True
        if self.stateless or self.max_get_streams < threads:
            return
        log.warning(
            "max_get_streams=%d GET streams may hold all %d thread(s) of the WSGI server "
            "(%s): while they are open nothing else it serves is answered, the host "
            "application's own pages included. Set max_get_streams below the thread count "
            "(0 refuses GET streams; clients then hear from the server on their POSTs).",
            self.max_get_streams, threads, known_from)

    def _idle_limit(self, session: _Session) -> float | None:
        # A session whose client left (it dropped its GET stream and sent nothing since)
        # goes sooner than one whose client is merely quiet.
        limits = [self.session_timeout]
        if session.abandoned:
            limits.append(self.abandoned_session_timeout)
        return min((limit for limit in limits if limit is not None), default=None)

    def _end_session(self, session: _Session, everywhere: bool = True) -> None:
        """End a session here; ``everywhere`` also in the session store, if any."""
        session.connection.close()
        if self._shared is not None and not self._shared.ended(session.id, everywhere):
            return
        try:
            self.event_store.forget_session(session.id)
        except Exception:
            log.exception("the event store failed to forget session %s", session.id)

    # --- WSGI ------------------------------------------------------------------------------

    def __call__(self, environ: dict[str, Any],
                 start_response: Callable[..., Any]) -> Any:
        if not self._host_checked and environ.get("wsgi.multithread") is False:
            self._check_host_threads(1, "a WSGI server that is not multithreaded")
        self._host_checked = True
        request = Request(environ)
        try:
            response = self._respond(request)
        except SessionStoreError as exc:
            log.error("the session store failed: %s", str(exc))
            response = error_response(503, ErrorCode.INTERNAL_ERROR,
                                      f"Service Unavailable: the session store failed: {exc}")
        except Exception:
            log.exception("error while serving %s %s", request.method, request.path)
            response = error_response(500, ErrorCode.INTERNAL_ERROR, "Internal error")
        origin = environ.get("HTTP_ORIGIN")
        if origin is not None and response.status_code != 403:
            if isinstance(response, _PostAnswer):
                response.allow_origin(origin)
            else:
                response.headers.update(_cors_fields(origin))
                response.vary.add("Origin")
        return response(environ, start_response)

    def _respond(self, request: Request) -> Response | _PostAnswer:
        # The headers are read from the environment: werkzeug's header view translates
        # each name afresh, a tenth of what a POST cost here.
        environ = request.environ
        path = normal_path(environ.get("PATH_INFO", ""))
        legacy = self.legacy if self.legacy is not None and self.legacy.handles(path) else None
        if legacy is None and path != normal_path(self.path):
            document = well_known(self, request)
            return document or error_response(404, ErrorCode.INVALID_REQUEST, "Not Found")
        if self._closed:
            return error_response(503, ErrorCode.INTERNAL_ERROR, "The server is shutting down")
        host = environ.get("HTTP_HOST")
        if host is not None and not host_allowed(host, self.allowed_hosts):
            return error_response(421, ErrorCode.INVALID_REQUEST,
                                  f"Misdirected Request: host {host!r} is not served here")
        origin = environ.get("HTTP_ORIGIN")
        if origin is not None and not origin_allowed(origin, self.allowed_origins):
            return error_response(403, ErrorCode.INVALID_REQUEST,
                                  f"Forbidden: origin {origin!r} is not allowed")
        if legacy is not None:
            return legacy.respond(request)
        allow = _ALLOW_STATELESS if self.stateless else _ALLOW
        method = request.method
        if method == "OPTIONS":
            return preflight(allow, "Last-Event-ID", SESSION_HEADER, VERSION_HEADER,
                             *MODERN_HEADERS, *param_headers_asked(environ))
        if method not in allow.split(", "):
            return error_response(405, ErrorCode.INVALID_REQUEST,
                                  f"Method Not Allowed: {method}",
                                  headers={"Allow": allow})
        refused = authorize(self, request)
        if refused is not None:
            return refused
        if method == "POST":
            return self._post(request)
        if environ.get(SESSION_KEY) is None:
            modern = refuse_modern_get(environ, self.server.modern_versions)
            if modern is not None:
                return modern
        refused = refuse_version(request, None, self._known_methods(),
                                 self.server.supported_versions)
        if refused is not None:
            return refused
        if request.method == "GET":
            return self._get(request)
        return self._delete(request)

    def _known_methods(self) -> set[str]:
        return {"initialize", "ping", *self.server.served_methods}

    def _polling(self, session: _Session) -> Polling | None:
        """How the session's event streams poll: None unless it negotiated 2025-11-25
        (NAMBIG-6, DES-8). Every stateful session has an event store to resume from."""
        profile = session.connection.session.profile
        if profile is None or not profile.sse_polling:
            return None
        return Polling(self.sse_poll_after, round(self.sse_retry * 1000))

    # --- POST ------------------------------------------------------------------------------

    def _post(self, request: Request) -> Response | _PostAnswer:
        use_sse = not self.json_response and accepts(request, "text/event-stream")
        if not use_sse and not accepts(request, "application/json"):
            wanted = ("application/json" if self.json_response
                      else "application/json or text/event-stream")
            return error_response(406, ErrorCode.INVALID_REQUEST,
                                  f"Not Acceptable: the client must accept {wanted}")
        content_type = request.environ.get("CONTENT_TYPE", "")
        if content_type != "application/json" and request.mimetype != "application/json":
            return error_response(415, ErrorCode.INVALID_REQUEST,
                                  "Unsupported Media Type: the body must be application/json")
        try:
            body = read_body(request, self.max_body_size)
        except TruncatedBody as exc:
            log.debug("incomplete request body: %s", str(exc))
            return error_response(400, ErrorCode.PARSE_ERROR,
                                  "Parse error: the body ended before its Content-Length")
        if body is None:
            return error_response(413, ErrorCode.INVALID_REQUEST,
                                  f"Payload Too Large: the limit is {self.max_body_size} bytes")
        incoming = decode_frame(body)
        if isinstance(incoming, Invalid):
            return error_response(400, incoming.error.code, incoming.error.message,
                                  data=incoming.error.data, request_id=incoming.id)
        refused = scope_refusal(self, request, incoming)
        if refused is not None:
            return refused
        if request.environ.get(SESSION_KEY) is None and is_modern_post(
                request.environ, incoming, self.server.modern_versions):
            return post_modern(self, request, incoming, use_sse)
        initialize = isinstance(incoming, RpcRequest) and incoming.method == "initialize"
        if not initialize:
            refused = refuse_version(request, incoming, self._known_methods(),
                                     self.server.supported_versions)
            if refused is not None:
                return refused
        if self.stateless:
            return post_stateless(self, request, incoming, use_sse, initialize)
        identity = identity_of(request)
        session_id = request.environ.get(SESSION_KEY)
        if session_id is None:
            if initialize:
                assert isinstance(incoming, RpcRequest)
                return self._initialize(incoming, use_sse, identity)
            code, request_id = refusal(incoming, self._known_methods())
            return error_response(400, code, f"Bad Request: the {SESSION_HEADER} header is "
                                  "required; start a session with initialize",
                                  request_id=request_id)
        session = self._enter(session_id, identity=identity)
        if session is None:
            return unknown_session()
        note_credentials(session.transport, request, incoming)
        note_version(request, session.connection.protocol_version)
        if self._shared is not None:
            routed = self._shared.route_answers(session, incoming)
            if routed is None:
                self._leave(session)
                return _PostAnswer.accepted()
            incoming = routed
        return self._deliver(session.transport, incoming, use_sse,
                             lambda finished: self._leave(session), self._polling(session))

    def _deliver(self, transport: SessionTransport, incoming: Incoming, use_sse: bool,
                 release: Callable[[bool], None],
                 polling: Polling | None = None) -> _PostAnswer | Response:
        """Feed one POST body to a session and answer with its stream (or 202).

        ``release`` runs exactly once, when the answer is complete or abandoned. With
        ``polling`` an event stream opens with a priming event and may end early.
        """
        batch = isinstance(incoming, Batch)
        items = incoming.items if isinstance(incoming, Batch) else (incoming,)
        invalid = [item.error_response() for item in items
                   if isinstance(item, Invalid) and item.reply]
        requests = [item for item in items if isinstance(item, RpcRequest)]
        valid = [item for item in items if not isinstance(item, Invalid)]
        try:
            if not requests and not invalid:
                if valid:
                    transport.feed(Batch(tuple(valid)) if batch else valid[0])
                release(True)
                return _PostAnswer.accepted()
            opened = transport.open_stream(requests, sse=use_sse, immediate=invalid,
                                           attach=use_sse)
            forward = [item for item in valid if not any(item is r for r in opened.refused)]
            if forward:
                transport.feed(Batch(tuple(forward)) if batch else forward[0],
                               serve_here=not use_sse and not batch)  # we only wait
        except ConnectionClosed:
            release(True)
            return unknown_session()
        except BaseException:
            release(True)
            raise
        stream = opened.stream
        if use_sse:
            return _PostAnswer.events(SseBody(transport, stream, opened.token,
                                          keepalive=self.keepalive_interval,
                                          on_close=release, prime=polling is not None,
                                          polling=polling))
        try:
            transport.wait_finished(stream)
            transport.wait_related_written(stream, _RELATED_HEAD_START)
            payloads = transport.take(stream)
        finally:
            release(True)
        if not payloads:
            return _PostAnswer.accepted()  # every request was cancelled (AMBIG-8)
        return _PostAnswer.json(b"[" + b",".join(payloads) + b"]" if batch else payloads[0])

    def _initialize(self, incoming: RpcRequest, use_sse: bool, identity: str | None) -> Response:
        with self._lock:
            if len(self._sessions) + self._starting >= self.max_sessions:
                return error_response(503, ErrorCode.INTERNAL_ERROR,
                                      "Service Unavailable: too many sessions",
                                      request_id=incoming.id)
            self._starting += 1
        try:
            session_id = secrets.token_urlsafe(32)
            transport = (SessionTransport(session_id, event_store=self.event_store,
                                          clock=self._clock) if self._shared is None
                         else self._shared.transport(session_id))
            connection = self.server.connect(transport)
            opened = transport.open_stream([incoming], sse=use_sse)
            transport.feed(incoming)
            answered = transport.wait_finished(opened.stream, _INITIALIZE_WAIT)
            session = _Session(session_id, transport, connection, self._clock())
            session.active = 1
            session.identity = identity
            with self._lock:
                closing = self._closed
                registered = (answered and connection.protocol_version is not None
                              and not closing)
                if registered:
                    self._sessions[session_id] = session
                    self._start_sweeper()
            if registered and self._shared is not None:
                try:
                    self._shared.started(session)
                except BaseException:
                    with self._lock:
                        self._sessions.pop(session_id, None)
                    self._end_session(session, everywhere=False)
                    raise
        finally:
            with self._lock:
                self._starting -= 1
        if closing:
            self._end_session(session)
            return error_response(503, ErrorCode.INTERNAL_ERROR, "The server is shutting down",
                                  request_id=incoming.id)
        if not registered:
            # A failed initialize leaves no session behind; its error is the answer.
            payloads = transport.take(opened.stream)
            self._end_session(session)
            if not payloads:
                return error_response(500, ErrorCode.INTERNAL_ERROR,
                                      "Internal error: initialize was not answered",
                                      request_id=incoming.id)
            return Response(payloads[0], status=200, content_type=(
                "text/event-stream" if use_sse else "application/json"))
        log.debug("session %s started", session_id)
        polling = self._polling(session)
        transport.polling = polling is not None
        headers = {SESSION_HEADER: session_id}
        if not use_sse:
            payloads = transport.take(opened.stream)
            self._leave(session)
            return Response(payloads[0], status=200, content_type="application/json",
                            headers=headers)
        token = transport.attach(opened.stream)
        body = SseBody(transport, opened.stream, token, keepalive=self.keepalive_interval,
                       on_close=lambda finished: self._leave(session),
                       prime=polling is not None, polling=polling)
        return Response(body, status=200, content_type="text/event-stream",
                        headers={**_SSE_HEADERS, **headers})

    def session_started(self) -> None:
        """A session began outside this class (an old-style one): idle checks must run."""
        with self._lock:
            self._start_sweeper()

    def _start_sweeper(self) -> None:
        # Called with _lock held. Started with the first session, not with the app, so
        # that a WSGI server forking workers after importing the app forks no thread.
        if not self._sweeper_started and (self.session_timeout or self.get_stream_timeout
                                          or self.abandoned_session_timeout):
            self._sweeper_started = True
            self._threads.start("sweeper", self._sweep_loop)

    # --- session bookkeeping ---------------------------------------------------------------

    def _enter(self, session_id: str, shared: bool = True,
               identity: str | None = None) -> _Session | None:
        if shared and self._shared is not None:
            session = self._shared.enter(session_id)
        else:
            with self._lock:
                session = self._sessions.get(session_id)
                if session is not None:
                    session.active += 1
                    session.last_seen = self._clock()
                    session.abandoned = False
        if shared and session is not None and session.identity != identity:  # V0618-45
            log.warning("session %s named by a request for another identity", session_id)
            self._leave(session)
            return None
        return session

    def _leave(self, session: _Session, abandoned: bool = False) -> None:
        with self._lock:
            session.active -= 1
            session.last_seen = self._clock()
            if abandoned:
                session.abandoned = True
        if self._shared is not None:
            self._shared.left(session)
