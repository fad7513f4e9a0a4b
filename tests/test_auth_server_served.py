"""The protected server over real sockets: our own client with a static bearer token
(``Client.http(headers=...)``) in both eras, refused without it; and sessions bound to
their identity across two processes' worth of applications sharing a Redis session
store. IDs: AUTH-5, AUTH-11, V0618-40, V0618-45.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from mcp_sync import Client
from mcp_sync.auth import JWTVerifier, ResourceServer
from mcp_sync.errors import HttpError
from mcp_sync.transports.http_server import RedisSessionStore, serve_http
from tests.auth_support import RESOURCE, Calls, Peer, TestIssuer, make_server
from tests.helpers import LEGACY_ERA
from tests.scaleout_helpers import RedisServer
from tests.scaleout_helpers import redis_server as redis_server  # the fixture


@pytest.fixture
def issuer() -> Iterator[TestIssuer]:
    with TestIssuer() as running:
        yield running


def resource_server(issuer: TestIssuer) -> ResourceServer:
    return ResourceServer(RESOURCE, [issuer.issuer],
                          JWTVerifier(issuer.jwks_uri, issuer=issuer.issuer),
                          required_scopes=["mcp"])


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_our_client_with_a_bearer_header_reaches_a_protected_server_auth_11(
        issuer: TestIssuer, era: str) -> None:
    calls = Calls()
    options = LEGACY_ERA if era == "legacy" else {}
    with serve_http(make_server(calls), auth=resource_server(issuer)) as handle:
        headers = {"Authorization": f"Bearer {issuer.mint('erin')}"}
        with Client.http(handle.url, headers=headers, timeout=20, **options) as client:
            assert client.call_tool("whoami", {}).content[0].text == "erin mcp"
            assert (client.protocol_version == "2026-07-28") == (era == "modern")
        with pytest.raises(HttpError) as refused, Client.http(handle.url, timeout=20,
                                                              **options) as client:
            client.call_tool("whoami", {})
    assert refused.value.status == 401
    assert calls.count == {"whoami": 1}


def test_a_session_is_refused_to_another_identity_in_every_process_v0618_45(
        issuer: TestIssuer, redis_server: RedisServer) -> None:
    """Two applications on one Redis: the session alice started on the first is 404 to
    mallory on the second, and still alice's there."""
    calls = Calls()
    server = make_server(calls)
    with contextlib.ExitStack() as stack:
        apps = []
        for _ in range(2):
            store = RedisSessionStore.from_url(redis_server.url)
            stack.callback(store.close)
            apps.append(stack.enter_context(server.wsgi_app(
                auth=resource_server(issuer), session_store=store)))
        alice = Peer(apps[0], issuer.mint("alice"))
        alice.initialize()
        mallory = Peer(apps[1], issuer.mint("mallory"))
        mallory.session_id = alice.session_id
        assert mallory.call_tool("whoami").status_code == 404
        assert mallory.client.delete("/mcp", headers=mallory.headers()).status_code == 404
        alice_there = Peer(apps[1], issuer.mint("alice"))
        alice_there.session_id = alice.session_id
        assert alice_there.text(alice_there.call_tool("whoami")) == "alice mcp"
    assert calls.count == {"whoami": 1}
