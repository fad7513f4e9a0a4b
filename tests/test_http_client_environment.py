"""What requests brings to the HTTP client: the environment, a user's own Session, closing.

Every request the client makes goes through requests, so what the environment says
(proxies, ``NO_PROXY``, netrc credentials) and what a user's ``session_factory`` sets
(headers, auth objects) reach the server. The environment is read once, when the
transport is made. Each test serves a played MCP server on 127.0.0.1 and asserts on the
requests as that server saw them; as a proxy it sees each request's absolute target.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from werkzeug.wrappers import Response as WsgiResponse

from mcp_sync import Client
from mcp_sync.errors import ConnectionLost, HttpError
from mcp_sync.protocol._versions import KNOWN_VERSIONS
from mcp_sync.transports.http_client import HttpClientTransport
from tests.http_client_helpers import WAIT, FakeServer, Play, Seen, open_client, serving

pytestmark = pytest.mark.timeout(30)

_PROXY_VARIABLES = ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY",
                    "all_proxy", "NO_PROXY", "no_proxy")


@pytest.fixture
def serve() -> Iterator[Callable[[Any], FakeServer]]:
    yield from serving()


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in _PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NETRC", str(tmp_path / "no-netrc"))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _self_signed(folder: Path) -> tuple[str, str]:
    """A certificate for 127.0.0.1 and its key, as files."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(
            [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256()))
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    return str(cert_file), str(key_file)


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_a_proxy_from_the_environment_carries_every_request(
        serve: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """POST, GET and DELETE all go to the proxy the environment names, for the endpoint's
    own host (which does not even resolve here)."""
    play = Play("sse")
    play.get = lambda seen: WsgiResponse(status=405)
    proxy = serve(play)
    monkeypatch.setenv("HTTP_PROXY", proxy.url.removesuffix("/mcp"))
    with open_client("http://mcp.invalid/mcp") as client:
        client.list_tools()
        client.ping()
    methods = {seen.method for seen in proxy.seen}
    assert methods == {"POST", "GET", "DELETE"}
    assert all(seen.header("Host") == "mcp.invalid" for seen in proxy.seen)


def test_the_environment_is_read_once_when_the_transport_is_made(
        serve: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    proxy = serve(Play("json"))
    monkeypatch.setenv("HTTP_PROXY", proxy.url.removesuffix("/mcp"))
    transport = HttpClientTransport("http://mcp.invalid/mcp", listen=False)
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{_free_port()}")  # not read again
    with Client(transport, timeout=WAIT, supported_versions=KNOWN_VERSIONS) as client:
        client.ping()
    assert [seen.method for seen in proxy.seen] == ["POST", "POST", "POST", "DELETE"]


def test_no_proxy_hosts_are_reached_directly(
        serve: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    server = serve(Play("json"))
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{_free_port()}")  # nothing there
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with open_client(server.url, listen=False) as client:
        client.ping()
    assert server.requests("POST")


def test_a_dead_proxy_is_a_lost_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{_free_port()}")
    with pytest.raises(ConnectionLost, match="cannot reach"):
        open_client("http://mcp.invalid/mcp")


def test_netrc_credentials_reach_the_server(
        serve: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login robin password hood\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    server = serve(Play("json"))
    with open_client(server.url) as client:
        client.ping()
    assert {seen.method for seen in server.seen} == {"POST", "GET", "DELETE"}
    assert all(seen.header("Authorization") == _basic("robin", "hood")
               for seen in server.seen)


def test_a_users_session_brings_its_headers_and_auth_everywhere(serve: Any) -> None:
    """A Session from session_factory is used for every request: its headers and its
    auth object reach POSTs, the GET stream and the DELETE."""
    def factory() -> requests.Session:
        session = requests.Session()
        session.headers["X-Tenant"] = "blue"
        session.auth = requests.auth.HTTPBasicAuth("ada", "lovelace")
        return session

    server = serve(Play("sse"))
    transport = HttpClientTransport(server.url, session_factory=factory)
    with Client(transport, timeout=WAIT) as client:
        client.list_tools()
        server.wait_for(lambda seen: any(s.method == "GET" for s in seen))
    assert {seen.method for seen in server.seen} == {"POST", "GET", "DELETE"}
    assert all(seen.header("X-Tenant") == "blue" for seen in server.seen)
    assert all(seen.header("Authorization") == _basic("ada", "lovelace")
               for seen in server.seen)


def test_a_users_session_that_ignores_the_environment_ignores_its_proxy(
        serve: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    def factory() -> requests.Session:
        session = requests.Session()
        session.trust_env = False
        return session

    server = serve(Play("json"))
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{_free_port()}")  # nothing there
    transport = HttpClientTransport(server.url, session_factory=factory, listen=False)
    with Client(transport, timeout=WAIT) as client:
        client.ping()
    assert server.requests("POST")


@pytest.mark.parametrize("through_proxy", [False, True])
def test_close_ends_an_open_get_stream_at_once(
        serve: Any, monkeypatch: pytest.MonkeyPatch, through_proxy: bool) -> None:
    """The listener blocked reading an open GET stream, directly or through a proxy,
    is woken by close; no thread or descriptor is left (the leak check)."""
    play = Play("json")
    opened = threading.Event()

    def get(seen: Seen) -> WsgiResponse:
        assert play.server is not None
        _, body = play.server.stream()  # stays open until the server stops
        opened.set()
        return WsgiResponse(body, mimetype="text/event-stream")

    play.get = get
    server = serve(play)
    url = server.url
    if through_proxy:
        monkeypatch.setenv("HTTP_PROXY", server.url.removesuffix("/mcp"))
        url = "http://mcp.invalid/mcp"
    client = open_client(url)
    try:
        client.ping()
        assert opened.wait(WAIT)
    finally:
        started = time.monotonic()
        client.close()
    assert time.monotonic() - started < 1.0


def test_a_users_session_reads_are_woken_by_close_too(serve: Any) -> None:
    """An answer that has not begun, on a user's Session, ends at close."""
    play = Play("json")
    arrived: queue.Queue[None] = queue.Queue()

    def tool(message: dict[str, Any]) -> Any:
        assert play.server is not None
        feed, _ = play.server.stream()
        arrived.put(None)
        feed.get(timeout=WAIT)  # released when the server stops
        return WsgiResponse(b"")

    play.tool = tool
    server = serve(play)
    transport = HttpClientTransport(server.url, session_factory=requests.Session,
                                    listen=False)
    client = Client(transport, timeout=WAIT)
    future = client.call_tool_async("hang")
    arrived.get(timeout=WAIT)
    started = time.monotonic()
    client.close()
    assert time.monotonic() - started < 1.0
    assert future.exception(WAIT) is not None


@pytest.mark.parametrize("mode", ["json", "sse"])
def test_https_with_the_ca_bundle_the_environment_names(
        serve: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mode: str) -> None:
    cert, key = _self_signed(tmp_path)
    server = serve(Play(mode), ssl_context=(cert, key))
    assert server.url.startswith("https://")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", cert)
    with open_client(server.url) as client:
        assert client.list_tools()[0].name == "echo"
    assert {seen.method for seen in server.seen} == {"POST", "GET", "DELETE"}


def test_https_to_a_server_we_cannot_verify_fails_clearly(
        serve: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    server = serve(Play("json"), ssl_context=(cert, key))
    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    with pytest.raises(HttpError, match=r"(?i)certificate"):
        open_client(server.url)
    assert not server.requests("POST")


def test_a_redirect_of_the_endpoint_is_followed(serve: Any) -> None:
    """A POST answered with 307 is sent again, with its body, where the answer says."""
    play = Play("json")
    server = serve(play)

    def moved(seen: Seen) -> WsgiResponse:
        return WsgiResponse(status=307, headers={"Location": server.url})

    old = serve(moved)
    with open_client(old.url, listen=False) as client:
        assert client.list_tools()[0].name == "echo"
    assert [seen.body["method"] for seen in server.requests("POST")] == [
        "initialize", "notifications/initialized", "tools/list"]
