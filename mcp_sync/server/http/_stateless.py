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

__all__ = ["close_request_connection", "open_request_connection", "post_stateless"]

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
