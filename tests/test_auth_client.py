"""The OAuth client (mcp_sync.auth) against a protected mcp_sync server and a small
authorization server on 127.0.0.1 (tests/auth_client_helpers.py): the flow, refresh,
step-up, storage, the loopback redirect, and each failure as a clear error in bounded time.
"""

from __future__ import annotations

import os
import socket
import stat
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from mcp_sync import Client
from mcp_sync.auth import (
    AuthorizationError,
    BearerToken,
    ClientCredentials,
    FileTokenStore,
    LoopbackRedirect,
    MemoryTokenStore,
    OAuth,
    TokenStore,
)
from tests.auth_client_helpers import ProtectedServer, browser, query_of
from tests.conftest import EXAMPLES
from tests.helpers import LEGACY_ERA, load_module

REDIRECT = "http://127.0.0.1:1/callback"  # never listened on: the callable plays the browser
WAIT = 20.0

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def protected() -> Iterator[ProtectedServer]:
    server = ProtectedServer()
    try:
        yield server
    finally:
        server.stop()


def oauth(**options: Any) -> OAuth:
    options.setdefault("redirect_uri", REDIRECT)
    options.setdefault("authorize", browser)
    return OAuth(client_name="tests", http_timeout=5, **options)


def add(client: Client) -> str:
    result = client.call_tool("add", {"a": 2, "b": 3})
    return str(result.content[0].text)  # type: ignore[union-attr]


def test_authorization_code_flow_completes_and_calls_a_tool(protected: ProtectedServer) -> None:
    """V0618-38, V1125-20/21 (discovery), V1125-27 (dynamic registration), AUTH-9 and
    V1125-28 (PKCE S256, checked by the server), V0618-39 (resource= on the authorization
    and the token request, the resource metadata's value), V1125-23 (scopes from the
    challenge), AUTH-11 (Bearer header), V0618-43 (state)."""
    with Client.http(protected.url, auth=oauth(), timeout=WAIT) as client:
        assert add(client) == "5"
    authorize = protected.requests_to("/authorize")
    assert len(authorize) == 1
    query = authorize[0].query
    assert query["code_challenge_method"] == "S256"
    assert query["resource"] == protected.url
    assert query["scope"] == "mcp"
    assert query["state"]
    (token_request,) = protected.requests_to("/token")
    assert token_request.form["resource"] == protected.url
    assert token_request.form["grant_type"] == "authorization_code"
    registration = protected.requests_to("/register")
    assert len(registration) == 1
    bearer = [a for a in protected.requests_to("/mcp")
              if a.headers.get("Authorization", "").startswith("Bearer at-")]
    assert bearer, "no MCP request carried the token"
    assert all("access_token" not in a.path for a in protected.asked)  # AUTH-12


def test_a_refused_token_is_refreshed_without_the_caller_noticing(
        protected: ProtectedServer) -> None:
    """RFC 6749 §6: when the server refuses the token (401), the refresh token gets a new
    one and the call is sent again; the user is not asked again."""
    with Client.http(protected.url, auth=oauth(), timeout=WAIT) as client:
        assert add(client) == "5"
        protected.expire_all()
        assert add(client) == "5"
    grants = [a.form["grant_type"] for a in protected.requests_to("/token")]
    assert grants == ["authorization_code", "refresh_token"]
    assert len(protected.requests_to("/authorize")) == 1


def test_a_token_about_to_expire_is_refreshed_before_it_is_sent(
        protected: ProtectedServer) -> None:
    """A long-lived client: a token whose lifetime ran out is refreshed before the next
    request, which the server never refuses."""
    store = MemoryTokenStore()
    with Client.http(protected.url, auth=oauth(storage=store), timeout=WAIT) as client:
        assert add(client) == "5"
        refused_before = _refusals(protected)
        (key,) = [k for k in _keys(store, protected) if k.startswith("token ")]
        token = store.load(key)
        assert token is not None
        token["expires_at"] = time.time() - 1  # its lifetime is over
        store.save(key, token)
        assert add(client) == "5"
        assert _refusals(protected) == refused_before
    grants = [a.form["grant_type"] for a in protected.requests_to("/token")]
    assert grants == ["authorization_code", "refresh_token"]


