"""How the client finds the era its server speaks, and what a modern request carries.

A dual-era client meets servers of both eras (DIGEST-NEWER "How eras find each other"):

* **Modern first.** ``server/discover`` goes out carrying our preferred modern version in
  ``_meta``. A discover result naming a modern version we speak, or a recognised modern
  error (-32020, -32021, -32022), means modern: the era is settled and never falls back.
  -32022 names the server's versions; we retry once with one we share.
* **Legacy otherwise.** Any other error (-32601 from a legacy server, an HTTP 4xx with a
  non-modern body, a discover result that names no modern version), or silence until the
  probe timeout, means legacy: ``initialize`` on the same connection. The fallback never
  hinges on one error code.
* **The verdict is cached** per server (:class:`EraCache`): a stdio server by its command
  line and working directory, an HTTP server by its origin. A reconnect then starts with
  what worked: a legacy server gets ``initialize`` at once, a modern one ``discover``
  without the short probe timeout. A cached verdict that turns out wrong is corrected.

:class:`ModernSession` is the client's session in the modern era: no handshake, so a
request may be sent in any state but closed. :func:`request_meta` builds what every
modern request carries.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from .. import types
from ..errors import (
    CapabilityError,
    LocalProtocolError,
    ModernOnlyServer,
    ProtocolVersionError,
    RpcError,
)
from ..protocol._capability_rules import PEER_CAPABILITY
from ..protocol._convert import from_wire, to_wire
from ..protocol._jsonrpc import Notification, Request, RequestId
from ..protocol._modern import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVEL_KEY,
    PROTOCOL_VERSION_KEY,
    SERVER_INFO_KEY,
)
from ..protocol._session import Session, State
from ..protocol._versions import KNOWN_VERSIONS, MODERN_VERSIONS

__all__ = [
    "ERA_CACHE",
    "MODERN_ERRORS",
    "UNSUPPORTED_VERSION",
    "EraCache",
    "ModernSession",
    "client_versions",
    "discovered",
    "http_era_key",
    "is_input_required",
    "modern_error",
    "modern_only",
    "named_versions",
    "request_meta",
    "stdio_era_key",
    "with_meta",
]

#: The codes only a modern server sends: HeaderMismatch, MissingRequiredClientCapability,
#: UnsupportedProtocolVersion (COEX-3 keeps legacy servers out of the range).
MODERN_ERRORS = frozenset({-32020, -32021, -32022})
UNSUPPORTED_VERSION = -32022


def client_versions(supported: Iterable[str] | None,
                    preferred: str | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The versions a client speaks: (legacy, modern), each oldest first.

    None means every version we know, of both eras. ``preferred`` (the client's
    ``protocol_version``) caps what is offered: a legacy version leaves the modern era
    out (it is newer), a modern one keeps every legacy version as the fallback.

    Raises:
        ValueError: an unknown version, an empty list, or ``preferred`` not among them.
    """
    if isinstance(supported, str):
        supported = (supported,)
    chosen = set(KNOWN_VERSIONS + MODERN_VERSIONS) if supported is None else set(supported)
    known = set(KNOWN_VERSIONS) | set(MODERN_VERSIONS)
    unknown = sorted(chosen - known)
    if unknown:
        raise ValueError(f"unknown protocol version(s) {', '.join(map(repr, unknown))}; "
                         f"known: {', '.join(KNOWN_VERSIONS + MODERN_VERSIONS)}")
    if not chosen:
        raise ValueError("supported_versions is empty: name at least one protocol version")
    legacy = tuple(v for v in KNOWN_VERSIONS if v in chosen)
    modern = tuple(v for v in MODERN_VERSIONS if v in chosen)
    if preferred is not None:
        if preferred not in known:
            raise ValueError(f"unknown protocol version {preferred!r}")
        if preferred not in chosen:
            raise ValueError(f"protocol version {preferred!r} is not one of "
                             f"{', '.join(legacy + modern)}")
        if preferred in legacy:
            legacy, modern = legacy[:legacy.index(preferred) + 1], ()
        else:
            modern = modern[:modern.index(preferred) + 1]
    return legacy, modern


class EraCache:
    """What each server turned out to speak: ``"modern"`` or ``"legacy"``, by server key.

    Shared by every client of the process, so a reconnect, or a second client of the
    same server, does not probe again. Thread-safe.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._verdicts: dict[str, str] = {}

    def get(self, key: str | None) -> str | None:
        if key is None:
            return None
        with self._lock:
            return self._verdicts.get(key)

    def remember(self, key: str | None, era: str) -> None:
        if key is not None:
            with self._lock:
                self._verdicts[key] = era

    def forget(self, key: str | None = None) -> None:
        """Forget one server's verdict, or every verdict."""
        with self._lock:
            if key is None:
                self._verdicts.clear()
            else:
                self._verdicts.pop(key, None)


ERA_CACHE = EraCache()


def stdio_era_key(argv: list[str], cwd: object) -> str:
    """The cache key of a stdio server: the program it runs, and where."""
    return "stdio:" + repr((tuple(argv), None if cwd is None else str(cwd)))


