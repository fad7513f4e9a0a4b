"""Serving a modern (2026-07-28) request: discover, result shape, errors and logs.

The session decides which era a request belongs to and checks its ``_meta``
(:mod:`mcp_sync.protocol._modern`); the feature handlers then run unchanged, reading
the profile of :func:`request_profile` (and :class:`~mcp_sync.server.Context` the
version, capabilities and client info of the request's scope). What differs is
wrapped around them here:

* ``server/discover`` answers what ``initialize`` used to: versions, capabilities,
  instructions, and ``serverInfo`` in ``_meta``.
* Every result gets ``resultType: "complete"`` and ``_meta.serverInfo``; list, read and
  discover results get ``ttlMs`` and ``cacheScope`` (the server's ``cache_ttl_ms`` and
  ``cache_scope``).
* An unknown resource is -32602, no longer -32002 (SEP-2164).
* A log message reaches the client only for a request that opted in with
  ``io.modelcontextprotocol/logLevel``, at or above that level, tied to that request.
* ``tools/call``, ``prompts/get`` and ``resources/read`` may end with an input-required
  result instead (:mod:`mcp_sync.server._rounds`), with no cache fields.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import types
from ..errors import InvalidParams, ResourceNotFound
from ..protocol._capability_rules import implementation_for, server_capabilities_for
from ..protocol._convert import to_wire
from ..protocol._modern import SERVER_INFO_KEY, RequestScope
from ..protocol._versions import VersionProfile
from ._content import json_safe
from ._logging import check_level, level_rank
from ._rounds import INPUT_METHODS, serve_rounds

if TYPE_CHECKING:
    from ..engine._engine import IncomingRequest
    from ._connection import ServerConnection
    from ._registry import Handler
    from ._server import Server

__all__ = ["cache_settings", "modern_log", "request_profile", "serve_modern"]

#: Results that may be cached, and so carry ``ttlMs`` and ``cacheScope``.
_CACHEABLE = frozenset({"server/discover", "tools/list", "prompts/list", "resources/list",
                        "resources/templates/list", "resources/read"})


def cache_settings(ttl_ms: int, scope: str) -> tuple[int, str]:
    """Check the server's ``cache_ttl_ms`` and ``cache_scope``.

    Raises:
        ValueError: a negative ``ttl_ms``, or a ``scope`` other than private or public.
    """
    if isinstance(ttl_ms, bool) or not isinstance(ttl_ms, int) or ttl_ms < 0:
        raise ValueError(f"cache_ttl_ms must be a whole number of milliseconds, not {ttl_ms!r}")
    if scope not in ("private", "public"):
        raise ValueError(f"cache_scope must be 'private' or 'public', not {scope!r}")
    return ttl_ms, scope


def request_profile(connection: ServerConnection,
                    incoming: IncomingRequest) -> VersionProfile | None:
    """The profile ``incoming`` is served under (DES-18): its own in a modern request,
    the session's in a legacy one."""
    scope: RequestScope | None = incoming.scope
    return scope.profile if scope is not None else connection.session.profile


def serve_modern(connection: ServerConnection, incoming: IncomingRequest,
                 handler: Handler) -> dict[str, Any]:
    """Run ``handler`` for a modern request and give its result the modern shape."""
    scope: RequestScope = incoming.scope
    if incoming.method == "server/discover":
        result = _discover(connection, scope)
    else:
        try:
            if incoming.method in INPUT_METHODS:
                result = serve_rounds(connection, incoming, handler)
            else:
                result = handler(connection, incoming) or {}
        except ResourceNotFound as exc:
            raise InvalidParams(exc.message, exc.data) from None  # SEP-2164
    result = dict(result)
    result.setdefault("resultType", "complete")
    meta = result.get("_meta")
    info = _server_info(connection.server, scope.profile)
    result["_meta"] = {**meta, SERVER_INFO_KEY: info} if meta else {SERVER_INFO_KEY: info}
    if incoming.method in _CACHEABLE and result["resultType"] == "complete":
        server = connection.server
        result.setdefault("ttlMs", server.cache_ttl_ms)
        result.setdefault("cacheScope", server.cache_scope)
    return result


def _server_info(server: Server, profile: VersionProfile) -> dict[str, Any]:
    # Every modern result carries it: written out once for as long as the server's
    # identity (made again only when it changes) and the profile stay the same.
    info = server._implementation()
    made = server._modern_identity
    if made is not None and made[0] is info and made[1] is profile:
        return made[2]
    wire: dict[str, Any] = implementation_for(to_wire(info), profile)
    server._modern_identity = (info, profile, wire)
    return wire


def _discover(connection: ServerConnection, scope: RequestScope) -> dict[str, Any]:
    server = connection.server
    # The capabilities whose methods this connection serves (fixed when it started).
    # listChanged and subscribe: delivered on subscriptions/listen streams (_listen).
    capabilities = server_capabilities_for(to_wire(connection.capabilities), scope.profile)
    result: dict[str, Any] = {"supportedVersions": list(server.modern_versions),
                              "capabilities": capabilities}
    if server.instructions is not None:
        result["instructions"] = server.instructions
    return result


def modern_log(connection: ServerConnection, incoming: IncomingRequest,
               level: types.LoggingLevel, data: Any, logger: str | None) -> bool:
    """Send a log message about a modern request, if that request opted in to its level."""
    check_level(level)
    scope: RequestScope = incoming.scope
    if scope.log_level is None or connection.capabilities.logging is None:
        return False
    if not incoming.being_served:
        # Its connection may serve another request by now, even one with the same id.
        return False
    if level_rank(level) < level_rank(check_level(scope.log_level)):
        return False
    params: dict[str, Any] = {"level": level, "data": json_safe(data)}
    if logger is not None:
        params["logger"] = logger
    return connection._send_notification("notifications/message", params, incoming.id)

