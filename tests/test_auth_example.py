"""examples/auth_server.py in a child process: the authorization server's documents and
grants, driven by hand with requests, and the everything server behind it at /mcp.

Two servers run for the module: one with ``--auto-approve`` (most tests) and one that
shows the consent page. IDs: AUTH-2/3/9/10/15/17 (DIGEST.md), V0618-36/37/39/40,
V1125-21/26/28 (DIGEST-NEWER.md), RFC 8414, RFC 7591, RFC 8707, RFC 9207.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest
import requests

from mcp_sync import Client, types
from tests.auth_example_helpers import (
    HTTP_TIMEOUT,
    REDIRECT_URI,
    ROOT,
    AuthExample,
    pkce,
    query_of,
    running_auth_example,
)

pytestmark = pytest.mark.timeout(90)

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "by hand", "version": "0"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthExample]:
    log = tmp_path_factory.mktemp("auth") / "auto-approve.log"
    with running_auth_example(log, auto_approve=True) as running:
        yield running


@pytest.fixture(scope="module")
def asking(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthExample]:
    log = tmp_path_factory.mktemp("auth") / "consent.log"
    with running_auth_example(log, auto_approve=False) as running:
        yield running


def call_add(example: AuthExample, access_token: str) -> str:
    """What the ``add`` tool answers to 2 + 40, called with ``access_token``."""
    with Client.http(example.mcp_url, headers={"Authorization": f"Bearer {access_token}"},
                     timeout=30, listen=False) as client:
        [content] = client.call_tool("add", {"a": 2, "b": 40}).content
    assert isinstance(content, types.TextContent)
    return content.text


# -- documents -------------------------------------------------------------------------------


def test_authorization_server_metadata_rfc8414(example: AuthExample) -> None:
    """AUTH-4, V1125-21, V1125-26, V1125-28, RFC 9207: the metadata names this origin as
    issuer, S256 as the only PKCE method, iss on redirects and metadata documents; the
    OpenID location serves the same document."""
    answer = requests.get(f"{example.origin}/.well-known/oauth-authorization-server",
                          timeout=HTTP_TIMEOUT)
    assert answer.status_code == 200
    metadata = answer.json()
    assert metadata["issuer"] == example.origin
    assert metadata["authorization_endpoint"] == f"{example.origin}/authorize"
    assert metadata["token_endpoint"] == f"{example.origin}/token"
    assert metadata["registration_endpoint"] == f"{example.origin}/register"
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert metadata["authorization_response_iss_parameter_supported"] is True
    assert metadata["client_id_metadata_document_supported"] is True
    assert metadata["response_types_supported"] == ["code"]
    assert set(metadata["grant_types_supported"]) == {
        "authorization_code", "refresh_token", "client_credentials"}
    openid = requests.get(f"{example.origin}/.well-known/openid-configuration",
                          timeout=HTTP_TIMEOUT)
    assert openid.json() == metadata
    jwks = requests.get(metadata["jwks_uri"], timeout=HTTP_TIMEOUT).json()
    assert [key["kty"] for key in jwks["keys"]] == ["RSA"]
    assert "d" not in jwks["keys"][0]  # the public half only


def test_401_names_the_resource_metadata_v0618_37(example: AuthExample) -> None:
    """AUTH-5, V0618-36, V0618-37: an unauthenticated request gets 401 whose challenge
    points at protected resource metadata naming /mcp and this authorization server."""
    answer = requests.post(example.mcp_url, json=INITIALIZE, headers=MCP_HEADERS,
                           timeout=HTTP_TIMEOUT)
    assert answer.status_code == 401
    challenge = answer.headers["WWW-Authenticate"]
    assert challenge.startswith("Bearer")
    found = re.search(r'resource_metadata="([^"]+)"', challenge)
    assert found is not None, challenge
    document = requests.get(found.group(1), timeout=HTTP_TIMEOUT).json()
    assert document["resource"] == example.mcp_url
    assert document["authorization_servers"] == [example.origin]


# -- the authorization code grant ------------------------------------------------------------


def test_code_flow_by_hand_then_a_tool_call(example: AuthExample) -> None:
    """AUTH-9, V0618-39, RFC 9068: PKCE S256 and a resource indicator give a JWT for /mcp
    (audience the resource, issuer this origin) with which a tool call succeeds."""
    client_id = example.register_public_client()
    tokens = example.code_flow(client_id)
    assert tokens["token_type"] == "Bearer" and tokens["scope"] == "mcp"
    claims = jwt.decode(tokens["access_token"], options={"verify_signature": False})
    assert claims["aud"] == example.mcp_url
    assert claims["iss"] == example.origin
    assert claims["client_id"] == client_id and claims["sub"] == "local-user"
    assert call_add(example, tokens["access_token"]) == "42"


@pytest.mark.parametrize("pkce_params", [
    {},
    {"code_challenge_method": "S256"},
    {"code_challenge": pkce()[1]},
    {"code_challenge": pkce()[1], "code_challenge_method": "plain"},
], ids=["none", "method-only", "no-method", "plain"])
def test_authorization_without_s256_is_refused_auth_9(
        example: AuthExample, pkce_params: dict[str, str]) -> None:
    """AUTH-9, AUTH-2 (OAuth 2.1): a request without an S256 challenge goes back to the
    client as invalid_request, with its state and the issuer (RFC 9207), and no code."""
    client_id = example.register_public_client()
    answer = example.authorize(response_type="code", client_id=client_id,
                               redirect_uri=REDIRECT_URI, state="s-1", **pkce_params)
    assert answer.status_code == 302
    assert answer.headers["Location"].startswith(REDIRECT_URI + "?")
    back = query_of(answer.headers["Location"])
    assert back["error"] == "invalid_request"
    assert back["state"] == "s-1" and back["iss"] == example.origin
    assert "code" not in back


def test_wrong_code_verifier_is_refused_auth_9(example: AuthExample) -> None:
    """AUTH-9: the token request must carry the verifier of the challenge."""
    client_id = example.register_public_client()
    _, challenge = pkce()
    answer = example.authorize(response_type="code", client_id=client_id,
                               redirect_uri=REDIRECT_URI, code_challenge=challenge,
                               code_challenge_method="S256")
    code = query_of(answer.headers["Location"])["code"]
    for verifier in (pkce()[0], None):
        data = {"grant_type": "authorization_code", "code": code, "client_id": client_id,
                "redirect_uri": REDIRECT_URI}
        if verifier is not None:
            data["code_verifier"] = verifier
        refused = example.token(data)
        assert refused.status_code == 400
        assert refused.json()["error"] in {"invalid_grant", "invalid_request"}


def test_unregistered_redirect_uri_is_refused_without_redirecting_auth_17(
        example: AuthExample) -> None:
    """AUTH-2, AUTH-17: redirect URIs match exactly; another one (even a longer path on
    the same host) gets an error page, never a redirect (no open redirector)."""
    client_id = example.register_public_client()
    _, challenge = pkce()
    for other in (REDIRECT_URI + "/more", "http://127.0.0.1:9/elsewhere",
                  "https://attacker.example/callback"):
        answer = example.authorize(response_type="code", client_id=client_id,
                                   redirect_uri=other, code_challenge=challenge,
                                   code_challenge_method="S256", state="s")
        assert answer.status_code == 400
        assert "Location" not in answer.headers


def test_token_request_with_another_redirect_uri_is_refused(example: AuthExample) -> None:
    """RFC 6749 4.1.3 (OAuth 2.1): the token request repeats the redirect URI of the
    authorization request; another one gets invalid_grant, and the code is spent."""
    client_id = example.register_public_client()
    verifier, challenge = pkce()
    answer = example.authorize(response_type="code", client_id=client_id,
                               redirect_uri=REDIRECT_URI, code_challenge=challenge,
                               code_challenge_method="S256")
    code = query_of(answer.headers["Location"])["code"]
    refused = example.token({"grant_type": "authorization_code", "code": code,
                             "client_id": client_id, "code_verifier": verifier,
                             "redirect_uri": "http://127.0.0.1:9/other"})
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"


def test_a_code_is_used_once(example: AuthExample) -> None:
    """OAuth 2.1 4.1.3: a second exchange of the same code is refused."""
    client_id = example.register_public_client()
    verifier, challenge = pkce()
    answer = example.authorize(response_type="code", client_id=client_id,
                               redirect_uri=REDIRECT_URI, code_challenge=challenge,
                               code_challenge_method="S256")
    data = {"grant_type": "authorization_code", "client_id": client_id,
            "code": query_of(answer.headers["Location"])["code"],
            "redirect_uri": REDIRECT_URI, "code_verifier": verifier}
    assert example.token(data).status_code == 200
    again = example.token(data)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"


def test_implicit_and_password_grants_are_not_offered_auth_2(example: AuthExample) -> None:
    """AUTH-2: no implicit grant (response_type=token), no password grant."""
    client_id = example.register_public_client()
    implicit = example.authorize(response_type="token", client_id=client_id,
                                 redirect_uri=REDIRECT_URI)
    assert implicit.status_code == 302
    assert query_of(implicit.headers["Location"])["error"] == "unsupported_response_type"
    password = example.token({"grant_type": "password", "username": "u", "password": "p",
                              "client_id": client_id})
    assert password.status_code == 400
    assert password.json()["error"] == "unsupported_grant_type"


def test_resource_indicator_for_another_resource_is_refused_rfc8707(
        example: AuthExample) -> None:
    """V0618-39, RFC 8707 2: a resource this server issues no tokens for gets
    invalid_target, at the authorization endpoint and at the token endpoint."""
    client_id = example.register_public_client()
    verifier, challenge = pkce()
    other = "http://127.0.0.1:9/mcp"
    refused = example.authorize(response_type="code", client_id=client_id,
                                redirect_uri=REDIRECT_URI, code_challenge=challenge,
                                code_challenge_method="S256", resource=other)
    assert query_of(refused.headers["Location"])["error"] == "invalid_target"
    answer = example.authorize(response_type="code", client_id=client_id,
                               redirect_uri=REDIRECT_URI, code_challenge=challenge,
                               code_challenge_method="S256", resource=example.mcp_url)
    exchange = example.token({"grant_type": "authorization_code", "client_id": client_id,
                              "code": query_of(answer.headers["Location"])["code"],
                              "redirect_uri": REDIRECT_URI, "code_verifier": verifier,
                              "resource": other})
    assert exchange.status_code == 400 and exchange.json()["error"] == "invalid_target"


# -- refresh, client credentials, registration -----------------------------------------------


def test_refresh_token_rotates_auth_15(example: AuthExample) -> None:
    """AUTH-15: a refresh gives a new access token and a new refresh token; the old
    refresh token is then refused, and the new access token reaches a tool."""
    client_id = example.register_public_client()
    first = example.code_flow(client_id)
    refreshed = example.token({"grant_type": "refresh_token", "client_id": client_id,
                               "refresh_token": first["refresh_token"]})
    assert refreshed.status_code == 200, refreshed.text
    second = refreshed.json()
    assert second["refresh_token"] != first["refresh_token"]
    assert second["access_token"] != first["access_token"]
    assert jwt.decode(second["access_token"],
                      options={"verify_signature": False})["aud"] == example.mcp_url
    reused = example.token({"grant_type": "refresh_token", "client_id": client_id,
                            "refresh_token": first["refresh_token"]})
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
    assert call_add(example, second["access_token"]) == "42"


def test_refresh_token_belongs_to_its_client(example: AuthExample) -> None:
    """OAuth 2.1 4.3.1: another client cannot use a client's refresh token."""
    owner = example.register_public_client()
    stranger = example.register_public_client()
    tokens = example.code_flow(owner)
    refused = example.token({"grant_type": "refresh_token", "client_id": stranger,
                             "refresh_token": tokens["refresh_token"]})
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"


