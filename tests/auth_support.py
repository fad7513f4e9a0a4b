"""Helpers for the authorization tests: a test issuer that signs real JWTs with RSA keys
and serves its JWKS and an RFC 7662 introspection endpoint over HTTP on 127.0.0.1; a
protected server whose tools note each call and its ``ctx.auth``; a client of it.

The issuer's HTTP server is ``wsgiref`` on a thread of its own, started by ``open`` and
shut down and joined by ``close``: the verifiers under test fetch keys and ask about
tokens over a real socket, as they would from a real identity provider.
"""

from __future__ import annotations

import base64
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qs
from wsgiref import simple_server

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from werkzeug.test import Client as WerkzeugClient
from werkzeug.test import TestResponse

from mcp_sync import Context, Server
from mcp_sync.auth import AccessToken
from tests.http_server_helpers import HEADERS, INITIALIZE, INITIALIZED, call, messages_of

__all__ = ["RESOURCE", "Calls", "Peer", "TestIssuer", "challenge", "make_server", "rsa_key"]

#: The canonical URI of the protected MCP endpoint in these tests.
RESOURCE = "https://mcp.example.com/mcp"

_KEYS: list[rsa.RSAPrivateKey] = []


def rsa_key(index: int = 0) -> rsa.RSAPrivateKey:
    """A 2048-bit RSA key, made once per test run for each index (making one is slow)."""
    while len(_KEYS) <= index:
        _KEYS.append(rsa.generate_private_key(public_exponent=65537, key_size=2048))
    return _KEYS[index]


