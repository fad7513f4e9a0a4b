"""Which icon sources are safe to fetch (V1125-8).

mcp_sync does not render icons. An application that does should fetch only what
:func:`is_safe_icon_src` accepts, without cookies or credentials, refuse redirects that
change the scheme or the origin, cap the size and dimensions, detect the real type from
the bytes, and treat SVG as able to carry script.
"""

from __future__ import annotations

__all__ = ["is_safe_icon_src"]

_DATA_IMAGE = "data:image/"


def is_safe_icon_src(src: str) -> bool:
    """Whether an icon's ``src`` may be fetched or decoded: an ``https:`` URL with a host,
    or a base64 ``data:image/...`` URI. ``http:``, ``javascript:``, ``file:``, ``ftp:``,
    ``ws:`` and any other scheme are refused.
    """
    text = src.strip()
    lowered = text.lower()
    if lowered.startswith("https://"):
        rest = text[len("https://"):]
        host = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
        return bool(host) and not any(ch.isspace() for ch in text)
    if lowered.startswith(_DATA_IMAGE):
        header, sep, _ = text.partition(",")
        return bool(sep) and header.lower().endswith(";base64")
    return False
