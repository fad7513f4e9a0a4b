"""Icons given to the public API, checked (V1125-7, V1125-8): a server's or a client's
own, and those of tools, resources, templates and prompts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeAlias

from ..errors import InvalidParams
from ._convert import from_wire
from ._icons import is_safe_icon_src
from ._types_common import Icon

__all__ = ["IconsSpec", "make_icons"]

#: Icons as :class:`Icon` objects, dicts in the wire shape, or ``src`` strings (one of
#: them alone is taken too).
IconsSpec: TypeAlias = "Iterable[Icon | Mapping[str, Any] | str] | None"


def make_icons(spec: IconsSpec, owner: str | None = None) -> list[Icon] | None:
    """``spec`` as :class:`Icon` objects.

    Args:
        spec: what the user gave.
        owner: names what the icons belong to in error messages (``"tool 'add'"``).

    Raises:
        ValueError: an icon is malformed, or its ``src`` is neither an ``https:`` URL
            nor a base64 ``data:image/`` URI, which clients would refuse to fetch.
    """
    if spec is None:
        return None
    if isinstance(spec, (str, Mapping, Icon)):
        spec = [spec]
    where = f"{owner}: " if owner else ""
    made: list[Icon] = []
    for item in spec:
        if isinstance(item, str):
            item = Icon(src=item)
        elif not isinstance(item, Icon):
            try:
                item = from_wire(dict(item), Icon)
            except InvalidParams as exc:
                raise ValueError(f"{where}invalid icon {item!r}: {exc.message}") from None
        if not is_safe_icon_src(item.src):
            raise ValueError(f"{where}icon src {item.src[:80]!r} must be an https: URL or a "
                             "base64 data:image/ URI")
        made.append(item)
    return made
