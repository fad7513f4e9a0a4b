"""Interop: the official MCP SDK's client against our server behind a ResourceServer.

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
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from mcp_sync import Context, Server
from mcp_sync.auth import JWTVerifier, ResourceServer
from mcp_sync.protocol._versions import KNOWN_VERSIONS
from mcp_sync.transports.http_server import serve_http
from tests.auth_support import RESOURCE, TestIssuer

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