def _refusals(protected: ProtectedServer) -> int:
    return sum(1 for a in protected.requests_to("/mcp")
               if not a.headers.get("Authorization"))


def _keys(store: MemoryTokenStore, protected: ProtectedServer) -> list[str]:
    issuer = protected.origin
    return [key for key in (f"token {protected.url} {issuer}", f"client {issuer}",
                            f"server {protected.url}") if store.load(key) is not None]


def test_many_threads_meeting_a_401_share_one_refresh(protected: ProtectedServer) -> None:
    """Obtaining a token is serialised: eight calls refused at once cause one refresh."""
    with Client.http(protected.url, auth=oauth(), timeout=WAIT) as client:
        assert add(client) == "5"
        protected.expire_all()
        results: list[str] = []
        barrier = threading.Barrier(8)

        def call() -> None:
            barrier.wait(WAIT)
            results.append(add(client))

        threads = [threading.Thread(target=call, name=f"test:caller-{n}") for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT)
        assert results == ["5"] * 8
    grants = [a.form["grant_type"] for a in protected.requests_to("/token")]
    assert grants == ["authorization_code", "refresh_token"]


def test_insufficient_scope_steps_up_with_the_union_of_scopes(
        protected: ProtectedServer) -> None:
    """V1125-24/25, SEP-2350: a 403 insufficient_scope asks the user again for the scopes
    held before and those the challenge names, and the call is sent again."""
    protected.write_scope = "files:write"
    with Client.http(protected.url, auth=oauth(), timeout=WAIT) as client:
        assert add(client) == "5"
        result = client.call_tool("write", {"text": "x"})
        assert result.content[0].text == "wrote x"  # type: ignore[union-attr]
    scopes = [a.query["scope"].split() for a in protected.requests_to("/authorize")]
    assert scopes == [["mcp"], ["mcp", "files:write"]]


def test_step_up_gives_up_after_a_bounded_number_of_tries(protected: ProtectedServer) -> None:
    """V1125-25: a server that keeps answering insufficient_scope is not asked forever; the
    caller gets an AuthorizationError with the 403."""
    protected.write_scope = "files:write"
    protected.scopes_supported = ["mcp"]  # the grant never includes files:write
    real_issue = protected._issue

    def without_write(scopes: set[str], refresh: bool = True) -> Any:
        return real_issue(scopes - {"files:write"}, refresh)

    protected._issue = without_write  # type: ignore[method-assign]
    with Client.http(protected.url, auth=oauth(), timeout=WAIT) as client:
        with pytest.raises(AuthorizationError) as caught:
            client.call_tool("write", {"text": "x"})
        assert caught.value.status == 403
    assert 2 <= len(protected.requests_to("/authorize")) <= 3


def test_a_static_bearer_token_is_sent(protected: ProtectedServer) -> None:
    """AUTH-11: BearerToken sends a token obtained elsewhere on every request."""
    protected.tokens["given"] = ({"mcp"}, time.time() + 600)
    with Client.http(protected.url, auth=BearerToken("given"), timeout=WAIT) as client:
        assert add(client) == "5"
    assert protected.requests_to("/token") == []


def test_a_refused_static_token_is_a_clear_error(protected: ProtectedServer) -> None:
    """AUTH-14: a 401 to a static token raises AuthorizationError, naming the status."""
    with pytest.raises(AuthorizationError) as caught:
        Client.http(protected.url, auth=BearerToken("wrong"), timeout=WAIT)
    assert caught.value.status == 401


def test_client_credentials_for_a_machine_client(protected: ProtectedServer) -> None:
    """RFC 6749 §4.4: ClientCredentials discovers the token endpoint and asks for a token
    with its own credentials (client_secret_basic) and the resource."""
    auth = ClientCredentials("robot", "robot-secret", http_timeout=5)
    with Client.http(protected.url, auth=auth, timeout=WAIT) as client:
        assert add(client) == "5"
    (token_request,) = protected.requests_to("/token")
    assert token_request.form["grant_type"] == "client_credentials"
    assert token_request.form["resource"] == protected.url
    assert protected.requests_to("/authorize") == []


