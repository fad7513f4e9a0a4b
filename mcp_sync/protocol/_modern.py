"""The modern era (2026-07-28) as a server sees it: what one request's ``_meta`` says.

A modern request carries everything ``initialize`` used to fix for a connection: the
protocol version, the client's capabilities and (usually) its name, in reserved
``_meta`` keys. Nothing is inferred from earlier requests on the same connection, so a
:class:`RequestScope` is built afresh for every request and dropped with its answer.

A legacy session has a scope too, filled from the session (DES-18): feature code reads
the version, profile, capabilities and client info of the request it serves and never
asks which era that request belongs to.
"""

from __future__ import annotations

from typing import Any

from ..errors import InvalidParams, MethodNotFound, RpcError
from ._convert import from_wire
from ._record import Record
from ._types_common import ClientCapabilities, Implementation
from ._versions import VersionProfile, profile_for

__all__ = [
    "CLIENT_CAPABILITIES_KEY",
    "CLIENT_INFO_KEY",
    "LOG_LEVEL_KEY",
    "MODERN_METHODS",
    "PROTOCOL_VERSION_KEY",
    "SERVER_INFO_KEY",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "RequestScope",
    "is_modern_request",
    "modern_scope",
]

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

#: ``UnsupportedProtocolVersionError``: only ever sent to a modern request (COEX-3).
UNSUPPORTED_PROTOCOL_VERSION = -32022

#: What a modern request may ask of our server. ``ping``, ``logging/setLevel``,
#: ``resources/subscribe`` and ``resources/unsubscribe`` are gone from the era: -32601.
MODERN_METHODS = frozenset({
    "server/discover", "tools/list", "tools/call", "resources/list", "resources/read",
    "resources/templates/list", "prompts/list", "prompts/get", "completion/complete",
    "subscriptions/listen",
})

#: Served by every modern server, whatever it registered: the server itself answers
#: them (a listen stream of a server with nothing that changes is acknowledged empty).
_ALWAYS_SERVED = frozenset({"server/discover", "subscriptions/listen"})

_LEVELS = frozenset({"debug", "info", "notice", "warning", "error", "critical", "alert",
                     "emergency"})


class RequestScope(Record):
    """What one request is served under: its version and what the client declared.

    Attributes:
        version: the protocol version.
        profile: that version's feature flags.
        client_capabilities: what the client declared (in ``initialize``, or in this
            request's ``_meta``).
        client_info: the client's name and version, if it gave them.
        modern: True for a modern (2026-07-28) request.
        log_level: the least severe log level the request opted in to (modern only);
            None means it receives no log messages.
    """

    __slots__ = ("client_capabilities", "client_info", "log_level", "modern", "profile",
                 "version")

    def __init__(self, version: str, profile: VersionProfile,
                 client_capabilities: ClientCapabilities | None,
                 client_info: Implementation | None, *, modern: bool,
                 log_level: str | None = None) -> None:
        self.version = version
        self.profile = profile
        self.client_capabilities = client_capabilities
        self.client_info = client_info
        self.modern = modern
        self.log_level = log_level


def is_modern_request(method: str, params: dict[str, Any] | None) -> bool:
    """Whether a request's ``_meta`` carries the modern era's required keys (its
    protocol version or the client's capabilities); ``initialize`` never does."""
    if not params or method == "initialize":
        return False
    meta = params.get("_meta")
    return isinstance(meta, dict) and (PROTOCOL_VERSION_KEY in meta
                                       or CLIENT_CAPABILITIES_KEY in meta)


def modern_scope(method: str, params: dict[str, Any], versions: tuple[str, ...],
                 served: frozenset[str]) -> RequestScope:
    """The scope of a modern request, checked.

    Args:
        method: the request's method.
        params: its params (with ``_meta``).
        versions: the modern versions the server speaks.
        served: the methods the server answers.

    Raises:
        RpcError: -32022 with ``supported`` and ``requested`` for a version we do not
            speak; -32601 for a method the era does not have or we do not serve;
            -32602 for missing or malformed ``_meta`` members.
    """
    meta = params["_meta"]
    version = meta.get(PROTOCOL_VERSION_KEY)
    if not isinstance(version, str):
        raise InvalidParams(
            f'Invalid params: "_meta.{PROTOCOL_VERSION_KEY}" is required (a string)',
            {"missing": PROTOCOL_VERSION_KEY} if version is None else None)
    if version not in versions:
        raise RpcError(
            f"Unsupported protocol version {version!r}; supported: {', '.join(versions)}",
            {"supported": list(versions), "requested": version},
            code=UNSUPPORTED_PROTOCOL_VERSION)
    if method not in MODERN_METHODS or (method not in _ALWAYS_SERVED and method not in served):
        raise MethodNotFound(f"Method not found: {method}")
    raw_caps = meta.get(CLIENT_CAPABILITIES_KEY)
    if not isinstance(raw_caps, dict):
        raise InvalidParams(
            f'Invalid params: "_meta.{CLIENT_CAPABILITIES_KEY}" is required (an object)',
            {"missing": CLIENT_CAPABILITIES_KEY} if raw_caps is None else None)
    capabilities = from_wire(raw_caps, ClientCapabilities)
    raw_info = meta.get(CLIENT_INFO_KEY)
    info = from_wire(raw_info, Implementation) if raw_info is not None else None
    level = meta.get(LOG_LEVEL_KEY)
    if level is not None and level not in _LEVELS:
        raise InvalidParams(f'Invalid params: "_meta.{LOG_LEVEL_KEY}" is not a logging level',
                            {"level": level})
    return RequestScope(version, profile_for(version), capabilities, info, modern=True,
                        log_level=level)
