"""The resource-server half of OAuth 2.1: tokens checked, challenges sent, metadata served.

A :class:`ResourceServer` given to the application (``wsgi_app(auth=...)``) is asked about
every request to the MCP endpoint and the legacy HTTP+SSE endpoints, after the ``Origin``
check and before anything else is read (DES-7):

* no ``Authorization: Bearer`` header: 401 with ``WWW-Authenticate: Bearer
  resource_metadata="...", scope="..."`` (AUTH-5, V0618-37, V1125-22);
* a token the verifier refuses, one that has expired, or one issued for another audience:
  401 with ``error="invalid_token"`` (AUTH-13, V0618-40); it never reaches a tool;
* a token in the query string: 400 ``invalid_request`` (AUTH-12); it is never read;
* a valid token lacking ``required_scopes``, or the scopes of the tool a POST calls:
  403 with ``error="insufficient_scope"`` and every scope the request needs (V1125-24).

It also answers the RFC 9728 protected-resource metadata at the root and path-specific
well-known URIs (V0618-36, V1125-20), and, on request, the 2025-03-26 clients' search for
authorization-server metadata on the MCP server's own origin (AUTH-6, DES-15).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable
from urllib.parse import parse_qs, urlsplit, urlunsplit

import attrs
from werkzeug.wrappers import Request, Response

from ...errors import ErrorCode, McpError
from ...protocol._jsonrpc import Batch, Incoming
from ...protocol._jsonrpc import Request as RpcRequest
from ._checks import error_response

if TYPE_CHECKING:
    from ._host import ConnectionHost

__all__ = [
    "AS_METADATA_PATH",
    "AUTH_KEY",
    "PRM_PATH",
    "AccessToken",
    "InvalidToken",
    "ResourceServer",
    "TokenVerifier",
    "canonical_resource",
]

log = logging.getLogger("mcp_sync.http.auth")

#: RFC 9728 section 3: where a resource's metadata lives (then the resource's path).
PRM_PATH = "/.well-known/oauth-protected-resource"
#: RFC 8414 section 3: where a 2025-03-26 client looks on the MCP server's origin (AUTH-6).
AS_METADATA_PATH = "/.well-known/oauth-authorization-server"
#: The WSGI environment key under which the request's verified :class:`AccessToken` is kept.
AUTH_KEY = "mcp_sync.auth"

# RFC 6750 section 2.1: the b64token syntax of a bearer token.
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


def _frozen_strings(values: Iterable[str]) -> frozenset[str]:
    return frozenset(values)


def _string_tuple(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(values)


@attrs.frozen(kw_only=True)
class AccessToken:
    """A verified access token: who it speaks for and what it allows.

    Attributes:
        token: the token as the client sent it (left out of ``repr``).
        subject: the resource owner (``sub``), if known.
        client_id: the OAuth client the token was issued to, if known.
        scopes: the scopes granted.
        expires_at: when it expires (seconds since the epoch), if known.
        audience: the resources it was issued for (``aud``).
        issuer: the authorization server that issued it (``iss``), if known.
        claims: every claim the verifier read (JWT claims, introspection members).
    """

    token: str = attrs.field(repr=False)
    subject: str | None = None
    client_id: str | None = None
    scopes: frozenset[str] = attrs.field(default=frozenset(), converter=_frozen_strings)
    expires_at: int | None = None
    audience: tuple[str, ...] = attrs.field(default=(), converter=_string_tuple)
    issuer: str | None = None
    claims: Mapping[str, Any] = attrs.field(factory=dict, repr=False, eq=False)

    @property
    def identity(self) -> str:
        """Who the token speaks for, as a session is bound to it (V0618-45): the issuer
        and subject, else the client, else (for an anonymous token) the token itself."""
        if self.subject is not None:
            return f"sub:{self.issuer or ''} {self.subject}"
        if self.client_id is not None:
            return f"client:{self.issuer or ''} {self.client_id}"
        return "token:" + hashlib.sha256(self.token.encode()).hexdigest()


class InvalidToken(McpError, ValueError):
    """A verifier refuses a token; the message (sent as ``error_description``) says why."""


@runtime_checkable
class TokenVerifier(Protocol):
    """Checks a bearer token: :class:`~mcp_sync.auth.JWTVerifier`,
    :class:`~mcp_sync.auth.IntrospectionVerifier`, or one of your own."""

    def verify(self, token: str) -> AccessToken | None:
        """The token's meaning, or None (or :class:`InvalidToken`) to refuse it with 401.

        Any other exception means the token could not be checked now (its issuer is
        unreachable): the request gets 503 and the client may retry.
        """
        ...


def canonical_resource(uri: str) -> str:
    """``uri`` as a canonical resource identifier (RFC 8707, V0618-39): absolute, scheme
    and host in lower case, no fragment, no trailing slash.

    Raises:
        ValueError: ``uri`` is not an absolute ``http``/``https`` URI, or has a fragment.
    """
    parts = urlsplit(uri.strip())
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise ValueError(f"the resource must be an absolute http(s) URI, not {uri!r}")
    if parts.fragment:
        raise ValueError(f"the resource URI cannot have a fragment: {uri!r}")
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def _quoted(value: str) -> str:
    # An auth-param value as a quoted-string (RFC 9110 5.6.4); descriptions are ours or
    # a verifier's, so anything outside printable ASCII is dropped rather than escaped.
    cleaned = "".join(c for c in value if " " <= c <= "~")
    return '"' + cleaned.replace("\\", "\\\\").replace('"', '\\"') + '"'


class ResourceServer:
    """Protects a server's HTTP endpoints with OAuth 2.1 bearer tokens.

    Give it to ``Server.wsgi_app(auth=...)`` (or ``run_http``/``serve_http``); see
    docs/auth.md "Protecting a server".

    Args:
        resource: the canonical URI of the MCP endpoint as clients reach it
            (``https://mcp.example.com/mcp``); named in the metadata and, unless
            ``audience`` says otherwise, the audience every token must carry.
        authorization_servers: the issuers whose tokens are accepted (at least one).
        verifier: checks each token (any :class:`TokenVerifier`).
        scopes_supported: the scopes published in the metadata.
        required_scopes: scopes every request needs (403 ``insufficient_scope`` without).
        audience: the ``aud`` values accepted instead of ``resource`` (Entra ID's
            ``api://...`` application URI, say); an empty sequence leaves the audience
            to the verifier alone.
        resource_name: a name for people, in the metadata.
        resource_documentation: a URL of documentation, in the metadata.
        legacy_metadata: for 2025-03-26 clients, which look for authorization-server
            metadata at ``/.well-known/oauth-authorization-server`` on the MCP server's
            own origin: True redirects there to the first authorization server's RFC 8414
            document, a string redirects to that URL, a mapping is served as the
            document; None (the default) leaves the path unanswered (404).
        leeway: seconds of clock difference tolerated on ``expires_at``.
        clock: the time source for expiry (seconds since the epoch).

    Raises:
        ValueError: ``resource`` is not an absolute http(s) URI, or no authorization
            server is named.
        TypeError: ``verifier`` has no ``verify`` method.
    """

    def __init__(self, resource: str, authorization_servers: Sequence[str],
                 verifier: TokenVerifier, *, scopes_supported: Sequence[str] | None = None,
                 required_scopes: Sequence[str] = (),
                 audience: str | Sequence[str] | None = None,
                 resource_name: str | None = None, resource_documentation: str | None = None,
                 legacy_metadata: bool | str | Mapping[str, Any] | None = None,
                 leeway: float = 30.0, clock: Callable[[], float] = time.time) -> None:
        if isinstance(authorization_servers, str):
            authorization_servers = [authorization_servers]
        if not authorization_servers:
            raise ValueError("name at least one authorization server (V0618-36)")
        if not callable(getattr(verifier, "verify", None)):
            raise TypeError("verifier must have a verify(token) method (TokenVerifier)")
        self.resource = canonical_resource(resource)
        self.authorization_servers = tuple(authorization_servers)
        self.verifier = verifier
        self.scopes_supported = None if scopes_supported is None else tuple(scopes_supported)
        self.required_scopes = frozenset(required_scopes)
        if audience is None:
            audience = (self.resource,)
        elif isinstance(audience, str):
            audience = (audience,)
        self.audience = tuple(audience)
        self.resource_name = resource_name
        self.resource_documentation = resource_documentation
        self.legacy_metadata = legacy_metadata
        self.leeway = leeway
        self._clock = clock
        parts = urlsplit(self.resource)
        self._origin = f"{parts.scheme}://{parts.netloc}"
        self._resource_path = parts.path
        #: Where the metadata is named in every challenge: the path-specific URI.
        self.metadata_url = self._origin + PRM_PATH + self._resource_path

    def __repr__(self) -> str:
        return f"<ResourceServer {self.resource} by {', '.join(self.authorization_servers)}>"

    # --- metadata ---------------------------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        """The protected-resource metadata document (RFC 9728 section 2)."""
        document: dict[str, Any] = {
            "resource": self.resource,
            "authorization_servers": list(self.authorization_servers),
            "bearer_methods_supported": ["header"],
        }
        if self.scopes_supported is not None:
            document["scopes_supported"] = list(self.scopes_supported)
        if self.resource_name is not None:
            document["resource_name"] = self.resource_name
        if self.resource_documentation is not None:
            document["resource_documentation"] = self.resource_documentation
        return document

    def serves(self, path: str) -> bool:
        """Whether ``path`` (the full path, mount point included) is a well-known
        document this resource server answers."""
        if path == AS_METADATA_PATH:
            return self.legacy_metadata is not None and self.legacy_metadata is not False
        # The root document and this resource's own (RFC 9728 section 3.1); another
        # resource's path-specific document is not ours to answer.
        return path in (PRM_PATH, PRM_PATH + self._resource_path)

    def metadata_response(self, request: Request) -> Response:
        """The answer to a GET of a well-known document (:meth:`serves` was true)."""
        if request.method == "OPTIONS":
            return Response(status=204, headers={
                "Allow": "GET, OPTIONS", "Access-Control-Allow-Origin": "*",
                "Access-Control-Allow-Methods": "GET, OPTIONS",
                "Access-Control-Allow-Headers": "MCP-Protocol-Version"})
        if request.method not in ("GET", "HEAD"):
            return error_response(405, ErrorCode.INVALID_REQUEST,
                                  f"Method Not Allowed: {request.method}",
                                  headers={"Allow": "GET, OPTIONS"})
        path = request.environ.get("SCRIPT_NAME", "") + request.environ.get("PATH_INFO", "")
        if path == AS_METADATA_PATH:
            return self._legacy_response()
        return _public_json(self.metadata())

    def _legacy_response(self) -> Response:
        legacy = self.legacy_metadata
        if isinstance(legacy, Mapping):
            return _public_json(dict(legacy))
        target = legacy if isinstance(legacy, str) else as_metadata_url(
            self.authorization_servers[0])
        return Response(status=302, headers={"Location": target,
                                             "Access-Control-Allow-Origin": "*"})

    def well_known_mounts(self) -> dict[str, ResourceServer]:
        """The paths to route to this object when the MCP application is mounted under
        a prefix (``DispatcherMiddleware(host, {"/mcp": mcp_app,
        **auth.well_known_mounts()})``): the documents live at the root of the origin,
        where the host application, not the MCP one, receives their requests."""
        mounts = {PRM_PATH: self}
        if self.legacy_metadata is not None and self.legacy_metadata is not False:
            mounts[AS_METADATA_PATH] = self
        return mounts

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        """A WSGI application answering the well-known documents (404 elsewhere), to
        route ``/.well-known/`` to when the MCP application is mounted under a prefix."""
        request = Request(environ)
        path = environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", "")
        response = (self.metadata_response(request) if self.serves(path)
                    else error_response(404, ErrorCode.INVALID_REQUEST, "Not Found"))
        return response(environ, start_response)

    # --- challenges -------------------------------------------------------------------------

    def challenge(self, status: int, error: str | None = None, description: str | None = None,
                  scopes: Iterable[str] | None = None) -> Response:
        """A 400, 401 or 403 answer with its ``WWW-Authenticate: Bearer`` challenge."""
        fields = []
        if error is not None:
            fields.append(f"error={_quoted(error)}")
            if description:
                fields.append(f"error_description={_quoted(description)}")
        fields.append(f"resource_metadata={_quoted(self.metadata_url)}")
        wanted = sorted(scopes) if scopes is not None else self._challenge_scopes()
        if wanted:
            fields.append(f"scope={_quoted(' '.join(wanted))}")
        message = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden"}.get(status, "")
        return error_response(status, ErrorCode.INVALID_REQUEST,
                              f"{message}: {description}" if description else message,
                              headers={"WWW-Authenticate": "Bearer " + ", ".join(fields)})

    def _challenge_scopes(self) -> list[str]:
        # What a client without a token should ask for (V1125-22, V1125-23).
        if self.required_scopes:
            return sorted(self.required_scopes)
        return list(self.scopes_supported or ())

    # --- checks -----------------------------------------------------------------------------

    def authenticate(self, request: Request) -> AccessToken | Response:
        """The request's verified token, or the answer that refuses the request."""
        environ = request.environ
        query = environ.get("QUERY_STRING", "")
        if "access_token" in query and "access_token" in parse_qs(query):
            return self.challenge(400, "invalid_request",
                                  "access tokens are accepted only in the Authorization header")
        header = environ.get("HTTP_AUTHORIZATION", "")
        scheme, _, credentials = header.strip().partition(" ")
        if scheme.lower() != "bearer":
            return self.challenge(401)
        credentials = credentials.strip()
        if not _B64TOKEN.fullmatch(credentials):
            return self.challenge(401, "invalid_token", "the bearer token is malformed")
        try:
            token = self.verifier.verify(credentials)
        except InvalidToken as exc:
            return self.challenge(401, "invalid_token", str(exc) or "the token is not valid")
        except Exception:
            log.exception("the token verifier failed")
            return error_response(503, ErrorCode.INTERNAL_ERROR,
                                  "Service Unavailable: the access token cannot be checked now",
                                  headers={"Retry-After": "5"})
        if token is None:
            return self.challenge(401, "invalid_token", "the token is not valid")
        refused = self._refusal(token)
        if refused is not None:
            return self.challenge(401, "invalid_token", refused)
        missing = self.required_scopes - token.scopes
        if missing:
            return self.challenge(403, "insufficient_scope",
                                  "the token lacks a scope this server requires",
                                  self.required_scopes)
        return token

    def _refusal(self, token: AccessToken) -> str | None:
        """Why a token the verifier accepted is refused here, or None."""
        if token.expires_at is not None and token.expires_at + self.leeway <= self._clock():
            return "the token has expired"
        if self.audience and not set(map(_normal_audience, token.audience)) & set(
                map(_normal_audience, self.audience)):
            # V0618-40: a token for another resource is never accepted (nor passed on).
            return "the token was not issued for this resource"
        return None

    def scope_refusal(self, token: AccessToken, incoming: Incoming,
                      server: ConnectionHost) -> Response | None:
        """403 when a POST calls a tool whose scopes ``token`` lacks (V1125-24): the
        challenge lists every scope the request needs, those granted included."""
        needed = set(self.required_scopes)
        items = incoming.items if isinstance(incoming, Batch) else (incoming,)
        for item in items:
            if isinstance(item, RpcRequest) and item.method == "tools/call":
                name = (item.params or {}).get("name")
                if isinstance(name, str):
                    needed |= server.tool_scopes(name)
        if needed <= token.scopes:
            return None
        return self.challenge(403, "insufficient_scope",
                              "the token lacks a scope this request needs", needed)


def _normal_audience(value: str) -> str:
    try:
        return canonical_resource(value)
    except ValueError:
        return value  # not a URL (a client id, an api:// name): compared as it is


def as_metadata_url(issuer: str) -> str:
    """Where an issuer's RFC 8414 metadata lives (section 3.1: path inserted)."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme, parts.netloc, AS_METADATA_PATH + path, "", ""))


def _public_json(document: dict[str, Any]) -> Response:
    # Metadata is public and read by browser-based clients of any origin.
    return Response(json.dumps(document), status=200, content_type="application/json",
                    headers={"Access-Control-Allow-Origin": "*",
                             "Cache-Control": "public, max-age=3600"})