def test_client_credentials_refused_is_a_clear_error(protected: ProtectedServer) -> None:
    auth = ClientCredentials("robot", "wrong", http_timeout=5)
    with pytest.raises(AuthorizationError, match="client credentials grant"):
        Client.http(protected.url, auth=auth, timeout=WAIT)


# --- the loopback redirect --------------------------------------------------------------------


def test_loopback_redirect_catches_the_callback(protected: ProtectedServer) -> None:
    """RFC 8252 §7.3: LoopbackRedirect listens on 127.0.0.1, the browser (here a callable
    that follows the redirects) comes back to it, and the flow completes."""
    seen: list[str] = []

    def user(url: str) -> None:
        seen.append(url)
        response = requests.get(url, timeout=10)  # follows the redirect to the listener
        response.close()

    redirect = LoopbackRedirect(open_browser=user, timeout=WAIT)
    auth = OAuth(client_name="tests", redirect=redirect, http_timeout=5)
    with Client.http(protected.url, auth=auth, timeout=WAIT) as client:
        assert add(client) == "5"
    assert len(seen) == 1
    redirect_uri = query_of(seen[0])["redirect_uri"]
    assert redirect_uri.startswith("http://127.0.0.1:") and redirect_uri.endswith("/callback")
    assert [c["application_type"] for c in protected.clients.values()] == ["native"]
    # The port was freed: it can be bound again.
    with LoopbackRedirect(port=redirect.port).open() as again:
        assert again.redirect_uri == redirect_uri


def test_loopback_redirect_times_out_with_a_clear_error(protected: ProtectedServer) -> None:
    """Nothing waits forever: a user who never comes back ends in AuthorizationError."""
    redirect = LoopbackRedirect(open_browser=False, timeout=0.5)
    auth = OAuth(client_name="tests", redirect=redirect, http_timeout=5)
    started = time.monotonic()
    with pytest.raises(AuthorizationError, match="not completed within"):
        Client.http(protected.url, auth=auth, timeout=WAIT)
    assert time.monotonic() - started < 10


# --- failures ---------------------------------------------------------------------------------


def _free_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


def test_unreachable_authorization_server_fails_fast(protected: ProtectedServer) -> None:
    """V0618-38: the authorization server named by the resource metadata cannot be
    reached: AuthorizationError names it, in far less than any timeout."""
    down = _free_url()
    protected.authorization_servers = [down]
    started = time.monotonic()
    with pytest.raises(AuthorizationError, match="cannot reach"):
        Client.http(protected.url, auth=oauth(), timeout=WAIT)
    assert time.monotonic() - started < 10


def test_a_wrong_state_is_refused_before_the_token_request(protected: ProtectedServer) -> None:
    """V0618-43: a redirect back with another state is not used."""
    protected.state_override = "forged"
    with pytest.raises(AuthorizationError, match="state"):
        Client.http(protected.url, auth=oauth(), timeout=WAIT)
    assert protected.requests_to("/token") == []


def test_a_wrong_iss_is_refused_before_the_token_request(protected: ProtectedServer) -> None:
    """RFC 9207, SEP-2468: a redirect back naming another issuer is not used."""
    protected.iss_override = "https://evil.example.com"
    with pytest.raises(AuthorizationError, match="issuer"):
        Client.http(protected.url, auth=oauth(), timeout=WAIT)
    assert protected.requests_to("/token") == []


def test_refused_registration_is_a_clear_error(protected: ProtectedServer) -> None:
    """RFC 7591: the authorization server refuses to register us; nothing else is tried."""
    protected.refuse_registration = True
    with pytest.raises(AuthorizationError, match="refused the registration"):
        Client.http(protected.url, auth=oauth(), timeout=WAIT)
    assert protected.requests_to("/authorize") == []