class _QuietHandler(simple_server.WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return None


class TestIssuer:
    """An authorization server's token side: keys, a JWKS endpoint, introspection."""

    __test__ = False  # not a test class, for pytest

    def __init__(self) -> None:
        self.keys: dict[str, rsa.RSAPrivateKey] = {"key-1": rsa_key(0)}
        self.signing_kid = "key-1"
        self.jwks_fetches = 0
        self.introspections = 0
        #: What introspection answers for each token (missing: inactive).
        self.introspected: dict[str, dict[str, Any]] = {}
        self.introspection_client = ("resource-server", "rs-secret")
        self.introspection_status = 200
        #: The clients of the token endpoint (client credentials), id -> secret.
        self.clients = {"machine": "machine-secret"}
        self.token_requests: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._server: simple_server.WSGIServer | None = None
        self._thread: threading.Thread | None = None
        self.issuer = ""

    # --- serving ----------------------------------------------------------------------------

    def open(self) -> TestIssuer:
        self._server = simple_server.make_server("127.0.0.1", 0, self._app,
                                                handler_class=_QuietHandler)
        self.issuer = f"http://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05},
                                        name="test-issuer", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            assert self._thread is not None
            self._thread.join(10)
            self._server.server_close()
            self._server = None

    def __enter__(self) -> TestIssuer:
        return self.open()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def jwks_uri(self) -> str:
        return self.issuer + "/jwks"

    @property
    def introspection_endpoint(self) -> str:
        return self.issuer + "/introspect"

    def _app(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        path = environ.get("PATH_INFO", "")
        if path == "/jwks":
            with self._lock:
                self.jwks_fetches += 1
            return _json(start_response, 200, self.jwks())
        if path == "/introspect" and environ["REQUEST_METHOD"] == "POST":
            return self._introspect(environ, start_response)
        if path == "/.well-known/oauth-authorization-server":
            return _json(start_response, 200, self.metadata())
        if path == "/token" and environ["REQUEST_METHOD"] == "POST":
            return self._token(environ, start_response)
        return _json(start_response, 404, {"error": "not_found"})

    def _introspect(self, environ: dict[str, Any],
                    start_response: Callable[..., Any]) -> list[bytes]:
        with self._lock:
            self.introspections += 1
        if self.introspection_status != 200:
            return _json(start_response, self.introspection_status, {"error": "down"})
        user, secret = self.introspection_client
        expected = "Basic " + base64.b64encode(f"{user}:{secret}".encode()).decode()
        if environ.get("HTTP_AUTHORIZATION") != expected:
            return _json(start_response, 401, {"error": "invalid_client"})
        length = int(environ.get("CONTENT_LENGTH") or 0)
        form = parse_qs(environ["wsgi.input"].read(length).decode())
        token = form.get("token", [""])[0]
        answer = self.introspected.get(token)
        return _json(start_response, 200, {"active": True, **answer} if answer is not None
                     else {"active": False})

    def metadata(self) -> dict[str, Any]:
        """RFC 8414 metadata: a token endpoint for client credentials, the key set (the
        authorization endpoint is named, as clients require, but not served)."""
        return {"issuer": self.issuer, "token_endpoint": self.issuer + "/token",
                "authorization_endpoint": self.issuer + "/authorize",
                "jwks_uri": self.jwks_uri, "grant_types_supported": ["client_credentials"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic"],
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
                "introspection_endpoint": self.introspection_endpoint}

    def _token(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        """Client credentials (RFC 6749 4.4) for the registered clients: a JWT whose
        audience is the ``resource`` asked for (RFC 8707)."""
        length = int(environ.get("CONTENT_LENGTH") or 0)
        form = {key: values[0] for key, values in
                parse_qs(environ["wsgi.input"].read(length).decode()).items()}
        with self._lock:
            self.token_requests.append(form)
        client = _basic_user(environ.get("HTTP_AUTHORIZATION", ""), self.clients)
        if client is None:
            return _json(start_response, 401, {"error": "invalid_client"})
        if form.get("grant_type") != "client_credentials":
            return _json(start_response, 400, {"error": "unsupported_grant_type"})
        scopes = form.get("scope", "mcp").split()
        claims: dict[str, Any] = {"client_id": client}
        token = self.mint(client, scopes=scopes, audience=form.get("resource", []), **claims)
        return _json(start_response, 200, {"access_token": token, "token_type": "Bearer",
                                           "expires_in": 600, "scope": " ".join(scopes)})

    # --- keys and tokens --------------------------------------------------------------------

    def jwks(self) -> dict[str, Any]:
        keys = []
        for kid, key in self.keys.items():
            jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
            keys.append({**jwk, "kid": kid, "use": "sig", "alg": "RS256"})
        return {"keys": keys}

    def rotate(self, kid: str, index: int) -> None:
        """Publish a new key and sign with it from now on (the old one stays listed)."""
        self.keys[kid] = rsa_key(index)
        self.signing_kid = kid

    def claims(self, subject: str = "alice", *, scopes: Iterable[str] = ("mcp",),
               audience: str | list[str] = RESOURCE, lifetime: float = 600,
               **extra: Any) -> dict[str, Any]:
        now = int(time.time())
        return {"iss": self.issuer, "sub": subject, "aud": audience, "iat": now,
                "exp": now + int(lifetime), "scope": " ".join(scopes),
                "client_id": "test-client", "jti": uuid.uuid4().hex, **extra}

    def mint(self, subject: str = "alice", *, key: rsa.RSAPrivateKey | None = None,
             kid: str | None = None, **options: Any) -> str:
        """A signed access token (RS256) for ``subject``; ``options`` as :meth:`claims`."""
        kid = kid or self.signing_kid
        return jwt.encode(self.claims(subject, **options), key or self.keys[kid],
                          algorithm="RS256", headers={"kid": kid, "typ": "at+jwt"})

    def mint_unsigned(self, subject: str = "alice") -> str:
        """A token with ``alg: none``: no signature at all."""
        header = _b64({"alg": "none", "typ": "JWT", "kid": self.signing_kid})
        return f"{header}.{_b64(self.claims(subject))}."

    def mint_hmac_with_public_key(self, subject: str = "alice") -> str:
        """HS256 keyed with the issuer's public key: the algorithm-confusion attack."""
        public = self.keys[self.signing_kid].public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        header = _b64({"alg": "HS256", "typ": "JWT", "kid": self.signing_kid})
        payload = _b64(self.claims(subject))
        import hashlib
        import hmac

        mac = hmac.new(public, f"{header}.{payload}".encode(), hashlib.sha256).digest()
        return f"{header}.{payload}.{base64.urlsafe_b64encode(mac).decode().rstrip('=')}"


def _basic_user(header: str, clients: dict[str, str]) -> str | None:
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        user, _, secret = base64.b64decode(encoded).decode().partition(":")
    except ValueError:
        return None
    from urllib.parse import unquote

    user, secret = unquote(user), unquote(secret)
    return user if clients.get(user) == secret else None


def _b64(value: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


def _json(start_response: Callable[..., Any], status: int, body: Any) -> list[bytes]:
    data = json.dumps(body).encode()
    reason = {200: "OK", 401: "Unauthorized", 404: "Not Found"}.get(status, "Error")
    start_response(f"{status} {reason}", [("Content-Type", "application/json"),
                                          ("Content-Length", str(len(data)))])
    return [data]


# --- a protected server and its clients ---------------------------------------------------


class Calls:
    """What the tools saw: how many times each ran, and ``ctx.auth`` of each run."""

    def __init__(self) -> None:
        self.count: dict[str, int] = {}
        self.auth: list[AccessToken | None] = []
        self.lock = threading.Lock()

    def note(self, name: str, ctx: Context) -> None:
        with self.lock:
            self.count[name] = self.count.get(name, 0) + 1
            self.auth.append(ctx.auth)

    @property
    def total(self) -> int:
        return sum(self.count.values())


def make_server(calls: Calls) -> Server:
    server = Server("protected", version="1.0.0")

    @server.tool()
    def whoami(ctx: Context) -> str:
        """Who is asking."""
        calls.note("whoami", ctx)
        auth = ctx.auth
        return "nobody" if auth is None else f"{auth.subject} {' '.join(sorted(auth.scopes))}"

    @server.tool(scopes=["files:write"])
    def write_file(path: str, ctx: Context) -> str:
        """Needs files:write."""
        calls.note("write_file", ctx)
        return f"wrote {path}"

    return server


class Peer:
    """A client of the protected application, with a token of its own."""

    def __init__(self, app: Any, token: str | None) -> None:
        self.client = WerkzeugClient(app)
        self.token = token
        self.session_id: str | None = None

    def headers(self, token: str | None = None, **extra: str) -> dict[str, str]:
        headers = dict(HEADERS)
        token = token or self.token
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        headers.update(extra)
        return headers

    def post(self, body: Any, *, token: str | None = None, **extra: str) -> TestResponse:
        return self.client.post("/mcp", data=json.dumps(body), buffered=True,
                                headers=self.headers(token, **extra))

    def initialize(self) -> None:
        response = self.post(INITIALIZE)
        assert response.status_code == 200, response.get_data()
        self.session_id = response.headers["Mcp-Session-Id"]
        assert self.post(INITIALIZED).status_code == 202

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None,
                  token: str | None = None) -> TestResponse:
        return self.post(call(7, "tools/call", {"name": name, "arguments": arguments or {}}),
                         token=token)

    def text(self, response: TestResponse) -> str:
        assert response.status_code == 200, (response.status_code, response.get_data())
        (answer,) = [m for m in messages_of(response) if "id" in m]
        return str(answer["result"]["content"][0]["text"])


def challenge(response: TestResponse) -> dict[str, str]:
    """The auth-params of a ``WWW-Authenticate: Bearer`` challenge."""
    header = response.headers["WWW-Authenticate"]
    scheme, _, rest = header.partition(" ")
    assert scheme == "Bearer"
    params = {}
    for part in _split_params(rest):
        name, _, value = part.partition("=")
        params[name.strip()] = value.strip().strip('"')
    return params


def _split_params(text: str) -> list[str]:
    parts, current, quoted = [], "", False
    for char in text:
        if char == '"':
            quoted = not quoted
        if char == "," and not quoted:
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current] if current.strip() else parts
