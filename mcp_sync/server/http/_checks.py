"""Header checks of the Streamable HTTP server, and its JSON-RPC error responses."""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from typing import Any

from werkzeug.datastructures import MIMEAccept
from werkzeug.exceptions import ClientDisconnected
from werkzeug.http import parse_accept_header
from werkzeug.wrappers import Request, Response

from ...errors import ErrorCode, RpcError
from ...protocol._jsonrpc import ErrorResponse, Incoming, RequestId, encode
from ...protocol._jsonrpc import Request as RpcRequest
from ...protocol._versions import DEFAULT_HEADERLESS_VERSION, KNOWN_VERSIONS

__all__ = [
    "DEFAULT_ALLOWED_ORIGINS",
    "LOOPBACK_HOSTS",
    "SESSION_HEADER",
    "SESSION_KEY",
    "VERSION_HEADER",
    "VERSION_KEY",
    "TruncatedBody",
    "accepts",
    "error_response",
    "headerless_version",
    "host_allowed",
    "normal_path",
    "note_version",
    "origin_allowed",
    "parse_event_id",
    "preflight",
    "read_body",
    "refusal",
    "refuse_version",
    "unknown_session",
]

log = logging.getLogger("mcp_sync.server.http")

#: Browser pages served from this machine, on any port (HTTP-2, AMBIG-14).
SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"


def environ_key(header: str) -> str:
    """Where a WSGI server puts a request header in the environment (PEP 3333)."""
    return "HTTP_" + header.upper().replace("-", "_")


# Read from the environment directly on every POST: werkzeug's header view translates a
# name afresh for each lookup.
SESSION_KEY = environ_key(SESSION_HEADER)
VERSION_KEY = environ_key(VERSION_HEADER)

DEFAULT_ALLOWED_ORIGINS: tuple[str, ...] = (
    "http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*",
    "https://localhost:*", "https://127.0.0.1:*", "https://[::1]:*",
)

#: ``Host`` values naming this machine, on any port: a local server that checks them
#: cannot be reached through a DNS-rebinding name.
LOOPBACK_HOSTS: tuple[str, ...] = ("localhost:*", "127.0.0.1:*", "[::1]:*")


def _matches(value: str, patterns: Sequence[str]) -> bool:
    value = value.strip().lower()
    for pattern in patterns:
        pattern = pattern.strip().lower()
        if pattern in ("*", value):
            return True
        if pattern.endswith(":*"):
            base = pattern[:-2]
            if value == base:
                return True
            port = value[len(base) + 1:] if value.startswith(base + ":") else ""
            if port.isascii() and port.isdigit():
                return True
    return False


def origin_allowed(origin: str, allowed: Sequence[str] | None) -> bool:
    """True if ``origin`` matches an allowed pattern, or no check is configured."""
    return allowed is None or _matches(origin, allowed)


def host_allowed(host: str, allowed: Sequence[str] | None) -> bool:
    """True if the ``Host`` header matches an allowed pattern, or no check is configured."""
    return allowed is None or _matches(host, allowed)


def accepts(request: Request, mimetype: str) -> bool:
    """Whether the request's ``Accept`` header allows ``mimetype`` (no header allows all)."""
    return _accepts(request.environ.get("HTTP_ACCEPT", ""), mimetype)


@functools.lru_cache(maxsize=64)
def _accepts(accept: str, mimetype: str) -> bool:
    # A client sends the same Accept with every request: parse each value once, not per
    # POST. The cache is bounded, so odd values from many clients cannot grow it.
    if not accept.strip():
        return True
    return bool(parse_accept_header(accept, MIMEAccept)[mimetype] > 0)


def error_response(status: int, code: int, message: str, *, data: Any = None,
                   request_id: RequestId | None = None,
                   headers: dict[str, str] | None = None) -> Response:
    """An HTTP error whose body is a JSON-RPC error (id null unless known, AMBIG-3)."""
    body = encode(ErrorResponse(request_id, RpcError(message, data, code=code)))
    return Response(body, status=status, content_type="application/json", headers=headers)