def test_no_s256_means_no_authorization(protected: ProtectedServer) -> None:
    """V1125-28: an authorization server listing PKCE methods without S256 is refused."""
    protected.metadata_overrides = {"code_challenge_methods_supported": ["plain"]}
    with pytest.raises(AuthorizationError, match="S256"):
        Client.http(protected.url, auth=oauth(), timeout=WAIT)
    assert protected.requests_to("/authorize") == []


def test_a_javascript_authorization_endpoint_is_refused(protected: ProtectedServer) -> None:
    """V1125-30: endpoints from metadata must be https (or http on localhost)."""
    protected.metadata_overrides = {"authorization_endpoint": "javascript:alert(1)"}
    with pytest.raises(AuthorizationError, match="only https"):
        Client.http(protected.url, auth=oauth(), timeout=WAIT)


def test_an_authorize_callable_that_fails_is_an_authorization_error(
        protected: ProtectedServer) -> None:
    def cancelled(url: str) -> str:
        raise RuntimeError("the user closed the window")

    with pytest.raises(AuthorizationError, match="closed the window"):
        Client.http(protected.url, auth=oauth(authorize=cancelled), timeout=WAIT)


def test_authorize_needs_a_redirect_uri() -> None:
    with pytest.raises(ValueError, match="redirect_uri"):
        OAuth(authorize=browser)
    with pytest.raises(ValueError, match="https"):
        OAuth(client_metadata_url="http://app.example.com/client.json")


# --- storage ----------------------------------------------------------------------------------


def test_file_store_is_private_and_survives_the_client(
        protected: ProtectedServer, tmp_path: Path) -> None:
    """AUTH-15, V0618-43: tokens are stored securely: the file is created 0600 and
    replaced whole; a second client with the same file needs no new authorization."""
    path = tmp_path / "tokens" / "mcp.json"
    with Client.http(protected.url, auth=oauth(storage=FileTokenStore(path)),
                     timeout=WAIT) as client:
        assert add(client) == "5"
    mode = stat.S_IMODE(os.stat(path).st_mode)
    assert mode == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert [p.name for p in path.parent.iterdir()] == ["mcp.json"]  # no temporary left
    with Client.http(protected.url, auth=oauth(storage=FileTokenStore(path)),
                     timeout=WAIT) as client:
        assert add(client) == "5"
    assert len(protected.requests_to("/authorize")) == 1


def test_file_store_round_trip_and_delete(tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path / "t.json")
    assert isinstance(store, TokenStore)
    assert store.load("a") is None
    store.save("a", {"x": 1})
    store.save("b", {"y": [1, 2]})
    assert FileTokenStore(tmp_path / "t.json").load("a") == {"x": 1}
    store.delete("a")
    store.delete("missing")
    assert store.load("a") is None and store.load("b") == {"y": [1, 2]}
    (tmp_path / "t.json").write_text("not json")
    assert store.load("b") is None  # an unreadable file is replaced at the next save
    store.save("c", {})
    assert store.load("c") == {}


def test_tokens_are_kept_per_server_and_issuer(protected: ProtectedServer) -> None:
    """V0618-41: the token is filed under the server and the issuer that granted it."""
    store = MemoryTokenStore()
    with Client.http(protected.url, auth=oauth(storage=store), timeout=WAIT) as client:
        assert add(client) == "5"
    token = store.load(f"token {protected.url} {protected.origin}")
    assert token is not None
    assert token["issuer"] == protected.origin and token["resource"] == protected.url


# --- authorizing before connecting, and in two steps ------------------------------------------


def test_login_authorizes_before_the_first_call(protected: ProtectedServer) -> None:
    """login() obtains the token at once (discovery from the well-known URLs, V1125-20), so
    no MCP request is ever refused; a second login finds the token kept."""
    auth = oauth()
    auth.login(protected.url)
    auth.login(protected.url)
    assert len(protected.requests_to("/authorize")) == 1
    with Client.http(protected.url, auth=auth, timeout=WAIT) as client:
        assert add(client) == "5"
    assert _refusals(protected) == 0