def test_client_credentials_for_a_machine_client_auth_10(example: AuthExample) -> None:
    """AUTH-10: a confidential client registered for client credentials gets a token
    (no refresh token) that reaches a tool; a wrong secret gets invalid_client."""
    registered = example.register(grant_types=["client_credentials"],
                                  token_endpoint_auth_method="client_secret_basic",
                                  client_name="a cron job")
    assert registered.status_code == 201, registered.text
    info = registered.json()
    answer = example.token({"grant_type": "client_credentials",
                            "resource": example.mcp_url},
                           auth=(info["client_id"], info["client_secret"]))
    assert answer.status_code == 200, answer.text
    tokens = answer.json()
    assert "refresh_token" not in tokens
    claims = jwt.decode(tokens["access_token"], options={"verify_signature": False})
    assert claims["sub"] == info["client_id"] and claims["aud"] == example.mcp_url
    assert call_add(example, tokens["access_token"]) == "42"
    wrong = example.token({"grant_type": "client_credentials"},
                          auth=(info["client_id"], "not-the-secret"))
    assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_client"


def test_dynamic_client_registration_auth_3(example: AuthExample) -> None:
    """AUTH-3, RFC 7591: a registration gets a client_id (and a secret only if the client
    authenticates); the answer echoes the metadata."""
    public = example.register(redirect_uris=[REDIRECT_URI], client_name="public",
                              token_endpoint_auth_method="none")
    assert public.status_code == 201
    body = public.json()
    assert body["client_id"] and "client_secret" not in body
    assert body["redirect_uris"] == [REDIRECT_URI] and body["client_name"] == "public"
    confidential = example.register(redirect_uris=["https://app.example/callback"])
    assert confidential.status_code == 201
    assert confidential.json()["token_endpoint_auth_method"] == "client_secret_basic"
    assert confidential.json()["client_secret"]


