"""Finding the authorization server of an MCP server, and checking what it says.

The order, from the 401 onwards:

1. The challenge: ``WWW-Authenticate: Bearer resource_metadata="...", scope="..."``.
2. The protected-resource metadata (RFC 9728): the header's URL, else the path-specific
   well-known URL, else the root one (V1125-20). Its ``resource`` must name the server
   we talk to (same origin, and a path that is a prefix of the server's), or nothing is
   sent anywhere.
3. The authorization server's metadata, RFC 8414 or OpenID Connect, in the V1125-21
   order; its ``issuer`` must be exactly the issuer the well-known URL was built from.
4. Without resource metadata, the 2025-03-26 rules (AUTH-6/7/8): the metadata at the
   server's origin, else the default ``/authorize``, ``/token`` and ``/register`` there.

Every endpoint taken from metadata must be https, or http on a loopback host (V1125-30).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

import attrs
import requests

from ...errors import AuthorizationError

__all__ = [
    "AuthServer",
    "Challenge",
    "ProtectedResource",
    "canonical_resource",
    "check_endpoint",
    "discover_auth_server",
    "discover_resource",
    "fallback_auth_server",
    "parse_challenge",
    "resource_matches",
]

log = logging.getLogger("mcp_sync.auth")

_PARAM = re.compile(r'([A-Za-z0-9_\-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,"]+)')
_LOOPBACK = ("localhost", "127.0.0.1", "::1")
#: Sent on the 2025-03-26 metadata request, as that revision asks (AUTH-7).
_FALLBACK_VERSION = "2025-03-26"


@attrs.frozen
class Challenge:
    """What a ``WWW-Authenticate: Bearer ...`` header said."""

    error: str | None = None
    scope: tuple[str, ...] | None = None
    resource_metadata: str | None = None
    description: str | None = None

    @property
    def insufficient_scope(self) -> bool:
        return self.error == "insufficient_scope"


def parse_challenge(header: str | None) -> Challenge:
    """The Bearer challenge of a ``WWW-Authenticate`` header (an empty one if none)."""
    if not header:
        return Challenge()
    # Several challenges may share the header; the parameters after "Bearer" are ours.
    match = re.search(r"(?i)(?:^|,)\s*bearer\b", header)
    text = header[match.end():] if match else header
    other = re.search(r",\s*[A-Za-z][\w-]*\s+[A-Za-z0-9_\-]+\s*=", text)
    if other:
        text = text[:other.start()]
    params: dict[str, str] = {}
    for name, value in _PARAM.findall(text):
        if value.startswith('"'):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        params.setdefault(name.lower(), value)
    scope = params.get("scope")
    return Challenge(
        error=params.get("error"),
        scope=tuple(scope.split()) if scope is not None else None,
        resource_metadata=params.get("resource_metadata"),
        description=params.get("error_description"))


def canonical_resource(url: str) -> str:
    """The canonical URI of an MCP server (V0618-39): lower-case scheme and host, no
    query or fragment, no trailing slash."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, "", ""))


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port or {"http": 80, "https": 443}.get(scheme)
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port


def resource_matches(resource: str, server_url: str) -> bool:
    """True when the metadata's ``resource`` names the server at ``server_url``: the same
    origin, and a path that is the server's or one of its parents (RFC 9728 §3.3)."""
    if _origin(resource) != _origin(server_url):
        return False
    prefix = urlsplit(resource).path.rstrip("/")
    path = urlsplit(server_url).path.rstrip("/")
    return path == prefix or path.startswith(prefix + "/")


def is_loopback(url: str) -> bool:
    return (urlsplit(url).hostname or "").lower() in _LOOPBACK


def check_endpoint(url: Any, what: str) -> str:
    """``url`` if it may be used as an OAuth endpoint (V1125-30), else AuthorizationError."""
    if not isinstance(url, str) or not url:
        raise AuthorizationError(f"the authorization server's metadata gives no {what}")
    scheme = urlsplit(url).scheme.lower()
    if scheme == "https" or (scheme == "http" and is_loopback(url)):
        return url
    raise AuthorizationError(
        f"refusing the {what} {url!r}: only https URLs (or http on localhost) are used")


@attrs.frozen
class ProtectedResource:
    """The protected-resource metadata of an MCP server (RFC 9728)."""

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None
    metadata_url: str


@attrs.frozen
class AuthServer:
    """An authorization server's metadata, its issuer checked."""

    issuer: str
    metadata: Mapping[str, Any]

    @property
    def authorization_endpoint(self) -> str:
        return check_endpoint(self.metadata.get("authorization_endpoint"),
                              "authorization endpoint")

    @property
    def token_endpoint(self) -> str:
        return check_endpoint(self.metadata.get("token_endpoint"), "token endpoint")

    @property
    def registration_endpoint(self) -> str | None:
        url = self.metadata.get("registration_endpoint")
        return check_endpoint(url, "registration endpoint") if url else None

    def supports(self, field: str, value: str) -> bool | None:
        """Whether the list ``field`` holds ``value``; None when there is no such list."""
        values = self.metadata.get(field)
        if not isinstance(values, list):
            return None
        return value in values


