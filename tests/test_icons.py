"""Icons and the newer Implementation fields (V1125-6, V1125-7, V1125-8)."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_sync import Client, Server
from mcp_sync.protocol._convert import from_wire, to_wire
from mcp_sync.testing import open_client
from mcp_sync.types import Icon, Implementation, is_safe_icon_src


def test_implementation_round_trips_title_description_website_and_icons_v1125_6() -> None:
    info = Implementation(
        name="demo", version="1.0", title="Demo", description="A demo server",
        website_url="https://example.com",
        icons=[Icon(src="https://example.com/i.png", mime_type="image/png",
                    sizes=["48x48"], theme="dark")])
    wire = to_wire(info)
    assert wire == {
        "name": "demo", "version": "1.0", "title": "Demo", "description": "A demo server",
        "websiteUrl": "https://example.com",
        "icons": [{"src": "https://example.com/i.png", "mimeType": "image/png",
                   "sizes": ["48x48"], "theme": "dark"}]}
    back = from_wire(wire, Implementation)
    assert back.website_url == "https://example.com"
    assert back.icons is not None and back.icons[0].theme == "dark"


def test_implementation_leaves_unset_fields_out_des_2() -> None:
    assert to_wire(Implementation(name="demo", version="1.0")) == {
        "name": "demo", "version": "1.0"}


@pytest.mark.parametrize("src", [
    "https://example.com/icon.png",
    "data:image/png;base64,iVBORw0KGgo=",
    "HTTPS://EXAMPLE.COM/a.svg",
])
def test_safe_icon_sources_v1125_8(src: str) -> None:
    assert is_safe_icon_src(src)


@pytest.mark.parametrize("src", [
    "http://example.com/icon.png", "javascript:alert(1)", "file:///etc/passwd",
    "ftp://example.com/i.png", "ws://example.com/i", "myapp://icon", "https:///nohost",
    "data:text/html;base64,PGI+", "data:image/png,rawbytes", "", "https://exa mple.com/i",
])
def test_unsafe_icon_sources_are_refused_v1125_8(src: str) -> None:
    assert not is_safe_icon_src(src)


ICON = {"src": "https://example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_server_and_client_info_carry_what_the_version_has_v1125_6(
        version: str, wire: Any) -> None:
    server = Server("demo", version="1.0", title="Demo", description="A demo",
                    website_url="https://example.com", icons=[ICON])
    with open_client(server, protocol_version=version, name="app", title="App",
                     description="An app", website_url="https://app.example",
                     icons=[Icon(src="data:image/png;base64,AAAA")]) as client:
        info = client.server_info
        [request] = [m for m in wire.sent if isinstance(m, dict)
                     and m.get("method") == "initialize"]
    # The client offers before it knows the version: it sends everything it has.
    assert request["params"]["clientInfo"] == {
        "name": "app", "version": request["params"]["clientInfo"]["version"],
        "title": "App", "description": "An app", "websiteUrl": "https://app.example",
        "icons": [{"src": "data:image/png;base64,AAAA"}]}
    newest = version == "2025-11-25"
    assert info.title == ("Demo" if version in ("2025-06-18", "2025-11-25") else None)
    assert info.description == ("A demo" if newest else None)
    assert info.website_url == ("https://example.com" if newest else None)
    assert (to_wire(info.icons[0]) if info.icons else None) == (ICON if newest else None)


@pytest.mark.parametrize("src", ["http://example.com/i.png", "javascript:alert(1)"])
def test_unsafe_icons_are_refused_by_the_api_v1125_7(src: str) -> None:
    with pytest.raises(ValueError, match="https"):
        Server("demo", icons=[{"src": src}])
    with pytest.raises(ValueError, match="https"):
        Client(lambda: None, icons=[Icon(src=src)])  # type: ignore[arg-type,return-value]


def test_a_malformed_icon_is_refused() -> None:
    with pytest.raises(ValueError, match="invalid icon"):
        Server("demo", icons=[{"sizes": ["48x48"]}])