@pytest.mark.parametrize("metadata", [
    {"redirect_uris": ["http://attacker.example/cb"]},
    {"redirect_uris": ["javascript:alert(1)"]},
    {"redirect_uris": ["https://app.example/cb#fragment"]},
    {"redirect_uris": []},
    {"grant_types": ["client_credentials"], "token_endpoint_auth_method": "none"},
], ids=["http-not-loopback", "javascript", "fragment", "no-redirect", "public-machine"])
def test_bad_registrations_are_refused_auth_17(example: AuthExample,
                                               metadata: dict[str, Any]) -> None:
    """AUTH-17, RFC 7591 3.2.2: redirect URIs are https or loopback http, without a
    fragment; a client credentials client must authenticate."""
    answer = example.register(**metadata)
    assert answer.status_code == 400
    assert answer.json()["error"] in {"invalid_redirect_uri", "invalid_client_metadata"}


def test_application_type_is_echoed_and_checked(example: AuthExample) -> None:
    """2025-11-25 (DCR application_type, OpenID Connect Registration): native and web are
    kept and echoed, web by default; another value is invalid_client_metadata."""
    native = example.register(redirect_uris=[REDIRECT_URI], application_type="native",
                              token_endpoint_auth_method="none")
    assert native.status_code == 201 and native.json()["application_type"] == "native"
    default = example.register(redirect_uris=[REDIRECT_URI],
                               token_endpoint_auth_method="none")
    assert default.json()["application_type"] == "web"
    odd = example.register(redirect_uris=[REDIRECT_URI], application_type="toaster")
    assert odd.status_code == 400 and odd.json()["error"] == "invalid_client_metadata"