def unknown_session() -> Response:
    """404: the session id names no session (never one, or one that ended, HTTP-34)."""
    return error_response(404, ErrorCode.INVALID_REQUEST,
                          "Not Found: the session does not exist or has ended")


def normal_path(path: str) -> str:
    """A path without its trailing slashes, so that ``/mcp/`` is ``/mcp``."""
    return path.rstrip("/")


def parse_event_id(event_id: str) -> tuple[str, int] | None:
    """``<stream-id>:<seq>`` split in two (AMBIG-16); None if it is not one of ours."""
    stream_id, colon, seq = event_id.rpartition(":")
    if not colon or not stream_id or not seq.isdigit():
        return None
    return stream_id, int(seq)


def preflight(allow: str, *headers: str) -> Response:
    """204 to a CORS preflight: the methods in ``allow``, and these request headers."""
    return Response(status=204, headers={
        "Allow": allow, "Access-Control-Allow-Methods": allow,
        "Access-Control-Allow-Headers": ", ".join(
            ("Content-Type", "Accept", "Authorization", *headers)),
        "Access-Control-Max-Age": "600"})


class TruncatedBody(Exception):
    """The client stopped sending before the end of the body it announced."""


def read_body(request: Request, limit: int) -> bytes | None:
    """The request body, or None as soon as it proves longer than ``limit`` bytes.

    Raises:
        TruncatedBody: the connection ended (or stalled past the server's timeout)
            before ``Content-Length`` bytes arrived.
    """
    length = request.content_length
    if length is not None and length > limit:
        return None
    chunks: list[bytes] = []
    total = 0
    while True:
        try:
            chunk = request.stream.read(min(64 * 1024, limit + 1 - total))
        except (ClientDisconnected, OSError) as exc:
            raise TruncatedBody(str(exc)) from exc
        if not chunk:
            if length is not None and total < length:
                raise TruncatedBody(f"{total} of {length} bytes arrived")
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            return None


def refuse_version(request: Request, incoming: Incoming | None, known_methods: set[str],
                   supported: tuple[str, ...] = KNOWN_VERSIONS) -> Response | None:
    """400 when the ``MCP-Protocol-Version`` header names a version the server does not
    speak (V0618-14, DES-7); an absent header passes (V0618-13, NAMBIG-2)."""
    version = request.environ.get(VERSION_KEY)
    if version is None or version in supported:
        return None
    code, request_id = refusal(incoming, known_methods)
    return error_response(
        400, code, f"Bad Request: unsupported {VERSION_HEADER}: {version}",
        data={"supported": list(supported), "requested": version},
        request_id=request_id)


def headerless_version(request: Request, supported: tuple[str, ...]) -> str:
    """The version a request without a session is served with: its header's, else
    2025-03-26 (V0618-13 as corrected), else the newest the server speaks."""
    version = request.environ.get(VERSION_KEY)
    if version is not None:
        return str(version)
    if DEFAULT_HEADERLESS_VERSION in supported:
        return DEFAULT_HEADERLESS_VERSION
    return supported[-1]


def note_version(request: Request, negotiated: str | None) -> None:
    """Log a supported header that differs from the session's version; the session's
    version governs (NAMBIG-1)."""
    version = request.environ.get(VERSION_KEY)
    if version is not None and negotiated is not None and version != negotiated:
        log.info("%s %s differs from the session's negotiated %s; serving with %s",
                 VERSION_HEADER, version, negotiated, negotiated)


def refusal(incoming: Incoming | None, known_methods: set[str]) -> tuple[int, Any]:
    """The JSON-RPC code and id for a POST refused before it reaches a session."""
    # A newer client's probe (server/discover) must learn at once that we do not
    # know the method, so that it falls back to initialize.
    if isinstance(incoming, RpcRequest):
        if incoming.method not in known_methods:
            return ErrorCode.METHOD_NOT_FOUND, incoming.id
        return ErrorCode.INVALID_REQUEST, incoming.id
    return ErrorCode.INVALID_REQUEST, None
