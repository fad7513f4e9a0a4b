"""A token verifier for JWT access tokens signed with keys from a JWKS (PyJWT).

PyJWT checks the signature, ``exp``, ``nbf`` and ``iat`` (with a leeway), ``iss`` and
``aud``; its :class:`jwt.PyJWKClient` fetches the issuer's key set, caches it, and fetches
it again when a token names a key it does not hold (the issuer rotated its keys). Only
public-key algorithms are accepted: ``none`` never, and no ``HS*`` either, whose "key"
would be the public key itself (the algorithm-confusion attack).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ._auth import AccessToken, InvalidToken

__all__ = ["DEFAULT_ALGORITHMS", "JWTVerifier", "scopes_of", "token_from_claims"]

log = logging.getLogger("mcp_sync.http.auth")

#: Signature algorithms accepted by default: every public-key one RFC 7518 and RFC 8037
#: name (PyJWT needs its ``crypto`` extra for them).
DEFAULT_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512",
                      "ES256", "ES384", "ES512", "EdDSA")
_REFUSED = ("none", "HS256", "HS384", "HS512")


def _import_jwt() -> Any:
    try:
        import jwt
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError('JWTVerifier needs PyJWT: pip install "mcp_sync[oauth]"') from exc
    return jwt


def scopes_of(claims: Mapping[str, Any], names: Iterable[str] = ("scope", "scp")) -> set[str]:
    """The scopes in a token's claims: ``scope`` (RFC 9068, a space-separated string)
    or ``scp`` (Entra ID and Okta: a string or a list)."""
    found: set[str] = set()
    for name in names:
        value = claims.get(name)
        if isinstance(value, str):
            found.update(value.split())
        elif isinstance(value, list):
            found.update(str(item) for item in value)
    return found


def token_from_claims(token: str, claims: Mapping[str, Any],
                      scope_claims: Iterable[str] = ("scope", "scp")) -> AccessToken:
    """An :class:`AccessToken` from JWT claims or an RFC 7662 introspection answer."""
    audience = claims.get("aud")
    audiences = ((audience,) if isinstance(audience, str)
                 else tuple(str(a) for a in audience) if isinstance(audience, list) else ())
    client_id = next((str(claims[name]) for name in ("client_id", "azp", "cid", "appid")
                      if isinstance(claims.get(name), str)), None)
    expires = claims.get("exp")
    return AccessToken(
        token=token, subject=str(claims["sub"]) if claims.get("sub") is not None else None,
        client_id=client_id, scopes=frozenset(scopes_of(claims, scope_claims)),
        expires_at=int(expires) if isinstance(expires, (int, float)) else None,
        audience=audiences, issuer=str(claims["iss"]) if claims.get("iss") else None,
        claims=dict(claims))


class JWTVerifier:
    """Verifies JWT access tokens against the issuer's published keys.

    Args:
        jwks_uri: the issuer's JSON Web Key Set URL (``jwks_uri`` in its metadata).
        issuer: the ``iss`` every token must carry (one, or several accepted).
        audience: the ``aud`` a token must carry (one of); None leaves the audience to
            the :class:`~mcp_sync.auth.ResourceServer` (which checks its ``resource``).
        algorithms: the signature algorithms accepted; public-key ones only.
        leeway: seconds of clock difference tolerated on ``exp``, ``nbf`` and ``iat``.
        scope_claims: the claims the scopes are read from, in order.
        required_claims: claims every token must have (``exp`` by default).
        cache_lifespan: seconds the key set is kept before it is fetched again (a token
            naming an unknown key fetches it at once, for rotated keys).
        key_refresh_cooldown: the least time between two such fetches, so that tokens
            naming made-up keys cannot make the verifier hammer the issuer (where the
            installed PyJWT has such a cooldown; older ones fetch on every unknown key).
        timeout: seconds a fetch of the key set may take.
        headers: extra HTTP headers for that fetch.

    Raises:
        ValueError: ``algorithms`` is empty or names ``none`` or a ``HS*`` algorithm.
        ImportError: PyJWT is not installed.
    """

    def __init__(self, jwks_uri: str, *, issuer: str | Sequence[str] | None,
                 audience: str | Sequence[str] | None = None,
                 algorithms: Sequence[str] = DEFAULT_ALGORITHMS, leeway: float = 30.0,
                 scope_claims: Sequence[str] = ("scope", "scp"),
                 required_claims: Sequence[str] = ("exp",), cache_lifespan: float = 300.0,
                 key_refresh_cooldown: float = 30.0, timeout: float = 10.0,
                 headers: Mapping[str, str] | None = None) -> None:
        refused = [a for a in algorithms if a in _REFUSED or a.lower() == "none"]
        if refused or not algorithms:
            raise ValueError("JWTVerifier accepts public-key algorithms only, not "
                             f"{', '.join(refused) or 'an empty list'}")
        jwt = _import_jwt()
        self._jwt = jwt
        self.jwks_uri = jwks_uri
        self.issuer = issuer if issuer is None or isinstance(issuer, str) else list(issuer)
        self.audience = (audience if audience is None or isinstance(audience, str)
                         else list(audience))
        self.algorithms = list(algorithms)
        self.leeway = leeway
        self.scope_claims = tuple(scope_claims)
        self.required_claims = list(required_claims)
        options: dict[str, Any] = {}
        if "cooldown_duration" in inspect.signature(jwt.PyJWKClient).parameters:
            options["cooldown_duration"] = key_refresh_cooldown
        self._keys = jwt.PyJWKClient(jwks_uri, cache_keys=True, cache_jwk_set=True,
                                     lifespan=cache_lifespan, timeout=timeout,
                                     headers=dict(headers or {}), **options)

    def __repr__(self) -> str:
        return f"<JWTVerifier {self.jwks_uri} issuer={self.issuer!r}>"

    def verify(self, token: str) -> AccessToken:
        """The token's meaning.

        Raises:
            InvalidToken: the token is malformed, badly signed, expired, not yet valid,
                from another issuer or for another audience, or names an algorithm
                that is not accepted.
            jwt.PyJWKClientConnectionError: the key set cannot be fetched (503).
        """
        jwt = self._jwt
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise InvalidToken(f"the token is not a JWT: {exc}") from exc
        if header.get("alg") not in self.algorithms:
            raise InvalidToken(f"the token's algorithm {header.get('alg')!r} is not accepted")
        key = self._signing_key(header.get("kid"))
        options: dict[str, Any] = {"require": [*self.required_claims,
                                               *(["iss"] if self.issuer else [])],
                                   "verify_aud": self.audience is not None}
        try:
            claims = jwt.decode(token, key, algorithms=self.algorithms, issuer=self.issuer,
                                audience=self.audience, leeway=self.leeway, options=options)
        except jwt.PyJWTError as exc:
            raise InvalidToken(_describe(exc)) from exc
        return token_from_claims(token, claims, self.scope_claims)

    def _signing_key(self, kid: object) -> Any:
        jwt = self._jwt
        try:
            if isinstance(kid, str):
                return self._keys.get_signing_key(kid).key
            keys = self._keys.get_signing_keys()
        except jwt.PyJWKClientConnectionError:
            raise
        except jwt.PyJWKClientError as exc:
            # A key set the issuer serves broken is the issuer's fault (503); only a key
            # it does not hold, even after fetching the set again, is the token's (401).
            if "Unable to find a signing key" not in str(exc):
                raise
            raise InvalidToken(f"the token's signing key is not known: {exc}") from exc
        if len(keys) != 1:
            raise InvalidToken("the token names no key (kid) and the issuer has several")
        return keys[0].key


def _describe(exc: Exception) -> str:
    name = type(exc).__name__
    reasons = {"ExpiredSignatureError": "the token has expired",
               "ImmatureSignatureError": "the token is not valid yet",
               "InvalidAudienceError": "the token was not issued for this resource",
               "InvalidIssuerError": "the token was issued by an issuer not trusted here",
               "InvalidSignatureError": "the token's signature does not verify",
               "MissingRequiredClaimError": f"the token lacks a claim: {exc}"}
    return reasons.get(name, f"the token is not valid: {exc}")
