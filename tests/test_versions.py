"""Version negotiation on both sides and the MCP-Protocol-Version header.

V0618-10 (the VERSION suite over every version), DES-4 (``supported_versions=`` on both
sides), V0618-11..14, NAMBIG-1/2 and DES-7 (the header, client and server).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from mcp_sync import Client, Context, ProtocolVersionError, Server
from mcp_sync.protocol._versions import KNOWN_VERSIONS
from mcp_sync.testing import open_client
from mcp_sync.transports.http_server import make_wsgi_app
from tests.http_client_helpers import FakeServer, Play, serving
from tests.http_client_helpers import open_client as open_http_client
from tests.http_server_helpers import INITIALIZE, WsgiPeer, call, messages_of

VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


def version_server(**options: Any) -> Server:
    server = Server("versions", version="1.0", **options)

    @server.tool()
    def version(ctx: Context) -> str:
        """The version this request is served with."""
        return ctx.protocol_version or "none"

    return server


def served_version(client: Client) -> str:
    text = client.call_tool("version", {}).content[0]
    return text.text  # type: ignore[union-attr,no-any-return]


# --- negotiation (V0618-10, DES-4) --------------------------------------------------------


def test_both_sides_offer_and_agree_on_the_newest_by_default_des_4() -> None:
    """DES-4 with both eras: by default both sides speak 2026-07-28; a client of the
    legacy versions only gets the newest of them."""
    with open_client(version_server()) as client:
        assert client.protocol_version == "2026-07-28"
        assert served_version(client) == "2026-07-28"
    with open_client(version_server(), supported_versions=KNOWN_VERSIONS) as client:
        assert client.protocol_version == "2025-11-25"
        assert served_version(client) == "2025-11-25"


@pytest.mark.parametrize("version", VERSIONS)
def test_client_offering_any_version_gets_it_v0618_10(version: str) -> None:
    """VERSION-1/2 for every version: the server echoes an offer it speaks."""
    with open_client(version_server(), protocol_version=version) as client:
        assert client.protocol_version == version
        assert served_version(client) == version


@pytest.mark.parametrize("version", VERSIONS)
def test_client_supported_versions_offers_its_newest_v0618_10(version: str) -> None:
    with open_client(version_server(), supported_versions=[version]) as client:
        assert client.protocol_version == version


@pytest.mark.parametrize("version", VERSIONS)
def test_server_speaking_one_version_answers_with_it_v0618_10(version: str) -> None:
    """VERSION-3 for every version: an offer the server does not speak gets its newest,
    which the client accepts since it speaks it too."""
    with open_client(version_server(supported_versions=[version])) as client:
        assert client.protocol_version == version
        assert served_version(client) == version


@pytest.mark.parametrize("version", VERSIONS[:-1])
def test_server_counter_offers_its_newest_des_4(version: str) -> None:
    """The server answers the newest of its versions; order given does not matter."""
    supported = list(reversed(VERSIONS[:VERSIONS.index(version) + 1]))
    with open_client(version_server(supported_versions=supported)) as client:
        assert client.protocol_version == version


@pytest.mark.parametrize(("client_versions", "server_versions"), [
    pytest.param(["2025-11-25"], ["2025-06-18"], id="server older"),
    pytest.param(["2025-03-26"], ["2025-11-25"], id="server newer"),
    pytest.param(["2024-11-05", "2025-03-26"], ["2025-06-18", "2025-11-25"], id="disjoint"),
])
def test_no_common_version_fails_the_client_version_4(
        client_versions: list[str], server_versions: list[str]) -> None:
    with pytest.raises(ProtocolVersionError) as raised, open_client(
            version_server(supported_versions=server_versions),
            supported_versions=client_versions):
        pass
    assert raised.value.supported == tuple(client_versions)


def test_protocol_version_narrows_supported_versions_des_4() -> None:
    """``protocol_version`` keeps working: it offers that version, and only older ones
    of ``supported_versions`` are accepted besides."""
    with open_client(version_server(supported_versions=["2025-03-26"]),
                     protocol_version="2025-06-18") as client:
        assert client.protocol_version == "2025-03-26"
    with pytest.raises(ProtocolVersionError), open_client(
            version_server(supported_versions=["2025-11-25"]), protocol_version="2025-06-18"):
        pass


@pytest.mark.parametrize("bad", [[], ["2099-01-01"], ["2025-11-25", "2025-3-26"]])
def test_unknown_or_empty_supported_versions_are_refused(bad: list[str]) -> None:
    with pytest.raises(ValueError, match="version"):
        Server("x", supported_versions=bad)
    with pytest.raises(ValueError, match="version"):
        Client(lambda: None, supported_versions=bad)  # type: ignore[arg-type,return-value]


def test_protocol_version_outside_supported_versions_is_refused() -> None:
    with pytest.raises(ValueError, match="2025-11-25"):
        Client(lambda: None, protocol_version="2025-11-25",  # type: ignore[arg-type,return-value]
               supported_versions=["2025-03-26"])


# --- the header, client side (V0618-11, V0618-12, DES-7) -----------------------------------


@pytest.fixture
def start() -> Iterator[Callable[[Any], FakeServer]]:
    yield from serving()


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("mode", ["json", "sse"])
def test_client_sends_the_negotiated_version_on_every_request_after_initialize(
        start: Callable[[Any], FakeServer], version: str, mode: str) -> None:
    """V0618-11/12: every POST and the DELETE after initialize carry the version the
    server answered (not our newest); the initialize POST carries none."""
    play = Play(mode=mode, version=version)
    server = start(play)
    with open_http_client(server.url) as client:
        assert client.protocol_version == version
        client.list_tools()
        client.call_tool("echo", {"x": 1})
        client.ping()
    seen = [s for s in server.seen if s.method in ("POST", "GET", "DELETE")]
    assert seen[0].method == "POST" and seen[0].body["method"] == "initialize"
    assert seen[0].header("MCP-Protocol-Version") is None
    later = seen[1:]
    assert {s.method for s in later} >= {"POST", "DELETE"}
    assert [s.header("MCP-Protocol-Version") for s in later] == [version] * len(later)


# --- the header, server side (V0618-13, V0618-14, NAMBIG-1, NAMBIG-2, DES-7) ---------------


def tool_version(peer: WsgiPeer, request_id: int, headers: dict[str, str] | None = None,
                 **options: Any) -> str:
    response = peer.post(call(request_id, "tools/call", {"name": "version", "arguments": {}}),
                         headers=headers, **options)
    assert response.status_code == 200, response.get_data()
    [message] = [m for m in messages_of(response) if "id" in m]
    return message["result"]["content"][0]["text"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("header", ["1999-01-01", "2026-07-28", "2025-3-26", "latest"])
def test_unknown_header_is_400_v0618_14(header: str) -> None:
    with make_wsgi_app(version_server()) as app:
        peer = WsgiPeer(app)
        peer.initialize()
        response = peer.post(call(1, "ping"), headers={"MCP-Protocol-Version": header})
        assert response.status_code == 400
        assert response.get_json()["error"]["data"]["requested"] == header


def test_known_but_unsupported_header_is_400_des_7() -> None:
    """A version we know but this server was told not to speak is refused too."""
    with make_wsgi_app(version_server(supported_versions=["2025-06-18", "2025-11-25"])) as app:
        peer = WsgiPeer(app)
        peer.initialize()
        response = peer.post(call(1, "ping"), headers={"MCP-Protocol-Version": "2025-03-26"})
        assert response.status_code == 400
        assert response.get_json()["error"]["data"]["supported"] == ["2025-06-18",
                                                                     "2025-11-25"]


@pytest.mark.parametrize("version", VERSIONS)
def test_absent_header_in_a_session_uses_the_sessions_version_nambig_2(version: str) -> None:
    with make_wsgi_app(version_server()) as app:
        peer = WsgiPeer(app)
        peer.initialize(protocolVersion=version)
        assert tool_version(peer, 1) == version
        assert tool_version(peer, 2, {"MCP-Protocol-Version": version}) == version


def test_a_different_supported_header_is_logged_and_the_session_governs_nambig_1(
        caplog: pytest.LogCaptureFixture) -> None:
    with make_wsgi_app(version_server()) as app:
        peer = WsgiPeer(app)
        peer.initialize(protocolVersion="2025-06-18")
        with caplog.at_level(logging.INFO, logger="mcp_sync.server.http"):
            assert tool_version(peer, 1, {"MCP-Protocol-Version": "2025-03-26"}) \
                == "2025-06-18"
        assert any("2025-03-26" in r.getMessage() and "2025-06-18" in r.getMessage()
                   for r in caplog.records)


def test_initialize_post_ignores_the_header_des_7() -> None:
    with make_wsgi_app(version_server()) as app:
        response = WsgiPeer(app).post(INITIALIZE, session=False,
                                      headers={"MCP-Protocol-Version": "1999-01-01"})
        assert response.status_code == 200


def test_stateless_without_header_is_served_as_2025_03_26_v0618_13() -> None:
    with make_wsgi_app(version_server(), stateless=True) as app:
        peer = WsgiPeer(app)
        assert tool_version(peer, 1) == "2025-03-26"
        for version in VERSIONS:
            assert tool_version(peer, 2, {"MCP-Protocol-Version": version}) == version


def test_stateless_without_header_on_a_server_without_2025_03_26() -> None:
    """With 2025-03-26 switched off, a headerless request gets the server's newest."""
    with make_wsgi_app(version_server(supported_versions=["2025-11-25"]),
                       stateless=True) as app:
        assert tool_version(WsgiPeer(app), 1) == "2025-11-25"
