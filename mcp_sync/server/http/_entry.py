"""The Streamable HTTP server transport (MCP 2025-03-26) as a WSGI application.

:func:`make_wsgi_app` turns a :class:`~mcp_sync.Server` into a plain WSGI callable, for
any WSGI server (waitress, gunicorn, cheroot) or framework (mount it in Flask, wrap it
in a Django view). :func:`serve_http` runs it on a background thread with waitress,
:func:`run_http` in the foreground.

One endpoint (``/mcp`` by default) takes POST (client messages), GET (the server's own
stream) and DELETE (end the session); with ``legacy_sse=True`` two more serve clients of
the 2024-11-05 HTTP+SSE transport. In stateful mode each client gets a session,
named by the ``Mcp-Session-Id`` header and served by its own
:class:`~mcp_sync.server.ServerConnection`; in stateless mode every POST stands alone.
See ``docs/http.md`` for the behaviour in full and how to size threads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._process import settle_startup_objects
from ._app import StreamableHttpApp, TokenVerifier
from ._checks import DEFAULT_ALLOWED_ORIGINS, LOOPBACK_HOSTS
from ._event_store import EventStore, MemoryEventStore, StoredEvent
from ._redis_store import RedisEventStore, RedisSessionStore, session_store_from_env
from ._serving import HttpServerHandle, start_server
from ._store import (
    MemorySessionStore,
    SessionRecord,
    SessionStore,
    SessionStoreError,
)

if TYPE_CHECKING:
    from .._server import Server

__all__ = [
    "DEFAULT_ALLOWED_ORIGINS",
    "LOOPBACK_HOSTS",
    "EventStore",
    "HttpServerHandle",
    "MemoryEventStore",
    "MemorySessionStore",
    "RedisEventStore",
    "RedisSessionStore",
    "SessionRecord",
    "SessionStore",
    "SessionStoreError",
    "StoredEvent",
    "StreamableHttpApp",
    "TokenVerifier",
    "make_wsgi_app",
    "run_http",
    "serve_http",
    "session_store_from_env",
]


def make_wsgi_app(server: Server, path: str = "/mcp", *, stateless: bool = False,
                  json_response: bool = False, **options: Any) -> StreamableHttpApp:
    """Serve ``server`` over Streamable HTTP as a WSGI application.

    Args:
        server: what to serve.
        path: the MCP endpoint (``PATH_INFO`` as the application sees it; a trailing
            slash is ignored). Other paths get 404. When the app is mounted under a
            prefix (werkzeug's ``DispatcherMiddleware``), give the path below the
            prefix, usually ``""``.
        stateless: no sessions: every POST is served by a fresh connection that is
            closed when the POST is answered; GET and DELETE get 405, and the server
            cannot send requests of its own (sampling, roots).
        json_response: answer requests with one ``application/json`` body instead of an
            SSE stream. Requests and notifications related to a request then travel on
            the session's GET stream.
        **options: any of

            * ``allowed_origins`` (``DEFAULT_ALLOWED_ORIGINS``): the browser origins
              allowed (HTTP-2); a request with another ``Origin`` gets 403, one without
              ``Origin`` is served. ``"http://host:*"`` allows any port, ``"*"`` any
              origin; None turns the check off.
            * ``allowed_hosts`` (None): the ``Host`` header values allowed, same
              patterns (``LOOPBACK_HOSTS`` guards a local server against DNS
              rebinding); others get 421. None turns the check off.
            * ``auth`` (None): a :class:`~mcp_sync.auth.ResourceServer`: every request
              to the endpoints must carry a bearer token it accepts (401 and 403 with
              their ``WWW-Authenticate`` challenges otherwise), and the app serves the
              protected-resource metadata at ``/.well-known/oauth-protected-resource``
              (docs/auth.md).
            * ``token_verifier`` (None): called with every request (a werkzeug
              ``Request``); a falsy result or an exception refuses it with 401 and
              ``WWW-Authenticate: Bearer`` (HTTP-4). With ``auth`` too, it is asked
              first.
            * ``max_body_size`` (4 MiB): larger POST bodies get 413.
            * ``max_get_streams`` (4): how many GET streams may be open at once; each
              holds a worker thread of the WSGI server, so keep it below that server's
              thread count (see ``wsgi_threads``). Beyond it a GET gets 405 and the
              client receives server messages on its POST streams. 0 refuses all GETs.
            * ``get_stream_timeout`` (300 s): a GET stream that delivered nothing for
              this long is ended (the client reconnects); None keeps it open.
            * ``keepalive_interval`` (15 s): a comment is sent on a silent SSE stream
              this often, so that a vanished client is noticed.
            * ``session_timeout`` (1800 s): a session without requests or open streams
              for this long is closed; its id then gets 404. None keeps sessions until
              DELETE.
            * ``abandoned_session_timeout`` (60 s): the same, sooner, for a session whose
              client went away: its GET stream dropped and it sent nothing since. A GET
              stream the server ended (``get_stream_timeout``) does not count. None
              leaves such sessions to ``session_timeout``.
            * ``wsgi_threads`` (None): how many threads the WSGI server serving the
              application has, if you know it; a warning is logged when
              ``max_get_streams`` is not below it. A server that reports itself as not
              multithreaded (``wsgi.multithread``) is taken to have one.
            * ``max_sessions`` (1000): an initialize beyond this many open sessions gets
              503.
            * ``event_store`` (a :class:`MemoryEventStore`): keeps sent events so that
              a client can resume a dropped stream with ``Last-Event-ID``.
            * ``session_store`` (None): a :class:`SessionStore` shared with the other
              processes serving the same sessions (:class:`RedisSessionStore` across
              processes and hosts, :class:`MemorySessionStore` within one): any of them
              then serves any request of any session, so a load balancer needs no
              affinity (see docs/http.md, "Scaling out"). Its own event store is used;
              do not give ``event_store`` too. None keeps each session in the process
              that started it.
            * ``sse_poll_after`` (None): in sessions negotiated at 2025-11-25, end an
              SSE response still open after this many seconds, ``retry:`` last; the
              client comes back with GET and ``Last-Event-ID`` for the rest, which
              waits in the stream and the event store (V1125-13). Sessions at older
              versions keep their streams open until the answer (NAMBIG-6).
            * ``sse_retry`` (1 s): the wait sent as ``retry:`` in the priming event (an
              id, empty data; V1125-12) that opens each POST stream of a 2025-11-25
              session, and before the server ends an unfinished stream of one.
            * ``clock`` (``time.monotonic``): the time source for the timeouts.
            * ``legacy_sse`` (False): also serve the 2024-11-05 HTTP+SSE transport for
              old clients (HTTP-36/38): GET ``legacy_sse_path`` opens a session's event
              stream, whose first event (``endpoint``) names the URI to POST messages
              to, ``legacy_messages_path`` with a ``session_id`` query parameter. The
              same ``Host``, ``Origin`` and token checks apply; each stream counts
              against ``max_get_streams`` (beyond it: 503); the session ends when its
              stream closes, or after ``session_timeout`` without a message either way.
              See :mod:`mcp_sync.server.http._legacy_sse`.
            * ``legacy_sse_path`` (``"/sse"``) and ``legacy_messages_path``
              (``"/messages"``): the two endpoints, below the mount point like ``path``.

    Returns:
        The application; call its ``close()`` when done serving.

    Raises:
        ValueError: an option is out of range.
        TypeError: an unknown option.
    """
    return StreamableHttpApp(server, path, stateless=stateless, json_response=json_response,
                             **options)


def serve_http(server: Server, host: str = "127.0.0.1", port: int = 0, *,
               path: str = "/mcp", **options: Any) -> HttpServerHandle:
    """Serve ``server`` with waitress on a background thread.

    Args:
        server: what to serve.
        host: the address to listen on; loopback by default (HTTP-3).
        port: the port; 0 picks a free one (see ``handle.port``).
        path: the MCP endpoint.
        **options: ``max_threads`` (32: waitress's task threads; each serves one request
            at a time or holds one open stream, and requests beyond them wait),
            ``io_timeout`` (60 s: how long a connection may stall, sending nothing of its
            request, reading nothing of its response or idle between two requests,
            before it is closed and its thread, if it held one, freed), ``wrap`` (a
            function given the MCP application and returning the WSGI application to
            serve, to add routes or middleware), and every option of
            :func:`make_wsgi_app`. On a loopback address ``allowed_hosts`` defaults to
            ``LOOPBACK_HOSTS``; ``max_get_streams`` defaults to a quarter of
            ``max_threads`` and must stay below it, so that streams never take every
            thread. A request head over 64 KiB gets 431; a request whose framing is
            ambiguous (two ``Content-Length`` values, ``Content-Length`` with chunks, a
            bad chunk size) gets 400.

    Returns:
        The running server: ``handle.url`` is the MCP endpoint; ``handle.close()`` (or
        leaving a ``with`` block) stops it, ends every session and joins every thread.

    Raises:
        OSError: the address cannot be listened on.
        ValueError: an option is out of range (``max_get_streams`` not below
            ``max_threads``).
        TypeError: an unknown option (``keep_alive_timeout`` is no longer one).
    """
    return start_server(server, host, port, path=path, background=True, **options)


def run_http(server: Server, host: str = "127.0.0.1", port: int = 8000, *,
             path: str = "/mcp", **options: Any) -> None:
    """Serve ``server`` over Streamable HTTP in the foreground until Ctrl+C.

    Prints the endpoint's URL to stderr, then serves; on Ctrl+C it ends every session
    and returns. The objects alive when it starts are left out of the garbage
    collector's later passes (``gc.freeze()``).

    Args:
        server: what to serve.
        host: the address to listen on; loopback by default (HTTP-3).
        port: the port.
        path: the MCP endpoint.
        **options: as for :func:`serve_http`.

    Raises:
        OSError: the address cannot be listened on.
    """
    handle = start_server(server, host, port, path=path, background=False, **options)
    settle_startup_objects()
    try:
        handle.serve_forever()
    finally:
        handle.close()
