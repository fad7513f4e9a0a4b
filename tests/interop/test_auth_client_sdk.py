"""Our OAuth client against a server protected with the official Python SDK's auth support.

The server is ``sdk_auth_server.py`` beside this file, run by the SDK over uvicorn in a
child process: its bearer middleware, protected-resource metadata and authorization server
routes, with an in-memory provider that approves at once. Our client discovers it,
registers, authorizes with PKCE (the browser step played by a callable) and calls a tool,
in both eras; tokens refused later are refreshed without the caller noticing.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from mcp_sync import Client
from mcp_sync.auth import FileTokenStore, OAuth
from tests.auth_client_helpers import browser
from tests.helpers import LEGACY_ERA, wait_until_listening
from tests.interop.test_http_sdk_server import _free_port

pytestmark = [pytest.mark.interop, pytest.mark.timeout(90)]

ROOT = Path(__file__).resolve().parents[2]
START_BOUND = 20.0
WAIT = 20.0


@contextlib.contextmanager
def sdk_server(tmp_path: Path, lifetime: int = 3600) -> Iterator[str]:
    """The SDK's protected server on a free port; yields its origin."""
    port = _free_port()
    with open(tmp_path / "sdk-auth.log", "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.interop.sdk_auth_server", str(port), str(lifetime)],
            cwd=str(ROOT), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
        try:
            try:
                wait_until_listening(port, process, START_BOUND, "the SDK server")
            except AssertionError as exc:
                log.flush()
                raise AssertionError(f"{exc}: {(tmp_path / 'sdk-auth.log').read_text()}") \
                    from None
            yield f"http://127.0.0.1:{port}"
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)


def oauth(**options: object) -> OAuth:
    return OAuth(client_name="mcp_sync tests", redirect_uri="http://127.0.0.1:1/callback",
                 authorize=browser, http_timeout=10, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_our_client_authorizes_with_an_sdk_protected_server_and_calls_a_tool(
        tmp_path: Path, era: str) -> None:
    """V0618-38/39, V1125-20/21/27/28: against the SDK's resource server and authorization
    server, discovery, dynamic registration, the authorization code with PKCE and the RFC
    8707 resource (the SDK checks the token's resource) complete, and a tool is called."""
    options = LEGACY_ERA if era == "legacy" else {}
    with sdk_server(tmp_path) as origin, \
            Client.http(f"{origin}/mcp", auth=oauth(), timeout=WAIT, **options) as client:
        assert [tool.name for tool in client.list_tools()] == ["add"]
        result = client.call_tool("add", {"a": 20, "b": 22})
        assert result.content[0].text == "42"  # type: ignore[union-attr]


def test_tokens_refresh_transparently_during_a_long_lived_client(tmp_path: Path) -> None:
    """A long-lived client whose tokens the server stops accepting (revoked, expired)
    goes on calling: each refusal is met with a refresh, never with a new authorization,
    and the tokens live in a 0600 file."""
    authorizations: list[str] = []

    def counted(url: str) -> str:
        authorizations.append(url)
        return browser(url)

    store = FileTokenStore(tmp_path / "tokens.json")
    auth = OAuth(client_name="mcp_sync tests", redirect_uri="http://127.0.0.1:1/callback",
                 authorize=counted, http_timeout=10, storage=store)
    with sdk_server(tmp_path) as origin, \
            Client.http(f"{origin}/mcp", auth=auth, timeout=WAIT, **LEGACY_ERA) as client:
        for round_ in range(3):
            assert client.call_tool("add", {"a": round_, "b": 1}).content[0].text == \
                str(round_ + 1)  # type: ignore[union-attr]
            with requests.post(f"{origin}/test/expire", timeout=10) as expired:
                assert expired.status_code == 200
        assert client.call_tool("add", {"a": 1, "b": 1}).content[0].text == "2"  # type: ignore[union-attr]
        with requests.get(f"{origin}/test/stats", timeout=10) as stats:
            assert stats.json()["refreshed"] == 3
    assert len(authorizations) == 1
    assert (tmp_path / "tokens.json").stat().st_mode & 0o777 == 0o600


def test_short_lived_tokens_are_renewed_while_the_client_keeps_calling(tmp_path: Path) -> None:
    """Tokens that live one second (the SDK refuses them once expired): a client calling
    for a few seconds renews them, before they expire or when refused, and every call
    succeeds without a second authorization."""
    authorizations: list[str] = []

    def counted(url: str) -> str:
        authorizations.append(url)
        return browser(url)

    auth = OAuth(client_name="mcp_sync tests", redirect_uri="http://127.0.0.1:1/callback",
                 authorize=counted, http_timeout=10)
    with sdk_server(tmp_path, lifetime=1) as origin, \
            Client.http(f"{origin}/mcp", auth=auth, timeout=WAIT, **LEGACY_ERA) as client:
        calls = 0
        refreshed = 0
        while refreshed < 2:  # bounded by the test's timeout
            calls += 1
            result = client.call_tool("add", {"a": calls, "b": 1})
            assert result.content[0].text == str(calls + 1)  # type: ignore[union-attr]
            with requests.get(f"{origin}/test/stats", timeout=10) as stats:
                refreshed = stats.json()["refreshed"]
    assert len(authorizations) == 1
