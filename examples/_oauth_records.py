"""What the authorization server of ``examples/auth_server.py`` keeps and checks: its
clients, codes and refresh tokens (in memory), the key that signs its access tokens, and
the fetching of client ID metadata documents. See ``_authorization_server.py``."""

from __future__ import annotations

import ipaddress
import json
import secrets
import socket
import threading
import time
import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import attrs
import jwt
import requests
from authlib.oauth2 import rfc6749
from authlib.oauth2.rfc6749.errors import OAuth2Error
from cryptography.hazmat.primitives.asymmetric import rsa

__all__ = [
    "ACCESS_TOKEN_LIFETIME",
    "CODE_LIFETIME",
    "AuthorizationCode",
    "ClientMetadataError",
    "InvalidTargetError",
    "RefreshToken",
    "RegisteredClient",
    "SigningKey",
    "Store",
    "fetch_client_metadata",
    "is_allowed_redirect_uri",
]

#: How long an authorization code, a pending consent, an access token and a refresh token
#: live, in seconds.
CODE_LIFETIME = 600
CONSENT_LIFETIME = 600
ACCESS_TOKEN_LIFETIME = 3600
REFRESH_TOKEN_LIFETIME = 30 * 24 * 3600

#: The largest client ID metadata document fetched, in bytes.
MAX_CLIENT_METADATA = 64 * 1024


class InvalidTargetError(OAuth2Error):  # type: ignore[misc]
    """A ``resource`` this server issues no tokens for (RFC 8707 section 2)."""

    error = "invalid_target"


class ClientMetadataError(Exception):
    """A client ID metadata document could not be fetched or is not acceptable."""


# -- what is stored ------------------------------------------------------------------------


@attrs.define
class RegisteredClient(rfc6749.ClientMixin):  # type: ignore[misc]
    """A client known to this server: registered (RFC 7591) or described by its metadata
    document. Redirect URIs match exactly, as OAuth 2.1 asks."""

    client_id: str
    client_secret: str | None
    redirect_uris: tuple[str, ...]
    grant_types: tuple[str, ...]
    response_types: tuple[str, ...]
    token_endpoint_auth_method: str
    scope: str
    metadata: dict[str, Any]

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        # Only a client with one redirect URI may leave it out of a request.
        return self.redirect_uris[0] if len(self.redirect_uris) == 1 else None

    def get_allowed_scope(self, scope: str | None) -> str:
        allowed = self.scope.split()
        if not scope:
            return " ".join(allowed)
        return " ".join(s for s in scope.split() if s in allowed)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return redirect_uri in self.redirect_uris

    def check_client_secret(self, client_secret: str) -> bool:
        return self.client_secret is not None and secrets.compare_digest(
            self.client_secret, client_secret)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        if endpoint == "token":
            return method == self.token_endpoint_auth_method
        return True

    def check_response_type(self, response_type: str) -> bool:
        return response_type in self.response_types

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in self.grant_types


@attrs.define
class AuthorizationCode(rfc6749.AuthorizationCodeMixin):  # type: ignore[misc]
    """An authorization code waiting to be exchanged, with what it was granted for."""

    code: str
    client_id: str
    redirect_uri: str
    scope: str
    subject: str
    resource: str
    code_challenge: str
    code_challenge_method: str
    expires_at: float

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope


@attrs.define
class RefreshToken(rfc6749.TokenMixin):  # type: ignore[misc]
    """A refresh token: one use, then it is replaced by a new one."""

    token: str
    client_id: str
    scope: str
    subject: str
    resource: str
    expires_at: float

    def check_client(self, client: RegisteredClient) -> bool:
        return self.client_id == client.client_id

    def get_scope(self) -> str:
        return self.scope

    def get_expires_in(self) -> int:
        return max(0, int(self.expires_at - time.time()))

    def is_expired(self) -> bool:
        return time.time() >= self.expires_at

    def is_revoked(self) -> bool:
        return False


@attrs.define
class PendingConsent:
    """An authorization request shown on the consent page, waiting for the user's answer."""

    params: list[tuple[str, str]]
    expires_at: float


