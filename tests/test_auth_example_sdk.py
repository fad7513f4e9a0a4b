"""Interop: the official Python SDK's OAuth client completes the whole flow against
examples/auth_server.py (``--auto-approve``, a child process) and calls a tool, in the
legacy era and in the era it picks by itself (the modern one, 2026-07-28).

The SDK discovers everything from the first 401 (V0618-37/38: protected resource
metadata, then RFC 8414 metadata), registers (AUTH-3), sends the user to /authorize with
PKCE S256 and the resource (AUTH-9, V0618-39); the "browser" here is a GET whose redirect
is handed back as the callback, iss included (RFC 9207), so the SDK checks the issuer.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest
from mcp.client import Client as SdkClient
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from tests.auth_example_helpers import (
    REDIRECT_URI,
    AuthExample,
    query_of,
    running_auth_example,
)

pytestmark = [pytest.mark.interop, pytest.mark.timeout(90)]

FLOW_BOUND = 40.0


class MemoryTokenStorage:
    """The SDK's TokenStorage, in memory; remembers what it was given."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthExample]:
    log = tmp_path_factory.mktemp("auth-sdk") / "auth_server.log"
    with running_auth_example(log, auto_approve=True) as running:
        yield running


async def _drive(url: str, mode: str) -> dict[str, Any]:
    seen: dict[str, Any] = {"authorization_urls": []}

    async def open_in_browser(authorization_url: str) -> None:
        seen["authorization_urls"].append(authorization_url)
        async with httpx2.AsyncClient() as browser:
            answer = await browser.get(authorization_url, follow_redirects=False)
        seen["redirect"] = answer.headers["location"]

    async def come_back() -> AuthorizationCodeResult:
        params = query_of(seen["redirect"])
        return AuthorizationCodeResult(code=params["code"], state=params.get("state"),
                                       iss=params.get("iss"))

    storage = MemoryTokenStorage()
    provider = OAuthClientProvider(
        server_url=url, storage=storage,
        client_metadata=OAuthClientMetadata(redirect_uris=[REDIRECT_URI],
                                            client_name="official SDK",
                                            token_endpoint_auth_method="none"),
        redirect_handler=open_in_browser, callback_handler=come_back)
    with anyio.fail_after(FLOW_BOUND):
        async with httpx2.AsyncClient(auth=provider, timeout=30) as http, \
                SdkClient(streamable_http_client(url, http_client=http), mode=mode) as client:
            seen["protocol_version"] = client.protocol_version
            seen["add"] = await client.call_tool("add", {"a": 2, "b": 40})
            seen["echo"] = await client.call_tool("echo", {"message": "behind OAuth"})
    seen["storage"] = storage
    return seen


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_sdk_oauth_client_completes_the_flow_and_calls_a_tool(example: AuthExample,
                                                              mode: str) -> None:
    """AUTH-3/9, V0618-37/38/39, V1125-28, RFC 9207: discovery, registration, code flow
    with PKCE and the resource, then tool calls with the token, in both eras."""
    seen = anyio.run(_drive, example.mcp_url, mode)
    if mode == "legacy":
        assert seen["protocol_version"] != "2026-07-28"
    else:
        assert seen["protocol_version"] == "2026-07-28"
    assert seen["add"].content[0].text == "42"
    assert seen["echo"].content[0].text == "behind OAuth"
    [authorization_url] = seen["authorization_urls"]
    asked = query_of(authorization_url)
    assert asked["code_challenge_method"] == "S256"
    assert asked["resource"] == example.mcp_url
    assert query_of(seen["redirect"])["iss"] == example.origin
    storage: MemoryTokenStorage = seen["storage"]
    assert storage.client_info is not None and storage.client_info.client_id
    assert storage.tokens is not None and storage.tokens.refresh_token
