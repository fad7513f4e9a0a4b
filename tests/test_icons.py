"""Icons and the newer Implementation fields (V1125-6, V1125-7, V1125-8)."""

from __future__ import annotations

import pytest

from mcp_sync.protocol._convert import from_wire, to_wire
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