class Store:
    """Clients, codes, refresh tokens and pending consents, in memory, behind one lock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.clients: dict[str, RegisteredClient] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.refresh_tokens: dict[str, RefreshToken] = {}
        self.consents: dict[str, PendingConsent] = {}

    def add_client(self, client: RegisteredClient) -> None:
        with self._lock:
            self.clients[client.client_id] = client

    def client(self, client_id: str) -> RegisteredClient | None:
        with self._lock:
            return self.clients.get(client_id)

    def add_code(self, code: AuthorizationCode) -> None:
        with self._lock:
            self.codes[code.code] = code

    def take_code(self, code: str, client_id: str) -> AuthorizationCode | None:
        """The code if it is alive and was issued to ``client_id``; a code is used once,
        so it is removed whatever the outcome of the exchange."""
        with self._lock:
            found = self.codes.pop(code, None)
        if found is None or found.client_id != client_id or time.time() >= found.expires_at:
            return None
        return found

    def add_refresh_token(self, token: RefreshToken) -> None:
        with self._lock:
            self.refresh_tokens[token.token] = token

    def take_refresh_token(self, token: str) -> RefreshToken | None:
        """The refresh token if alive; removed at once, so that rotation leaves no window
        in which the old one works twice."""
        with self._lock:
            found = self.refresh_tokens.pop(token, None)
        if found is None or found.is_expired():
            return None
        return found

    def add_consent(self, params: list[tuple[str, str]]) -> str:
        consent_id = secrets.token_urlsafe(24)
        with self._lock:
            now = time.time()
            for stale in [k for k, v in self.consents.items() if v.expires_at <= now]:
                del self.consents[stale]
            self.consents[consent_id] = PendingConsent(params, now + CONSENT_LIFETIME)
        return consent_id

    def take_consent(self, consent_id: str) -> PendingConsent | None:
        with self._lock:
            found = self.consents.pop(consent_id, None)
        return None if found is None or found.expires_at <= time.time() else found


# -- signing access tokens -----------------------------------------------------------------


class SigningKey:
    """An RSA key made at start: signs access tokens, publishes its public half as a JWKS."""

    algorithm = "RS256"

    def __init__(self) -> None:
        self._private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.key_id = uuid.uuid4().hex

    def sign(self, claims: Mapping[str, Any]) -> str:
        # "at+jwt" marks an RFC 9068 access token, so it cannot pass for an ID token.
        return jwt.encode(dict(claims), self._private, algorithm=self.algorithm,
                          headers={"kid": self.key_id, "typ": "at+jwt"})

    def jwks(self) -> dict[str, Any]:
        public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self._private.public_key()))
        public.update(kid=self.key_id, use="sig", alg=self.algorithm)
        return {"keys": [public]}


# -- client ID metadata documents ----------------------------------------------------------


def _is_public_address(host: str) -> bool:
    try:
        infos = socket.getaddrinfo(host, 443, proto=socket.IPPROTO_TCP)
    except OSError:
        return False
    return all(ipaddress.ip_address(info[4][0]).is_global for info in infos)


def fetch_client_metadata(url: str, *, timeout: float = 5.0) -> dict[str, Any]:
    """Fetch a client ID metadata document, guarding against being used to reach what
    the client could not (SSRF): ``https`` only, public addresses only, no redirects,
    a bounded size and time.

    Args:
        url: the client's ``client_id``.
        timeout: seconds for connecting and for each read.

    Returns:
        The document.

    Raises:
        ClientMetadataError: the URL is not acceptable, or fetching it failed, or it is
            not a JSON object.
    """
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname or parts.path in ("", "/"):
        raise ClientMetadataError("a client ID metadata URL is https with a path")
    if not _is_public_address(parts.hostname):
        raise ClientMetadataError(f"{parts.hostname} is not a public address")
    try:
        with requests.get(url, timeout=timeout, allow_redirects=False, stream=True,
                          headers={"Accept": "application/json"}) as response:
            if response.status_code != 200:
                raise ClientMetadataError(f"{url} answered {response.status_code}")
            body = response.raw.read(MAX_CLIENT_METADATA + 1, decode_content=True)
    except requests.RequestException as exc:
        raise ClientMetadataError(f"cannot fetch {url}: {exc}") from exc
    if len(body) > MAX_CLIENT_METADATA:
        raise ClientMetadataError(f"{url} is larger than {MAX_CLIENT_METADATA} bytes")
    try:
        document = json.loads(body)
    except ValueError as exc:
        raise ClientMetadataError(f"{url} is not JSON") from exc
    if not isinstance(document, dict):
        raise ClientMetadataError(f"{url} is not a JSON object")
    return document


def is_allowed_redirect_uri(uri: Any) -> bool:
    """Loopback or https, no fragment (AUTH-17): anything else could send a code to a
    stranger."""
    if not isinstance(uri, str):
        return False
    parts = urlsplit(uri)
    if parts.fragment or not parts.hostname:
        return False
    if parts.scheme == "https":
        return True
    if parts.scheme != "http":
        return False
    if parts.hostname == "localhost":
        return True
    try:
        return ipaddress.ip_address(parts.hostname).is_loopback
    except ValueError:
        return False
