"""What every token-obtaining auth object shares: sending the token, and the 401/403 dance.

Theory of operation
-------------------

A :class:`TokenAuth` is a ``requests.auth.AuthBase``. Called on each request, it adds
``Authorization: Bearer <token>`` when it holds a token for the request's server
(refreshing it first when it is about to expire) and registers a response hook. The
hook does what ``requests``' own digest authentication does: on a 401 it obtains a token
(discovery, then a refresh or a new grant), and sends the same request again, once, on
the same connection adapter; on a 403 ``insufficient_scope`` it asks for the larger
scope set (step-up) and sends it again, a bounded number of times. The caller sees only
the final answer. So it works in any ``requests.Session``, and in every request of the
MCP transport: POSTs (whose bodies are bytes, so they can be sent again), the GET
stream and the 2024-11-05 transport alike.

Obtaining a token is serialised by one lock: many threads meeting a 401 at once run one
flow, and the others take its token. Tokens are kept in the :class:`TokenStore`, keyed by
the MCP server and the issuer of the authorization server that granted them (V0618-41);
the server's resource metadata is read again on every 401, so a server that moves to
another authorization server is followed there, with a new registration.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.auth import AuthBase
from requests.cookies import extract_cookies_to_jar

from ...errors import AuthorizationError
from ._oauth_discovery import (
    AuthServer,
    Challenge,
    ProtectedResource,
    canonical_resource,
    discover_auth_server,
    discover_resource,
    fallback_auth_server,
    parse_challenge,
)
from ._oauth_store import MemoryTokenStore, TokenStore

__all__ = ["Grant", "TokenAuth", "load_authlib"]

log = logging.getLogger("mcp_sync.auth")

#: How many new tokens one request may cause on 401s, and on 403 step-ups per scope set.
_MAX_REAUTHORIZATIONS = 2
_MAX_STEP_UPS = 2
#: A token is refreshed when less than this part of its lifetime (at most a minute) is left.
_REFRESH_FRACTION = 0.1
_REFRESH_LEEWAY = 60.0


def load_authlib() -> Any:
    """Authlib's requests client class, or an ImportError naming the extra to install."""
    try:
        from authlib.integrations.requests_client import (  # type: ignore[import-untyped]
            OAuth2Session,
        )
    except ImportError as exc:
        raise ImportError('OAuth needs Authlib: pip install "mcp_sync[oauth]"') from exc
    return OAuth2Session


def oauth_errors() -> tuple[type[Exception], ...]:
    """The exceptions Authlib raises for an error answer of an authorization server."""
    from authlib.common.errors import AuthlibBaseError  # type: ignore[import-untyped]
    return (AuthlibBaseError, requests.RequestException, ValueError, KeyError, TypeError)


class Grant:
    """Where a token is to be obtained: the server, its resource identifier, its
    authorization server and the scopes to ask for."""

    def __init__(self, server: str, resource: str, auth_server: AuthServer,
                 scopes: tuple[str, ...], protected: ProtectedResource | None) -> None:
        self.server = server
        self.resource = resource
        self.auth_server = auth_server
        self.scopes = scopes
        self.protected = protected


