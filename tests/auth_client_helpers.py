"""A protected MCP server and its authorization server, played in one process.

:class:`ProtectedServer` serves, on a free port of 127.0.0.1, a real mcp_sync
:class:`~mcp_sync.Server` at ``/mcp`` behind a bearer-token check, its protected-resource
metadata, and a small authorization server (metadata, dynamic registration, an
authorization endpoint that approves at once, a token endpoint for the authorization
code, refresh token and client credentials grants). It records every request, and its
attributes make it misbehave on purpose: the tests of the OAuth client read what was
asked and how it failed.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import secrets
import threading
import time
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import attrs
import requests
from werkzeug.serving import WSGIRequestHandler, make_server
from werkzeug.wrappers import Request, Response

from mcp_sync import Server


class _QuietHandler(WSGIRequestHandler):
    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass


@attrs.define
class Asked:
    """One request the server received."""

    method: str
    path: str
    query: dict[str, str]
    form: dict[str, str]
    headers: dict[str, str]


def _challenge(url: str, scope: str | None = None, error: str | None = None) -> str:
    parts = [f'resource_metadata="{url}/.well-known/oauth-protected-resource/mcp"']
    if scope:
        parts.append(f'scope="{scope}"')
    if error:
        parts.append(f'error="{error}"')
    return "Bearer " + ", ".join(parts)


def demo_server() -> Server:
    server = Server("protected", version="1.0.0")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool()
    def write(text: str) -> str:
        """Needs the files:write scope."""
        return f"wrote {text}"

    return server


class ProtectedServer:
    """An MCP server behind OAuth, with its authorization server, on one origin."""

    def __init__(self, *, legacy_sse: bool = False) -> None:
        self.asked: list[Asked] = []
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        #: access token -> (scopes, expires_at)
        self.tokens: dict[str, tuple[set[str], float]] = {}
        self.refresh_tokens: dict[str, set[str]] = {}
        self.codes: dict[str, dict[str, str]] = {}
        self.clients: dict[str, dict[str, Any]] = {}
        # Knobs.
        self.lifetime = 3600
        self.scopes_supported = ["mcp", "files:write"]
        self.write_scope: str | None = None  # tools/call of `write` needs it (403 otherwise)
        self.state_override: str | None = None
        self.iss_override: str | None = None
        self.refuse_registration = False
        self.deny = False
        self.metadata_overrides: dict[str, Any] = {}
        self.authorization_servers: list[str] | None = None
        self.machine_clients = {"robot": "robot-secret"}
        self._mcp_server = demo_server()
        # With legacy_sse the 2024-11-05 transport is served too (/sse and /messages), as
        # a 2025-03-26 server would: its 401 names no resource metadata.
        self._mcp = self._mcp_server.wsgi_app(path="/mcp", legacy_sse=legacy_sse)
        self.http = make_server("127.0.0.1", 0, self._app, threaded=True,
                                request_handler=_QuietHandler)
        self.origin = f"http://127.0.0.1:{self.http.server_port}"
        self.url = f"{self.origin}/mcp"
        self._thread = threading.Thread(target=self.http.serve_forever, args=(0.05,),
                                        name="test:protected-server")
        self._thread.start()

    def stop(self) -> None:
        self.http.shutdown()
        self._thread.join(10)
        self.http.server_close()
        close = getattr(self._mcp, "close", None)
        if close is not None:
            close()

    def paths(self, method: str | None = None) -> list[str]:
        with self._lock:
            return [a.path for a in self.asked if method is None or a.method == method]

    def requests_to(self, path: str) -> list[Asked]:
        with self._lock:
            return [a for a in self.asked if a.path == path]

    def wait_for_get(self, timeout: float = 10.0) -> None:
        """Wait until a GET on /mcp arrived (the client's stream for server messages)."""
        with self._arrived:
            assert self._arrived.wait_for(
                lambda: any(a.method == "GET" and a.path == "/mcp" for a in self.asked),
                timeout), "no GET stream was opened"

    def expire_all(self) -> None:
        """Make every access token invalid, as a server restart or revocation would."""
        with self._lock:
            self.tokens.clear()

    # --- the WSGI application -------------------------------------------------------------

    def _app(self, environ: dict[str, Any], start_response: Any) -> Any:
        request = Request(environ)
        if request.path in ("/mcp", "/sse") or request.path.startswith("/messages"):
            # Read here, and handed on whole to the MCP application behind the check.
            raw = request.get_data()
            environ["wsgi.input"] = io.BytesIO(raw)
            environ["CONTENT_LENGTH"] = str(len(raw))
            with self._lock:
                self.asked.append(Asked(request.method, request.path, {}, {},
                                        dict(request.headers)))
                self._arrived.notify_all()
            refusal = self._check_bearer(request)
            if refusal is not None:
                return refusal(environ, start_response)
            return self._mcp(environ, start_response)
        form = {k: v for k, v in request.form.items()} if request.method == "POST" else {}
        with self._lock:
            self.asked.append(Asked(request.method, request.path, dict(request.args.items()),
                                    form, dict(request.headers)))
        handler = {
            "/.well-known/oauth-protected-resource/mcp": self._resource_metadata,
            "/.well-known/oauth-authorization-server": self._server_metadata,
            "/register": self._register,
            "/authorize": self._authorize,
            "/token": self._token,
        }.get(request.path)
        response = handler(request) if handler else Response("not found", status=404)
        return response(environ, start_response)

    def _check_bearer(self, request: Request) -> Response | None:
        header = request.headers.get("Authorization", "")
        token = header[7:] if header.startswith("Bearer ") else None
        with self._lock:
            known = self.tokens.get(token) if token else None
        if known is None or known[1] < time.time():
            challenge = 'Bearer realm="mcp"' if request.path != "/mcp" \
                else _challenge(self.origin, "mcp")
            return Response(json.dumps({"error": "invalid_token"}), status=401, headers={
                "WWW-Authenticate": challenge,
                "Content-Type": "application/json"})
        if self.write_scope and request.method == "POST":
            try:
                body = json.loads(request.get_data() or b"{}")
            except ValueError:
                body = {}
            params = body.get("params") if isinstance(body, dict) else None
            if isinstance(body, dict) and body.get("method") == "tools/call" and \
                    isinstance(params, dict) and params.get("name") == "write" and \
                    self.write_scope not in known[0]:
                return Response(json.dumps({"error": "insufficient_scope"}), status=403,
                                headers={"WWW-Authenticate": _challenge(
                                    self.origin, self.write_scope, "insufficient_scope"),
                                    "Content-Type": "application/json"})
        return None

    def _resource_metadata(self, request: Request) -> Response:
        return _json({"resource": self.url,
                      "authorization_servers": self.authorization_servers or [self.origin],
                      "scopes_supported": self.scopes_supported})

    def _server_metadata(self, request: Request) -> Response:
        o = self.origin
        return _json({
            "issuer": o, "authorization_endpoint": f"{o}/authorize",
            "token_endpoint": f"{o}/token", "registration_endpoint": f"{o}/register",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token",
                                      "client_credentials"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"],
            "authorization_response_iss_parameter_supported": True,
            "scopes_supported": self.scopes_supported,
            **self.metadata_overrides})

    def _register(self, request: Request) -> Response:
        if self.refuse_registration:
            return _json({"error": "invalid_client_metadata",
                          "error_description": "registration is closed"}, 400)
        metadata = request.get_json(silent=True) or {}
        client_id = "client-" + secrets.token_hex(4)
        record = {**metadata, "client_id": client_id}
        with self._lock:
            self.clients[client_id] = record
        return _json(record, 201)

    def _authorize(self, request: Request) -> Response:
        query = request.args
        client = self.clients.get(query.get("client_id", ""))
        redirect = query.get("redirect_uri", "")
        if client is None or redirect not in client.get("redirect_uris", []):
            return Response("unknown client or redirect", status=400)
        code = secrets.token_urlsafe(16)
        with self._lock:
            self.codes[code] = dict(query.items())
        params = {"code": code, "state": self.state_override or query.get("state", ""),
                  "iss": self.iss_override or self.origin}
        if self.deny:
            params = {"error": "access_denied", "error_description": "the user said no",
                      "state": query.get("state", ""), "iss": self.origin}
        return Response(status=302, headers={"Location": f"{redirect}?{urlencode(params)}"})

    def _token(self, request: Request) -> Response:
        form = request.form
        grant = form.get("grant_type")
        if grant == "authorization_code":
            with self._lock:
                asked = self.codes.pop(form.get("code", ""), None)
            if asked is None:
                return _json({"error": "invalid_grant"}, 400)
            digest = hashlib.sha256(form.get("code_verifier", "").encode()).digest()
            challenge = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
            if challenge != asked.get("code_challenge") or \
                    form.get("resource") != asked.get("resource"):
                return _json({"error": "invalid_grant"}, 400)
            return self._issue(set((asked.get("scope") or "").split()))
        if grant == "refresh_token":
            with self._lock:
                scopes = self.refresh_tokens.pop(form.get("refresh_token", ""), None)
            if scopes is None:
                return _json({"error": "invalid_grant"}, 400)
            return self._issue(scopes)
        if grant == "client_credentials":
            client_id, secret = _basic(request.headers.get("Authorization", ""))
            if self.machine_clients.get(client_id) != secret:
                return _json({"error": "invalid_client"}, 401)
            return self._issue(set((form.get("scope") or "").split()), refresh=False)
        return _json({"error": "unsupported_grant_type"}, 400)

    def _issue(self, scopes: set[str], refresh: bool = True) -> Response:
        access = "at-" + secrets.token_urlsafe(12)
        answer: dict[str, Any] = {"access_token": access, "token_type": "Bearer",
                                  "expires_in": self.lifetime, "scope": " ".join(sorted(scopes))}
        with self._lock:
            self.tokens[access] = (scopes, time.time() + self.lifetime)
            if refresh:
                answer["refresh_token"] = "rt-" + secrets.token_urlsafe(12)
                self.refresh_tokens[answer["refresh_token"]] = scopes
        return _json(answer)


def _json(value: Any, status: int = 200) -> Response:
    return Response(json.dumps(value), status=status, content_type="application/json")


def _basic(header: str) -> tuple[str, str]:
    if not header.startswith("Basic "):
        return "", ""
    decoded = base64.b64decode(header[6:]).decode()
    client_id, _, secret = decoded.partition(":")
    return client_id, secret


def browser(authorization_url: str) -> str:
    """A user who approves at once: the callback URL the authorization server sends back."""
    response = requests.get(authorization_url, allow_redirects=False, timeout=10)
    with response:
        assert response.status_code == 302, response.text
        return str(response.headers["Location"])


def query_of(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