def test_requests_to_another_host_name_are_refused(example: AuthExample) -> None:
    """DNS rebinding: the authorization server answers only requests addressed to its
    issuer's host, so a page that rebinds its name to 127.0.0.1 reads nothing."""
    answer = requests.post(f"{example.origin}/register", json={
        "redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none"},
        headers={"Host": "attacker.example"}, timeout=HTTP_TIMEOUT)
    assert answer.status_code == 421
    assert "client_id" not in answer.text


def test_registration_body_must_be_a_json_object(example: AuthExample) -> None:
    """RFC 7591 3.2.2: a body that is no JSON object gets 400, not a crash."""
    for body in (b"[1, 2]", b"not json"):
        answer = requests.post(f"{example.origin}/register", data=body,
                               headers={"Content-Type": "application/json"},
                               timeout=HTTP_TIMEOUT)
        assert answer.status_code == 400
        assert answer.json()["error"] == "invalid_request"


# -- the consent page ------------------------------------------------------------------------


def _consent(asking: AuthExample, client_id: str, challenge: str) -> tuple[str, str]:
    page = asking.authorize(response_type="code", client_id=client_id,
                            redirect_uri=REDIRECT_URI, code_challenge=challenge,
                            code_challenge_method="S256", state="st")
    assert page.status_code == 200 and page.headers["Content-Type"].startswith("text/html")
    assert page.headers["X-Frame-Options"] == "DENY"
    assert "by hand" in page.text and "Approve" in page.text and "Deny" in page.text
    found = re.search(r'name="consent" value="([^"]+)"', page.text)
    assert found is not None
    return found.group(1), page.text


def _answer(asking: AuthExample, consent: str, decision: str) -> requests.Response:
    return requests.post(f"{asking.origin}/authorize",
                         data={"consent": consent, "decision": decision},
                         allow_redirects=False, timeout=HTTP_TIMEOUT)


