"""Interop: the official MCP SDK's client against our server behind a ResourceServer.

Also its OAuth client (client credentials): from our 401 challenge it finds our
protected-resource metadata, then the test issuer's RFC 8414 metadata, gets a token for
our resource (RFC 8707) and calls the tool (V0618-37, V0618-38, V0618-39, V1125-20).

Our server runs in this process on 127.0.0.1 (``serve_http(auth=...)``), its tokens are
JWTs checked against the JWKS of a test issuer on another port. The SDK sends a static
bearer token through its own HTTP client: with the token it lists and calls tools in
both eras (modern by default, legacy against a server that speaks only legacy
versions); without it the server answers 401 and the SDK fails. IDs: AUTH-5, AUTH-11,
V0618-37, V0618-40.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest
from mcp import MCPError
from mcp.client import Client as SdkClient
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from mcp_sync import Context, Server
from mcp_sync.auth import JWTVerifier, ResourceServer
from mcp_sync.protocol._versions import KNOWN_VERSIONS
from mcp_sync.transports.http_server import serve_http
from tests.auth_support import RESOURCE, TestIssuer
from tests.scaleout_helpers import free_port

pytestmark = [pytest.mark.interop, pytest.mark.timeout(60)]

EXCHANGE_BOUND = 30.0


@pytest.fixture
def issuer() -> Iterator[TestIssuer]:
    with TestIssuer() as running:
        yield running


def make_server(seen: list[Any], supported_versions: tuple[str, ...] | None) -> Server:
    server = Server("protected-interop", version="1.0.0",
                    supported_versions=supported_versions)

    @server.tool()
    def whoami(ctx: Context) -> str:
        """The subject of the caller's token."""
        seen.append(ctx.auth)
        return "nobody" if ctx.auth is None else str(ctx.auth.subject)

    return server


async def _whoami(url: str, token: str | None) -> tuple[str | None, str]:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with create_mcp_http_client(headers=headers) as http:
        with anyio.fail_after(EXCHANGE_BOUND):
            async with SdkClient(streamable_http_client(url, http_client=http)) as client:
                result = await client.call_tool("whoami", {})
                return client.protocol_version, str(result.content[0].text)  # type: ignore[union-attr]


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_the_sdk_client_with_a_bearer_token_reaches_a_protected_server(
        issuer: TestIssuer, era: str) -> None:
    seen: list[Any] = []
    versions = None if era == "modern" else KNOWN_VERSIONS
    auth = ResourceServer(RESOURCE, [issuer.issuer],
                          JWTVerifier(issuer.jwks_uri, issuer=issuer.issuer))
    with serve_http(make_server(seen, versions), auth=auth) as handle:
        version, text = anyio.run(_whoami, handle.url, issuer.mint("sdk-user"))
    assert text == "sdk-user"
    assert (version == "2026-07-28") == (era == "modern")
    assert [token.subject for token in seen] == ["sdk-user"]


def test_the_sdk_client_without_a_token_gets_401(issuer: TestIssuer) -> None:
    seen: list[Any] = []
    auth = ResourceServer(RESOURCE, [issuer.issuer],
                          JWTVerifier(issuer.jwks_uri, issuer=issuer.issuer))
    with serve_http(make_server(seen, None), auth=auth) as handle:
        with pytest.raises(BaseException) as caught:
            anyio.run(_whoami, handle.url, None)
        # What the SDK's client met: 401 and the challenge naming the metadata.
        response = httpx2.post(handle.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                               headers={"Accept": "application/json, text/event-stream"})
    errors = list(_leaves(caught.value))
    assert any(isinstance(error, MCPError) and "Unauthorized" in str(error)
               for error in errors), errors
    assert response.status_code == 401
    assert "resource_metadata=" in response.headers["WWW-Authenticate"]
    assert seen == []


def _leaves(error: BaseException) -> Iterator[BaseException]:
    inner_errors = getattr(error, "exceptions", None)  # an exception group (3.11+, or anyio's)
    if isinstance(inner_errors, (list, tuple)):
        for inner in inner_errors:
            yield from _leaves(inner)
    else:
        yield error


class _Memory:
    """The SDK's token storage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


async def _whoami_with_oauth(url: str, issuer: str) -> str:
    provider = ClientCredentialsOAuthProvider(
        server_url=url, storage=_Memory(), client_id="machine",
        client_secret="machine-secret", scope="mcp", issuer=issuer)
    async with create_mcp_http_client(auth=provider) as http:
        with anyio.fail_after(EXCHANGE_BOUND):
            async with SdkClient(streamable_http_client(url, http_client=http)) as client:
                result = await client.call_tool("whoami", {})
                return str(result.content[0].text)  # type: ignore[union-attr]


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_the_sdk_oauth_client_discovers_our_metadata_and_gets_in(
        issuer: TestIssuer, era: str) -> None:
    seen: list[Any] = []
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    auth = ResourceServer(resource, [issuer.issuer],
                          JWTVerifier(issuer.jwks_uri, issuer=issuer.issuer),
                          scopes_supported=["mcp"], required_scopes=["mcp"])
    versions = None if era == "modern" else KNOWN_VERSIONS
    with serve_http(make_server(seen, versions), port=port, auth=auth) as handle:
        text = anyio.run(_whoami_with_oauth, handle.url, issuer.issuer)
    assert text == "machine"
    (request, *_) = issuer.token_requests
    assert request["resource"] == resource and request["grant_type"] == "client_credentials"
    assert [token.audience for token in seen] == [(resource,)]
