"""Authorization on the server side: the MCP endpoint as an OAuth 2.1 resource server.

Tokens are real JWTs signed with RSA keys; their keys and an RFC 7662 introspection
endpoint are served over HTTP on 127.0.0.1 by a test issuer (tests/auth_support.py), so
the verifiers fetch and ask as they would of an identity provider. The application is
driven in-process. Every refused token is checked twice: the status and challenge that
come back, and the tool it tried to call never running. IDs: AUTH-5, AUTH-12..14,
V0618-36, V0618-37, V0618-40, V0618-45, V1125-20, V1125-22, V1125-24, V1125-29, DES-7,
DES-15.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from werkzeug.test import Client as WerkzeugClient

from mcp_sync import Context, Server
from mcp_sync.auth import AccessToken, InvalidToken, JWTVerifier, ResourceServer
from mcp_sync.transports.http_server import StreamableHttpApp
from tests.auth_support import RESOURCE, Calls, Peer, TestIssuer, challenge, make_server, rsa_key
from tests.http_server_helpers import HEADERS, INITIALIZE, call
from tests.server_support import modern_request
from tests.test_modern_http import standard_headers

PRM_ROOT = "/.well-known/oauth-protected-resource"
PRM_URL = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"


@pytest.fixture
def issuer() -> Iterator[TestIssuer]:
    with TestIssuer() as running:
        yield running


@pytest.fixture
def calls() -> Calls:
    return Calls()


def resource_server(issuer: TestIssuer, **options: Any) -> ResourceServer:
    verifier = JWTVerifier(issuer.jwks_uri, issuer=issuer.issuer)
    return ResourceServer(RESOURCE, [issuer.issuer], verifier,
                          scopes_supported=["mcp", "files:write"], required_scopes=["mcp"],
                          resource_name="Protected test server", **options)


@pytest.fixture
def app(issuer: TestIssuer, calls: Calls) -> Iterator[StreamableHttpApp]:
    with make_server(calls).wsgi_app(auth=resource_server(issuer), legacy_sse=True) as app:
        yield app


# --- the 401 challenge ----------------------------------------------------------------------


def test_no_token_is_401_naming_the_metadata_and_scope_auth_5_v0618_37_v1125_22(
        app: StreamableHttpApp, calls: Calls) -> None:
    peer = Peer(app, None)
    response = peer.post(INITIALIZE)
    assert response.status_code == 401
    params = challenge(response)
    assert params == {"resource_metadata": PRM_URL, "scope": "mcp"}  # no error: none sent
    assert json.loads(response.get_data())["error"]["code"] == -32600
    assert calls.total == 0


BAD_TOKENS = {
    "malformed": lambda issuer: "not a jwt",
    "garbage jwt": lambda issuer: "abc.def.ghi",
    "expired": lambda issuer: issuer.mint(lifetime=-3600),
    "wrong audience": lambda issuer: issuer.mint(audience="https://other.example.com/mcp"),
    "not yet valid": lambda issuer: issuer.mint(nbf=int(time.time()) + 3600),
    "no audience": lambda issuer: issuer.mint(audience=[]),
    "wrong issuer": lambda issuer: issuer.mint(iss="https://evil.example.com"),
    "bad signature": lambda issuer: issuer.mint(key=rsa_key(1)),
    "alg none": lambda issuer: issuer.mint_unsigned(),
    "hmac with the public key": lambda issuer: issuer.mint_hmac_with_public_key(),
    "unknown key id": lambda issuer: issuer.mint(kid="key-9", key=issuer.keys["key-1"]),
}


@pytest.mark.parametrize("kind", sorted(BAD_TOKENS))
def test_a_refused_token_is_401_invalid_token_and_reaches_no_tool_auth_13_v0618_40(
        app: StreamableHttpApp, issuer: TestIssuer, calls: Calls, kind: str) -> None:
    """AUTH-13, V0618-40, V1125-29: within a session, with the legacy HTTP+SSE endpoint
    and in a modern request alike, the tool never runs."""
    peer = Peer(app, issuer.mint())
    peer.initialize()
    bad = BAD_TOKENS[kind](issuer)
    modern = modern_request("tools/call", {"name": "whoami", "arguments": {}}, 1)
    for response in (
            peer.call_tool("whoami", token=bad),
            Peer(app, bad).post(modern, **standard_headers(modern)),
            Peer(app, bad).client.post("/messages?session_id=x", data="{}", headers={
                "Authorization": f"Bearer {bad}", "Content-Type": "application/json"})):
        assert response.status_code == 401, (kind, response.status_code)
        params = challenge(response)
        assert params["error"] == "invalid_token"
        assert params["resource_metadata"] == PRM_URL
        assert params["error_description"]
    assert calls.total == 0


def test_a_good_token_reaches_the_tool_and_ctx_auth_says_who_v0618_40(
        app: StreamableHttpApp, issuer: TestIssuer, calls: Calls) -> None:
    peer = Peer(app, issuer.mint("alice", scopes=["mcp", "extra"]))
    peer.initialize()
    assert peer.text(peer.call_tool("whoami")) == "alice extra mcp"
    (auth,) = calls.auth
    assert auth is not None
    assert auth.subject == "alice" and auth.issuer == issuer.issuer
    assert auth.audience == (RESOURCE,) and auth.client_id == "test-client"
    assert auth.scopes == {"mcp", "extra"} and auth.expires_at is not None
    assert auth.claims["jti"] and "token" not in repr(auth).replace("AccessToken", "")


def test_ctx_auth_in_the_modern_era_is_the_requests_token(
        app: StreamableHttpApp, issuer: TestIssuer, calls: Calls) -> None:
    """ctx.auth in a modern (2026-07-28) request, served by a connection of its own."""
    message = modern_request("tools/call", {"name": "whoami", "arguments": {}}, 3)
    response = Peer(app, issuer.mint("bob")).post(message, **standard_headers(message))
    assert response.status_code == 200, response.get_data()
    assert json.loads(response.get_data())["result"]["content"][0]["text"] == "bob mcp"
    assert calls.auth[0] is not None and calls.auth[0].subject == "bob"


def test_ctx_auth_is_none_without_authorization(calls: Calls) -> None:
    from mcp_sync.testing import open_client

    with open_client(make_server(calls)) as client:
        assert client.call_tool("whoami", {}).content[0].text == "nobody"
    assert calls.auth == [None]


def test_a_token_in_the_query_string_is_refused_auth_12_auth_14(
        app: StreamableHttpApp, issuer: TestIssuer, calls: Calls) -> None:
    token = issuer.mint()
    client = WerkzeugClient(app)
    response = client.post(f"/mcp?access_token={token}", data=json.dumps(INITIALIZE),
                           headers=HEADERS)
    assert response.status_code == 400
    assert challenge(response)["error"] == "invalid_request"
    assert calls.total == 0


def test_origin_is_checked_before_the_token_des_7(app: StreamableHttpApp) -> None:
    response = Peer(app, None).post(INITIALIZE, Origin="https://evil.example.com")
    assert response.status_code == 403
    assert "WWW-Authenticate" not in response.headers


def test_the_token_is_checked_before_the_version_header_des_7(
        app: StreamableHttpApp) -> None:
    response = Peer(app, None).post(INITIALIZE, **{"MCP-Protocol-Version": "1999-01-01"})
    assert response.status_code == 401


def test_a_preflight_needs_no_token(app: StreamableHttpApp) -> None:
    response = WerkzeugClient(app).options("/mcp", headers={
        "Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST"})
    assert response.status_code == 204
    assert "Authorization" in response.headers["Access-Control-Allow-Headers"]


# --- scopes -----------------------------------------------------------------------------------


def test_a_tool_scope_missing_is_403_insufficient_scope_listing_every_needed_v1125_24(
        app: StreamableHttpApp, issuer: TestIssuer, calls: Calls) -> None:
    peer = Peer(app, issuer.mint(scopes=["mcp"]))
    peer.initialize()
    response = peer.call_tool("write_file", {"path": "a"})
    assert response.status_code == 403
    params = challenge(response)
    assert params["error"] == "insufficient_scope"
    assert params["scope"] == "files:write mcp"  # the granted one too (V1125-24)
    assert params["resource_metadata"] == PRM_URL
    assert calls.total == 0
    # Step-up: a token with the scope, same subject, same session.
    assert peer.text(peer.call_tool("write_file", {"path": "a"},
                                    token=issuer.mint(scopes=["mcp", "files:write"]))) == (
        "wrote a")
    # ctx.auth is the token of the request itself, not the one the session began with.
    assert calls.auth[-1] is not None and "files:write" in calls.auth[-1].scopes


def test_a_batch_calling_a_scoped_tool_is_refused_whole(
        app: StreamableHttpApp, issuer: TestIssuer, calls: Calls) -> None:
    peer = Peer(app, issuer.mint(scopes=["mcp"]))
    peer.initialize()
    response = peer.post([call(1, "tools/call", {"name": "whoami", "arguments": {}}),
                          call(2, "tools/call", {"name": "write_file",
                                                 "arguments": {"path": "b"}})])
    assert response.status_code == 403
    assert calls.total == 0


def test_a_scoped_tool_in_a_modern_request_is_403(
        app: StreamableHttpApp, issuer: TestIssuer, calls: Calls) -> None:
    message = modern_request("tools/call", {"name": "write_file", "arguments": {"path": "c"}},
                             5)
    response = Peer(app, issuer.mint()).post(message, **standard_headers(message))
    assert response.status_code == 403
    assert challenge(response)["error"] == "insufficient_scope"
    assert calls.total == 0


def test_required_scopes_missing_is_403_on_any_request_v1125_24(
        app: StreamableHttpApp, issuer: TestIssuer, calls: Calls) -> None:
    response = Peer(app, issuer.mint(scopes=["other"])).post(INITIALIZE)
    assert response.status_code == 403
    assert challenge(response)["scope"] == "mcp"


# --- sessions bound to their identity --------------------------------------------------------


def test_a_session_is_refused_to_another_identity_v0618_45(
        app: StreamableHttpApp, issuer: TestIssuer, calls: Calls) -> None:
    alice = Peer(app, issuer.mint("alice"))
    alice.initialize()
    mallory = Peer(app, issuer.mint("mallory"))
    mallory.session_id = alice.session_id
    assert mallory.call_tool("whoami").status_code == 404
    assert mallory.client.get("/mcp", headers=mallory.headers(
        Accept="text/event-stream")).status_code == 404
    assert mallory.client.delete("/mcp", headers=mallory.headers()).status_code == 404
    assert calls.total == 0
    # Alice's session lives on, with a refreshed token of hers.
    assert alice.text(alice.call_tool("whoami", token=issuer.mint("alice"))) == "alice mcp"


def test_a_shared_session_record_keeps_its_identity_v0618_45(
        issuer: TestIssuer, calls: Calls) -> None:
    """Two processes sharing a session store: the second refuses another identity too."""
    from mcp_sync.transports.http_server import MemorySessionStore

    store = MemorySessionStore()
    server = make_server(calls)
    with server.wsgi_app(auth=resource_server(issuer), session_store=store) as first, \
            server.wsgi_app(auth=resource_server(issuer), session_store=store) as second:
        alice = Peer(first, issuer.mint("alice"))
        alice.initialize()
        record = store.load(alice.session_id or "")
        assert record is not None and record.identity is not None
        assert "alice" in record.identity
        mallory = Peer(second, issuer.mint("mallory"))
        mallory.session_id = alice.session_id
        assert mallory.call_tool("whoami").status_code == 404
        alice_there = Peer(second, issuer.mint("alice"))
        alice_there.session_id = alice.session_id
        assert alice_there.text(alice_there.call_tool("whoami")) == "alice mcp"
    assert calls.count == {"whoami": 1}


def test_a_legacy_sse_session_is_refused_to_another_identity_v0618_45(
        app: StreamableHttpApp, issuer: TestIssuer) -> None:
    client = WerkzeugClient(app)
    alice = {"Authorization": f"Bearer {issuer.mint('alice')}", "Accept": "text/event-stream"}
    response = client.get("/sse", headers=alice, buffered=False)
    try:
        assert response.status_code == 200
        first = next(iter(response.response))
        endpoint = first.decode().split("data: ")[1].split("\n")[0].strip()
        refused = client.post(endpoint, data=json.dumps(INITIALIZE), headers={
            "Authorization": f"Bearer {issuer.mint('mallory')}",
            "Content-Type": "application/json"})
        assert refused.status_code == 404
        accepted = client.post(endpoint, data=json.dumps(INITIALIZE), headers={
            "Authorization": f"Bearer {issuer.mint('alice')}",
            "Content-Type": "application/json"})
        assert accepted.status_code == 202
    finally:
        response.close()


# --- metadata -----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [PRM_ROOT, PRM_ROOT + "/mcp"])
def test_protected_resource_metadata_at_both_well_known_uris_v0618_36_v1125_20(
        app: StreamableHttpApp, issuer: TestIssuer, path: str) -> None:
    response = WerkzeugClient(app).get(path)
    assert response.status_code == 200
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert json.loads(response.get_data()) == {
        "resource": RESOURCE, "authorization_servers": [issuer.issuer],
        "bearer_methods_supported": ["header"], "scopes_supported": ["mcp", "files:write"],
        "resource_name": "Protected test server"}


def test_no_authorization_server_metadata_by_default_des_15(app: StreamableHttpApp) -> None:
    assert WerkzeugClient(app).get(
        "/.well-known/oauth-authorization-server").status_code == 404


def test_the_2025_03_26_fallback_redirects_or_serves_auth_6(
        issuer: TestIssuer, calls: Calls) -> None:
    server = make_server(calls)
    with server.wsgi_app(auth=resource_server(issuer, legacy_metadata=True)) as app:
        response = WerkzeugClient(app).get("/.well-known/oauth-authorization-server")
        assert response.status_code == 302
        assert response.headers["Location"] == (
            issuer.issuer + "/.well-known/oauth-authorization-server")
    document = {"issuer": issuer.issuer, "authorization_endpoint": issuer.issuer + "/a",
                "token_endpoint": issuer.issuer + "/t"}
    with server.wsgi_app(auth=resource_server(issuer, legacy_metadata=document)) as app:
        response = WerkzeugClient(app).get("/.well-known/oauth-authorization-server")
        assert response.status_code == 200 and json.loads(response.get_data()) == document


def test_the_well_known_documents_under_a_mount_point(
        issuer: TestIssuer, calls: Calls) -> None:
    """A resource server is itself a WSGI app for the host's ``/.well-known/`` route."""
    from werkzeug.middleware.dispatcher import DispatcherMiddleware

    auth = resource_server(issuer)
    with make_server(calls).wsgi_app("", auth=auth) as mcp_app:
        host = DispatcherMiddleware(_not_found, {"/mcp": mcp_app, "/.well-known": auth})
        client = WerkzeugClient(host)
        assert client.get(PRM_ROOT + "/mcp").status_code == 200
        assert client.get(PRM_ROOT).status_code == 200
        assert client.post("/mcp", data=json.dumps(INITIALIZE),
                           headers=HEADERS).status_code == 401