class TokenAuth(AuthBase):
    """The base of :class:`~mcp_sync.auth.OAuth` and :class:`~mcp_sync.auth.ClientCredentials`.

    Subclasses say how a new token is obtained (:meth:`_obtain`) and which scopes to
    ask for first (:meth:`_first_scopes`).
    """

    #: How many times one scope set is asked for again after 403 insufficient_scope.
    _max_step_ups = _MAX_STEP_UPS
    #: True when a new token can be had without the user (:meth:`_refresh` needs no
    #: refresh token).
    _renews_itself = False

    def __init__(self, *, scopes: Sequence[str] | None, storage: TokenStore | None,
                 http_timeout: float) -> None:
        load_authlib()  # fail at construction, not at the first 401
        self.scopes = tuple(scopes) if scopes is not None else None
        self.storage: TokenStore = storage if storage is not None else MemoryTokenStore()
        self.http_timeout = http_timeout
        self._lock = threading.RLock()
        #: server -> issuer of the authorization server its tokens come from.
        self._issuers: dict[str, str] = {}
        self._auth_servers: dict[str, AuthServer] = {}
        self._step_ups: dict[tuple[str, frozenset[str]], int] = {}

    # --- requests ----------------------------------------------------------------------------

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        server = self._server_of(request.url or "")
        token = self._usable_token(server)
        if token is not None:
            request.headers["Authorization"] = f"Bearer {token['access_token']}"
        request.register_hook("response", self._on_response)  # type: ignore[no-untyped-call]
        return request

    def _on_response(self, response: requests.Response, **kwargs: Any) -> requests.Response:
        request = response.request
        server = self._server_of(request.url or "")
        reauthorized = 0
        granted_anew = False
        while True:
            challenge = parse_challenge(response.headers.get("WWW-Authenticate"))
            sent = _sent_token(response.request)
            token: dict[str, Any] | None
            try:
                if response.status_code == 401:
                    if reauthorized >= _MAX_REAUTHORIZATIONS:
                        return response
                    if reauthorized and granted_anew:
                        return response  # a brand-new token refused: asking again won't do
                    token = self._after_401(server, challenge, sent,
                                            refresh=reauthorized == 0)
                    reauthorized += 1
                    granted_anew = bool(token.get("granted"))
                elif response.status_code == 403 and challenge.insufficient_scope:
                    token = self._step_up(server, challenge, sent)
                    if token is None:
                        return response
                else:
                    token = None
            except BaseException:
                response.close()  # its connection is not held while the error travels
                raise
            if token is None:
                if 200 <= response.status_code < 300:
                    self._forget_step_ups(server)
                return response
            again = _resend(response, token["access_token"], kwargs)
            if again is None:
                return response
            response = again

    def login(self, server_url: str) -> None:
        """Obtain a token for the MCP server at ``server_url`` now, unless one is kept.

        Without it the first request that the server refuses starts the authorization;
        calling it first keeps the user's time in the browser out of the first call's
        timeout (and out of the era probe's).

        Raises:
            AuthorizationError: no token could be obtained.
        """
        server = canonical_resource(server_url)
        if self._usable_token(server) is None:
            self._after_401(server, Challenge(), None, refresh=True)

    # --- tokens ------------------------------------------------------------------------------

    def _server_of(self, url: str) -> str:
        """The MCP server a request goes to: the known server on its origin whose path
        holds the request's (the 2024-11-05 transport posts elsewhere on the origin)."""
        canonical = canonical_resource(url)
        # Read without the lock, which a flow may hold while the user is in the browser:
        # copying a dict is atomic, and requests for other servers need not wait.
        known = list(self._issuers)
        origin = _origin(canonical)
        same = [server for server in known if _origin(server) == origin]
        path = urlsplit(canonical).path
        for server in sorted(same, key=len, reverse=True):
            prefix = urlsplit(server).path
            if path == prefix or path.startswith(prefix + "/"):
                return server
        return same[0] if same else canonical

    def _issuer_of(self, server: str) -> str | None:
        issuer = self._issuers.get(server)  # without the lock, as in _server_of
        if issuer is None:
            entry = self.storage.load(f"server {server}")
            issuer = entry.get("issuer") if entry else None
            if isinstance(issuer, str):
                self._issuers.setdefault(server, issuer)
        return issuer if isinstance(issuer, str) else None

    def _token_key(self, server: str, issuer: str) -> str:
        return f"token {server} {issuer}"

    def _usable_token(self, server: str) -> dict[str, Any] | None:
        """The token for ``server``, refreshed first if it is about to expire."""
        issuer = self._issuer_of(server)
        if issuer is None:
            return None
        token = self.storage.load(self._token_key(server, issuer))
        if token is None or not _expiring(token):
            return token
        with self._lock:
            token = self.storage.load(self._token_key(server, issuer))
            if token is None or not _expiring(token):
                return token
            if self._renewable(token):
                refreshed = self._try_refresh(server, issuer, token)
                if refreshed is not None:
                    return refreshed
            # Sent anyway if not yet expired; a 401 then starts a new grant.
            return None if _expired(token) else token

    def _after_401(self, server: str, challenge: Challenge, sent: str | None, *,
                   refresh: bool) -> dict[str, Any]:
        with self._lock:
            grant = self._discover(server, challenge, step_up=False)
            key = self._token_key(server, grant.auth_server.issuer)
            token = self.storage.load(key)
            if token is not None and token.get("access_token") != sent and not _expired(token):
                return token  # another thread obtained it meanwhile
            if token is not None and refresh and self._renewable(token):
                refreshed = self._try_refresh(server, grant.auth_server.issuer, token)
                if refreshed is not None:
                    return refreshed
            return self._new_token(grant)

    def _step_up(self, server: str, challenge: Challenge,
                 sent: str | None) -> dict[str, Any] | None:
        with self._lock:
            grant = self._discover(server, challenge, step_up=True)
            key = (server, frozenset(grant.scopes))
            tries = self._step_ups.get(key, 0)
            if tries >= self._max_step_ups:
                log.warning("%s still refuses the scopes %s after %d re-authorizations; "
                            "giving up", server, " ".join(grant.scopes), tries)
                return None
            self._step_ups[key] = tries + 1
            log.info("%s needs the scopes %s: authorizing again", server,
                     " ".join(grant.scopes))
            return self._new_token(grant)

    def _renewable(self, token: dict[str, Any]) -> bool:
        return self._renews_itself or bool(token.get("refresh_token"))

    def _forget_step_ups(self, server: str) -> None:
        with self._lock:
            for key in [key for key in self._step_ups if key[0] == server]:
                del self._step_ups[key]

    def _discover(self, server: str, challenge: Challenge, *, step_up: bool) -> Grant:
        """Read the server's metadata and its authorization server's, and choose scopes."""
        with requests.Session() as session:
            protected = discover_resource(session, server, challenge, self.http_timeout)
            if protected is not None:
                issuer = protected.authorization_servers[0]
                auth_server = self._auth_servers.get(issuer)
                if auth_server is None:
                    auth_server = discover_auth_server(session, issuer, self.http_timeout)
            else:
                auth_server = fallback_auth_server(session, server, self.http_timeout)
        self._auth_servers[auth_server.issuer] = auth_server
        previous = self._issuers.get(server)
        if previous is not None and previous != auth_server.issuer:
            log.info("%s now names the authorization server %s (was %s)", server,
                     auth_server.issuer, previous)
        self._issuers[server] = auth_server.issuer
        self.storage.save(f"server {server}", {"issuer": auth_server.issuer})
        resource = protected.resource if protected is not None else server
        scopes = self._first_scopes(challenge, protected, auth_server)
        if step_up:
            token = self.storage.load(self._token_key(server, auth_server.issuer)) or {}
            granted = tuple(token.get("requested_scopes") or ())
            # SEP-2350: what was asked for before, and what the challenge names now.
            scopes = _union(granted, challenge.scope or (), scopes if not granted else ())
        return Grant(server, resource, auth_server, scopes, protected)

    def _new_token(self, grant: Grant) -> dict[str, Any]:
        return self._new_token_from(grant, self._obtain(grant))

    def _new_token_from(self, grant: Grant, token: dict[str, Any]) -> dict[str, Any]:
        return self._keep(grant.server, grant.auth_server.issuer, dict(token),
                          grant.resource, grant.scopes, granted=True)

    def _keep(self, server: str, issuer: str, token: dict[str, Any], resource: str,
              scopes: tuple[str, ...], *, granted: bool = False) -> dict[str, Any]:
        access = token.get("access_token")
        if not isinstance(access, str) or not access:
            raise AuthorizationError("the token endpoint answered without an access_token")
        kept: dict[str, Any] = {
            "access_token": access,
            "token_type": token.get("token_type", "Bearer"),
            "resource": resource,
            "issuer": issuer,
            "requested_scopes": list(scopes),
            "obtained_at": time.time(),
            # A new grant, not a refresh: a server refusing it will refuse another.
            "granted": granted,
        }
        for name in ("refresh_token", "scope", "expires_in"):
            if token.get(name) is not None:
                kept[name] = token[name]
        expires_in = token.get("expires_in")
        if isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool):
            kept["expires_at"] = kept["obtained_at"] + float(expires_in)
        self.storage.save(self._token_key(server, issuer), kept)
        return kept

    def _try_refresh(self, server: str, issuer: str,
                     token: dict[str, Any]) -> dict[str, Any] | None:
        """A new token from the refresh token (RFC 6749 §6), or None when refused."""
        auth_server = self._auth_servers.get(issuer)
        try:
            if auth_server is None:
                with requests.Session() as session:
                    auth_server = discover_auth_server(session, issuer, self.http_timeout)
                self._auth_servers[issuer] = auth_server
            fresh = dict(self._refresh(auth_server, token))
        except AuthorizationError as exc:
            log.info("refreshing the token for %s failed: %s", server, exc)
            return None
        except oauth_errors() as exc:
            log.info("refreshing the token for %s failed: %s", server, exc)
            return None
        if token.get("refresh_token"):
            fresh.setdefault("refresh_token", token["refresh_token"])
        return self._keep(server, issuer, fresh, str(token.get("resource", server)),
                          tuple(token.get("requested_scopes") or ()))

    # --- for subclasses ----------------------------------------------------------------------

    def _first_scopes(self, challenge: Challenge, protected: ProtectedResource | None,
                      auth_server: AuthServer) -> tuple[str, ...]:
        """The scopes of a first authorization (V1125-23): the caller's, else the
        challenge's, else all the resource metadata lists, else none."""
        if self.scopes is not None:
            return _union(self.scopes, challenge.scope or ())
        if challenge.scope:
            return challenge.scope
        if protected is not None and protected.scopes_supported:
            return protected.scopes_supported
        return ()

    def _obtain(self, grant: Grant) -> dict[str, Any]:
        raise NotImplementedError

    def _refresh(self, auth_server: AuthServer, token: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError


def _union(*groups: Sequence[str]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for group in groups:
        for scope in group:
            seen.setdefault(scope, None)
    return tuple(seen)


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc


def _expiring(token: dict[str, Any]) -> bool:
    expires_at = token.get("expires_at")
    if not isinstance(expires_at, (int, float)):
        return False
    lifetime = float(token.get("expires_in") or 0)
    leeway = min(_REFRESH_LEEWAY, lifetime * _REFRESH_FRACTION) if lifetime > 0 else 0.0
    return time.time() >= expires_at - leeway


def _expired(token: dict[str, Any]) -> bool:
    expires_at = token.get("expires_at")
    return isinstance(expires_at, (int, float)) and time.time() >= expires_at


def _sent_token(request: requests.PreparedRequest) -> str | None:
    header = request.headers.get("Authorization", "")
    return header[7:] if header.lower().startswith("bearer ") else None


def _resend(response: requests.Response, access_token: str,
            send_options: dict[str, Any]) -> requests.Response | None:
    """The request of ``response`` sent again with ``access_token``; None when its body
    cannot be sent twice (a stream or generator)."""
    request = response.request
    body: object = request.body
    if not isinstance(body, (bytes, str, type(None))):
        log.warning("cannot send a streamed body again after obtaining a token")
        return None
    # The refused answer is read and let go, so its connection can carry the retry.
    with contextlib.suppress(requests.RequestException):
        _ = response.content
    response.close()
    again = request.copy()
    again.headers["Authorization"] = f"Bearer {access_token}"
    jar = getattr(again, "_cookies", None)
    if jar is not None and response.raw is not None:
        extract_cookies_to_jar(jar, request, response.raw)  # type: ignore[no-untyped-call]
        again.prepare_cookies(jar)
    answer: requests.Response = response.connection.send(again, **send_options)
    answer.history.append(response)
    answer.request = again
    return answer