def test_a_web_app_authorizes_in_two_steps(protected: ProtectedServer) -> None:
    """start_authorization gives the URL to redirect the user to; finish_authorization
    takes the URL they came back at, checks its state and obtains the token."""
    auth = OAuth(client_name="web app", redirect_uri="https://app.example.com/callback",
                 http_timeout=5)
    with pytest.raises(AuthorizationError, match="start_authorization"):
        Client.http(protected.url, auth=auth, timeout=WAIT)  # no token yet, no browser here
    url = auth.start_authorization(protected.url)
    assert query_of(url)["redirect_uri"] == "https://app.example.com/callback"
    callback = browser(url)
    with pytest.raises(AuthorizationError, match="matches no authorization"):
        auth.finish_authorization(callback.replace("state=", "state=x"))
    auth.finish_authorization(callback)
    with pytest.raises(AuthorizationError, match="already used"):
        auth.finish_authorization(callback)
    with Client.http(protected.url, auth=auth, timeout=WAIT) as client:
        assert add(client) == "5"
    # SEP-837: an app whose redirect is an https URL registers as a web application.
    assert [c["application_type"] for c in protected.clients.values()] == ["web"]


def test_the_oauth_client_example_runs_against_a_protected_server(
        protected: ProtectedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """examples/oauth_client.py: authorizes (headless, the server approving at once),
    keeps the tokens in a 0600 file, lists the tools and calls one."""
    example = load_module(EXAMPLES / "oauth_client.py")
    tokens = tmp_path / "tokens.json"
    argv = ["--url", protected.url, "--headless", "--token-file", str(tokens),
            "--call", "add", '{"a": 40, "b": 2}']
    assert example.main(argv) == 0
    out = capsys.readouterr().out
    assert "connected to protected" in out and "add: Add two numbers." in out
    assert out.strip().endswith("42")
    assert stat.S_IMODE(os.stat(tokens).st_mode) == 0o600
    assert example.main(argv) == 0  # the kept token: no second authorization
    assert len(protected.requests_to("/authorize")) == 1


def test_the_auth_module_documents_its_public_names() -> None:
    """STYLE habit 11: every public name of mcp_sync.auth has a docstring."""
    import inspect

    import mcp_sync.auth

    for name in mcp_sync.auth.__all__:
        value = getattr(mcp_sync.auth, name)
        assert inspect.isclass(value) and (value.__doc__ or "").strip(), name


class _Keyring:
    """Enough of the keyring package's API for KeyringTokenStore."""

    class errors:  # named as the module it stands for
        class PasswordDeleteError(Exception):
            pass

    def __init__(self) -> None:
        self.saved: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, key: str) -> str | None:
        return self.saved.get((service, key))

    def set_password(self, service: str, key: str, value: str) -> None:
        self.saved[(service, key)] = value

    def delete_password(self, service: str, key: str) -> None:
        if (service, key) not in self.saved:
            raise self.errors.PasswordDeleteError(key)
        del self.saved[(service, key)]


def test_keyring_store_files_entries_under_its_service(monkeypatch: pytest.MonkeyPatch) -> None:
    """KeyringTokenStore keeps each entry as a keyring password of its service."""
    from mcp_sync.auth import KeyringTokenStore

    fake = _Keyring()
    monkeypatch.setitem(sys.modules, "keyring", fake)
    store = KeyringTokenStore(service="demo")
    store.save("token x", {"access_token": "a"})
    assert ("demo", "token x") in fake.saved
    assert store.load("token x") == {"access_token": "a"}
    store.delete("token x")
    store.delete("token x")  # already gone: nothing happens
    assert store.load("token x") is None


def test_keyring_store_without_keyring_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_sync.auth import KeyringTokenStore

    monkeypatch.setitem(sys.modules, "keyring", None)
    with pytest.raises(ImportError, match=r"mcp_sync\[keyring\]"):
        KeyringTokenStore()


