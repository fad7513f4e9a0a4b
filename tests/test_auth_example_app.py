"""The authorization server of examples/auth_server.py in process, through werkzeug's test
client: client ID metadata documents (V1125-26), with the document's fetcher given so no
network is needed, the default fetcher's guards on their own, and plain HTTP refused
beyond loopback (AUTH-16)."""

from __future__ import annotations

from typing import Any

import pytest
from werkzeug.test import Client as WsgiClient

from tests.auth_example_helpers import authorization_server_module, pkce, query_of

ISSUER = "http://localhost"  # where werkzeug's test client sends its requests
CLIENT_URL = "https://app.example/oauth/client.json"
CALLBACK = "http://127.0.0.1:7777/callback"

authorization = authorization_server_module()


def serving(documents: dict[str, Any], issuer: str = ISSUER,
            ) -> tuple[WsgiClient, list[str]]:
    """The authorization server, auto-approving, fetching documents from ``documents``;
    also the list of URLs it fetched."""
    fetched: list[str] = []

    def fetch(url: str) -> dict[str, Any]:
        fetched.append(url)
        if url not in documents:
            raise authorization.ClientMetadataError(f"{url}: 404")
        document: dict[str, Any] = documents[url]
        return document

    app = authorization.AuthorizationServerApp(issuer, [f"{issuer}/mcp"], auto_approve=True,
                                               fetch_metadata=fetch)
    return WsgiClient(app), fetched


def authorize(client: WsgiClient, client_id: str, redirect_uri: str = CALLBACK,
              challenge: str | None = None) -> Any:
    return client.get("/authorize", query_string={
        "response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri,
        "code_challenge": challenge or pkce()[1], "code_challenge_method": "S256",
        "state": "s"})


def test_metadata_document_client_completes_the_flow_v1125_26() -> None:
    """V1125-26: an https client_id is fetched as the client's metadata document; its
    redirect URI is honoured and the client, public, exchanges the code with PKCE."""
    client, fetched = serving({CLIENT_URL: {
        "client_id": CLIENT_URL, "client_name": "App", "redirect_uris": [CALLBACK]}})
    verifier, challenge = pkce()
    answer = authorize(client, CLIENT_URL, challenge=challenge)
    assert answer.status_code == 302, answer.text
    back = query_of(answer.headers["Location"])
    assert back["iss"] == ISSUER
    tokens = client.post("/token", data={
        "grant_type": "authorization_code", "code": back["code"], "client_id": CLIENT_URL,
        "redirect_uri": CALLBACK, "code_verifier": verifier})
    assert tokens.status_code == 200, tokens.text
    assert tokens.json["access_token"]
    assert fetched and set(fetched) == {CLIENT_URL}


@pytest.mark.parametrize("document", [
    {"client_id": "https://other.example/client.json", "client_name": "App",
     "redirect_uris": [CALLBACK]},
    {"client_id": CLIENT_URL, "client_name": "App"},
    {"client_id": CLIENT_URL, "client_name": "App", "redirect_uris": CALLBACK},
    {"client_id": CLIENT_URL, "client_name": "App",
     "redirect_uris": ["http://attacker.example/cb"]},
], ids=["id-mismatch", "no-redirect-uris", "redirect-uris-not-a-list", "bad-redirect"])
def test_unacceptable_metadata_documents_are_refused_v1125_26(document: dict[str, Any],
                                                               ) -> None:
    """V1125-26: the document must name itself as client_id and list acceptable redirect
    URIs; otherwise the client is unknown and nothing is redirected."""
    client, _ = serving({CLIENT_URL: document})
    answer = authorize(client, CLIENT_URL)
    assert answer.status_code == 400 and "Location" not in answer.headers


def test_redirect_uri_not_in_the_document_is_refused() -> None:
    """AUTH-17: a metadata document client is held to its own redirect URIs."""
    client, _ = serving({CLIENT_URL: {
        "client_id": CLIENT_URL, "client_name": "App", "redirect_uris": [CALLBACK]}})
    answer = authorize(client, CLIENT_URL, redirect_uri="http://127.0.0.1:7777/other")
    assert answer.status_code == 400 and "Location" not in answer.headers


def test_unreachable_document_means_an_unknown_client() -> None:
    client, fetched = serving({})
    answer = authorize(client, CLIENT_URL)
    assert answer.status_code == 400 and fetched == [CLIENT_URL]


@pytest.mark.parametrize("url", [
    "http://app.example/client.json",
    "https://app.example",
    "https://127.0.0.1/client.json",
    "https://localhost/client.json",
    "https://10.1.2.3/client.json",
    "file:///etc/passwd",
], ids=["http", "no-path", "loopback", "localhost", "private", "file"])
def test_default_fetcher_guards_against_ssrf_v1125_26(url: str) -> None:
    """V1125-26 (SSRF): the default fetcher reaches only https URLs with a path on public
    addresses; the others are refused before any connection."""
    with pytest.raises(authorization.ClientMetadataError):
        authorization.fetch_client_metadata(url)


@pytest.mark.parametrize("path", ["/token", "/authorize"])
def test_plain_http_beyond_loopback_is_refused_auth_16(path: str) -> None:
    """AUTH-16: the authorization endpoints are served over https, plain http only on
    loopback; a request to another host over http gets insecure_transport, not a 500."""
    client, _ = serving({}, issuer="http://mcp.example.com")
    answer = client.open(path, method="POST" if path == "/token" else "GET",
                         base_url="http://mcp.example.com",
                         data={"grant_type": "client_credentials"} if path == "/token"
                         else None)
    assert answer.status_code == 400
    assert answer.json["error"] == "insecure_transport"


def test_requests_for_another_host_are_misdirected() -> None:
    """A request whose Host is not the issuer's gets 421 and reaches no endpoint."""
    client, _ = serving({})
    answer = client.get("/.well-known/oauth-authorization-server",
                        base_url="http://127.0.0.1:8000")
    assert answer.status_code == 421
