"""``requestState`` of an input-required result (2026-07-28): sealed, bound and dated.

A modern server has no connection to remember a request by: what it needs in the next
round travels to the client inside ``requestState`` and comes back with the request.
The client is not trusted with it. The state is signed with HMAC-SHA256 under a key
every process of the server shares (so any of them can continue the request), bound to
the request it belongs to (method, tool or prompt name or resource URI, a digest of the
arguments, and the server's name), and dated (issued at, expires at). Whatever fails a
check is refused as -32602 with ``data.reason``:

* ``tampered``: malformed, changed, or signed with another key;
* ``foreign``: genuine, but minted for another request (or another server);
* ``expired``: genuine, but too old.

The state is signed, not encrypted: the client can read it (base64url JSON). It holds
the answers the client itself gave and what the function put in ``ctx.state``.

The token is ``v1.<payload>.<mac>``, each part base64url without padding; the MAC
covers the version label and the payload bytes. Time comes from the caller (``now``,
seconds since the epoch): this module never reads a clock.
"""

from __future__ import annotations

import binascii
import hashlib
import hmac
import json
from typing import Any

from ..errors import InvalidParams

__all__ = ["MIN_KEY_BYTES", "RequestBinding", "RequestStateSeal", "request_binding"]

#: The shortest key accepted: HMAC-SHA256's own strength.
MIN_KEY_BYTES = 32

_PREFIX = "v1."
_LABEL = b"mcp_sync requestState v1\x00"


class RequestBinding:
    """What a request state belongs to: a request's method and target, the digest of
    its arguments, and the server (the audience)."""

    __slots__ = ("arguments", "audience", "method", "target")

    def __init__(self, method: str, target: str, arguments: str, audience: str) -> None:
        self.method = method
        self.target = target
        self.arguments = arguments
        self.audience = audience

    def claims(self) -> dict[str, str]:
        return {"m": self.method, "t": self.target, "a": self.arguments,
                "aud": self.audience}


def request_binding(method: str, params: dict[str, Any], audience: str) -> RequestBinding:
    """The binding of a ``tools/call``, ``prompts/get`` or ``resources/read`` request.

    Only the named members count, so ``inputResponses``, ``requestState`` and ``_meta``
    (which change from round to round) never do.
    """
    if method == "resources/read":
        target, arguments = params.get("uri"), None
    else:
        target, arguments = params.get("name"), params.get("arguments")
    canonical = json.dumps(arguments or {}, sort_keys=True, separators=(",", ":"),
                           ensure_ascii=True, default=repr)
    digest = hashlib.sha256(canonical.encode("ascii")).digest()[:16]
    return RequestBinding(method, str(target), _b64(digest), audience)


def _b64(data: bytes) -> str:
    import base64  # here, not at import: only a server asking for input needs it

    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    import base64

    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _b64(raw) != text:  # only the one canonical spelling is ours
        raise ValueError("not canonical base64url")
    return raw


def _refuse(reason: str, message: str) -> InvalidParams:
    return InvalidParams(f"Invalid params: requestState {message}", {"reason": reason})


class RequestStateSeal:
    """Seals and opens request states under one key.

    Args:
        key: the secret, at least 32 bytes (a ``str`` counts its UTF-8 bytes).
        ttl: seconds a sealed state stays valid.

    Raises:
        TypeError: ``key`` is neither bytes nor str.
        ValueError: ``key`` is too short, or ``ttl`` is not positive.
    """

    __slots__ = ("_key", "ttl")

    def __init__(self, key: bytes | str, ttl: float) -> None:
        if isinstance(key, str):
            key = key.encode("utf-8")
        if not isinstance(key, (bytes, bytearray)):
            raise TypeError(f"request_state_key must be bytes or str, not {type(key).__name__}")
        if len(key) < MIN_KEY_BYTES:
            raise ValueError(
                f"request_state_key must be at least {MIN_KEY_BYTES} bytes of secret "
                f"randomness, not {len(key)}; make one with "
                '`python -c "import secrets; print(secrets.token_hex(32))"`')
        if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not ttl > 0:
            raise ValueError(f"request_state_ttl must be a positive number of seconds, "
                             f"not {ttl!r}")
        self._key = bytes(key)
        self.ttl = float(ttl)

    def __repr__(self) -> str:
        return f"RequestStateSeal(ttl={self.ttl!r})"  # never the key

    def _mac(self, payload: bytes) -> bytes:
        return hmac.new(self._key, _LABEL + payload, hashlib.sha256).digest()

    def seal(self, binding: RequestBinding, content: dict[str, Any], now: float) -> str:
        """``content`` (JSON) sealed for ``binding``, valid for ``ttl`` seconds from ``now``.

        Raises:
            TypeError, ValueError: ``content`` is not JSON.
        """
        claims = {**binding.claims(), "iat": now, "exp": now + self.ttl, "c": content}
        payload = json.dumps(claims, separators=(",", ":"), ensure_ascii=True,
                             allow_nan=False).encode("ascii")
        return f"{_PREFIX}{_b64(payload)}.{_b64(self._mac(payload))}"

    def open(self, token: Any, binding: RequestBinding, now: float) -> dict[str, Any]:
        """The content sealed in ``token``, checked against ``binding`` and ``now``.

        Raises:
            InvalidParams: the token is tampered with, foreign or expired (``data.reason``
                says which).
        """
        tampered = _refuse("tampered", "failed its integrity check: it was changed, "
                           "or signed with another key")
        if not isinstance(token, str) or not token.startswith(_PREFIX):
            raise tampered
        payload_text, _, mac_text = token[len(_PREFIX):].partition(".")
        try:
            payload, mac = _unb64(payload_text), _unb64(mac_text)
        except (ValueError, binascii.Error):
            raise tampered from None
        if not hmac.compare_digest(mac, self._mac(payload)):
            raise tampered
        try:
            claims = json.loads(payload)
            issued, expires, content = claims["iat"], claims["exp"], claims["c"]
        except (ValueError, KeyError, TypeError):
            raise tampered from None
        if not isinstance(content, dict):
            raise tampered
        expected = binding.claims()
        if any(claims.get(name) != value for name, value in expected.items()):
            raise _refuse("foreign", f"belongs to another request: not this "
                          f"{binding.method} of {binding.target!r} with these arguments")
        if not (isinstance(expires, (int, float)) and now < expires):
            raise _refuse("expired", "has expired; send the request again without "
                          "inputResponses and requestState to start over")
        if not (isinstance(issued, (int, float)) and issued <= now + 60.0):
            raise tampered  # minted in the future: a clock or a key gone wrong
        return content