def http_era_key(url: str) -> str:
    """The cache key of an HTTP server: its origin (scheme, host and port)."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    return f"http:{parts.scheme.lower()}://{(parts.hostname or '').lower()}:{port}"


class ModernSession(Session):
    """The client's session, able to speak the modern era as well as the legacy one.

    Until ``modern`` is set it is an ordinary legacy client session, except that
    ``server/discover`` may be sent before ``initialize`` (the probe). Once set, every
    request may be sent without a handshake; the server's capabilities (from
    ``server/discover``) still gate what is sent (CAPS-5).
    """

    modern = False

    def request(self, method: str, params: dict[str, Any] | None = None, *,
                progress: bool = False) -> Request:
        if not self.modern and method != "server/discover":
            return super().request(method, params, progress=progress)
        if self.state is State.CLOSED:
            raise LocalProtocolError(f"cannot send {method}: the session is closed")
        needed = PEER_CAPABILITY.get(method)
        if self.modern and needed is not None and not self._peer_allows(method, needed):
            raise CapabilityError(
                f"the server did not declare the {needed[0]!r} capability that {method} needs")
        return self._new_request(method, params, progress=progress)

    def cancel(self, request_id: RequestId, reason: str | None = None) -> Notification | None:
        notification = super().cancel(request_id, reason)
        if notification is not None and self.modern and self.negotiated_version:
            # Named as modern, so that an HTTP transport closes the request's answer
            # instead (that is the era's cancel there); stdio sends it as it is.
            params = dict(notification.params or {})
            params["_meta"] = {PROTOCOL_VERSION_KEY: self.negotiated_version}
            notification = Notification(notification.method, params)
        return notification

    def notification(self, method: str, params: dict[str, Any] | None = None, *,
                     related_to: RequestId | None = None) -> Notification:
        if not self.modern:
            return super().notification(method, params, related_to=related_to)
        if self.state is State.CLOSED:
            raise LocalProtocolError(f"cannot send {method}: the session is closed")
        return Notification(method, params)  # no handshake, so no lifecycle to wait for


def request_meta(version: str, capabilities: types.ClientCapabilities,
                 info: types.Implementation, log_level: str | None) -> dict[str, Any]:
    """The ``_meta`` members every modern request carries (version, capabilities, identity,
    and the log level when the application asked for log messages)."""
    caps = to_wire(capabilities)
    roots = caps.get("roots")
    if isinstance(roots, dict):
        roots.pop("listChanged", None)  # the modern era has no roots/list_changed
    meta: dict[str, Any] = {
        PROTOCOL_VERSION_KEY: version,
        CLIENT_CAPABILITIES_KEY: caps,
        CLIENT_INFO_KEY: to_wire(info),
    }
    if log_level is not None:
        meta[LOG_LEVEL_KEY] = log_level
    return meta


def with_meta(params: dict[str, Any] | None, meta: dict[str, Any]) -> dict[str, Any]:
    """``params`` with the modern members added to its ``_meta`` (the caller's win)."""
    merged = dict(params or {})
    own = merged.get("_meta")
    # ``meta`` is shared by every request and never changed once made: no copy needed.
    merged["_meta"] = {**meta, **own} if isinstance(own, dict) else meta
    return merged


def is_input_required(result: dict[str, Any]) -> bool:
    """Whether a result asks for input first; a missing ``resultType`` is complete."""
    return result.get("resultType") == "input_required"


def modern_error(error: BaseException) -> bool:
    """Whether an error is one only a modern server sends (positive modern evidence)."""
    return isinstance(error, RpcError) and int(error.code) in MODERN_ERRORS


def named_versions(error: RpcError) -> tuple[str, ...]:
    """The ``supported`` versions an -32022 error names (empty if it names none)."""
    data = error.data
    supported = data.get("supported") if isinstance(data, dict) else None
    if not isinstance(supported, list):
        return ()
    return tuple(v for v in supported if isinstance(v, str))


def discovered(result: dict[str, Any], modern: tuple[str, ...],
               preferred: str) -> types.InitializeResult | None:
    """What a discover result tells, as an ``InitializeResult`` of the chosen version;
    None when it names no modern version we speak (a legacy advertisement).

    Raises:
        InvalidParams: the result's capabilities or server info do not fit the schema.
    """
    supported = result.get("supportedVersions")
    versions = [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else []
    mutual = [v for v in modern if v in versions]
    if not mutual:
        return None
    version = preferred if preferred in mutual else mutual[-1]
    meta = result.get("_meta")
    raw_info = meta.get(SERVER_INFO_KEY) if isinstance(meta, dict) else None
    if raw_info is None:
        raw_info = result.get("serverInfo")
    info = (from_wire(raw_info, types.Implementation) if isinstance(raw_info, dict)
            else types.Implementation(name="", version=""))
    capabilities = from_wire(result.get("capabilities") or {}, types.ServerCapabilities)
    instructions = result.get("instructions")
    return types.InitializeResult(
        protocol_version=version, capabilities=capabilities, server_info=info,
        instructions=instructions if isinstance(instructions, str) else None)


def modern_only(error: RpcError, legacy: tuple[str, ...],
                modern: tuple[str, ...]) -> ProtocolVersionError:
    """The typed error for a modern-only server that a client cannot speak to (COEX-10)."""
    named = named_versions(error)
    detail = f" (it speaks {', '.join(named)})" if named else f": {error.message}"
    exc = ModernOnlyServer(
        f"the server speaks only modern MCP{detail}; this client is configured for "
        f"{', '.join(legacy + modern)}", server_versions=named, supported=legacy + modern)
    exc.__cause__ = error
    return exc
