"""The OAuth 2.1 client of an MCP server: ``Client.http(url, auth=OAuth(...))``.

:class:`OAuth` obtains tokens with the authorization code grant and PKCE, for a person;
:class:`ClientCredentials` with the client credentials grant, for a program acting for
itself; :class:`BearerToken` sends a token obtained elsewhere. All three are
``requests.auth.AuthBase`` objects. The OAuth mechanics (the authorization URL and its
PKCE challenge, client authentication at the token endpoint, the token and refresh
requests) are Authlib's; what is MCP's is ours: discovery (:mod:`._oauth_discovery`),
registration order, scope selection, the RFC 8707 ``resource`` on every request, the RFC
9207 ``iss`` checks, and when to ask again (:mod:`._oauth_base`).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import parse_qs, urlsplit

import requests
from requests.auth import AuthBase

from ...errors import AuthorizationError
from ._oauth_base import Grant, TokenAuth, load_authlib, oauth_errors
from ._oauth_discovery import (
    AuthServer,
    Challenge,
    ProtectedResource,
    canonical_resource,
    is_loopback,
)
from ._oauth_redirect import LoopbackRedirect
from ._oauth_store import TokenStore

__all__ = ["BearerToken", "ClientCredentials", "OAuth"]

log = logging.getLogger("mcp_sync.auth")

_AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none")


class BearerToken(AuthBase):
    """Sends a token obtained elsewhere: ``Authorization: Bearer <token>`` (AUTH-11).

    Args:
        token: the access token.
    """

    def __init__(self, token: str) -> None:
        if not token or any(char in token for char in "\r\n"):
            raise ValueError("a bearer token is a non-empty string without line breaks")
        self.token = token

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        request.headers["Authorization"] = f"Bearer {self.token}"
        return request

    def __repr__(self) -> str:
        return "BearerToken(...)"


def _auth_method(auth_server: AuthServer, has_secret: bool) -> str:
    """How to authenticate at the token endpoint, from what the server lists (RFC 8414
    §2: ``client_secret_basic`` when it lists nothing)."""
    listed = auth_server.metadata.get("token_endpoint_auth_methods_supported")
    supported = [m for m in listed if isinstance(m, str)] if isinstance(listed, list) \
        else ["client_secret_basic"]
    if not has_secret:
        return "none"
    for method in ("client_secret_basic", "client_secret_post"):
        if method in supported:
            return method
    return "client_secret_basic"


def _session(client: dict[str, Any], timeout: float, **options: Any) -> Any:
    session_class = load_authlib()
    method = client.get("token_endpoint_auth_method")
    return session_class(
        client_id=client["client_id"], client_secret=client.get("client_secret"),
        token_endpoint_auth_method=method if method in _AUTH_METHODS else None,
        default_timeout=timeout, **options)


def query_of(url: str) -> dict[str, str]:
    """The query parameters of ``url``, each once."""
    return {name: values[0] for name, values in
            parse_qs(urlsplit(url).query, keep_blank_values=True).items()}


def _check_pkce(auth_server: AuthServer) -> str:
    """The authorization endpoint, if the server can be asked for a code with PKCE S256."""
    methods = auth_server.metadata.get("code_challenge_methods_supported")
    if isinstance(methods, list) and "S256" not in methods:
        raise AuthorizationError(  # V1125-28
            f"the authorization server {auth_server.issuer} does not support PKCE with "
            f"S256 (it lists {methods}): not authorizing there")
    if methods is None:
        log.warning("%s does not say it supports PKCE; using S256 anyway", auth_server.issuer)
    return auth_server.authorization_endpoint


def _client_id_in_body(client: dict[str, Any]) -> dict[str, str]:
    """``client_id`` for the body of a request authenticated with HTTP Basic: some servers
    look for it there whatever the method (RFC 6749 §4.1.3 allows it); the other methods
    put it there already."""
    if client.get("token_endpoint_auth_method", "client_secret_basic") == "client_secret_basic":
        return {"client_id": client["client_id"]}
    return {}


def _token_request_failed(what: str, auth_server: AuthServer, exc: Exception) -> \
        AuthorizationError:
    error = AuthorizationError(f"{what} at {auth_server.issuer} failed: {exc}")
    error.__cause__ = exc
    return error


class OAuth(TokenAuth):
    """Authorizes a client with the MCP server's authorization server, for a user.

    On the first 401 it discovers the authorization server, registers (pre-registered
    credentials, else a client ID metadata document, else dynamic registration), sends
    the user to authorize (authorization code with PKCE S256), and keeps the token, which
    it refreshes before it expires, or when the server refuses it, without the caller
    noticing. A 403 ``insufficient_scope`` asks the user again for the larger scope set.

    Args:
        client_name: the name shown to the user on the consent page (registration).
        scopes: the scopes to ask for; by default those the server's challenge names,
            else all it lists in its resource metadata, else none (the server's default).
        client_id: a client registered beforehand with the authorization server.
        client_secret: its secret, for a confidential client.
        client_metadata_url: the https URL of this client's metadata document, used as
            its ``client_id`` where the authorization server supports that (V1125-26).
        redirect_uri: where the authorization server sends the browser back; required
            with ``authorize`` and for :meth:`start_authorization`. Without
            ``authorize``, an ``http://127.0.0.1`` (or ``localhost``) URL is where a
            :class:`LoopbackRedirect` listens; any other is a web app's own route, and
            tokens then come only from :meth:`start_authorization`.
        authorize: ``callable(authorization_url) -> callback_url``: sends the user to the
            URL and returns the full URL the browser was redirected to (a web app
            redirects its user and hands the callback over; a desktop app opens its own
            window). By default a :class:`LoopbackRedirect` opens the system browser.
        storage: where tokens and registrations are kept; in memory by default.
        redirect: the :class:`LoopbackRedirect` to use when ``authorize`` is not given.
        application_type: sent at dynamic registration: ``"native"`` for a loopback
            redirect, ``"web"`` otherwise, by default.
        http_timeout: seconds allowed for each request to the authorization server.

    Raises:
        ImportError: Authlib is missing (``pip install "mcp_sync[oauth]"``).
        ValueError: ``authorize`` without ``redirect_uri``, or a ``client_metadata_url``
            that is not an https URL with a path.
    """

    def __init__(
        self,
        client_name: str = "mcp_sync client",
        scopes: Sequence[str] | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        client_metadata_url: str | None = None,
        redirect_uri: str | None = None,
        authorize: Callable[[str], str] | None = None,
        storage: TokenStore | None = None,
        *,
        redirect: LoopbackRedirect | None = None,
        application_type: str | None = None,
        http_timeout: float = 30.0,
    ) -> None:
        super().__init__(scopes=scopes, storage=storage, http_timeout=http_timeout)
        if authorize is not None and redirect_uri is None:
            raise ValueError("authorize= needs the redirect_uri it expects the user back at")
        if client_metadata_url is not None:
            parts = urlsplit(client_metadata_url)
            if parts.scheme != "https" or parts.path in ("", "/"):
                raise ValueError("client_metadata_url must be an https URL with a path")
        if authorize is None and redirect is None:
            if redirect_uri is None:
                redirect = LoopbackRedirect()
            elif urlsplit(redirect_uri).scheme == "http" and is_loopback(redirect_uri):
                parts = urlsplit(redirect_uri)
                redirect = LoopbackRedirect(parts.hostname or "127.0.0.1", parts.port or 80,
                                            path=parts.path or "/")
            # Otherwise a web app's own route: it authorizes with start_authorization.
        self.client_name = client_name
        self.client_id = client_id
        self.client_secret = client_secret
        self.client_metadata_url = client_metadata_url
        self.redirect_uri = redirect_uri
        self.authorize = authorize
        self.redirect = redirect
        self.application_type = application_type
        #: state -> what finish_authorization needs, for authorizations in two steps.
        self._pending: dict[str, tuple[Grant, dict[str, Any], str]] = {}

    def __repr__(self) -> str:
        return f"OAuth(client_name={self.client_name!r}, client_id={self.client_id!r})"

    # --- scopes ------------------------------------------------------------------------------

    def _first_scopes(self, challenge: Challenge, protected: ProtectedResource | None,
                      auth_server: AuthServer) -> tuple[str, ...]:
        scopes = super()._first_scopes(challenge, protected, auth_server)
        # SEP-2207: ask for a refresh token where the server offers one that way; alone,
        # offline_access would replace the server's default scopes, so never alone.
        if scopes and "offline_access" not in scopes and \
                auth_server.supports("scopes_supported", "offline_access") and \
                auth_server.supports("grant_types_supported", "refresh_token") is not False:
            scopes = (*scopes, "offline_access")
        return scopes

    # --- the authorization code grant --------------------------------------------------------

    def _obtain(self, grant: Grant) -> dict[str, Any]:
        auth_server = grant.auth_server
        endpoint = _check_pkce(auth_server)
        if self.authorize is not None:
            assert self.redirect_uri is not None
            client = self._client(auth_server, self.redirect_uri)
            url, state, verifier = self._authorization_url(client, endpoint, grant,
                                                           self.redirect_uri)
            try:
                callback = self.authorize(url)
            except AuthorizationError:
                raise
            except Exception as exc:  # the application's own failure, reported as ours
                raise AuthorizationError(f"the authorization was not completed: {exc}") \
                    from exc
            redirect_uri = self.redirect_uri
        elif self.redirect is None:
            raise AuthorizationError(
                f"{grant.server} needs authorization: send the user to "
                "start_authorization(url) and hand their way back to finish_authorization")
        else:
            with self.redirect.open() as catcher:
                redirect_uri = catcher.redirect_uri
                client = self._client(auth_server, redirect_uri)
                url, state, verifier = self._authorization_url(client, endpoint, grant,
                                                               redirect_uri)
                callback = catcher.wait(url)
        code = self._check_callback(callback, state, auth_server)
        return self._exchange(client, code, verifier, redirect_uri, grant)

    def _exchange(self, client: dict[str, Any], code: str, verifier: str, redirect_uri: str,
                  grant: Grant) -> dict[str, Any]:
        """The token request of the authorization code grant (with the PKCE verifier)."""
        with _session(client, self.http_timeout) as session:
            try:
                token: dict[str, Any] = session.fetch_token(
                    grant.auth_server.token_endpoint, grant_type="authorization_code",
                    code=code, code_verifier=verifier, redirect_uri=redirect_uri,
                    resource=grant.resource, **_client_id_in_body(client))
            except oauth_errors() as exc:
                raise _token_request_failed("the token request", grant.auth_server,
                                            exc) from exc
        return token

    # --- in two steps, for web apps ----------------------------------------------------------

    def start_authorization(self, server_url: str) -> str:
        """Begin authorizing with the server at ``server_url``; the URL to send the user to.

        For a web app, whose user comes back in another request: redirect the user to
        the returned URL, and hand the URL they come back at (the ``redirect_uri``, with
        its query) to :meth:`finish_authorization`. The server's metadata is discovered
        and the client registered, as on a 401.

        Raises:
            ValueError: no ``redirect_uri`` was given to this OAuth object.
            AuthorizationError: discovery or registration failed.
        """
        if self.redirect_uri is None:
            raise ValueError("start_authorization needs the redirect_uri of the app")
        server = canonical_resource(server_url)
        with self._lock:
            grant = self._discover(server, Challenge(), step_up=False)
            endpoint = _check_pkce(grant.auth_server)
            client = self._client(grant.auth_server, self.redirect_uri)
            url, state, verifier = self._authorization_url(client, endpoint, grant,
                                                           self.redirect_uri)
            self._pending[state] = (grant, client, verifier)
        return url

    def finish_authorization(self, callback_url: str) -> None:
        """End an authorization begun with :meth:`start_authorization`: check the
        redirect back (``state``, ``iss``), obtain the token and keep it.

        Raises:
            AuthorizationError: the callback is unknown, forged, or refused, or the token
                request failed.
        """
        state = query_of(callback_url).get("state", "")
        with self._lock:
            pending = self._pending.pop(state, None)
        if pending is None:
            raise AuthorizationError(
                "the redirect back matches no authorization under way (wrong, missing or "
                "already used state)")
        grant, client, verifier = pending
        code = self._check_callback(callback_url, state, grant.auth_server)
        assert self.redirect_uri is not None
        token = self._exchange(client, code, verifier, self.redirect_uri, grant)
        with self._lock:
            self._new_token_from(grant, token)

    def _authorization_url(self, client: dict[str, Any], endpoint: str, grant: Grant,
                           redirect_uri: str) -> tuple[str, str, str]:
        verifier = secrets.token_urlsafe(48)
        with _session(client, self.http_timeout, code_challenge_method="S256") as session:
            options: dict[str, Any] = {"redirect_uri": redirect_uri,
                                       "resource": grant.resource}
            if grant.scopes:
                options["scope"] = " ".join(grant.scopes)
            url, state = session.create_authorization_url(
                endpoint, state=secrets.token_urlsafe(24), code_verifier=verifier, **options)
        return str(url), str(state), verifier

    def _check_callback(self, callback: str, state: str, auth_server: AuthServer) -> str:
        """The code of the redirect back, after the ``state`` and ``iss`` checks."""
        query = query_of(callback)
        if query.get("state") != state:  # V0618-43
            raise AuthorizationError(
                "the redirect back carries a wrong or no state: possibly forged, not used")
        issuer = query.get("iss")
        # RFC 9207: a present iss is compared whatever the metadata says, as a plain string.
        if issuer is not None and issuer != auth_server.issuer:
            raise AuthorizationError(
                f"the redirect back names the issuer {issuer!r}, not {auth_server.issuer!r}: "
                "possibly a mix-up attack, not used")
        if issuer is None and \
                auth_server.metadata.get("authorization_response_iss_parameter_supported") is True:
            raise AuthorizationError(
                f"{auth_server.issuer} promises an iss parameter, but the redirect back has "
                "none: not used")
        if "error" in query:
            detail = query.get("error_description")
            raise AuthorizationError(
                f"the authorization server refused: {query['error']}"
                + (f" ({detail})" if detail else ""))
        code = query.get("code")
        if not code:
            raise AuthorizationError("the redirect back carries no authorization code")
        return code

    def _refresh(self, auth_server: AuthServer, token: dict[str, Any]) -> dict[str, Any]:
        client = self._preregistered(auth_server) or self._metadata_document(auth_server) \
            or self.storage.load(f"client {auth_server.issuer}")
        if client is None:
            raise AuthorizationError(f"no client registered at {auth_server.issuer}")
        with _session(client, self.http_timeout) as session:
            fresh: dict[str, Any] = session.refresh_token(
                auth_server.token_endpoint, refresh_token=token["refresh_token"],
                resource=token.get("resource"), **_client_id_in_body(client))
        return fresh

    # --- registration ------------------------------------------------------------------------

    def _preregistered(self, auth_server: AuthServer) -> dict[str, Any] | None:
        if self.client_id is None:
            return None
        return {"client_id": self.client_id, "client_secret": self.client_secret,
                "token_endpoint_auth_method": _auth_method(auth_server,
                                                           bool(self.client_secret))}

    def _metadata_document(self, auth_server: AuthServer) -> dict[str, Any] | None:
        if self.client_metadata_url is None or \
                auth_server.metadata.get("client_id_metadata_document_supported") is not True:
            return None
        return {"client_id": self.client_metadata_url, "token_endpoint_auth_method": "none"}

    def _client(self, auth_server: AuthServer, redirect_uri: str) -> dict[str, Any]:
        """This client at ``auth_server``, in the V1125-27 order: pre-registered, a
        client ID metadata document, a registration kept from before, a new one."""
        known = self._preregistered(auth_server) or self._metadata_document(auth_server)
        if known is not None:
            return known
        key = f"client {auth_server.issuer}"
        kept = self.storage.load(key)
        if kept is not None and redirect_uri in kept.get("redirect_uris", ()):
            return kept
        registered = self._register(auth_server, redirect_uri)
        self.storage.save(key, registered)
        return registered

    def _register(self, auth_server: AuthServer, redirect_uri: str) -> dict[str, Any]:
        """Dynamic client registration (RFC 7591)."""
        endpoint = auth_server.registration_endpoint
        if endpoint is None:
            raise AuthorizationError(
                f"the authorization server {auth_server.issuer} offers no dynamic "
                "registration: pass the client_id (and client_secret) registered there, or "
                "a client_metadata_url")
        listed = auth_server.metadata.get("token_endpoint_auth_methods_supported")
        method = "none" if not isinstance(listed, list) or "none" in listed \
            else _auth_method(auth_server, True)
        application_type = self.application_type or (
            "native" if is_loopback(redirect_uri) or urlsplit(redirect_uri).scheme
            not in ("http", "https") else "web")
        metadata = {
            "client_name": self.client_name,
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
            "application_type": application_type,  # SEP-837
        }
        try:
            with requests.Session() as session:
                response = session.post(endpoint, json=metadata, timeout=self.http_timeout,
                                        headers={"Accept": "application/json"})
                with response:
                    status = response.status_code
                    body = response.text[:500]
                    answer = response.json() if status in (200, 201) else None
        except (requests.RequestException, ValueError) as exc:
            raise AuthorizationError(f"registering at {endpoint} failed: {exc}") from exc
        if not isinstance(answer, dict) or not isinstance(answer.get("client_id"), str):
            raise AuthorizationError(
                f"{auth_server.issuer} refused the registration (HTTP {status}): {body}")
        secret = answer.get("client_secret")
        used = answer.get("token_endpoint_auth_method")
        if used not in _AUTH_METHODS:
            used = method if method != "none" or not secret else _auth_method(auth_server,
                                                                                True)
        return {"client_id": answer["client_id"], "client_secret": secret,
                "token_endpoint_auth_method": used, "redirect_uris": [redirect_uri]}


class ClientCredentials(TokenAuth):
    """Authorizes a program acting for itself: the client credentials grant (RFC 6749
    §4.4), with credentials registered beforehand at the authorization server.

    The authorization server is discovered as for :class:`OAuth`; tokens are requested
    with the RFC 8707 ``resource`` and refreshed by asking again.

    Args:
        client_id: the client's id at the authorization server.
        client_secret: its secret.
        scopes: the scopes to ask for; by default as :class:`OAuth` chooses them.
        storage: where tokens are kept; in memory by default.
        http_timeout: seconds allowed for each request to the authorization server.
    """

    # V1125-25: a client acting for itself asks once for more, then gives up.
    _max_step_ups = 1
    # A token about to expire is replaced by asking again: no refresh token is needed.
    _renews_itself = True

    def __init__(self, client_id: str, client_secret: str, scopes: Sequence[str] | None = None,
                 storage: TokenStore | None = None, *, http_timeout: float = 30.0) -> None:
        super().__init__(scopes=scopes, storage=storage, http_timeout=http_timeout)
        self.client_id = client_id
        self.client_secret = client_secret

    def __repr__(self) -> str:
        return f"ClientCredentials(client_id={self.client_id!r})"

    def _client(self, auth_server: AuthServer) -> dict[str, Any]:
        return {"client_id": self.client_id, "client_secret": self.client_secret,
                "token_endpoint_auth_method": _auth_method(auth_server, True)}

    def _obtain(self, grant: Grant) -> dict[str, Any]:
        auth_server = grant.auth_server
        options: dict[str, Any] = {"resource": grant.resource}
        if grant.scopes:
            options["scope"] = " ".join(grant.scopes)
        with _session(self._client(auth_server), self.http_timeout) as session:
            try:
                token: dict[str, Any] = session.fetch_token(
                    auth_server.token_endpoint, grant_type="client_credentials", **options)
            except oauth_errors() as exc:
                raise _token_request_failed("the client credentials grant", auth_server,
                                            exc) from exc
        return token

    def _refresh(self, auth_server: AuthServer, token: dict[str, Any]) -> dict[str, Any]:
        # A client acting for itself just asks again (RFC 6749 §4.4.3: no refresh token).
        scopes = tuple(token.get("requested_scopes") or ())
        grant = Grant("", str(token.get("resource", "")), auth_server, scopes, None)
        return self._obtain(grant)
