"""GET and DELETE of the Streamable HTTP application: a session's own event stream (and
the count of those open, against ``max_get_streams``), resuming a stream, ending a
session. :class:`~mcp_sync.server.http._app.StreamableHttpApp` inherits them."""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from werkzeug.wrappers import Request, Response

from ...errors import ConnectionClosed, ErrorCode
from ._answer import SSE_HEADERS as _SSE_HEADERS
from ._auth_gate import identity_of
from ._checks import SESSION_HEADER, accepts, error_response, parse_event_id, unknown_session
from ._session import STANDALONE_STREAM, CannotResume
from ._sse_body import Polling, SseBody

if TYPE_CHECKING:
    from ._event_store import EventStore
    from ._shared import LocalSession as _Session
    from ._shared import SharedSessions

__all__ = ["GetAndDelete"]

log = logging.getLogger("mcp_sync.http.server")


class GetAndDelete:
    """The GET and DELETE half of the application (see the module docstring)."""

    if TYPE_CHECKING:  # what the application itself defines
        _lock: threading.Lock
        _sessions: dict[str, _Session]
        _get_streams: int
        max_get_streams: int
        keepalive_interval: float
        get_stream_timeout: float | None
        _shared: SharedSessions | None
        event_store: EventStore

        def _enter(self, session_id: str, shared: bool = True,
                   identity: str | None = None) -> _Session | None: ...
        def _leave(self, session: _Session, abandoned: bool = False) -> None: ...
        def _end_session(self, session: _Session) -> None: ...
        def _polling(self, session: _Session) -> Polling | None: ...

    def claim_get_stream(self, *, replacing: bool = False) -> bool:
        """Count one more open GET stream; False if ``max_get_streams`` are open.

        A stream ``replacing`` one of the same session is let through: the old one ends.
        """
        with self._lock:
            if not replacing and self._get_streams >= self.max_get_streams:
                return False
            self._get_streams += 1
            return True

    def release_get_stream(self) -> None:
        """A GET stream counted by :meth:`claim_get_stream` has closed."""
        with self._lock:
            self._get_streams -= 1

    def _get(self, request: Request) -> Response:
        session_id = request.headers.get(SESSION_HEADER)
        if session_id is None:
            return error_response(400, ErrorCode.INVALID_REQUEST,
                                  f"Bad Request: the {SESSION_HEADER} header is required")
        if not accepts(request, "text/event-stream"):
            return error_response(406, ErrorCode.INVALID_REQUEST,
                                  "Not Acceptable: the client must accept text/event-stream")
        last_event_id = request.headers.get("Last-Event-ID")
        resume_from: tuple[str, int] | None = None
        if last_event_id is not None:
            resume_from = parse_event_id(last_event_id)
            if resume_from is None:
                return error_response(400, ErrorCode.INVALID_REQUEST,
                                      f"Bad Request: malformed Last-Event-ID {last_event_id!r}")
        session = self._enter(session_id, identity=identity_of(request))
        if session is None:
            return unknown_session()
        transport = session.transport
        if resume_from is not None and not resume_from[0].startswith(STANDALONE_STREAM):
            return self._resume(session, *resume_from)
        if not self.claim_get_stream(replacing=transport.standalone.consumer is not None):
            self._leave(session)
            return error_response(
                405, ErrorCode.INVALID_REQUEST,
                "Method Not Allowed: no more GET streams; server messages come on POST streams",
                headers={"Allow": "POST, DELETE, OPTIONS"})

        def release(finished: bool) -> None:
            self.release_get_stream()
            self._leave(session, abandoned=not finished)
            if self._shared is not None:
                self._shared.dropped_get_stream(session)

        try:
            if resume_from is not None:
                replay, stream, token = transport.resume(*resume_from)
            else:
                replay, stream, token = [], transport.standalone, transport.attach(
                    transport.standalone)
        except (ConnectionClosed, CannotResume):
            release(True)
            return unknown_session()
        if self._shared is not None and stream is transport.standalone:
            self._shared.holds_get_stream(session)
        body = SseBody(transport, stream, token, replay=replay,
                       keepalive=self.keepalive_interval,
                       idle_timeout=self.get_stream_timeout, on_close=release,
                       polling=self._polling(session))
        return Response(body, status=200, content_type="text/event-stream",
                        headers=_SSE_HEADERS)

    def _resume(self, session: _Session, stream_id: str, seq: int) -> Response:
        try:
            replay, stream, token = session.transport.resume(stream_id, seq)
        except ConnectionClosed:
            self._leave(session)
            return unknown_session()
        except CannotResume as exc:
            self._leave(session)
            return error_response(400, ErrorCode.INVALID_REQUEST,
                                  f"Bad Request: cannot resume: {exc}")
        body = SseBody(session.transport, stream, token, replay=replay,
                       keepalive=self.keepalive_interval,
                       on_close=lambda finished: self._leave(session),
                       polling=self._polling(session))
        return Response(body, status=200, content_type="text/event-stream",
                        headers=_SSE_HEADERS)

    def _delete(self, request: Request) -> Response:
        session_id = request.headers.get(SESSION_HEADER)
        if session_id is None:
            return error_response(400, ErrorCode.INVALID_REQUEST,
                                  f"Bad Request: the {SESSION_HEADER} header is required")
        identity = identity_of(request)
        with self._lock:
            session = self._sessions.get(session_id)
            if session is not None and session.identity == identity:
                del self._sessions[session_id]
            else:
                session = None
        if session is None:
            record = None if self._shared is None else self._shared.store.load(session_id)
            if (record is None or record.identity != identity
                    or not self._shared or not self._shared.store.end(session_id)):
                return unknown_session()
            self.event_store.forget_session(session_id)  # served elsewhere until now
        else:
            self._end_session(session)
        log.debug("session %s ended by the client", session_id)
        return Response(status=204)
