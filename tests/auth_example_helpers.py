"""Shared pieces of the tests of examples/auth_server.py: the example in a child process,
PKCE pairs, and the authorization code flow done by hand with requests."""

from __future__ import annotations

import base64
import hashlib
import secrets
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any
from urllib.parse import parse_qs, urlsplit

import requests

from tests.helpers import wait_until_listening
from tests.scaleout_helpers import free_port

ROOT = Path(__file__).resolve().parent.parent
AUTH_SERVER = ROOT / "examples" / "auth_server.py"
REDIRECT_URI = "http://127.0.0.1:9/callback"  # never reached: the tests read the Location
HTTP_TIMEOUT = 10.0


def pkce() -> tuple[str, str]:
    """A PKCE ``code_verifier`` and its ``S256`` ``code_challenge`` (RFC 7636 4.2)."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def query_of(url: str) -> dict[str, str]:
    """The query parameters of ``url``, one value each."""
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}


class AuthExample:
    """examples/auth_server.py serving on a free port of 127.0.0.1 in a child process."""

    def __init__(self, log: IO[bytes], *, auto_approve: bool) -> None:
        self.port = free_port()
        self.origin = f"http://127.0.0.1:{self.port}"
        self.mcp_url = f"{self.origin}/mcp"
        command = [sys.executable, str(AUTH_SERVER), "--http", "--host", "127.0.0.1",
                   "--port", str(self.port)]
        if auto_approve:
            command.append("--auto-approve")
        self._log = log
        self.process = subprocess.Popen(command, cwd=str(ROOT), stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=log)

    def wait_ready(self) -> None:
        try:
            wait_until_listening(self.port, self.process, 30.0, "examples/auth_server.py")
        except AssertionError as exc:
            self._log.flush()
            output = Path(self._log.name).read_text("utf-8", "replace")[-3000:]
            raise AssertionError(f"{exc}: {output}") from None

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10.0)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10.0)

    # -- the authorization server's endpoints, by hand

    def register(self, **metadata: Any) -> requests.Response:
        return requests.post(f"{self.origin}/register", json=metadata, timeout=HTTP_TIMEOUT)

    def register_public_client(self, redirect_uri: str = REDIRECT_URI) -> str:
        """A public client (no secret) allowed the code and refresh grants; its id."""
        answer = self.register(redirect_uris=[redirect_uri], client_name="by hand",
                               token_endpoint_auth_method="none",
                               grant_types=["authorization_code", "refresh_token"])
        assert answer.status_code == 201, answer.text
        client_id: str = answer.json()["client_id"]
        return client_id

    def authorize(self, **params: str) -> requests.Response:
        """GET /authorize, redirects not followed."""
        return requests.get(f"{self.origin}/authorize", params=params, allow_redirects=False,
                            timeout=HTTP_TIMEOUT)

    def token(self, data: dict[str, str], auth: tuple[str, str] | None = None,
              ) -> requests.Response:
        return requests.post(f"{self.origin}/token", data=data, auth=auth,
                             timeout=HTTP_TIMEOUT)

    def code_flow(self, client_id: str, *, scope: str | None = None,
                  redirect_uri: str = REDIRECT_URI) -> dict[str, Any]:
        """The authorization code flow with PKCE on an auto-approving server, for the
        example's ``/mcp``; the token response."""
        verifier, challenge = pkce()
        params = {"response_type": "code", "client_id": client_id,
                  "redirect_uri": redirect_uri, "code_challenge": challenge,
                  "code_challenge_method": "S256", "state": secrets.token_urlsafe(8),
                  "resource": self.mcp_url}
        if scope is not None:
            params["scope"] = scope
        answer = self.authorize(**params)
        assert answer.status_code == 302, answer.text
        back = query_of(answer.headers["Location"])
        assert back["state"] == params["state"] and back["iss"] == self.origin
        tokens = self.token({"grant_type": "authorization_code", "code": back["code"],
                             "redirect_uri": redirect_uri, "client_id": client_id,
                             "code_verifier": verifier, "resource": self.mcp_url})
        assert tokens.status_code == 200, tokens.text
        result: dict[str, Any] = tokens.json()
        return result


@contextmanager
def running_auth_example(log_path: Path, *, auto_approve: bool) -> Iterator[AuthExample]:
    with open(log_path, "wb") as log:
        example = AuthExample(log, auto_approve=auto_approve)
        try:
            example.wait_ready()
            yield example
        finally:
            example.stop()


def authorization_server_module() -> Any:
    """examples/_authorization_server.py, imported as the example imports it (the examples
    folder is no package: its modules import each other by their bare names)."""
    import importlib

    examples = str(ROOT / "examples")
    if examples not in sys.path:
        sys.path.append(examples)
    return importlib.import_module("_authorization_server")