def _get_json(session: requests.Session, url: str, timeout: float,
              headers: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """The JSON object at ``url``, or None when there is none (an error status, not JSON).

    Raises:
        AuthorizationError: the host cannot be reached at all.
    """
    try:
        response = session.get(url, headers={"Accept": "application/json", **(headers or {})},
                               timeout=timeout, allow_redirects=False)
    except requests.ConnectionError as exc:
        raise AuthorizationError(f"cannot reach {url} to discover authorization: {exc}") \
            from exc
    except requests.RequestException as exc:
        log.debug("GET %s failed: %s", url, exc)
        return None
    with response:
        if response.status_code != 200:
            log.debug("GET %s answered HTTP %d", url, response.status_code)
            return None
        try:
            value = response.json()
        except ValueError:
            return None
    return value if isinstance(value, dict) else None


def _well_known(url: str, name: str) -> list[str]:
    """The path-specific then the root well-known URL for ``url`` (RFC 9728 §3.1)."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    root = urlunsplit((parts.scheme, parts.netloc, f"/.well-known/{name}", "", ""))
    if not path:
        return [root]
    return [urlunsplit((parts.scheme, parts.netloc, f"/.well-known/{name}{path}", "", "")),
            root]


def discover_resource(session: requests.Session, server_url: str, challenge: Challenge,
                      timeout: float) -> ProtectedResource | None:
    """The server's protected-resource metadata, or None when it publishes none.

    Raises:
        AuthorizationError: the metadata names another resource, or no authorization
            server.
    """
    candidates = _well_known(server_url, "oauth-protected-resource")
    if challenge.resource_metadata:
        candidates.insert(0, urljoin(server_url, challenge.resource_metadata))
    for url in candidates:
        document = _get_json(session, url, timeout)
        if document is None:
            continue
        resource = document.get("resource")
        if not isinstance(resource, str) or not resource_matches(resource, server_url):
            raise AuthorizationError(
                f"the protected-resource metadata at {url} is for {resource!r}, not for "
                f"{server_url}: no token is requested for it")
        servers = document.get("authorization_servers")
        if not isinstance(servers, list) or not servers or \
                not all(isinstance(server, str) for server in servers):
            raise AuthorizationError(
                f"the protected-resource metadata at {url} names no authorization server")
        scopes = document.get("scopes_supported")
        return ProtectedResource(
            resource, tuple(servers),
            tuple(str(scope) for scope in scopes) if isinstance(scopes, list) else None, url)
    return None


def _metadata_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be, in the V1125-21 order."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")

    def at(new_path: str) -> str:
        return urlunsplit((parts.scheme, parts.netloc, new_path, "", ""))

    if not path:
        return [at("/.well-known/oauth-authorization-server"),
                at("/.well-known/openid-configuration")]
    return [at(f"/.well-known/oauth-authorization-server{path}"),
            at(f"/.well-known/openid-configuration{path}"),
            at(f"{path}/.well-known/openid-configuration")]


def _same_issuer(stated: Any, expected: str) -> bool:
    return isinstance(stated, str) and stated.rstrip("/") == expected.rstrip("/")


def discover_auth_server(session: requests.Session, issuer: str,
                         timeout: float) -> AuthServer:
    """The metadata of the authorization server ``issuer`` (RFC 8414 or OpenID).

    Raises:
        AuthorizationError: none was found, or its ``issuer`` is not ``issuer``.
    """
    check_endpoint(issuer, "issuer")
    for url in _metadata_urls(issuer):
        document = _get_json(session, url, timeout)
        if document is None:
            continue
        if not _same_issuer(document.get("issuer"), issuer):
            raise AuthorizationError(
                f"the authorization server metadata at {url} names the issuer "
                f"{document.get('issuer')!r}, not {issuer!r}: it is not used")
        return AuthServer(str(document["issuer"]), document)
    raise AuthorizationError(f"no authorization server metadata found for {issuer}")


def fallback_auth_server(session: requests.Session, server_url: str,
                         timeout: float) -> AuthServer:
    """The authorization server of a 2025-03-26 server without resource metadata: the
    metadata at its origin (AUTH-6, AUTH-7), else the default endpoints there (AUTH-8)."""
    parts = urlsplit(server_url)
    origin = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    url = f"{origin}/.well-known/oauth-authorization-server"
    document = _get_json(session, url, timeout, {"MCP-Protocol-Version": _FALLBACK_VERSION})
    if document is not None:
        if "issuer" in document and not _same_issuer(document["issuer"], origin):
            raise AuthorizationError(
                f"the authorization server metadata at {url} names the issuer "
                f"{document.get('issuer')!r}, not {origin!r}: it is not used")
        return AuthServer(str(document.get("issuer", origin)), document)
    log.info("%s publishes no authorization metadata; using its default endpoints", origin)
    return AuthServer(origin, {
        "issuer": origin,
        "authorization_endpoint": f"{origin}/authorize",
        "token_endpoint": f"{origin}/token",
        "registration_endpoint": f"{origin}/register",
    })
