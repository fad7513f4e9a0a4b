"""Where the application asks about authorization: the well-known documents, the token
gate every request passes, and the verified token handed on to the request's context.

The application calls :func:`authorize` after its ``Origin`` check (DES-7); what it returns,
if anything, is the answer. A verified :class:`~mcp_sync.server.http._auth.AccessToken`
is kept in the WSGI environment under ``AUTH_KEY``, where :func:`identity_of` (the
session binding, V0618-45) and :func:`note_credentials` (``ctx.auth``) find it.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from werkzeug.wrappers import Request, Response

from ...errors import ErrorCode
from ...protocol._jsonrpc import Batch, Incoming
from ...protocol._jsonrpc import Request as RpcRequest
from ...transports.base import Credentials, Transport
from ._auth import AUTH_KEY, AccessToken
from ._checks import error_response

if TYPE_CHECKING:
    from ._app import StreamableHttpApp

__all__ = ["authorize", "identity_of", "note_credentials", "scope_refusal", "well_known"]

log = logging.getLogger("mcp_sync.http.auth")

_books_lock = threading.Lock()


def well_known(app: StreamableHttpApp, request: Request) -> Response | None:
    """The answer to a request for a well-known document of the app's resource server."""
    if app.auth is None:
        return None
    environ = request.environ
    path = environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", "")
    return app.auth.metadata_response(request) if app.auth.serves(path) else None


def authorize(app: StreamableHttpApp, request: Request) -> Response | None:
    """None when the request may go on; otherwise the 400, 401, 403 or 503 refusing it.

    The ``token_verifier`` hook, if any, is asked first; then the resource server.
    """
    if app.token_verifier is not None:
        try:
            allowed = bool(app.token_verifier(request))
        except Exception:
            log.exception("the token verifier failed; refusing the request")
            allowed = False
        if not allowed:
            if app.auth is not None:
                return app.auth.challenge(401, "invalid_token", "the token is not valid")
            return error_response(401, ErrorCode.INVALID_REQUEST, "Unauthorized",
                                  headers={"WWW-Authenticate": "Bearer"})
    if app.auth is None:
        return None
    outcome = app.auth.authenticate(request)
    if isinstance(outcome, Response):
        return outcome
    request.environ[AUTH_KEY] = outcome
    return None


def token_of(request: Request) -> AccessToken | None:
    """The request's verified token, if authorization is on."""
    token = request.environ.get(AUTH_KEY)
    return token if isinstance(token, AccessToken) else None


def identity_of(request: Request) -> str | None:
    """Who the request's token speaks for, as sessions are bound to it; None without."""
    token = token_of(request)
    return None if token is None else token.identity


def scope_refusal(app: StreamableHttpApp, request: Request,
                  incoming: Incoming) -> Response | None:
    """403 when the body calls a tool whose scopes the token lacks (V1125-24)."""
    token = token_of(request)
    if app.auth is None or token is None:
        return None
    return app.auth.scope_refusal(token, incoming, app.server)


def note_credentials(transport: Transport, request: Request, incoming: Incoming) -> None:
    """Tell ``transport`` which token the requests in ``incoming`` came with (ctx.auth)."""
    token = token_of(request)
    if token is None:
        return
    if transport.credentials is None:
        with _books_lock:
            if transport.credentials is None:
                transport.credentials = Credentials()
    latest = transport.credentials.latest
    if isinstance(latest, AccessToken) and latest.token == token.token:
        token = latest  # the same token again: one object for all its requests
    items = incoming.items if isinstance(incoming, Batch) else (incoming,)
    transport.credentials.note([item.id for item in items if isinstance(item, RpcRequest)],
                               token)
