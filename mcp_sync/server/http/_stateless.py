"""Stateless mode of the Streamable HTTP application: every POST is served by a fresh
connection, closed once its requests are answered."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from werkzeug.wrappers import Request, Response

from ...errors import ErrorCode
from ...protocol._jsonrpc import Batch, Incoming, Invalid
from ...protocol._jsonrpc import Request as RpcRequest
from ._answer import PostAnswer
from ._auth_gate import note_credentials
from ._checks import error_response, headerless_version
from ._session import SessionTransport

if TYPE_CHECKING:
    from ...transports.base import Transport
    from .._connection import ServerConnection
    from ._app import StreamableHttpApp

__all__ = ["close_request_connection", "give_back_request_connection", "open_request_connection",
           "post_stateless", "take_request_connection"]

log = logging.getLogger("mcp_sync.http.server")


def open_request_connection(app: StreamableHttpApp, transport: Transport,
                            **options: Any) -> ServerConnection | None:
    """A connection serving one POST, known to the app so that closing the app ends it;
    None (and nothing left open) when the app is closing."""
    connection = app.server._connect(transport, workers=app._request_workers, **options)
    with app._lock:
        closing = app._closed
        if not closing:
            app._stateless_connections.add(connection)
    if closing:
        connection.close()
        return None
    return connection


def close_request_connection(app: StreamableHttpApp, connection: ServerConnection) -> None:
    connection.close()
    with app._lock:
        app._stateless_connections.discard(connection)


#: How many connections that served a modern POST are kept for the next ones.
MAX_IDLE_REQUEST_CONNECTIONS = 32


def take_request_connection(app: StreamableHttpApp,
                            transport: Transport) -> ServerConnection | None:
    """A connection to serve one modern POST over ``transport``: one an earlier POST left
    idle when it can go on (nothing of the last request under way, the server's
    capabilities unchanged), a new one otherwise; None when the app is closing.

    Making a connection (its session, engine and their locks) costs about as much as
    serving a small request: a modern request has nothing of its own in a connection
    but its transport, so connections are kept between requests (bounded by
    :data:`MAX_IDLE_REQUEST_CONNECTIONS`).
    """
    while True:
        with app._lock:
            idle = app._idle_request_connections
            connection = idle.pop() if idle else None
        if connection is None:
            return open_request_connection(app, transport)
        if (connection.session.capabilities is connection.server.capabilities()
                and connection.engine.rebind(transport)):
            return connection
        close_request_connection(app, connection)


def give_back_request_connection(app: StreamableHttpApp,
                                 connection: ServerConnection) -> None:
    """Keep a connection whose modern request is answered for the next POST, or close it."""
    with app._lock:
        idle = app._idle_request_connections
        if not app._closed and len(idle) < MAX_IDLE_REQUEST_CONNECTIONS:
            idle.append(connection)
            return
    close_request_connection(app, connection)


def post_stateless(app: StreamableHttpApp, request: Request, incoming: Incoming,
                   use_sse: bool, initialize: bool) -> Response | PostAnswer:
    """Serve one POST in stateless mode: a fresh connection, closed once it is answered."""
    items = incoming.items if isinstance(incoming, Batch) else (incoming,)
    if not any(isinstance(item, RpcRequest) or (isinstance(item, Invalid) and item.reply)
               for item in items):
        log.debug("stateless mode: nothing to serve in this POST; accepted and dropped")
        return Response(status=202)
    version = headerless_version(request, app.server.supported_versions)
    transport = SessionTransport(None, stateless=True, clock=app._clock)
    note_credentials(transport, request, incoming)
    connection = open_request_connection(app, transport,
                                         assume_version=None if initialize else version)
    if connection is None:
        return error_response(503, ErrorCode.INTERNAL_ERROR, "The server is shutting down")

    def finish() -> None:
        close_request_connection(app, connection)

    def close_later() -> None:
        app._closer.submit(finish)

    def release(finished: bool) -> None:
        # A client that went away is no cancellation (HTTP-16): the requests run to
        # their end, and only then is the connection closed.
        if finished:
            finish()
        else:
            transport.call_when_idle(close_later)

    return app._deliver(transport, incoming, use_sse, release)