def test_consent_denied_gives_access_denied(asking: AuthExample) -> None:
    """RFC 6749 4.1.2.1, RFC 9207: Deny sends the client access_denied with its state and
    the issuer; the consent cannot be answered twice."""
    client_id = asking.register_public_client()
    consent, _ = _consent(asking, client_id, pkce()[1])
    denied = _answer(asking, consent, "deny")
    assert denied.status_code == 302
    back = query_of(denied.headers["Location"])
    assert back["error"] == "access_denied"
    assert back["state"] == "st" and back["iss"] == asking.origin
    assert _answer(asking, consent, "approve").status_code == 400


def test_consent_approved_gives_a_code(asking: AuthExample) -> None:
    """Approve sends the client a code that exchanges for a token."""
    client_id = asking.register_public_client()
    verifier, challenge = pkce()
    consent, _ = _consent(asking, client_id, challenge)
    approved = _answer(asking, consent, "approve")
    back = query_of(approved.headers["Location"])
    assert back["state"] == "st" and back["iss"] == asking.origin
    tokens = asking.token({"grant_type": "authorization_code", "code": back["code"],
                           "client_id": client_id, "redirect_uri": REDIRECT_URI,
                           "code_verifier": verifier})
    assert tokens.status_code == 200, tokens.text
    assert call_add(asking, tokens.json()["access_token"]) == "42"


def test_unknown_consent_is_refused(asking: AuthExample) -> None:
    """A consent id that was never issued (a forged form) grants nothing."""
    answer = _answer(asking, "forged", "approve")
    assert answer.status_code == 400 and "Location" not in answer.headers


# -- tokens of another server ----------------------------------------------------------------


def test_token_of_another_authorization_server_never_reaches_a_tool_v0618_40(
        example: AuthExample, asking: AuthExample) -> None:
    """V0618-40, V1125-29: a valid token of another issuer (another key, another
    audience) gets 401 at /mcp."""
    client_id = asking.register_public_client()
    verifier, challenge = pkce()
    consent, _ = _consent(asking, client_id, challenge)
    back = query_of(_answer(asking, consent, "approve").headers["Location"])
    foreign = asking.token({"grant_type": "authorization_code", "code": back["code"],
                            "client_id": client_id, "redirect_uri": REDIRECT_URI,
                            "code_verifier": verifier}).json()["access_token"]
    answer = requests.post(example.mcp_url, json=INITIALIZE,
                           headers={**MCP_HEADERS, "Authorization": f"Bearer {foreign}"},
                           timeout=HTTP_TIMEOUT)
    assert answer.status_code == 401


def test_example_refuses_to_serve_stdio(tmp_path: Path) -> None:
    """AUTH-1: authorization is for HTTP; without --http the example explains and exits."""
    import subprocess
    import sys

    from tests.auth_example_helpers import AUTH_SERVER

    finished = subprocess.run([sys.executable, str(AUTH_SERVER)], capture_output=True,
                              timeout=30, stdin=subprocess.DEVNULL)
    assert finished.returncode == 2
    assert b"HTTP" in finished.stderr


# -- the two examples together ---------------------------------------------------------------


def test_the_oauth_client_example_authorizes_and_calls_a_tool_then_reuses_its_tokens(
        example: AuthExample, tmp_path: Path) -> None:
    """examples/oauth_client.py against examples/auth_server.py --auto-approve: our OAuth
    client discovers, registers, authorizes with PKCE and calls ``add``; the tokens it
    keeps (in a 0600 file) serve a second run without authorizing again."""
    tokens = tmp_path / "tokens.json"
    command = [sys.executable, str(ROOT / "examples" / "oauth_client.py"),
               "--url", example.mcp_url, "--headless", "--token-file", str(tokens),
               "--call", "add", '{"a": 2, "b": 40}']
    first = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert first.returncode == 0, first.stderr
    assert "connected to" in first.stdout and first.stdout.rstrip().endswith("42")
    assert tokens.stat().st_mode & 0o777 == 0o600
    kept = tokens.read_text()
    second = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert second.returncode == 0, second.stderr
    assert second.stdout.rstrip().endswith("42")
    # Neither registered nor authorized again: the same client and the same tokens.
    assert json.loads(tokens.read_text()) == json.loads(kept)