def test_the_old_transport_and_a_2025_03_26_server_are_authorized_too() -> None:
    """AUTH-6/7/8 with HTTP-37: a server without resource metadata whose POST endpoint
    answers 405 (a 2024-11-05 HTTP+SSE server): the authorization server is found at its
    origin, the GET stream and every POST to the message endpoint carry the token, and a
    POST refused later is refreshed and sent again."""
    protected = ProtectedServer(legacy_sse=True)
    try:
        url = f"{protected.origin}/sse"
        with Client.http(url, auth=oauth(), timeout=WAIT, **LEGACY_ERA) as client:
            assert add(client) == "5"
            protected.expire_all()
            assert add(client) == "5"
        stream = [a for a in protected.requests_to("/sse") if a.method == "GET"]
        assert stream and stream[0].headers["Authorization"].startswith("Bearer at-")
        posts = [a for a in protected.asked if a.path.startswith("/messages")]
        assert posts and all(a.headers.get("Authorization") for a in posts[-2:])
        (authorize,) = protected.requests_to("/authorize")
        assert authorize.query["resource"] == url
        assert protected.requests_to("/.well-known/oauth-authorization-server")[0].headers[
            "Mcp-Protocol-Version"] == "2025-03-26"  # AUTH-7
        grants = [a.form["grant_type"] for a in protected.requests_to("/token")]
        assert grants == ["authorization_code", "refresh_token"]
    finally:
        protected.stop()


def test_the_get_stream_carries_the_token(protected: ProtectedServer) -> None:
    """HTTP-17: in a legacy session the GET stream for server messages is sent with the
    token too."""
    with Client.http(protected.url, auth=oauth(), timeout=WAIT, **LEGACY_ERA) as client:
        assert add(client) == "5"
        protected.wait_for_get()
    gets = [a for a in protected.requests_to("/mcp") if a.method == "GET"]
    assert gets and all(a.headers["Authorization"].startswith("Bearer at-") for a in gets)


def test_a_server_refusing_a_brand_new_token_is_not_asked_again(
        protected: ProtectedServer) -> None:
    """A server that refuses the token just granted (it expects another audience, say)
    gets one authorization, not a loop: the call raises AuthorizationError with the 401."""
    protected.lifetime = -10  # every token is expired as it is issued
    with pytest.raises(AuthorizationError) as caught:
        Client.http(protected.url, auth=oauth(), timeout=WAIT)
    assert caught.value.status == 401
    assert len(protected.requests_to("/authorize")) == 1


def test_a_user_who_declines_gets_the_servers_refusal(protected: ProtectedServer) -> None:
    """RFC 6749 §4.1.2.1: an error redirect back (here through the loopback catcher, after
    a stray request it ignores) ends in AuthorizationError naming the error."""
    def user(url: str) -> None:
        redirect_uri = query_of(url)["redirect_uri"]
        with requests.get(redirect_uri.replace("/callback", "/favicon.ico"), timeout=10):
            pass  # not the redirect: answered and ignored
        requests.get(url, timeout=10).close()

    protected.deny = True
    auth = OAuth(redirect=LoopbackRedirect(open_browser=user, timeout=WAIT), http_timeout=5)
    with pytest.raises(AuthorizationError, match="access_denied"):
        Client.http(protected.url, auth=auth, timeout=WAIT)
    assert protected.requests_to("/token") == []


def test_client_credentials_ask_again_before_the_token_expires(
        protected: ProtectedServer) -> None:
    """RFC 6749 §4.4.3 issues no refresh token: a machine client's expiring token is
    replaced by a new grant before it is sent, and the server never refuses a request."""
    store = MemoryTokenStore()
    auth = ClientCredentials("robot", "robot-secret", storage=store, http_timeout=5)
    with Client.http(protected.url, auth=auth, timeout=WAIT) as client:
        assert add(client) == "5"
        key = f"token {protected.url} {protected.origin}"
        token = store.load(key)
        assert token is not None and "refresh_token" not in token
        token["expires_at"] = time.time() - 1
        store.save(key, token)
        refused_before = _refusals(protected)
        assert add(client) == "5"
        assert _refusals(protected) == refused_before
    grants = [a.form["grant_type"] for a in protected.requests_to("/token")]
    assert grants == ["client_credentials", "client_credentials"]
