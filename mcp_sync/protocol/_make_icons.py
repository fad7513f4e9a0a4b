"""Icons given to the public API (a server's or a client's own), checked (V1125-7)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import InvalidParams
from ._convert import from_wire
from ._icons import is_safe_icon_src
from ._types_common import Icon

__all__ = ["make_icons"]


def make_icons(icons: Iterable[Icon | Mapping[str, Any]] | None) -> list[Icon] | None:
    """``icons`` as :class:`Icon` objects (dicts in the wire shape are accepted).

    Raises:
        ValueError: an icon is malformed, or its ``src`` is neither an ``https:`` URL
            nor a base64 ``data:image/`` URI (V1125-7, V1125-8).
    """
    if icons is None:
        return None
    made: list[Icon] = []
    for icon in icons:
        if not isinstance(icon, Icon):
            try:
                icon = from_wire(dict(icon), Icon)
            except InvalidParams as exc:
                raise ValueError(f"invalid icon {icon!r}: {exc.message}") from None
        if not is_safe_icon_src(icon.src):
            raise ValueError(f"icon src {icon.src[:80]!r} must be an https: URL or a "
                             "base64 data:image/ URI")
        made.append(icon)
    return made