def _not_found(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    start_response("404 Not Found", [("Content-Type", "text/plain")])
    return [b"no"]


# --- verifiers ----------------------------------------------------------------------------------


def test_jwks_keys_are_cached_and_a_rotated_key_is_fetched(issuer: TestIssuer) -> None:
    verifier = JWTVerifier(issuer.jwks_uri, issuer=issuer.issuer, audience=RESOURCE,
                           key_refresh_cooldown=0)
    assert verifier.verify(issuer.mint("a")).subject == "a"
    assert verifier.verify(issuer.mint("b")).subject == "b"
    assert issuer.jwks_fetches == 1
    issuer.rotate("key-2", 2)
    assert verifier.verify(issuer.mint("c")).subject == "c"
    assert issuer.jwks_fetches == 2


def test_the_jwt_verifier_refuses_symmetric_and_none_algorithms(issuer: TestIssuer) -> None:
    for algorithms in (["HS256"], ["none"], ["RS256", "HS512"], []):
        with pytest.raises(ValueError):
            JWTVerifier(issuer.jwks_uri, issuer=issuer.issuer, algorithms=algorithms)


def test_the_jwt_verifier_checks_the_audience_it_is_given_v0618_40(issuer: TestIssuer) -> None:
    verifier = JWTVerifier(issuer.jwks_uri, issuer=issuer.issuer, audience="api://mine")
    with pytest.raises(InvalidToken, match="not issued for this resource"):
        verifier.verify(issuer.mint(audience=RESOURCE))
    assert verifier.verify(issuer.mint(audience=["api://mine", "x"])).audience == (
        "api://mine", "x")


def test_an_unreachable_issuer_is_503_not_401(calls: Calls) -> None:
    with TestIssuer() as gone:
        uri, name, token = gone.jwks_uri, gone.issuer, gone.mint()
    verifier = JWTVerifier(uri, issuer=name, timeout=2)
    auth = ResourceServer(RESOURCE, [name], verifier)
    with make_server(calls).wsgi_app(auth=auth) as app:
        response = Peer(app, token).post(INITIALIZE)
    assert response.status_code == 503
    assert calls.total == 0


def test_the_flask_example_routes_the_metadata_behind_oauth_v1125_20(
        issuer: TestIssuer) -> None:
    """examples/flask_app.py mounts MCP under /mcp; with ``auth`` the metadata still
    answers at the origin's root, and the Flask routes stay open."""
    from tests.test_http_embedding import load_flask_example

    flask_app = load_flask_example().create_app(auth=resource_server(issuer))
    try:
        client = flask_app.test_client()
        assert client.get(PRM_ROOT + "/mcp").get_json()["resource"] == RESOURCE
        assert client.get(PRM_ROOT).status_code == 200
        assert client.get("/health").status_code == 200
        refused = client.post("/mcp", data=json.dumps(INITIALIZE), headers=HEADERS)
        assert refused.status_code == 401
        accepted = client.post("/mcp", data=json.dumps(INITIALIZE), headers={
            **HEADERS, "Authorization": f"Bearer {issuer.mint()}"})
        assert accepted.status_code == 200
    finally:
        flask_app.extensions["mcp"].close()


def test_stateless_mode_checks_tokens_and_fills_ctx_auth(
        issuer: TestIssuer, calls: Calls) -> None:
    with make_server(calls).wsgi_app(stateless=True, auth=resource_server(issuer)) as app:
        assert Peer(app, None).call_tool("whoami").status_code == 401
        assert Peer(app, issuer.mint(lifetime=-3600)).call_tool("whoami").status_code == 401
        peer = Peer(app, issuer.mint("dora"))
        assert peer.text(peer.call_tool("whoami")) == "dora mcp"
    assert [token.subject for token in calls.auth if token is not None] == ["dora"]


def test_the_token_verifier_hook_is_asked_first(issuer: TestIssuer, calls: Calls) -> None:
    asked: list[str] = []

    def hook(request: Any) -> bool:
        asked.append(request.headers.get("Authorization", ""))
        return request.headers.get("X-Tenant") == "ok"

    server = make_server(calls)
    with server.wsgi_app(auth=resource_server(issuer), token_verifier=hook) as app:
        token = issuer.mint()
        refused = Peer(app, token).post(INITIALIZE)
        assert refused.status_code == 401
        assert challenge(refused)["error"] == "invalid_token"
        assert Peer(app, token).post(INITIALIZE, **{"X-Tenant": "ok"}).status_code == 200
    assert len(asked) == 2


def test_a_resource_must_be_an_absolute_uri_and_an_issuer_named() -> None:
    class Nobody:
        def verify(self, token: str) -> AccessToken | None:
            return None

    for resource in ("mcp.example.com/mcp", "ftp://x/mcp", "https://x/mcp#frag"):
        with pytest.raises(ValueError):
            ResourceServer(resource, ["https://idp"], Nobody())
    with pytest.raises(ValueError):
        ResourceServer(RESOURCE, [], Nobody())
    with pytest.raises(TypeError):
        ResourceServer(RESOURCE, ["https://idp"], object())  # type: ignore[arg-type]
    # Canonical form (V0618-39): lower-case scheme and host, no trailing slash.
    assert ResourceServer("HTTPS://MCP.Example.com/mcp/", ["https://idp"],
                          Nobody()).resource == RESOURCE


def test_an_access_token_hides_its_secret_and_can_be_hashed() -> None:
    token = AccessToken(token="s3cret", subject="a", scopes=["x"], claims={"k": [1]})
    assert "s3cret" not in repr(token)
    assert token == AccessToken(token="s3cret", subject="a", scopes={"x"})
    assert len({token}) == 1


def test_request_state_minted_for_one_identity_is_foreign_to_another_v0618_45(
        issuer: TestIssuer) -> None:
    """V0618-45 in the modern era: the requestState of an input-required result is bound
    to the token's identity; another user bringing it back gets -32602 "foreign"."""
    server = Server("asking")
    runs: list[str] = []

    @server.tool()
    def greet(ctx: Context) -> str:
        runs.append(str(ctx.auth.subject if ctx.auth else None))
        answer = ctx.elicit("Name?", {"name": str})
        return f"hello {answer.value['name']}"

    caps = {"elicitation": {"form": {}}}
    params = {"name": "greet", "arguments": {}}
    with server.wsgi_app(auth=resource_server(issuer)) as app:
        first_message = modern_request("tools/call", params, 1, clientCapabilities=caps)
        first = Peer(app, issuer.mint("alice")).post(first_message,
                                                     **standard_headers(first_message))
        state = json.loads(first.get_data())["result"]
        assert state["resultType"] == "input_required"
        answers = {key: {"action": "accept", "content": {"name": "Al"}}
                   for key in state["inputRequests"]}
        again = modern_request("tools/call", {**params, "inputResponses": answers,
                                              "requestState": state["requestState"]}, 2,
                               clientCapabilities=caps)
        stolen = Peer(app, issuer.mint("mallory")).post(again, **standard_headers(again))
        error = json.loads(stolen.get_data())["error"]
        assert error["code"] == -32602 and error["data"] == {"reason": "foreign"}
        own = Peer(app, issuer.mint("alice")).post(again, **standard_headers(again))
        assert json.loads(own.get_data())["result"]["content"][0]["text"] == "hello Al"
    assert runs == ["alice", "alice"]


def test_another_resources_metadata_is_not_answered(app: StreamableHttpApp) -> None:
    """RFC 9728 3.1: the path-specific document names one resource; others are 404."""
    assert WerkzeugClient(app).get(PRM_ROOT + "/other").status_code == 404


def test_a_session_records_identity_survives_json_and_old_records_load() -> None:
    """V0618-45 across processes: the identity is part of the stored record; a record
    written before the field existed loads as unbound."""
    from mcp_sync.transports.http_server import SessionRecord

    record = SessionRecord(session_id="s", protocol_version="2025-11-25",
                           identity="sub:https://idp alice")
    assert SessionRecord.from_json(json.loads(json.dumps(record.to_json()))) == record
    old = {key: value for key, value in record.to_json().items() if key != "identity"}
    assert SessionRecord.from_json(old).identity is None


def test_an_issuer_serving_no_keys_is_503_not_401(issuer: TestIssuer, calls: Calls) -> None:
    """A broken key set is the issuer's fault: the client is not sent to re-authorize."""
    token = issuer.mint()
    issuer.keys = {}
    with make_server(calls).wsgi_app(auth=resource_server(issuer)) as app:
        assert Peer(app, token).post(INITIALIZE).status_code == 503
    assert calls.total == 0
