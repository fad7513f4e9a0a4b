"""A token verifier asking the authorization server about each token (RFC 7662).

For opaque tokens, or to learn at once of a token the authorization server revoked.
Each answer is kept briefly (``cache_ttl``, never past the token's expiry) in a bounded
cache, so that a client's burst of requests costs one introspection.
"""

from __future__ import annotations

import collections
import hashlib
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import requests

from ._auth import AccessToken, InvalidToken
from ._auth_jwt import token_from_claims

__all__ = ["IntrospectionError", "IntrospectionVerifier"]


class IntrospectionError(Exception):
    """The introspection endpoint could not be asked, or answered nonsense (503)."""


class IntrospectionVerifier:
    """Verifies tokens with the authorization server's introspection endpoint.

    Args:
        endpoint: the ``introspection_endpoint`` of the authorization server.
        client_id: this resource server's client id at the authorization server.
        client_secret: its secret.
        client_auth: ``"client_secret_basic"`` (HTTP Basic, the default) or
            ``"client_secret_post"`` (in the form).
        audience: the ``aud`` an active token must carry (one of); None leaves the
            audience to the :class:`~mcp_sync.auth.ResourceServer`.
        issuer: the ``iss`` an active token must carry, if the answer names one.
        cache_ttl: seconds an answer is reused; 0 asks about every request.
        cache_size: how many answers are kept at most.
        timeout: seconds an introspection request may take.
        session_factory: makes the ``requests.Session`` of each thread that asks (to
            add a CA bundle, a proxy, retries).
        clock: the time source for expiry and the cache.
    """

    def __init__(self, endpoint: str, *, client_id: str | None = None,
                 client_secret: str | None = None, client_auth: str = "client_secret_basic",
                 audience: str | Sequence[str] | None = None, issuer: str | None = None,
                 cache_ttl: float = 30.0, cache_size: int = 1024, timeout: float = 10.0,
                 session_factory: Callable[[], requests.Session] = requests.Session,
                 clock: Callable[[], float] = time.time) -> None:
        if client_auth not in ("client_secret_basic", "client_secret_post"):
            raise ValueError(f"unknown client_auth {client_auth!r}")
        self.endpoint = endpoint
        self.client_id = client_id
        self._client_secret = client_secret
        self.client_auth = client_auth
        self.audience = ((audience,) if isinstance(audience, str)
                         else None if audience is None else tuple(audience))
        self.issuer = issuer
        self.cache_ttl = cache_ttl
        self.cache_size = cache_size
        self.timeout = timeout
        self._session_factory = session_factory
        self._clock = clock
        self._local = threading.local()
        self._sessions: list[requests.Session] = []
        self._lock = threading.Lock()
        self._cache: collections.OrderedDict[str, tuple[float, AccessToken | None]] = (
            collections.OrderedDict())

    def __repr__(self) -> str:
        return f"<IntrospectionVerifier {self.endpoint}>"

    def verify(self, token: str) -> AccessToken | None:
        """The token's meaning, or None when the authorization server says it is not
        active.

        Raises:
            InvalidToken: it is active but for another audience or from another issuer.
            IntrospectionError: the endpoint cannot be asked now (503 to the client).
        """
        key = hashlib.sha256(token.encode()).hexdigest()
        now = self._clock()
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None and cached[0] > now:
                self._cache.move_to_end(key)
                return self._check(cached[1])
        answer = self._introspect(token)
        result = token_from_claims(token, answer) if answer.get("active") is True else None
        if self.cache_ttl > 0:
            until = now + self.cache_ttl
            if result is not None and result.expires_at is not None:
                until = min(until, result.expires_at)
            with self._lock:
                self._cache[key] = (until, result)
                self._cache.move_to_end(key)
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return self._check(result)

    def close(self) -> None:
        """Close the HTTP sessions opened to ask the endpoint; it may be used again."""
        with self._lock:
            sessions, self._sessions = self._sessions, []
            self._local = threading.local()
        for session in sessions:
            session.close()

    def _check(self, token: AccessToken | None) -> AccessToken | None:
        if token is None:
            return None
        if token.expires_at is not None and token.expires_at <= self._clock():
            raise InvalidToken("the token has expired")
        if self.issuer is not None and token.issuer not in (None, self.issuer):
            raise InvalidToken("the token was issued by an issuer not trusted here")
        if self.audience is not None and not set(token.audience) & set(self.audience):
            raise InvalidToken("the token was not issued for this resource")
        return token

    def _introspect(self, token: str) -> dict[str, Any]:
        session: requests.Session | None = getattr(self._local, "session", None)
        if session is None:
            # One session per thread: requests' sessions are not meant to be shared.
            session = self._local.session = self._session_factory()
            with self._lock:
                self._sessions.append(session)
        form = {"token": token, "token_type_hint": "access_token"}
        auth = None
        if self.client_id is not None:
            if self.client_auth == "client_secret_basic":
                auth = (self.client_id, self._client_secret or "")
            else:
                form["client_id"] = self.client_id
                if self._client_secret is not None:
                    form["client_secret"] = self._client_secret
        try:
            response = session.post(self.endpoint, data=form, auth=auth, timeout=self.timeout,
                                    headers={"Accept": "application/json"})
        except requests.RequestException as exc:
            raise IntrospectionError(f"introspection at {self.endpoint} failed: {exc}") from exc
        if response.status_code != 200:
            raise IntrospectionError(f"introspection at {self.endpoint} answered "
                                     f"{response.status_code}")
        try:
            answer = response.json()
        except ValueError as exc:
            raise IntrospectionError("the introspection answer is not JSON") from exc
        if not isinstance(answer, dict):
            raise IntrospectionError("the introspection answer is not a JSON object")
        return answer
