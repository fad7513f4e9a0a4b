"""Opaque tokens checked by RFC 7662 introspection, against the test issuer's endpoint on
127.0.0.1: active and inactive tokens, the audience and expiry of an active one, client
authentication to the endpoint, the bounded cache, and an endpoint that fails (503, not
401). The tool behind the server is never reached by a refused token. IDs: AUTH-13,
V0618-40, V1125-29.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from mcp_sync.auth import IntrospectionVerifier, InvalidToken, ResourceServer
from mcp_sync.transports.http_server import StreamableHttpApp
from tests.auth_support import RESOURCE, Calls, Peer, TestIssuer, challenge, make_server
from tests.http_server_helpers import INITIALIZE


@pytest.fixture
def issuer() -> Iterator[TestIssuer]:
    with TestIssuer() as running:
        yield running


@pytest.fixture
def verifier(issuer: TestIssuer) -> Iterator[IntrospectionVerifier]:
    user, secret = issuer.introspection_client
    made = IntrospectionVerifier(issuer.introspection_endpoint, client_id=user,
                                 client_secret=secret, cache_ttl=30)
    yield made
    made.close()


@pytest.fixture
def calls() -> Calls:
    return Calls()


@pytest.fixture
def app(issuer: TestIssuer, verifier: IntrospectionVerifier,
        calls: Calls) -> Iterator[StreamableHttpApp]:
    auth = ResourceServer(RESOURCE, [issuer.issuer], verifier, required_scopes=["mcp"])
    with make_server(calls).wsgi_app(auth=auth) as app:
        yield app


def active(issuer: TestIssuer, token: str, subject: str = "carol", **claims: object) -> None:
    issuer.introspected[token] = {"sub": subject, "scope": "mcp", "aud": RESOURCE,
                                  "iss": issuer.issuer, "client_id": "opaque-client",
                                  "exp": int(time.time()) + 600, **claims}


def test_an_active_opaque_token_reaches_the_tool_and_answers_are_cached(
        app: StreamableHttpApp, issuer: TestIssuer, calls: Calls) -> None:
    active(issuer, "opaque-1")
    peer = Peer(app, "opaque-1")
    peer.initialize()
    assert peer.text(peer.call_tool("whoami")) == "carol mcp"
    assert issuer.introspections == 1  # three requests, one question
    (auth,) = calls.auth
    assert auth is not None and auth.client_id == "opaque-client"


@pytest.mark.parametrize("kind", ["inactive", "expired", "wrong audience"])
def test_a_refused_opaque_token_is_401_and_reaches_no_tool_auth_13_v0618_40(
        app: StreamableHttpApp, issuer: TestIssuer, calls: Calls, kind: str) -> None:
    if kind == "expired":
        active(issuer, "opaque-2", exp=int(time.time()) - 3600)
    elif kind == "wrong audience":
        active(issuer, "opaque-2", aud="https://other.example.com/mcp")
    response = Peer(app, "opaque-2").post(INITIALIZE)
    assert response.status_code == 401
    assert challenge(response)["error"] == "invalid_token"
    assert calls.total == 0


def test_a_failing_introspection_endpoint_is_503(
        app: StreamableHttpApp, issuer: TestIssuer, calls: Calls) -> None:
    active(issuer, "opaque-3")
    issuer.introspection_status = 500
    response = Peer(app, "opaque-3").post(INITIALIZE)
    assert response.status_code == 503
    assert calls.total == 0


def test_the_resource_server_authenticates_to_the_endpoint(issuer: TestIssuer) -> None:
    active(issuer, "opaque-4")
    wrong = IntrospectionVerifier(issuer.introspection_endpoint, client_id="resource-server",
                                  client_secret="wrong")
    try:
        with pytest.raises(Exception, match="answered 401"):
            wrong.verify("opaque-4")
    finally:
        wrong.close()


def test_the_cache_is_bounded_and_brief(issuer: TestIssuer) -> None:
    now = [1000.0]
    user, secret = issuer.introspection_client
    verifier = IntrospectionVerifier(issuer.introspection_endpoint, client_id=user,
                                     client_secret=secret, cache_ttl=10, cache_size=2,
                                     clock=lambda: now[0])
    try:
        for token in ("t1", "t2", "t3"):
            active(issuer, token, exp=2000)
            assert verifier.verify(token) is not None
        assert issuer.introspections == 3
        verifier.verify("t3")
        assert issuer.introspections == 3  # cached
        verifier.verify("t1")
        assert issuer.introspections == 4  # pushed out by t3
        now[0] += 11
        verifier.verify("t1")
        assert issuer.introspections == 5  # too old
        del issuer.introspected["t1"]  # revoked: learnt once the cached answer is old
        now[0] += 11
        assert verifier.verify("t1") is None
    finally:
        verifier.close()


def test_an_audience_given_to_the_verifier_is_checked(issuer: TestIssuer) -> None:
    active(issuer, "opaque-5", aud=["api://other"])
    user, secret = issuer.introspection_client
    verifier = IntrospectionVerifier(issuer.introspection_endpoint, client_id=user,
                                     client_secret=secret, audience="api://mine")
    try:
        with pytest.raises(InvalidToken, match="not issued for this resource"):
            verifier.verify("opaque-5")
    finally:
        verifier.close()
